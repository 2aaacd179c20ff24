package tune

import (
	"fmt"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// Occupancy is the pruned search's model of a GPU: the machine model's
// occupancy rule (internal/machine) over the registers and static shared
// memory of each cell's team kernels, read by the build (cuobjdump). A
// block is a team launch's team_size x vector threads as the kernel's team
// pattern declares them (CellSpace.Blocks). It rules a configuration out,
// before anything runs, when
//
//   - a team kernel cannot launch the block at all (registers or shared
//     memory per block): every team kernel of the program launches with
//     the same team shape, so the one that cannot makes the run fail
//     ("too many resources requested for launch");
//   - the blocks an SM holds keep fewer than machine.MinResidentFraction of its
//     threads resident, for every team kernel (a heuristic: one kernel that
//     keeps the SM busy keeps the configuration); or
//   - a launch bound (max_teams, max_active_teams) at or above every
//     league the configuration launches: the same launch as the default's
//     bound (or the space's largest), measured once.
//
// The first rule holds for launches of exactly the block asked for (CUDA,
// kernel mode: exactLaunch). A cell without kernel resources is judged
// with 0 registers. The team
// kernels are machine.TeamKernels; where those are guessed (no layer's team
// launch among them) and the cell also launches ranges, a kernel may be a
// range launch of its own block size, so the first rule then needs every
// one of them to refuse the block.
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
	if o.Model == nil || o.Model.Kind != machine.KindGPU || t.Space == nil {
		return nil
	}
	blocks, ok := t.Space.Blocks(c)
	if !ok {
		return nil
	}
	if len(blocks) == 0 {
		return o.ranges(t, c)
	}
	// A kernel that cannot launch the smallest of the cell's blocks launches
	// none (registers and shared memory grow with the block); residency is
	// judged at the largest.
	small, large := slices.Min(blocks), slices.Max(blocks)
	rs := o.Resources[t.Cell]
	ks := machine.TeamKernels(rs)
	if len(ks) == 0 {
		ks = []machine.Resources{{Kernel: "(no resources recorded)"}}
	}
	exact := t.Space.rec.Exact
	if exact {
		sure := len(machine.TeamLaunches(rs)) > 0 || !t.Space.rec.OtherLaunch
		launch, refused, ok := o.launching(ks, small)
		if !ok {
			return nil // no rule for this device: nothing is ruled out
		}
		if refused != nil && (sure || launch == 0) {
			return refused
		}
	}
	for _, k := range ks {
		occ, err := o.Model.Occupancy(k.Launch(large, 0))
		if err != nil {
			return nil // no rule for this device: nothing is ruled out
		}
		if occ.BlocksPerSM == 0 && !exact {
			return nil // the runtime fits the threads to the kernel: their residency is its
		}
		if occ.BlocksPerSM > 0 && float64(occ.BlocksPerSM*large) >= machine.MinResidentFraction*float64(o.Model.GPU.MaxThreadsPerSM) {
			return nil
		}
	}
	return ErrFewResident
}

// Score implements Scorer, Guided's prior: the fraction of an SM's threads
// the configuration keeps resident at its largest block, the best of the
// cell's team kernels (1: full), the model's occupancy rule over the
// kernels' registers and shared memory. A configuration the model cannot
// judge (no GPU model, no team launch) scores 0, as does a block that does
// not launch.
func (o Occupancy) Score(t Target, c Config) float64 {
	if o.Model == nil || o.Model.Kind != machine.KindGPU || t.Space == nil || o.Model.GPU.MaxThreadsPerSM == 0 {
		return 0
	}
	blocks, ok := t.Space.Blocks(c)
	if !ok || len(blocks) == 0 {
		return 0
	}
	large := slices.Max(blocks)
	ks := machine.TeamKernels(o.Resources[t.Cell])
	if len(ks) == 0 {
		ks = []machine.Resources{{Kernel: "(no resources recorded)"}}
	}
	best := 0.0
	for _, k := range ks {
		occ, err := o.Model.Occupancy(k.Launch(large, 0))
		if err != nil {
			return 0
		}
		best = max(best, min(1, float64(occ.BlocksPerSM*large)/float64(o.Model.GPU.MaxThreadsPerSM)))
	}
	return best
}

// ErrFewResident marks the residency heuristic's refusals: a configuration
// that launches but leaves the SM mostly idle. It prunes the search; it
// never keeps the default (the as-published launch) from being measured.
var ErrFewResident = fmt.Errorf("fewer than %.0f%% of an SM's threads resident", 100*machine.MinResidentFraction)

// ranges rules out, in a cell of range launches only, a block of a block
// tunable's threads (range_block) that no kernel launches: the layers make
// each block size its own kernel, told apart only by a template argument,
// so every kernel must refuse it. Residency is not judged: a range
// launch's grid strides over its elements whatever the block.
func (o Occupancy) ranges(t Target, c Config) error {
	ks := machine.TeamKernels(o.Resources[t.Cell]) // no team launch here: every kernel of the cell
	if !t.Space.rec.Exact || len(ks) == 0 {
		return nil
	}
	for _, name := range t.Space.Names {
		if !slices.Contains(t.Space.rec.Blocks, name) {
			continue
		}
		launch, refused, ok := o.launching(ks, int(c[name]))
		if !ok {
			return nil // no rule for this device: nothing is ruled out
		}
		if launch == 0 {
			return refused
		}
	}
	return nil
}

// launching counts the kernels of ks that can launch a block of threads,
// with the first refusal's reason (nil when none refuses); ok is false when
// the model has no rule for the device.
func (o Occupancy) launching(ks []machine.Resources, threads int) (launch int, refused error, ok bool) {
	for _, k := range ks {
		occ, err := o.Model.Occupancy(k.Launch(threads, 0))
		if err != nil {
			return 0, nil, false
		}
		if occ.BlocksPerSM > 0 {
			launch++
		} else if refused == nil {
			refused = fmt.Errorf("a block of %d threads does not launch (%s)", threads, occ.Limiter)
		}
	}
	return launch, refused, true
}

// exactLaunch says whether v launches a block of exactly the threads asked
// for, so a block the kernel cannot hold fails the launch: CUDA's <<<>>>
// and kernel mode's ompx_bare (a capability the strategy requires). Plain
// OpenMP's thread_limit is a bound the runtime lowers to what the kernel
// can launch (a 1024-thread omp-raw team of a 130-register kernel ran and
// verified on the H100), so there it rules nothing out.
func exactLaunch(v *matrix.Variant) bool {
	return v != nil && (v.Strategy.Device == "cuda" || slices.Contains(v.Strategy.Requires, "ompx_bare"))
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
		if !has || v < league || len(s.Values[name]) == 0 { // not a tunable of the space: not judged here
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

// Blocks are the threads per block of the cell's team launches at cfg: each
// team pattern's team_size x vector, as the kernel declares them (team_size:
// team_size, map_team_size or snap_team), so no tunable's name is the
// model's; false when one does not evaluate to an integer.
func (c *CellSpace) Blocks(cfg Config) ([]int, bool) {
	env := maps2env(c.env, cfg)
	var out []int
	for _, t := range c.teams {
		b, err := t.Block(env)
		if err != nil {
			return nil, false
		}
		out = append(out, int(b))
	}
	return out, true
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
