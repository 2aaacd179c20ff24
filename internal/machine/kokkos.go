package machine

import (
	"fmt"
	"math"
)

// KokkosTeam is what Kokkos CUDA knows of a TeamPolicy launch when it picks
// a team size for Kokkos::AUTO (TeamPolicy::team_size_recommended).
type KokkosTeam struct {
	Reduce             bool  // parallel_reduce (team sizes rounded down to a power of 2), else parallel_for
	VectorLength       int   // requested vector length; 0 or less is Kokkos::AUTO
	Registers          int   // registers per thread of the kernel (cudaFuncAttributes.numRegs)
	StaticSharedBytes  int64 // the kernel's static shared memory (cudaFuncAttributes.sharedSizeBytes)
	TeamScratchBytes   int64 // level-0 scratch per team (set_scratch_size(0, PerTeam(..)))
	ThreadScratchBytes int64 // level-0 scratch per thread (PerThread(..))
	// ReduceValueBytes: a reduction whose value size is known only at run
	// time adds it per thread; a double or a struct (static size) adds 0.
	ReduceValueBytes int64
	LaunchMaxThreads int // Kokkos::LaunchBounds<maxT, ..>, 0: none
	LaunchMinBlocks  int // Kokkos::LaunchBounds<.., minB>, 0: none
}

// TeamShape is a TeamPolicy's team as Kokkos would launch it: a block of
// VectorLength x TeamSize threads (threadIdx.x the vector lane, threadIdx.y
// the team thread).
type TeamShape struct {
	TeamSize, VectorLength, BlockSize int
	BlocksPerSM                       int // as Kokkos counts them (kokkosBlocksPerSM)
	ThreadsPerSM                      int
}

// KokkosVectorLength is the vector length Kokkos CUDA uses for a request:
// clamped to [1, warp_size] and rounded down to a power of 2; AUTO is 1
// (TeamPolicyInternal<Cuda>::impl_determine_vector_length).
func (m *Model) KokkosVectorLength(requested int) int {
	v := min(max(requested, 1), int(m.GPU.WarpSize))
	return 1 << (bitsLen(v) - 1)
}

// KokkosTeamRecommended is the team size Kokkos CUDA picks when the team
// size is Kokkos::AUTO (ParallelFor/ParallelReduce<TeamPolicy, Cuda> call
// team_size_recommended). The rule (Kokkos 4.x, Cuda/Kokkos_Cuda_Parallel_Team.hpp
// and Kokkos_Cuda_BlockSize_Deduction.hpp, cuda_get_opt_block_size), in
// our words:
//
//   - dynamic shared memory of a block of b threads is team scratch + 16
//     (two doubles) + (thread scratch + 8 (+ a runtime-sized reduction
//     value)) x b / vector;
//   - walk b from min(max_threads_per_block, the kernel's own maximum,
//     launch bound) down in steps of 32; blocks per SM by Kokkos' own count
//     (kokkosBlocksPerSM), capped so blocks x b <= max_threads_per_sm;
//   - keep the b with the most resident threads; on a tie prefer the
//     smaller b, but not below 128 ("performance suffers significantly for
//     simple copy/set kernels");
//   - team size is b / vector; a reduction rounds b down to a power of 2
//     first.
func (m *Model) KokkosTeamRecommended(k KokkosTeam) (TeamShape, error) {
	return m.kokkosTeam(k, false)
}

// KokkosTeamMax is TeamPolicy::team_size_max: the largest block, from the
// top, that keeps at least one (or LaunchMinBlocks) block per SM
// (cuda_get_max_block_size), divided the same way.
func (m *Model) KokkosTeamMax(k KokkosTeam) (TeamShape, error) {
	return m.kokkosTeam(k, true)
}

