package mapping

import (
	"fmt"
	"slices"

	"github.com/portmatrix/portmatrix/internal/machine"
)

// minVector is the narrowest vector the mapper picks for a loop at least
// that long: 8 doubles, 64 bytes, whole 32-byte sectors of a stride-1 access.
const minVector = 8

// vectorFor is the vector length for loops of the given constant trip
// counts on a warp of warp lanes: of the powers of two from minVector to
// the warp (Kokkos rounds a vector length to one), the one that leaves the
// fewest lanes idle over all of them, the wider on a tie. HOMMEXX's 72
// levels take 8 lanes (9 full trips) rather than 32 (3 trips, a quarter of
// the lanes idle). Loops of unknown trip count take the warp; loops all
// shorter than minVector the widest power of two no longer than the
// longest. why says which rule chose.
func vectorFor(trips []int64, warp int64) (v int64, why string) {
	if len(trips) == 0 {
		return warp, fmt.Sprintf("the warp's %d lanes", warp)
	}
	longest := slices.Max(trips)
	if longest < minVector || warp < minVector {
		v = 1
		for v*2 <= min(longest, warp) {
			v *= 2
		}
		return v, fmt.Sprintf("the widest power of two no longer than the longest vector trip count %d", longest)
	}
	bestIdle, busy := int64(-1), int64(0)
	for w := int64(minVector); w <= warp; w *= 2 {
		idle, total := int64(0), int64(0)
		for _, c := range trips {
			n := (c + w - 1) / w * w
			idle, total = idle+n-c, total+n
		}
		if bestIdle < 0 || idle <= bestIdle {
			v, bestIdle, busy = w, idle, total-idle
		}
	}
	return v, fmt.Sprintf("of the powers of two from %d to the warp's %d lanes, the one that leaves the fewest idle over the vector trip counts %v (%d of %d lane-iterations busy)", minVector, warp, trips, busy, busy+bestIdle)
}

// teamShape is the team shape of a launch whose vector loops have the given
// constant trip counts and whose team ranges hold at most teamMax
// iterations, each team with scratch bytes of level-0 team scratch. For
// each vector length vectorFor would consider, the team is the one Kokkos
// recommends for it (cut to teamMax); the shape kept is the one with the
// most lanes busy over the vector trip counts among those that keep at
// least machine.MinResidentFraction of an SM's threads resident (the
// tuner's pruning floor), the wider on a tie; where none does, the one with
// the most resident. On the H100, laplace_simple's mapped form with 37 KiB
// of scratch measured 16 x 8 (every lane busy, 38% resident) 1.43x faster
// than 16 x 32 (75% busy, 100% resident), which weighing lanes by occupancy
// had chosen (docs/hommexx.md).
func teamShape(m *machine.Model, trips []int64, teamMax, scratch int64) (team, vector int64, why string) {
	candidates := []int64{}
	if v, _ := vectorFor(trips, m.GPU.WarpSize); v < minVector || len(trips) == 0 {
		candidates = append(candidates, v)
	} else {
		for w := int64(minVector); w <= m.GPU.WarpSize; w *= 2 {
			candidates = append(candidates, w)
		}
	}
	type shape struct {
		team, vector int64
		busy, occ    float64
	}
	var best *shape
	better := func(a, b *shape) bool { // a better than b
		aIn, bIn := a.occ >= machine.MinResidentFraction, b.occ >= machine.MinResidentFraction
		switch {
		case aIn != bIn:
			return aIn
		case !aIn:
			return a.occ >= b.occ
		}
		return a.busy >= b.busy-1e-9
	}
	for _, w := range candidates {
		t := int64(1)
		if s, err := m.KokkosTeamRecommended(machine.KokkosTeam{VectorLength: int(w), TeamScratchBytes: scratch}); err == nil {
			t = int64(s.TeamSize)
		}
		if teamMax > 0 {
			t = min(t, teamMax)
		}
		sh := &shape{team: t, vector: w, busy: 1, occ: 1}
		if len(trips) > 0 {
			n, c := int64(0), int64(0)
			for _, x := range trips {
				n, c = n+(x+w-1)/w*w, c+x
			}
			sh.busy = float64(c) / float64(n)
		}
		if o, err := m.Occupancy(machine.Launch{BlockThreads: int(t * w), DynamicSharedBytes: scratch}); err == nil {
			sh.occ = o.Fraction
		}
		if best == nil || better(sh, best) {
			best = sh
		}
	}
	why = fmt.Sprintf("%.0f%% of lane-iterations busy at %.0f%% theoretical occupancy (team %d x vector %d, %d bytes of team scratch; at least %.0f%% resident)",
		100*best.busy, 100*best.occ, best.team, best.vector, scratch, 100*machine.MinResidentFraction)
	return best.team, best.vector, why
}
