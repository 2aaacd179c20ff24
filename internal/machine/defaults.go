package machine

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
)

// A model default is a launch parameter that the papers set from the device
// rather than fixed in the code: 000 Fig. 12's max_teams is the occupancy
// bound. A strategy declares which of its launch parameters take one
// (variants/strategies.yaml `model_defaults: {max_teams: occupancy}`); the
// run stage passes the values to the harness (--defaults), so the records of
// the papers' launch "as published" are neither tuning evaluations nor the
// generated values.

// DefaultKind is one kind of model default: the launch parameters it may
// give and how it computes one for a cell.
type DefaultKind struct {
	Doc    string
	Params []string
	give   func(m *Model, c CellLaunch) (int64, error)
}

// DefaultKinds is the one table of the kinds of model default; the
// strategies file may name only these. A new kind (Kokkos' recommended team
// size for kk-cuda's team_size, KokkosTeamRecommended) is one more row.
var DefaultKinds = map[string]DefaultKind{
	"occupancy": {
		Doc:    "000 Fig. 12's max_teams: the teams the GPU holds at once (MaxTeams) for the cell's team kernels, each team of its team patterns' threads (team_size x vector)",
		Params: []string{"max_teams", "max_active_teams"},
		give:   occupancyDefault,
	},
}

// DefaultKindNames lists DefaultKinds, sorted.
func DefaultKindNames() []string {
	var out []string
	for k := range DefaultKinds {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// CellLaunch is what a model default needs of a built cell: the threads per
// team of its team patterns at its generated tunables (build.Entry.Blocks)
// and the build's kernel resources.
type CellLaunch struct {
	Blocks  []int64
	Kernels []Resources
}

// Defaults computes the defaults want asks for (launch parameter -> kind)
// for one cell on m. A parameter whose default cannot be computed is left
// out with a note (the program then runs its generated value); notes are
// sorted by parameter.
func Defaults(m *Model, want map[string]string, c CellLaunch) (map[string]int64, []string) {
	out := map[string]int64{}
	var notes []string
	params := make([]string, 0, len(want))
	for p := range want {
		params = append(params, p)
	}
	sort.Strings(params)
	for _, p := range params {
		k, ok := DefaultKinds[want[p]]
		if !ok {
			notes = append(notes, fmt.Sprintf("%s: unknown kind of model default %q", p, want[p]))
			continue
		}
		v, err := k.give(m, c)
		if err != nil {
			notes = append(notes, fmt.Sprintf("%s (%s): %v; the generated value stays", p, want[p], err))
			continue
		}
		out[p] = v
	}
	return out, notes
}

// harnessKernel marks the harness's own device kernels (pm::device: flush,
// STREAM, checks), which no launch parameter of the cell sizes.
const harnessKernel = "_ZN2pm6device"

// cudaHelper starts the names of CUDA's helper functions
// (__cuda_sm20_div_s64, __cuda_sm20_rem_s64) that cuobjdump lists with the
// kernels: device functions, not launches.
const cudaHelper = "__cuda_"

// teamLaunches mark the kernel-mode layer's team launches in a mangled name:
// pmkk::ompx_impl::launch_team<bool> (harness/kk/ompx.hpp) and the scratch
// launch pmkk::ompx_team_impl::launch<bool> (harness/kk/ompx_team.hpp).
var teamLaunches = []string{"launch_team", "ompx_team_impl6launchI"}

// TeamLaunches are the kernels of ks that the kernel-mode layer's team
// launches made, known by name.
func TeamLaunches(ks []Resources) []Resources {
	var out []Resources
	for _, k := range ks {
		if !strings.Contains(k.Kernel, harnessKernel) && slices.ContainsFunc(teamLaunches, func(m string) bool { return strings.Contains(k.Kernel, m) }) {
			out = append(out, k)
		}
	}
	return out
}

// TeamKernels are the kernels of ks that launch teams: the kernel-mode
// layer's team launches (TeamLaunches) when there are any, else every
// kernel but the harness's and CUDA's helper functions (the direct
// backends' launches are named by their source line only).
func TeamKernels(ks []Resources) []Resources {
	if team := TeamLaunches(ks); len(team) > 0 {
		return team
	}
	var own []Resources
	for _, k := range ks {
		if !strings.Contains(k.Kernel, harnessKernel) && !strings.HasPrefix(k.Kernel, cudaHelper) {
			own = append(own, k)
		}
	}
	return own
}

// occupancyDefault is MaxTeams for a team of each of the cell's blocks,
// the smallest over the cell's team kernels (the bound is one value for
// every launch of the program). Dynamic shared memory (team scratch, the
// layers' reduction buffers) is known only at launch: not counted.
func occupancyDefault(m *Model, c CellLaunch) (int64, error) {
	if len(c.Blocks) == 0 {
		return 0, fmt.Errorf("the build recorded no team blocks (no team pattern, or one not constant in the tunables)")
	}
	ks := TeamKernels(c.Kernels)
	if len(ks) == 0 {
		return 0, fmt.Errorf("the build recorded no kernel resources")
	}
	best := int64(math.MaxInt64)
	for _, k := range ks {
		for _, b := range c.Blocks {
			n, err := m.MaxTeams(k.Launch(int(b), 0))
			if err != nil {
				return 0, fmt.Errorf("%s at %d threads: %w", k.Kernel, b, err)
			}
			best = min(best, n)
		}
	}
	return best, nil
}
