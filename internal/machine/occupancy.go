package machine

import (
	"errors"
	"fmt"
	"math"
)

// MinResidentFraction is the share of an SM's resident threads
// (max_threads_per_sm) a launch must keep busy for the pruned search to run
// it and for the mapper to choose it. Below a quarter, the SM has too few
// loads in flight to cover memory latency (the bandwidth-bound kernels of 002
// and 000): an H100 sweep of team sizes measured 4- and 8-thread KK-CUDA teams (6%
// and 12%) at a quarter and a third of the 16-thread team, which holds 25%
// (32 blocks of 16) and stays in.
const MinResidentFraction = 0.25

// Launch is what the occupancy rules need of one kernel launch.
type Launch struct {
	BlockThreads       int   // threads per block: team size x vector length
	Registers          int   // registers per thread (cudaFuncAttributes.numRegs, ptxas -v)
	StaticSharedBytes  int64 // __shared__ arrays (cudaFuncAttributes.sharedSizeBytes)
	DynamicSharedBytes int64 // the launch's dynamic shared memory (ompx_dyn_cgroup_mem, level-0 team scratch)
	// SharedOptIn: the launcher raised cudaFuncAttributeMaxDynamicSharedMemorySize,
	// so a block may use shared_memory_per_block_optin_bytes instead of
	// shared_memory_per_block_bytes.
	SharedOptIn bool
}

// Occupancy is how many blocks of a launch an SM holds at once, and why no
// more.
type Occupancy struct {
	BlocksPerSM int
	// Limiter names the smallest bound: "warps", "registers", "shared
	// memory" or "blocks per SM"; when BlocksPerSM is 0, why no block fits.
	Limiter string
	// The bound each resource puts on blocks per SM (math.MaxInt: none).
	ByWarps, ByRegisters, BySharedMemory, ByBlocks int

	WarpsPerBlock     int
	RegistersPerBlock int64   // allocated: per-warp rounding included
	SharedPerBlock    int64   // allocated: the system's reserve and rounding included
	ActiveWarps       int     // per SM
	Fraction          float64 // ActiveWarps / max_warps_per_sm: the theoretical occupancy
}

// ErrNoRule: the model's vendor has no occupancy rule here (only NVIDIA's
// is written down; AMD models hold numbers without a rule).
var ErrNoRule = errors.New("no occupancy rule for this vendor")

