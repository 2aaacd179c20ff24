package machine

import (
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func model(t *testing.T, name string) *Model {
	t.Helper()
	m, err := loadShipped(t).Get(name)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// The expected values are derived by hand from the sm_90 numbers (64 warps,
// 32 blocks, 65536 registers in 4 sub-partitions of 16384, registers per
// warp in units of 256, 228 KiB = 233472 bytes of shared memory per SM in
// units of 128 with 1 KiB reserved per block), as the CUDA occupancy
// calculator (cuda_occupancy.h) computes them.
func TestOccupancySM90(t *testing.T) {
	h100 := model(t, "h100-sxm5-80gb")
	for _, c := range []struct {
		name    string
		launch  Launch
		blocks  int
		limiter string
		warps   int // active per SM
	}{
		// 8 warps per block: 64/8 = 8 by warps. 32 regs x 32 = 1024 per warp:
		// 16384/1024 = 16 warps per sub-partition, 64/8 = 8 by registers.
		// Shared: 0 + 1 KiB reserved = 1024: 233472/1024 = 228. Warps first.
		{"256 threads, 32 regs", Launch{BlockThreads: 256, Registers: 32}, 8, "warps", 64},
		// 4 warps: 16 by warps. 64 x 32 = 2048 per warp: 16384/2048 = 8 per
		// sub-partition, 32 warps, 32/4 = 8 blocks by registers.
		{"128 threads, 64 regs", Launch{BlockThreads: 128, Registers: 64}, 8, "registers", 32},
		// 40 x 32 = 1280: 16384/1280 = 12 per sub-partition, 48 warps, 6
		// blocks. Shared 49152 + 1024 = 50176 (a multiple of 128): 233472/50176
		// = 4.65, 4 blocks.
		{"256 threads, 40 regs, 48 KiB static", Launch{BlockThreads: 256, Registers: 40, StaticSharedBytes: 49152}, 4, "shared memory", 32},
		// 3 warps: 64/3 = 21 by warps. 37 x 32 = 1184, rounded to 1280: 12 per
		// sub-partition, 48 warps, 16 blocks. Shared 10000 + 1024 = 11024,
		// rounded to 11136: 233472/11136 = 20.97, 20 blocks.
		{"96 threads, 37 regs, 10000 B dynamic", Launch{BlockThreads: 96, Registers: 37, DynamicSharedBytes: 10000}, 16, "registers", 48},
		// The KK-CUDA 2-level team of 16 threads: one warp per block, 64 by
		// warps, but 32 blocks per SM: 32 warps, 50% (what Nsight Compute
		// reported for it on the H200, docs/analysis/spmv-2lvl.md).
		{"16 threads, 24 regs", Launch{BlockThreads: 16, Registers: 24}, 32, "blocks per SM", 32},
		// 100 KiB dynamic after opting in: 102400 + 1024 = 103424 = 808 x 128:
		// 233472/103424 = 2.26, 2 blocks.
		{"1024 threads, 32 regs, 100 KiB opted in", Launch{BlockThreads: 1024, Registers: 32, DynamicSharedBytes: 102400, SharedOptIn: true}, 2, "warps", 64},
		// 255 regs: 8160 per warp, rounded to 8192; 32 warps x 8192 > 65536
		// registers per block: no block.
		{"1024 threads, 255 regs", Launch{BlockThreads: 1024, Registers: 255}, 0, "registers per block", 0},
		// 70 KiB without opting in: over the 48 KiB default.
		{"70 KiB not opted in", Launch{BlockThreads: 128, Registers: 32, DynamicSharedBytes: 70 << 10}, 0, "opting in", 0},
		{"2048 threads", Launch{BlockThreads: 2048, Registers: 16}, 0, "max_threads_per_block", 0},
	} {
		o, err := h100.Occupancy(c.launch)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if o.BlocksPerSM != c.blocks || !strings.Contains(o.Limiter, c.limiter) || o.ActiveWarps != c.warps {
			t.Errorf("%s: %d blocks (%s), %d warps; want %d (%s), %d warps", c.name, o.BlocksPerSM, o.Limiter, o.ActiveWarps, c.blocks, c.limiter, c.warps)
		}
		if want := float64(c.warps) / 64; math.Abs(o.Fraction-want) > 1e-12 {
			t.Errorf("%s: occupancy %.3f, want %.3f", c.name, o.Fraction, want)
		}
	}
}

// The A100 (sm_80) differs in shared memory: 164 KiB = 167936 per SM.
func TestOccupancySM80(t *testing.T) {
	a100 := model(t, "a100-sxm4-40gb")
	// 48 KiB static + 1 KiB: 167936/50176 = 3.35, 3 blocks (4 on an H100).
	o, err := a100.Occupancy(Launch{BlockThreads: 256, Registers: 40, StaticSharedBytes: 49152})
	if err != nil || o.BlocksPerSM != 3 || o.Limiter != "shared memory" {
		t.Errorf("a100: %+v, %v; want 3 blocks by shared memory", o, err)
	}
}

// max_teams (000 Fig. 12) is blocks per SM x SMs.
func TestMaxTeams(t *testing.T) {
	// 128-thread teams of 64 registers: 8 per SM (above), x 132 SMs.
	for _, c := range []struct {
		machine string
		want    int64
	}{{"h100-sxm5-80gb", 8 * 132}, {"h200-sxm-141gb", 8 * 132}, {"a100-sxm4-80gb", 8 * 108}} {
		got, err := model(t, c.machine).MaxTeams(Launch{BlockThreads: 128, Registers: 64})
		if err != nil || got != c.want {
			t.Errorf("%s: max_teams %d, %v; want %d", c.machine, got, err, c.want)
		}
	}
	if _, err := model(t, "h100-sxm5-80gb").MaxTeams(Launch{BlockThreads: 1024, Registers: 255}); err == nil {
		t.Error("max_teams of a launch that cannot run: no error")
	}
	_, err := model(t, "mi250x-gcd").MaxTeams(Launch{BlockThreads: 256, Registers: 32})
	if !errors.Is(err, ErrNoRule) {
		t.Errorf("AMD max_teams: %v, want ErrNoRule", err)
	}
}

func TestMaxBlockThreads(t *testing.T) {
	h100 := model(t, "h100-sxm5-80gb")
	// 64 regs: 2048 per warp x 32 warps = 65536: the whole block fits.
	// 128 regs: 4096 per warp, 16 warps (a multiple of 4) = 65536: 512.
	// 168 regs: 5376 per warp; 12 warps need 64512, 13 round up to 16
	// (86016): 384. 255 regs: 8192 per warp, 8 warps: 256.
	for regs, want := range map[int]int{32: 1024, 64: 1024, 128: 512, 168: 384, 255: 256, 256: 0} {
		if got := h100.MaxBlockThreads(regs); got != want {
			t.Errorf("MaxBlockThreads(%d) = %d, want %d", regs, got, want)
		}
	}
}

// TestOccupancyMatchesCUDA compares Occupancy with NVIDIA's own calculator
// (cuda_occupancy.h, header-only, compiled with g++) over a grid of
// launches on every NVIDIA model; it is skipped where the CUDA headers are
// missing.
func TestOccupancyMatchesCUDA(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles a C++ program")
	}
	cxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++")
	}
	bin := filepath.Join(t.TempDir(), "occcalc")
	args := []string{"-O1", "-o", bin, filepath.Join("testdata", "occcalc.cpp")}
	for _, dir := range []string{"/usr/local/cuda/include", os.Getenv("CUDA_HOME") + "/include"} {
		if _, err := os.Stat(filepath.Join(dir, "cuda_occupancy.h")); err == nil {
			args = append(args, "-I"+dir)
		}
	}
	if out, err := exec.Command(cxx, args...).CombinedOutput(); err != nil {
		t.Skipf("cuda_occupancy.h not found (CUDA headers missing): %s", firstLine(string(out)))
	}
	type launch struct {
		threads, regs   int
		static, dynamic int64
		optIn           bool
	}
	var launches []launch
	for _, threads := range []int{16, 32, 64, 96, 128, 160, 192, 256, 384, 512, 640, 768, 1024} {
		for _, regs := range []int{0, 16, 24, 32, 37, 40, 48, 56, 64, 72, 96, 128, 168, 200, 255} {
			for _, s := range []launch{{}, {static: 4096}, {dynamic: 10000}, {static: 16384, dynamic: 16384},
				{dynamic: 49152}, {dynamic: 47104}, {dynamic: 70 << 10}, {dynamic: 70 << 10, optIn: true}, {static: 8192, dynamic: 100 << 10, optIn: true}} {
				launches = append(launches, launch{threads, regs, s.static, s.dynamic, s.optIn})
			}
		}
	}
	var in strings.Builder
	for _, l := range launches {
		optIn := 0
		if l.optIn {
			optIn = 1
		}
		fmt.Fprintf(&in, "%d %d %d %d %d\n", l.threads, l.regs, l.static, l.dynamic, optIn)
	}
	for _, m := range loadShipped(t).Models {
		if m.Vendor != "nvidia" {
			continue
		}
		g := m.GPU
		var major, minor int
		fmt.Sscanf(m.Arch, "sm_%1d%1d", &major, &minor)
		cmd := exec.Command(bin, strconv.Itoa(major), strconv.Itoa(minor))
		for _, v := range []int64{g.MaxThreadsPerBlock, g.MaxThreadsPerSM, g.RegistersPerBlock, g.RegistersPerSM, g.WarpSize,
			g.SharedMemoryPerBlockBytes, g.SharedMemoryPerSMBytes, g.SMCount, g.SharedMemoryPerBlockOptin, g.SharedMemoryReservedPerBlock} {
			cmd.Args = append(cmd.Args, strconv.FormatInt(v, 10))
		}
		cmd.Stdin = strings.NewReader(in.String())
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: occcalc: %v", m.Name, err)
		}
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		if len(lines) != len(launches) {
			t.Fatalf("%s: %d answers for %d launches", m.Name, len(lines), len(launches))
		}
		bad := 0
		for i, l := range launches {
			var want [5]int
			if _, err := fmt.Sscanf(lines[i], "%d %d %d %d %d", &want[0], &want[1], &want[2], &want[3], &want[4]); err != nil {
				t.Fatalf("%s: answer %q", m.Name, lines[i])
			}
			o, err := m.Occupancy(Launch{BlockThreads: l.threads, Registers: l.regs, StaticSharedBytes: l.static, DynamicSharedBytes: l.dynamic, SharedOptIn: l.optIn})
			if err != nil {
				t.Fatal(err)
			}
			got := [5]int{o.BlocksPerSM, clampInt(o.ByRegisters), clampInt(o.BySharedMemory), o.ByWarps, o.ByBlocks}
			if o.BlocksPerSM == 0 { // only the verdict: the calculator goes on counting the other bounds
				got, want = [5]int{}, [5]int{want[0]}
			}
			if got != want && bad < 10 {
				bad++
				t.Errorf("%s %+v: got blocks/regs/smem/warps/blocks %v, cuda_occupancy.h %v", m.Name, l, got, want)
			}
		}
	}
}

func clampInt(n int) int { return min(n, math.MaxInt32) }

func firstLine(s string) string { return strings.SplitN(strings.TrimSpace(s), "\n", 2)[0] }
