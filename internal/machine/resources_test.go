package machine

import (
	"os"
	"path/filepath"
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
