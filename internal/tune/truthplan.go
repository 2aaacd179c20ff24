package tune

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/matrix"
)

// TruthCell is a cell whose whole space the ground truth measures
// (scripts/tune-truth.sh selects the same).
type TruthCell struct {
	Kernel, Variant, Toolchain string
	Size                       int64
}

// ID is the cell's ID.
func (c TruthCell) ID() string { return c.Kernel + "." + c.Variant + "." + c.Toolchain }

// TruthCells are the ground truth's cells: SPMV and CG-Solve under KK-CUDA
// 3 levels (nvcc), kernel mode's Fig. 19 launch (kk-ompx-opt, the claims'
// kernel-mode bar) and KK-OMP B (clang 22), and DOT under two OpenMP
// forms, at the 002 matrix's tuning sizes (tune-matrix.sh).
var TruthCells = []TruthCell{
	{"spmv", "kk-cuda-3lvl", "nvcc-sm90", 150},
	{"spmv", "kk-ompx-opt", "clang22-sm90", 150},
	{"spmv", "kk-omp-b", "clang22-sm90", 150},
	{"cgsolve", "kk-cuda-3lvl", "nvcc-sm90", 150},
	{"cgsolve", "kk-ompx-opt", "clang22-sm90", 150},
	{"cgsolve", "kk-omp-b", "clang22-sm90", 150},
	{"dot", "kk-omp-b", "clang22-sm90", 100000000},
	{"dot", "kk-ompx-opt", "clang22-sm90", 100000000},
}

// The committed folders a dry run estimates from: the H200 tunings whose
// programs' records time a process (TimingFolders: setup, reference,
// each configuration; the whole matrix's first, which timed every kernel
// of it, TestSNAP's and HOMMEXX's too, then the SPMV and CG-Solve tuning
// before it), and the H100 tuning of the 002 matrix and 000's kernel-mode
// variants (MatrixFolder: the (cell, size) targets of a matrix tuning).
var TimingFolders = []string{"results/nvidia-h200-matrix-tuning", "results/20261125-144936-nvidia-h200-tune"}

const (
	MatrixFolder = "results/nvidia-h100-tuning"
	// TruthFolder is the ground truth the searches are judged on
	// (tunecheck); its run.json times the whole exhaustive tuning, which
	// the dry run sets beside its estimate of the same.
	TruthFolder = "results/nvidia-h200-truth"
)

// DefaultEvals is the budget a matrix tuning takes per (cell, size)
// (scripts/tune-matrix.sh's PM_TUNE_EVALS): within it the default search
// reaches 0.97 of the true optimum on every cell of the ground truth
// (docs/tuning.md, "Which search beyond the budget").
const DefaultEvals = 32

// Cost is the GPU time of a kernel's tuning at a size under the tuning's
// protocol (session.tuneProtocol): each process (starting it, its data
// and uploads), the float64 reference (once per kernel, size and
// toolchain: a tuning's processes share it), and each configuration
// measured (its untimed first run and its timed reps). Assumed marks a
// cost not read from records.
type Cost struct {
	ProcessS, ReferenceS, ConfigS float64
	Assumed                       bool
}

// Costs are the costs by kernel and size.
type Costs map[string]map[int64]Cost

// assumedCosts are what docs/tuning.md estimates where no record times a
// kernel (DOT and AXPBY at 1e8: 4 s a process, 0.1 s a configuration).
var assumedCosts = map[string]Cost{"dot": {ProcessS: 4, ConfigS: 0.1, Assumed: true}, "axpby": {ProcessS: 4, ConfigS: 0.1, Assumed: true}}

// TuneRepSeconds bounds the timed calls of a tuning's measurement where
// PM_REP_SECONDS does not (session.tuneProtocol): a configuration is
// compared, not reported, and a TestSNAP step of 0.4 s keeps 3 reps.
const TuneRepSeconds = 1.0

// A tuning's measuring protocol, as the dry run models it: at most
// tuneReps timed reps (PM_REPS' default), bounded to TuneRepSeconds of
// calls but never fewer than 3 (the harness's kMinReps), after one
// untimed first run; no warm-ups and no sections run.
const (
	tuneReps    = 5
	tuneMinReps = 3
)

