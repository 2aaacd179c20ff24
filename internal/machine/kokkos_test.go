package machine

import "testing"

// Expected team shapes derived by hand with Kokkos' rule (kokkos.go) on the
// H100's numbers: blocks per SM by registers are 65536 / (regs rounded to 8
// x b), kept within 64 warps; by shared memory 233472 / (team scratch + 16 +
// (thread scratch + 8) x b / vector) with nothing over 49152; at most 32;
// the most resident threads wins, ties going to the smaller block >= 128.
func TestKokkosTeamRecommended(t *testing.T) {
	h100 := model(t, "h100-sxm5-80gb")
	for _, c := range []struct {
		name                 string
		team                 KokkosTeam
		teamSize, vector     int
		blocksPerSM, threads int
	}{
		// 32 regs: b = 1024 gives 2 blocks (2048 threads); so do 512, 256
		// and 128 (16 blocks); 96 gives 21 (2016), 64 ties at 2048 but is
		// under 128. 2 levels (vector 1): a team of 128.
		{"for, 2 levels, 32 regs", KokkosTeam{Registers: 32}, 128, 1, 16, 2048},
		// 64 regs: 1 block of 1024, 2 of 512, 4 of 256, 8 of 128 (1024
		// threads each); 96 gives 10 (960); 64 ties under 128.
		{"for, 2 levels, 64 regs", KokkosTeam{Registers: 64, VectorLength: 1}, 128, 1, 8, 1024},
		// 3 levels, vector 8, a reduction: the same 128-thread block, a
		// power of 2 already: 16 team threads x 8 lanes (the Kokkos CUDA
		// example's 16 x 8).
		{"reduce, vector 8, 32 regs", KokkosTeam{Reduce: true, VectorLength: 8, Registers: 32}, 16, 8, 16, 2048},
		// 200 bytes of thread scratch: b x 208 + 16 must stay under 49152, so
		// b <= 224: 224 gives 5 blocks (1120 threads), 192 5 (960), 160 7
		// (1120, a tie won by the smaller), 128 8 (1024), 96 11 (1056), 64 17
		// (1088), 32 32 (1024): 160 threads.
		{"for, thread scratch 200", KokkosTeam{Registers: 32, ThreadScratchBytes: 200}, 160, 1, 7, 1120},
		// The same as a reduction: 160 rounded down to a power of 2.
		{"reduce, thread scratch 200", KokkosTeam{Reduce: true, Registers: 32, ThreadScratchBytes: 200}, 128, 1, 7, 1120},
		// AUTO vector length is 1.
		{"for, vector AUTO", KokkosTeam{Registers: 32, VectorLength: -1}, 128, 1, 16, 2048},
	} {
		got, err := h100.KokkosTeamRecommended(c.team)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got.TeamSize != c.teamSize || got.VectorLength != c.vector || got.BlocksPerSM != c.blocksPerSM || got.ThreadsPerSM != c.threads {
			t.Errorf("%s: %+v; want team %d x vector %d, %d blocks, %d threads per SM", c.name, got, c.teamSize, c.vector, c.blocksPerSM, c.threads)
		}
	}
}

func TestKokkosTeamMax(t *testing.T) {
	h100 := model(t, "h100-sxm5-80gb")
	// 32 regs: the 1024-thread block already fits (2 per SM).
	// 128 regs: the kernel's own limit is 512 threads (MaxBlockThreads),
	// which fits once.
	for regs, want := range map[int]int{32: 1024, 128: 512} {
		got, err := h100.KokkosTeamMax(KokkosTeam{Registers: regs})
		if err != nil || got.TeamSize != want {
			t.Errorf("team_size_max with %d regs: %+v, %v; want %d", regs, got, err, want)
		}
	}
	// Team scratch over the 48 KiB a block may have: nothing fits.
	if got, err := h100.KokkosTeamRecommended(KokkosTeam{Registers: 32, TeamScratchBytes: 49152}); err == nil {
		t.Errorf("48 KiB of team scratch plus Kokkos' 16 bytes: %+v, want an error", got)
	}
	if _, err := model(t, "mi300a").KokkosTeamRecommended(KokkosTeam{Registers: 32}); err == nil {
		t.Error("Kokkos' CUDA rule on an AMD model: no error")
	}
}

func TestKokkosVectorLength(t *testing.T) {
	h100 := model(t, "h100-sxm5-80gb")
	for req, want := range map[int]int{-1: 1, 0: 1, 1: 1, 8: 8, 12: 8, 32: 32, 64: 32} {
		if got := h100.KokkosVectorLength(req); got != want {
			t.Errorf("KokkosVectorLength(%d) = %d, want %d", req, got, want)
		}
	}
}
