package machine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Fig. 12's bound for the SPMV team launch of kk-ompx (clang 19, sm_90: 40
// registers) in teams of 16 x 8 on the H200: 40 x 32 = 1280 registers a
// warp, 16384 / 1280 = 12 warps per sub-partition, 48 warps, 12 blocks of
// 4 warps, x 132 SMs = 1584 (docs/analysis/kernel-mode.md).
func TestOccupancyDefault(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "cuobjdump-clang19-sm90-spmv-kk-ompx.txt"))
	if err != nil {
		t.Fatal(err)
	}
	c := CellLaunch{Blocks: []int64{16 * 8}, Kernels: ParseResUsage(string(data), "sm_90")}
	h200 := model(t, "h200-sxm-141gb")
	got, notes := Defaults(h200, map[string]string{"max_teams": "occupancy"}, c)
	if got["max_teams"] != 1584 || len(notes) != 0 {
		t.Errorf("H200: %v %v, want max_teams 1584", got, notes)
	}
	// The harness's own kernels (78 and 80 registers) do not bound the teams.
	if ks := TeamKernels(c.Kernels); len(ks) != 1 || ks[0].Registers != 40 {
		t.Errorf("team kernels: %+v", ks)
	}
	// A larger team of the same kernel: 40 x 32 x 8 warps = 10240 a block,
	// 6 blocks per SM; a cell with both blocks takes the smaller bound.
	for _, blocks := range [][]int64{{32 * 8}, {16 * 8, 32 * 8}} {
		c.Blocks = blocks
		got, _ = Defaults(h200, map[string]string{"max_teams": "occupancy"}, c)
		if got["max_teams"] != 6*132 {
			t.Errorf("%v: %v, want %d", blocks, got, 6*132)
		}
	}
}

// A default that cannot be computed is left out with a note; the program
// then runs its generated value.
func TestDefaultsFallBack(t *testing.T) {
	h200 := model(t, "h200-sxm-141gb")
	for _, c := range []struct {
		cell CellLaunch
		want string
	}{
		{CellLaunch{Blocks: []int64{128}}, "no kernel resources"},
		{CellLaunch{Kernels: []Resources{{Kernel: "k", Registers: 40}}}, "no team blocks"},
		{CellLaunch{Blocks: []int64{128}, Kernels: []Resources{{Kernel: "k", Registers: 300}}}, "exceed max_registers_per_thread"},
	} {
		got, notes := Defaults(h200, map[string]string{"max_teams": "occupancy"}, c.cell)
		if len(got) != 0 || len(notes) != 1 || !strings.Contains(notes[0], c.want) {
			t.Errorf("%+v: %v %v, want a note with %q", c.cell, got, notes, c.want)
		}
	}
	if _, notes := Defaults(model(t, "mi250x-gcd"), map[string]string{"max_teams": "occupancy"},
		CellLaunch{Blocks: []int64{128}, Kernels: []Resources{{Kernel: "k", Registers: 40}}}); len(notes) != 1 || !strings.Contains(notes[0], "no occupancy rule") {
		t.Errorf("AMD: %v", notes)
	}
}

// The team kernels of clang kernel-mode binaries (names from an H200
// tuning's tuning-kernels.json): the layer's scratch launches when there are
// any, else every launch but the harness's and CUDA's helper functions.
func TestTeamKernelsOfKernelMode(t *testing.T) {
	harness := Resources{Kernel: "__omp_offloading_fe00_510be1__ZN2pm6device10stream_dotEPKdS2_l_l209", Registers: 78}
	helper := Resources{Kernel: "__cuda_sm20_div_s64"}
	scratch := Resources{Kernel: "__omp_offloading_fe00_510bdb__ZN4pmkk14ompx_team_impl6launchILb1EZN3dev29hommexx_laplace_simple_kernelEllldPKdS4_S4_S4_PdE3$_0EEvRKT0_liiilPcl_l43", Registers: 140}
	mdrange := Resources{Kernel: "__omp_offloading_fe00_510bdb__ZN4pmkk14ompx_team_impl7mdrangeILi2EZN3dev1kEE_l66", Registers: 30}
	loop := Resources{Kernel: "__omp_offloading_fe00_5109c4__ZN3dev29hommexx_laplace_simple_kernelEllldPKdS1_S1_S1_Pd_l136", Registers: 130}
	direct := Resources{Kernel: "__omp_offloading_fe00_5109c4__ZN3dev29hommexx_laplace_simple_kernelEllldPKdS1_S1_S1_Pd_l69", Registers: 114}
	if ks := TeamKernels([]Resources{helper, scratch, mdrange, harness}); len(ks) != 1 || ks[0] != scratch {
		t.Errorf("kk-ompx: %+v, want the scratch launch", ks)
	}
	if ks := TeamKernels([]Resources{helper, loop, direct, harness}); len(ks) != 2 || ks[0] != loop || ks[1] != direct {
		t.Errorf("direct-ompx: %+v, want the two launches", ks)
	}
	if ks := TeamLaunches([]Resources{helper, loop, direct, harness}); len(ks) != 0 {
		t.Errorf("direct-ompx's launches are not the layer's: %+v", ks)
	}
}