// startS is what starting a process costs beyond its records' set-up and
// measuring where a log does not time its processes (LogProcess): the
// whole-matrix tuning of results/nvidia-h200-matrix-tuning ran 1283 s over
// 167 processes whose records account for 1209 s.
const startS = (1283.0 - 1209.0) / 167

// protocolCalls is how many calls a configuration makes under the tuning
// protocol when each call takes each seconds.
func protocolCalls(each float64) int {
	reps := tuneReps
	if each > 0 && TuneRepSeconds/each < float64(reps) {
		reps = max(tuneMinReps, int(TuneRepSeconds/each))
	}
	return 1 + reps
}

// ReadCosts reads the costs from the harness's records in dir's
// tuning.log, under the tuning protocol whatever protocol measured them:
//   - a configuration: its measuring time over its calls (first run,
//     warm-ups, reps, a composite's sections run), times the calls the
//     protocol makes at its median;
//   - the reference: the mean of the references computed (not loaded);
//   - a process: its set-up without the reference it computed, and what
//     the log's process line says it ran beyond its records (else startS).
func ReadCosts(dir string) (Costs, error) {
	f, err := os.Open(filepath.Join(dir, LogFile))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	type acc struct{ proc, procN, ref, refN, conf, confN float64 }
	sums := map[string]map[int64]*acc{}
	at := func(kernel string, size int64) *acc {
		if sums[kernel] == nil {
			sums[kernel] = map[int64]*acc{}
		}
		a := sums[kernel][size]
		if a == nil {
			a = &acc{}
			sums[kernel][size] = a
		}
		return a
	}
	// The process being read: its kernel and size, and the set-up and
	// measuring its records account for.
	var cur *acc
	var accounted float64
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<16), 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, processMark); ok {
			var n int
			var wall float64
			if _, err := fmt.Sscanf(rest, "%d records in %g s", &n, &wall); err == nil && cur != nil {
				cur.proc += max(0, wall-accounted) - startS // startS was added when the process began
			}
			cur, accounted = nil, 0
			continue
		}
		if len(line) == 0 || line[0] != '{' {
			continue
		}
		var r struct {
			Kernel          string         `json:"kernel"`
			Size            int64          `json:"size"`
			Reps            int            `json:"reps"`
			Warmup          int            `json:"warmup"`
			MedianS         float64        `json:"median_s"`
			SetupS          *float64       `json:"setup_s"`
			ReferenceS      *float64       `json:"reference_s"`
			ReferenceCached bool           `json:"reference_cached"`
			MeasureS        *float64       `json:"measure_s"`
			Sections        map[string]any `json:"sections"`
		}
		if json.Unmarshal([]byte(line), &r) != nil || r.Kernel == "" || r.MeasureS == nil {
			continue
		}
		a := at(r.Kernel, r.Size)
		calls := 1 + r.Warmup + r.Reps
		if len(r.Sections) > 0 {
			calls++
		}
		a.conf += *r.MeasureS / float64(calls) * float64(protocolCalls(r.MedianS))
		a.confN++
		accounted += *r.MeasureS
		// The first record of a process carries its set-up (and the
		// reference in it).
		if setup := deref(r.SetupS); setup > 0 {
			ref := deref(r.ReferenceS)
			if !r.ReferenceCached {
				a.ref += ref
				a.refN++
				setup -= ref
			}
			a.proc += setup + startS
			a.procN++
			cur, accounted = a, deref(r.SetupS)+*r.MeasureS
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	out := Costs{}
	for k, bySize := range sums {
		out[k] = map[int64]Cost{}
		for size, a := range bySize {
			c := Cost{ConfigS: a.conf / a.confN}
			if a.procN > 0 {
				c.ProcessS = a.proc / a.procN
			}
			if a.refN > 0 {
				c.ReferenceS = a.ref / a.refN
			}
			out[k][size] = c
		}
	}
	return out, nil
}

// ReadCostsIn reads the costs of each folder (ReadCosts), a (kernel, size)
// from the first folder that timed it.
func ReadCostsIn(dirs []string) (Costs, error) {
	out := Costs{}
	for _, dir := range dirs {
		cs, err := ReadCosts(dir)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", dir, err)
		}
		for k, bySize := range cs {
			if out[k] == nil {
				out[k] = map[int64]Cost{}
			}
			for size, c := range bySize {
				if _, ok := out[k][size]; !ok {
					out[k][size] = c
				}
			}
		}
	}
	return out, nil
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

