package mapping

// The host's sizes: the mapped kernels' map_team_size and map_vector_size on
// a CPU, from a CPU machine model (docs/machines.md), beside the GPU's from
// the GPU model. The host backends run a league rank as one OS thread's
// unit of work (omp-host's parallel for, kk-omp's host league, Kokkos'
// OpenMP backend), a team's threads one after the other in that thread and
// its vector loop as a simd loop; so the vector length is the doubles one
// simd register of the code holds, and the team size makes a league rank's
// team x vector consecutive iterations of a split stride-1 loop cover whole
// cache lines (a lane walking a column then uses every byte of the lines it
// loads, and two ranks share no line).

import (
	"fmt"
	"strings"

	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// DefaultCPU is the CPU model the host sizes come from: the host toolchains
// (toolchains.yaml, target host) compile without -march, so the code they
// make may use the x86-64 psABI baseline's registers only (SSE2, 128 bits),
// whatever the machine that builds or runs it has.
const DefaultCPU = "x86-64-generic"

// hostShape is the team size and vector length for a CPU: the vector the
// doubles of one simd register (no more than maxVector when that is > 0:
// the GPU mapping's vector length where a short loop cut it), the team the
// fewest threads whose lanes cover a cache line (no more than maxTeam when
// > 0: the GPU mapping's team of 1, where no loop is on the team level).
func hostShape(m *machine.Model, maxVector, maxTeam int64) (team, vector int64, why string) {
	const double = 8
	regDoubles := max(m.CPU.SIMDBits/8/double, 1)
	vector = regDoubles
	var notes []string
	if maxVector > 0 && vector > maxVector {
		vector = 1
		for vector*2 <= maxVector {
			vector *= 2
		}
		notes = append(notes, fmt.Sprintf("vector cut to %d: no longer than the GPU mapping's vector length %d (a short vector loop)", vector, maxVector))
	}
	line := max(m.CPU.CacheLineBytes, double)
	team = max(line/(vector*double), 1)
	if maxTeam > 0 && team > maxTeam {
		team = maxTeam
		notes = append(notes, fmt.Sprintf("team cut to %d, as the GPU mapping's (no team loop, or one of that trip count)", maxTeam))
	}
	why = fmt.Sprintf("vector %d = simd_bits %d / 64 (%s), team %d = cache_line_bytes %d / (%d x 8 bytes) (%s)",
		vector, m.CPU.SIMDBits, cite(m, "simd_bits"), team, line, vector, cite(m, "cache_line_bytes"))
	if len(notes) > 0 {
		why += "; " + strings.Join(notes, "; ")
	}
	return team, vector, why
}

// cite is the source of a model's field, its key and its text's first
// clause.
func cite(m *machine.Model, field string) string {
	v, ok := m.Values[field]
	if !ok {
		return "not in the model"
	}
	text, _, _ := strings.Cut(m.Sources[v.Source], ":")
	return "source " + v.Source + ": " + strings.TrimSpace(text)
}

// LowerHost gives each lowered loop-nest kernel its host sizes from the CPU
// model m: the Host value of its map_team_size and map_vector_size
// (spec.Tunable.On), which the host backends' programs are generated with
// and kk-omp's and omp-raw's take when they run on the host, and a line of
// its explanation.
func LowerHost(kernels []*spec.Kernel, m *machine.Model) {
	for _, k := range kernels {
		if k.Loops == nil || k.Pattern == nil {
			continue
		}
		maxVector, maxTeam := int64(0), int64(0)
		for _, t := range k.Tunables {
			// a GPU value below the warp is a constant trip count's cut
			if t.Name == VectorTunable && t.Value < 32 {
				maxVector = t.Value
			}
			if t.Name == TeamTunable && t.Value == 1 {
				maxTeam = 1 // no team loop
			}
		}
		team, vector, why := hostShape(m, maxVector, maxTeam)
		for i := range k.Tunables {
			switch k.Tunables[i].Name {
			case TeamTunable:
				k.Tunables[i].Host = team
			case VectorTunable:
				k.Tunables[i].Host = vector
			}
		}
		k.Mapping += fmt.Sprintf("  on the host: team size %d, vector length %d from %s (%s, the host toolchains' target): %s; the host backends generate these (kk-omp and omp-raw take them when they run on the host, kokkos-openmp keeps a team of 1, its pool's threads); a team's threads run one after the other in one OS thread, its vector is a simd loop\n",
			team, vector, m.Name, m.Description, why)
	}
}
