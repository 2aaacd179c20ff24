package machine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testdata/ptxas-v-nvcc11.8.txt is nvcc 11.8's -Xptxas -v for two kernels
// for sm_90: a template with 512 doubles of __shared__, and an axpy.
func TestParsePtxasInfo(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "ptxas-v-nvcc11.8.txt"))
	if err != nil {
		t.Fatal(err)
	}
	got := ParsePtxasInfo(string(data))
	want := []Resources{
		{Kernel: "_Z4tileILi512EEvPd", Arch: "sm_90", Registers: 12, StaticSharedBytes: 4096},
		{Kernel: "_Z4axpyPdPKddi", Arch: "sm_90", Registers: 10},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("kernel %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	// CUDA 12's form adds constant banks and spills on the same lines.
	r := ParsePtxasInfo("ptxas info    : Compiling entry function '__omp_offloading_10302_1_spmv_l42' for 'sm_90'\n" +
		"    16 bytes stack frame, 8 bytes spill stores, 8 bytes spill loads\n" +
		"ptxas info    : Used 46 registers, 2048 bytes smem, 360 bytes cmem[0]\n")
	if len(r) != 1 || r[0].Registers != 46 || r[0].StaticSharedBytes != 2048 || r[0].SpillStoreBytes != 8 || r[0].StackBytes != 16 {
		t.Errorf("CUDA 12 form: %+v", r)
	}
	// Into the occupancy rules: the 46-register kernel-mode SPMV in teams of
	// 128 on an H100: 46 x 32 = 1472, rounded to 1536 per warp; 16384/1536
	// = 10 per sub-partition, 40 warps, 10 blocks of 4 warps.
	o, err := model(t, "h100-sxm5-80gb").Occupancy(r[0].Launch(128, 0))
	if err != nil || o.BlocksPerSM != 10 || o.Limiter != "registers" {
		t.Errorf("occupancy: %+v, %v", o, err)
	}
}

// testdata/cuobjdump-clang19-sm90-spmv-kk-ompx.txt is cuobjdump -res-usage
// of the sm_90 image of SPMV kk-ompx built by clang 19 (the team launch and
// the harness's own kernels); testdata/cuobjdump-nvcc118-sm90.txt of the
// nvcc 11.8 build of cuobjdump-nvcc118-sm90.cu (a fat binary: one ELF
// without kernels, one with, and PTX).
func TestParseResUsage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "cuobjdump-clang19-sm90-spmv-kk-ompx.txt"))
	if err != nil {
		t.Fatal(err)
	}
	got := ParseResUsage(string(data), "sm_90")
	if len(got) != 11 {
		t.Fatalf("%d kernels, want 11: %+v", len(got), got)
	}
	team := got[0]
	if !strings.Contains(team.Kernel, "launch_team") || team.Registers != 40 || team.StaticSharedBytes != 0 || team.Arch != "sm_90" {
		t.Errorf("the team launch: %+v (want 40 registers, no static shared memory beyond the reserve)", team)
	}
	// The OpenMP runtime's static state in the harness kernels.
	if got[1].Registers != 78 || got[1].StaticSharedBytes != 1168-1024 {
		t.Errorf("stream_dot: %+v", got[1])
	}

	data, err = os.ReadFile(filepath.Join("testdata", "cuobjdump-nvcc118-sm90.txt"))
	if err != nil {
		t.Fatal(err)
	}
	got = ParseResUsage(string(data), "")
	want := []Resources{{Kernel: "_Z4axpydPKdPdi", Arch: "sm_90", Registers: 10, StaticSharedBytes: 512}}
	if len(got) != 1 || got[0] != want[0] {
		t.Errorf("nvcc: %+v, want %+v (ptxas -v: 10 registers, 512 bytes smem)", got, want)
	}
	// Before sm_90 the window holds no reserve: SHARED is the kernel's own.
	r := ParseResUsage(" Function k:\n  REG:11 STACK:0 SHARED:512 LOCAL:0\n", "sm_80")
	if len(r) != 1 || r[0].StaticSharedBytes != 512 || r[0].Registers != 11 {
		t.Errorf("sm_80: %+v", r)
	}
}