// At is kernel's cost at size: the records' at that size, else at the
// nearest size scaled by the size's cube over it (the 3-D kernels' rows),
// else assumed.
func (cs Costs) At(kernel string, size int64) Cost {
	if c, ok := cs[kernel][size]; ok {
		return c
	}
	var near int64
	for s := range cs[kernel] {
		if near == 0 || abs64(s-size) < abs64(near-size) {
			near = s
		}
	}
	if near > 0 {
		c := cs[kernel][near]
		f := float64(size) * float64(size) * float64(size) / (float64(near) * float64(near) * float64(near))
		return Cost{ProcessS: c.ProcessS * f, ReferenceS: c.ReferenceS * f, ConfigS: c.ConfigS * f, Assumed: true}
	}
	if c, ok := assumedCosts[kernel]; ok {
		return c
	}
	return Cost{ProcessS: 4, ConfigS: 0.1, Assumed: true}
}

// Seconds is the GPU time of measuring evals configurations in procs
// processes, with the reference computed in one of them when reference
// (the first target of its kernel, size and toolchain).
func (c Cost) Seconds(evals, procs int, reference bool) float64 {
	s := float64(procs)*c.ProcessS + float64(evals)*c.ConfigS
	if reference {
		s += c.ReferenceS
	}
	return s
}

func abs64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

// PlanRow is a target of a dry run: its space, what the constraints
// allow, what the model admits, and the evaluations, processes and
// seconds of measuring them.
type PlanRow struct {
	Cell                      string
	Size                      int64
	Space, Feasible, Admitted int
	Evals, Processes          int
	Seconds                   float64
	Assumed                   bool
	Err                       string
}

// PlanTruth is the dry run of the ground truth: each cell's whole
// feasible space measured exhaustively (batch configurations a process),
// with the admitted count of the pruned search beside it, on the device of
// model (its machine; its occupancy rule with no kernel's registers known:
// 0 registers).
func (src TruthSource) PlanTruth(cells []TruthCell, model *machine.Model, costs Costs, batch int) []PlanRow {
	var out []PlanRow
	refs := map[string]bool{}
	for _, c := range cells {
		out = append(out, src.planRow(Key{Cell: c.ID(), Size: c.Size}, model, costs, Exhaustive, 0, batch, refs))
	}
	return out
}

// PlanMatrix is the dry run of a matrix tuning of targets under strategy
// (the tune stage's pruned where the GPU has a model) within maxEvals a
// target: each target's planned evaluations and processes (batch a
// process; Guided a round a process).
func (src TruthSource) PlanMatrix(targets []Key, model *machine.Model, costs Costs, strategy Strategy, maxEvals, batch int) []PlanRow {
	var out []PlanRow
	refs := map[string]bool{}
	for _, k := range targets {
		out = append(out, src.planRow(k, model, costs, strategy, maxEvals, batch, refs))
	}
	return out
}

