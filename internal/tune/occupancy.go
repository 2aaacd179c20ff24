package tune

import (
	"fmt"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// Occupancy is the pruned search's model of a GPU: the machine model's
// occupancy rule (internal/machine) over the registers and static shared
// memory of each cell's team kernels, read by the build (cuobjdump). It
// rules a configuration out, before anything runs, when
//
//   - no block of team_size x vector_size threads launches (registers or
//     shared memory per block),
//   - the blocks an SM holds keep fewer than machine.MinResidentFraction of its
//     threads resident, or
//   - a launch bound (max_teams, max_active_teams) at or above every
//     league the configuration launches: the same launch as the default's
//     bound (or the space's largest), measured once.
//
// A cell without kernel resources is judged with 0 registers; when several
// kernels could be the team launch, a configuration is ruled out only when
// every one of them rules it out.
type Occupancy struct {
	Model     *machine.Model
	Resources map[string][]machine.Resources // by cell ID: the build's kernels
}

// launchBounds are the tunables that cap a launch's teams: a value at or
// above the league launches the league.
var launchBounds = []string{"max_teams", "max_active_teams"}

// Admits implements Model.
func (o Occupancy) Admits(t Target, c Config) error {
	if err := o.bounds(t, c); err != nil {
		return err
	}
	ts, ok1 := c["team_size"]
	vs, ok2 := c["vector_size"]
	if !ok1 || !ok2 || o.Model == nil || o.Model.Kind != machine.KindGPU {
		return nil
	}
	threads := int(ts * vs)
	ks := machine.TeamKernels(o.Resources[t.Cell])
	if len(ks) == 0 {
		ks = []machine.Resources{{Kernel: "(no resources recorded)"}}
	}
	var why error
	for _, k := range ks {
		occ, err := o.Model.Occupancy(k.Launch(threads, 0))
		switch {
		case err != nil:
			return nil // no rule for this device: nothing is ruled out
		case occ.BlocksPerSM == 0:
			why = fmt.Errorf("a block of %d threads does not launch (%s)", threads, occ.Limiter)
		case float64(occ.BlocksPerSM*threads) < machine.MinResidentFraction*float64(o.Model.GPU.MaxThreadsPerSM):
			why = fmt.Errorf("fewer than %.0f%% of an SM's threads resident", 100*machine.MinResidentFraction)
		default:
			return nil
		}
	}
	return why
}

// bounds rules out a launch bound at or above every league of c, unless it
// is the one value of those kept: the default's, else the space's largest.
func (o Occupancy) bounds(t Target, c Config) error {
	s := t.Space
	leagues, ok := s.Leagues(c)
	if !ok || len(leagues) == 0 {
		return nil
	}
	league := slices.Max(leagues)
	for _, name := range launchBounds {
		v, has := c[name]
		if !has || v < league {
			continue
		}
		keep := slices.Max(s.Values[name])
		if d, ok := s.Default[name]; ok && d >= league {
			keep = d
		}
		if v != keep {
			return fmt.Errorf("%s at or above the league: the launch of %s=%d", name, name, keep)
		}
	}
	return nil
}

// Leagues are the league sizes of the cell's team launches at cfg (false
// when one does not evaluate to an integer).
func (c *CellSpace) Leagues(cfg Config) ([]int64, bool) {
	env := maps2env(c.env, cfg)
	var out []int64
	for _, t := range c.teams {
		if t.League == "" {
			continue
		}
		v, err := spec.Eval(t.League, env)
		if err != nil || !v.Int {
			return nil, false
		}
		out = append(out, v.I)
	}
	return out, true
}

// maps2env is the kernel's environment with cfg, its arguments' members
// also by the names the pattern's code reads them (A.nrows as A_nrows).
func maps2env(base spec.Env, cfg Config) spec.Env {
	env := spec.Env{}
	for k, v := range base {
		env[k] = v
		env[strings.ReplaceAll(k, ".", "_")] = v
	}
	for k, v := range cfg {
		env[k] = spec.Value{I: v, Int: true}
	}
	return env
}
