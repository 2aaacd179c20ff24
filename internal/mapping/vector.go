package mapping

import (
	"fmt"
	"slices"

	"github.com/portmatrix/portmatrix/internal/machine"
)

// minVector is the narrowest vector the mapper picks for a loop at least
// that long: 8 doubles, 64 bytes, whole 32-byte sectors of a stride-1 access.
const minVector = 8

// vectorWidths are the vector lengths the mapper weighs for vector loops of
// the given constant trip counts on a warp of warp lanes: the powers of two
// (Kokkos rounds a vector length to one) from minVector to the warp; the
// warp alone where no trip count is constant; for loops all shorter than
// minVector, the widest power of two no longer than the longest.
func vectorWidths(trips []int64, warp int64) []int64 {
	if len(trips) == 0 {
		return []int64{warp}
	}
	if longest := slices.Max(trips); longest < minVector || warp < minVector {
		v := int64(1)
		for v*2 <= min(longest, warp) {
			v *= 2
		}
		return []int64{v}
	}
	var ws []int64
	for w := int64(minVector); w <= warp; w *= 2 {
		ws = append(ws, w)
	}
	return ws
}

// busyFraction is the share of lane-iterations that loops of the given trip
// counts keep busy on w lanes (72 levels: all of them on 8, 75% on 32).
func busyFraction(trips []int64, w int64) float64 {
	if len(trips) == 0 {
		return 1
	}
	n, c := int64(0), int64(0)
	for _, x := range trips {
		n, c = n+(x+w-1)/w*w, c+x
	}
	return float64(c) / float64(n)
}

// teamShape is the team shape of a launch whose vector loops have the given
// constant trip counts and whose team ranges hold at most teamMax
// iterations, each team with scratch bytes of level-0 team scratch. For
// each of vectorWidths, the team is the one Kokkos
// recommends for it (cut to teamMax); the shape kept is the one with the
// most lanes busy over the vector trip counts among those that keep at
// least machine.MinResidentFraction of an SM's threads resident (the
// tuner's pruning floor), the wider on a tie; where none does, the one with
// the most resident. On the H100, laplace_simple's mapped form with 37 KiB
// of scratch measured 16 x 8 (every lane busy, 38% resident) 1.43x faster
// than 16 x 32 (75% busy, 100% resident), which weighing lanes by occupancy
// had chosen (docs/hommexx.md).
func teamShape(m *machine.Model, trips []int64, teamMax, scratch int64) (team, vector int64, why string) {
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
	for _, w := range vectorWidths(trips, m.GPU.WarpSize) {
		t := int64(1)
		if s, err := m.KokkosTeamRecommended(machine.KokkosTeam{VectorLength: int(w), TeamScratchBytes: scratch}); err == nil {
			t = int64(s.TeamSize)
		}
		if teamMax > 0 {
			t = min(t, teamMax)
		}
		sh := &shape{team: t, vector: w, busy: busyFraction(trips, w), occ: 1}
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