// planRow plans one target; refs holds the references (kernel, size and
// toolchain) that an earlier target computed, which this one loads.
func (src TruthSource) planRow(k Key, model *machine.Model, costs Costs, strategy Strategy, maxEvals, batch int, refs map[string]bool) PlanRow {
	row := PlanRow{Cell: k.Cell, Size: k.Size}
	t, err := src.target(k)
	if err != nil {
		row.Err = err.Error()
		return row
	}
	kernel, _, _ := strings.Cut(k.Cell, ".")
	src.joinLaunchDefaults(k.Cell, model, t.Space)
	o := Options{Strategy: Exhaustive, MaxEvals: maxEvals, BatchSize: batch}
	if model != nil && model.Kind == machine.KindGPU {
		g := model.GPU
		o.Machine = MachineOf(g.MaxThreadsPerBlock, g.WarpSize, max(g.SharedMemoryPerBlockBytes, g.SharedMemoryPerBlockOptin))
		o.Model = Occupancy{Model: model}
	}
	cr, feasible, err := o.candidates(t)
	if err != nil {
		row.Err = err.Error()
		return row
	}
	row.Space, row.Feasible, row.Admitted = cr.Space, len(feasible), len(feasible)
	if o.Model != nil {
		p := o
		p.Strategy = Pruned
		_, admitted, err := p.candidates(t)
		if err == nil {
			row.Admitted = len(admitted)
		}
	}
	o.Strategy = strategy
	if strategy == Pruned && o.Model == nil {
		o.Model = Occupancy{}
	}
	cr, cands, err := o.candidates(t)
	if err != nil {
		row.Err = err.Error()
		return row
	}
	if o.mode(len(cands)) == Guided {
		g := o.guide(t, cr, cands)
		row.Evals = g.budget()
		row.Processes = (row.Evals + g.round() - 1) / g.round()
	} else {
		row.Evals = len(o.order(t, cr, cands, maxEvals))
		row.Processes = (row.Evals + o.batch() - 1) / o.batch()
	}
	cost := costs.At(kernel, k.Size)
	parts := strings.Split(k.Cell, ".")
	ref := fmt.Sprintf("%s %d %s", kernel, k.Size, parts[len(parts)-1])
	row.Seconds, row.Assumed = cost.Seconds(row.Evals, row.Processes, !refs[ref]), cost.Assumed
	refs[ref] = true
	return row
}

// joinLaunchDefaults puts the machine model's launch defaults of cell into
// its space s, as the tune stage does (the defaults, their values joining
// the space's); nothing where m is no GPU's model.
func (src TruthSource) joinLaunchDefaults(cell string, m *machine.Model, s *CellSpace) {
	if m == nil || m.Kind != machine.KindGPU {
		return
	}
	if d := launchDefaults(m, src.Tree.Variants[strings.SplitN(cell, ".", 3)[1]], s); len(d) > 0 {
		s.JoinDefaults(d)
	}
}

// launchDefaults are the machine model's launch defaults of a variant's
// model_defaults (kk-ompx's occupancy max_teams), as run.ModelDefaults
// gives them, with the team's block (CellSpace.Blocks at the default);
// none where the model or the variant has none.
func launchDefaults(m *machine.Model, v *matrix.Variant, s *CellSpace) Config {
	if v == nil || len(v.ModelDefaults) == 0 {
		return nil
	}
	var c machine.CellLaunch
	if bs, ok := s.Blocks(s.Default); ok {
		for _, b := range bs {
			c.Blocks = append(c.Blocks, int64(b))
		}
	}
	d, _ := machine.Defaults(m, v.ModelDefaults, c)
	return Config(d)
}

// WritePlan prints rows as a table with their total.
func WritePlan(w io.Writer, rows []PlanRow) (total float64, err error) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "cell\tsize\tspace\tfeasible\tadmitted\tmeasured\tprocesses\tGPU seconds")
	for _, r := range rows {
		if r.Err != "" {
			fmt.Fprintf(tw, "%s\t%d\t%s\n", r.Cell, r.Size, r.Err)
			continue
		}
		mark := ""
		if r.Assumed {
			mark = " (assumed cost)"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%d\t%.0f%s\n", r.Cell, r.Size, r.Space, r.Feasible, r.Admitted, r.Evals, r.Processes, r.Seconds, mark)
		total += r.Seconds
	}
	evals, procs := 0, 0
	for _, r := range rows {
		evals += r.Evals
		procs += r.Processes
	}
	fmt.Fprintf(tw, "total\t\t\t\t\t%d\t%d\t%.0f (%.1f minutes)\n", evals, procs, total, total/60)
	return total, tw.Flush()
}

// MatrixTargets are the (cell, size) targets of dir's tuning.jsonl, sorted.
func MatrixTargets(dir string) ([]Key, error) {
	keys, _, err := Evaluations(dir)
	if err != nil {
		return nil, err
	}
	seen := map[Key]bool{}
	var out []Key
	for _, k := range keys {
		t := Key{Cell: k.Cell, Size: k.Size}
		if !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b Key) int {
		if c := strings.Compare(a.Cell, b.Cell); c != 0 {
			return c
		}
		return int(a.Size - b.Size)
	})
	return out, nil
}
