package machine

import (
	"errors"
	"math"
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
		// reported for it, issue 22).
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