func (m *Model) kokkosTeam(k KokkosTeam, first bool) (TeamShape, error) {
	if m.Kind != KindGPU || m.Vendor != "nvidia" {
		return TeamShape{}, fmt.Errorf("%s: Kokkos' CUDA team rule needs an NVIDIA GPU model", m)
	}
	g := m.GPU
	vector := m.KokkosVectorLength(k.VectorLength)
	top := min(int(g.MaxThreadsPerBlock), m.MaxBlockThreads(k.Registers))
	if k.LaunchMaxThreads > 0 {
		top = min(int(g.MaxThreadsPerBlock), k.LaunchMaxThreads, m.MaxBlockThreads(k.Registers))
	}
	minBlocks := max(k.LaunchMinBlocks, 1)
	perThread := k.ThreadScratchBytes + 8 + k.ReduceValueBytes
	best := TeamShape{VectorLength: vector}
	for b := top; b > 0; b -= 32 {
		dyn := k.TeamScratchBytes + 16 + perThread*int64(b/vector)
		blocks := m.kokkosBlocksPerSM(k.Registers, k.StaticSharedBytes, b, dyn)
		threads := blocks * b
		if threads > int(g.MaxThreadsPerSM) {
			blocks = int(g.MaxThreadsPerSM) / b
			threads = blocks * b
		}
		if blocks >= minBlocks && (threads > best.ThreadsPerSM || b >= 128 && threads == best.ThreadsPerSM) {
			best.BlockSize, best.BlocksPerSM, best.ThreadsPerSM = b, blocks, threads
		}
		if first && best.BlockSize != 0 {
			break
		}
	}
	if best.BlockSize == 0 {
		return TeamShape{}, fmt.Errorf("%s: Kokkos finds no team size for %d registers, %d bytes of team and %d of thread scratch (\"could not find a valid execution configuration\")",
			m, k.Registers, k.TeamScratchBytes, k.ThreadScratchBytes)
	}
	if k.Reduce {
		best.BlockSize = 1 << (bitsLen(best.BlockSize) - 1)
	}
	best.TeamSize = best.BlockSize / vector
	if best.TeamSize == 0 {
		return TeamShape{}, fmt.Errorf("%s: Kokkos' block of %d threads holds no team of vector length %d", m, best.BlockSize, vector)
	}
	best.BlockSize = best.TeamSize * vector
	return best, nil
}

// kokkosBlocksPerSM is Kokkos' own occupancy count
// (cuda_max_active_blocks_per_sm), which differs from CUDA's (Occupancy):
// registers per thread rounded up to 8 (register_alloc_unit / warp_size) and multiplied by the block's
// threads, then capped so warps stay within a multiple of 4 (the warp
// allocation granularity, sm_sub_partitions here) of registers_per_block;
// shared memory without the per-block reserve and without rounding, over
// shared_memory_per_sm_bytes, a block over shared_memory_per_block_bytes
// getting none; and max_blocks_per_sm.
func (m *Model) kokkosBlocksPerSM(regs int, static int64, block int, dynamic int64) int {
	g := m.GPU
	unit := g.RegisterAllocUnit / g.WarpSize // 8 registers per thread: 256 per warp
	perThread := roundUp(int64(regs), unit)
	byRegs := math.MaxInt
	if perThread > 0 {
		byRegs = int(g.RegistersPerSM / (perThread * int64(block)))
		perWarp := roundUp(int64(regs)*g.WarpSize, g.RegisterAllocUnit)
		gran := g.SMSubPartitions
		maxWarps := int(gran * (g.RegistersPerBlock / (perWarp * gran)))
		for byRegs*block/int(g.WarpSize) > maxWarps {
			byRegs--
		}
	}
	total := static + dynamic
	var byShared int
	switch {
	case total > g.SharedMemoryPerBlockBytes || dynamic > g.SharedMemoryPerBlockBytes-static:
		byShared = 0
	case total > 0:
		byShared = int(g.SharedMemoryPerSMBytes / total)
	default:
		byShared = byRegs
	}
	return min(byRegs, byShared, int(g.MaxBlocksPerSM))
}

func bitsLen(x int) int {
	n := 0
	for ; x > 0; x >>= 1 {
		n++
	}
	return n
}