// Occupancy computes blocks per SM by the rules of the CUDA occupancy
// calculator (cuda_occupancy.h of the CUDA toolkit, the default shared-memory
// carveout and cache configuration):
//
//   - warps: max_warps_per_sm / ceil(threads / warp_size);
//   - registers: a warp's registers are regs x warp_size rounded up to
//     register_alloc_unit; each of the sm_sub_partitions holds
//     registers_per_sm / sm_sub_partitions of them, so warps per SM are
//     floor(that / per-warp) x sub-partitions; a block fails outright when
//     its warps, rounded up to the sub-partitions, need more than
//     registers_per_block (the hardware's check), or regs exceed
//     max_registers_per_thread;
//   - shared memory: static + dynamic + shared_memory_reserved_per_block
//     (1 KiB on sm_8x/sm_9x) rounded up to shared_memory_alloc_unit; it must
//     fit the per-block limit plus the reserve; blocks per SM are
//     shared_memory_per_sm_bytes / that;
//   - blocks: max_blocks_per_sm.
func (m *Model) Occupancy(l Launch) (Occupancy, error) {
	if m.Kind != KindGPU {
		return Occupancy{}, fmt.Errorf("%s: occupancy needs a GPU model, not a %s", m, m.Kind)
	}
	if m.Vendor != "nvidia" {
		return Occupancy{}, fmt.Errorf("%s: %w (%s)", m, ErrNoRule, m.Vendor)
	}
	if l.BlockThreads < 1 || l.Registers < 0 || l.StaticSharedBytes < 0 || l.DynamicSharedBytes < 0 {
		return Occupancy{}, fmt.Errorf("%s: occupancy of an impossible launch: %d threads, %d registers, %d+%d bytes of shared memory",
			m, l.BlockThreads, l.Registers, l.StaticSharedBytes, l.DynamicSharedBytes)
	}
	g := m.GPU
	o := Occupancy{ByBlocks: int(g.MaxBlocksPerSM)}
	warp := int(g.WarpSize)
	o.WarpsPerBlock = ceilDiv(l.BlockThreads, warp)
	maxWarps := int(g.MaxThreadsPerSM / g.WarpSize)

	// Warps.
	if int64(l.BlockThreads) > g.MaxThreadsPerBlock {
		return o.none(fmt.Sprintf("%d threads per block exceed max_threads_per_block %d", l.BlockThreads, g.MaxThreadsPerBlock)), nil
	}
	o.ByWarps = maxWarps / o.WarpsPerBlock

	// Registers.
	regsPerWarp := roundUp(int64(l.Registers)*g.WarpSize, g.RegisterAllocUnit)
	o.RegistersPerBlock = regsPerWarp * int64(o.WarpsPerBlock)
	hwCheck := regsPerWarp * roundUp(int64(o.WarpsPerBlock), g.SMSubPartitions)
	switch {
	case int64(l.Registers) > g.MaxRegistersPerThread:
		return o.none(fmt.Sprintf("%d registers per thread exceed max_registers_per_thread %d", l.Registers, g.MaxRegistersPerThread)), nil
	case hwCheck > g.RegistersPerBlock || o.RegistersPerBlock > g.RegistersPerBlock:
		return o.none(fmt.Sprintf("%d registers x %d threads need %d registers per block (warps rounded up to %d sub-partitions), over registers_per_block %d",
			l.Registers, l.BlockThreads, max(hwCheck, o.RegistersPerBlock), g.SMSubPartitions, g.RegistersPerBlock)), nil
	case regsPerWarp == 0:
		o.ByRegisters = math.MaxInt
	default:
		perSub := g.RegistersPerSM / g.SMSubPartitions / regsPerWarp
		o.ByRegisters = int(perSub*g.SMSubPartitions) / o.WarpsPerBlock
	}

	// Shared memory.
	o.SharedPerBlock = roundUp(l.StaticSharedBytes+l.DynamicSharedBytes+g.SharedMemoryReservedPerBlock, g.SharedMemoryAllocUnit)
	limit, limitName := g.SharedMemoryPerBlockBytes, "shared_memory_per_block_bytes"
	if l.SharedOptIn {
		limit, limitName = g.SharedMemoryPerBlockOptin, "shared_memory_per_block_optin_bytes"
	}
	if o.SharedPerBlock > limit+g.SharedMemoryReservedPerBlock {
		why := fmt.Sprintf("%d bytes of shared memory per block (%d static, %d dynamic, %d reserved, rounded to %d) exceed %s %d",
			o.SharedPerBlock, l.StaticSharedBytes, l.DynamicSharedBytes, g.SharedMemoryReservedPerBlock, g.SharedMemoryAllocUnit, limitName, limit)
		if !l.SharedOptIn && o.SharedPerBlock <= g.SharedMemoryPerBlockOptin+g.SharedMemoryReservedPerBlock {
			why += " (it fits after opting in: SharedOptIn)"
		}
		return o.none(why), nil
	}
	o.BySharedMemory = math.MaxInt
	if o.SharedPerBlock > 0 {
		o.BySharedMemory = int(g.SharedMemoryPerSMBytes / o.SharedPerBlock)
	}

	o.BlocksPerSM, o.Limiter = o.ByWarps, "warps"
	for _, b := range []struct {
		n    int
		name string
	}{{o.ByRegisters, "registers"}, {o.BySharedMemory, "shared memory"}, {o.ByBlocks, "blocks per SM"}} {
		if b.n < o.BlocksPerSM {
			o.BlocksPerSM, o.Limiter = b.n, b.name
		}
	}
	o.ActiveWarps = o.BlocksPerSM * o.WarpsPerBlock
	o.Fraction = float64(o.ActiveWarps) / float64(maxWarps)
	return o, nil
}

func (o Occupancy) none(why string) Occupancy {
	o.BlocksPerSM, o.Limiter, o.ActiveWarps, o.Fraction = 0, why, 0, 0
	return o
}

// MaxTeams is 000 Fig. 12's max_teams, "number of teams based on
// occupancy": the blocks (teams) the whole GPU holds at once, blocks per SM
// x sm_count (Sec. IV-D: "the maximum number of possible teams that can
// simultaneously run"). A league larger than that runs in the kernel's
// league loop; Fig. 19's optimised mode drops the loop when the league fits.
func (m *Model) MaxTeams(l Launch) (int64, error) {
	o, err := m.Occupancy(l)
	if err != nil {
		return 0, err
	}
	if o.BlocksPerSM == 0 {
		return 0, fmt.Errorf("%s: no team of this launch fits an SM: %s", m, o.Limiter)
	}
	return int64(o.BlocksPerSM) * m.GPU.SMCount, nil
}

// MaxBlockThreads is the largest block a kernel of regs registers per thread
// can launch with (cudaFuncAttributes.maxThreadsPerBlock): whole warps, at
// most max_threads_per_block, passing the per-block register check.
func (m *Model) MaxBlockThreads(regs int) int {
	g := m.GPU
	for t := int(g.MaxThreadsPerBlock / g.WarpSize * g.WarpSize); t > 0; t -= int(g.WarpSize) {
		// ByRegisters stays 0 when the launch fails the register checks.
		if o, err := m.Occupancy(Launch{BlockThreads: t, Registers: regs}); err == nil && o.ByRegisters > 0 {
			return t
		}
	}
	return 0
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

func roundUp(x, unit int64) int64 {
	if unit <= 1 {
		return x
	}
	return (x + unit - 1) / unit * unit
}
