package tune

import (
	"bytes"
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/stats"
)

// Truth is a target whose whole space a tuning folder holds: every
// configuration the constraints allow, measured (an exhaustive tuning, the
// ground truth, scripts/tune-truth.sh). Against it a search's choices are
// replayed from the measurements alone (Replay): how close to the true
// optimum each search gets within a budget.
type Truth struct {
	Target   Target
	Options  Options                // the machine, the model and the device of the measurements
	Measured map[string]Measurement // by configuration
	Optimum  *Measurement           // the fastest verified configuration
	// Feasible and Admitted count the constraints' configurations and, of
	// them, those the model admits (Options.Model; Feasible without one);
	// Missing are feasible configurations the folder lacks (a cut tuning):
	// a search that picks one gets nothing for that evaluation.
	Feasible, Admitted int
	Missing            []string
}

// ReplayStrategies are the searches Replay compares by default: the
// exhaustive walk as the reference (1.0 once it has measured the space).
var ReplayStrategies = []Strategy{Exhaustive, Random, Pruned, Auto, Guided}

// Point is a search's quality at one budget over the seeds: the fraction
// of the optimum found (the optimum's median over the best found's; 0
// where nothing verified was found), its median and central 95% interval
// over the seeds, and the share of seeds that found the optimum itself.
type Point struct {
	Budget      int
	Median      float64
	Lo, Hi      float64
	AtOptimum   float64
	Unknown     int // evaluations of configurations the truth lacks, over all seeds
	Seeds       int
	Evaluations float64 // configurations measured, the mean over the seeds (a search may stop short of the budget)
	Rounds      float64 // processes of the program, the mean over the seeds (Guided: its rounds)
}

// Curve is one search's points, budget by budget.
type Curve struct {
	Strategy Strategy
	Points   []Point
}

// Budgets are 1, 2, 4, ... up to n, n included.
func Budgets(n int) []int {
	var out []int
	for b := 1; b < n; b *= 2 {
		out = append(out, b)
	}
	return append(out, n)
}

// Replay replays each strategy over the truth for every budget and seeds
// 1..seeds, from the measurements only: each search chooses as the tuner
// would (Options.Plan's candidates and order, Guided's rounds over the
// measured values), and the best verified median of what it chose is set
// against the truth's optimum.
func Replay(tr *Truth, strategies []Strategy, budgets []int, seeds int) ([]Curve, error) {
	if tr.Optimum == nil {
		return nil, fmt.Errorf("%s size %d: no verified configuration: no optimum to measure a search against", tr.Target.Cell, tr.Target.Size)
	}
	var out []Curve
	for _, st := range strategies {
		o := tr.Options
		o.Strategy, o.MaxEvals, o.Evaluator, o.Log = st, 0, nil, nil
		if st == Pruned && o.Model == nil {
			o.Model = Occupancy{}
		}
		cr, cands, err := o.candidates(tr.Target)
		if err != nil {
			return nil, err
		}
		curve := Curve{Strategy: st}
		fracs := make([][]float64, len(budgets))
		unknown := make([]int, len(budgets))
		evals := make([]float64, len(budgets))
		rounds := make([]float64, len(budgets))
		n := seeds
		if st == Exhaustive {
			n = 1 // no seed
		}
		for seed := 1; seed <= n; seed++ {
			o.Seed = uint64(seed)
			var guided []Config // Guided's whole path: a budget's choices are its prefix
			var guidedRounds []int
			for i, b := range budgets {
				var seq []Config
				r := 1.0
				if o.modeAt(len(cands), b) == Guided {
					if guided == nil {
						guided, guidedRounds = tr.guidedPath(&o, cr, cands, slices.Max(budgets))
					}
					seq = guided[:min(b, len(guided))]
					if len(seq) > 0 {
						r = float64(guidedRounds[len(seq)-1])
					}
				} else {
					seq = o.order(tr.Target, cr, cands, b)
					r = float64((len(seq) + o.batch() - 1) / o.batch())
				}
				frac, miss := tr.fraction(seq)
				fracs[i] = append(fracs[i], frac)
				unknown[i] += miss
				evals[i] += float64(len(seq)) / float64(n)
				rounds[i] += r / float64(n)
			}
		}
		for i, b := range budgets {
			lo, hi := stats.Interval(fracs[i])
			at := 0
			for _, f := range fracs[i] {
				if f >= 1 {
					at++
				}
			}
			curve.Points = append(curve.Points, Point{Budget: b, Median: stats.Median(fracs[i]), Lo: lo, Hi: hi,
				AtOptimum: float64(at) / float64(len(fracs[i])), Unknown: unknown[i], Seeds: len(fracs[i]), Evaluations: evals[i], Rounds: rounds[i]})
		}
		out = append(out, curve)
	}
	return out, nil
}

// batch is the configurations of one process for a static plan.
func (o *Options) batch() int {
	if o.BatchSize > 0 {
		return o.BatchSize
	}
	return 16
}

// guidedPath is Guided's first limit choices over the candidates (a
// smaller budget's are their prefix), measured from the truth, with the
// round each is measured in (1-based).
func (tr *Truth) guidedPath(o *Options, cr *CellResult, cands []Config, limit int) ([]Config, []int) {
	oo := *o
	oo.MaxEvals = limit
	g := oo.guide(tr.Target, cr, cands)
	measured := map[string]Measurement{}
	var path []Config
	var rounds []int
	for r := 1; ; r++ {
		round := g.next(measured, g.round())
		if len(round) == 0 {
			return path, rounds
		}
		for _, c := range round {
			if m, ok := tr.Measured[c.String()]; ok {
				measured[c.String()] = m
			}
			path = append(path, c)
			rounds = append(rounds, r)
		}
	}
}

// fraction is the optimum's median over the best verified one of seq (0:
// none verified), and how many of seq the truth lacks.
func (tr *Truth) fraction(seq []Config) (float64, int) {
	best, miss := 0.0, 0
	for _, c := range seq {
		m, ok := tr.Measured[c.String()]
		if !ok {
			miss++
			continue
		}
		if m.ok() && (best == 0 || m.MedianS < best) {
			best = m.MedianS
		}
	}
	if best == 0 {
		return 0, miss
	}
	return min(1, tr.Optimum.MedianS/best), miss
}

// TruthSource is what a folder's truths are made with: the tuning spaces
// of the source tree (the kernels, strategies and variants/tuning.yaml at
// the commit the folder was tuned with, or one whose spaces are the same)
// and the machine models, found by the device's name.
type TruthSource struct {
	Tree   Tree
	Models *machine.Set
}

// Truths reads a tuning folder's evaluations as one truth per (cell, size,
// build key, device): the space from the tree (the cell's kernel and
// variant, at the size), the default the folder marks (the machine
// model's launch defaults where the tuning took them), the machine and
// the occupancy model of the device's model (its kernels' registers from
// the folder's tuning-kernels.json). A cell the tree does not know is an
// error naming it.
func (src TruthSource) Truths(dir string) ([]*Truth, error) {
	keys, ms, err := Evaluations(dir)
	if err != nil {
		return nil, err
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%s: no evaluations in %s", dir, CacheFile)
	}
	names, err := deviceNames(dir)
	if err != nil {
		return nil, err
	}
	kernels, err := ReadKernels(dir)
	if err != nil {
		return nil, err
	}
	type group struct {
		key Key
		ms  map[string]Measurement
		def Config
	}
	var order []*group
	groups := map[Key]*group{}
	for i, k := range keys {
		gk := Key{Cell: k.Cell, Size: k.Size, BuildKey: k.BuildKey, Device: k.Device}
		g := groups[gk]
		if g == nil {
			g = &group{key: gk, ms: map[string]Measurement{}}
			groups[gk] = g
			order = append(order, g)
		}
		g.ms[k.Config] = ms[i]
		if ms[i].Default {
			g.def = ms[i].Config
		}
	}
	var out []*Truth
	for _, g := range order {
		t, err := src.target(g.key)
		if err != nil {
			return nil, err
		}
		o := Options{Device: g.key.Device}
		m, ok := src.Models.ByReported(names[g.key.Device])
		if !ok { // rows older than device_name: the folder's GPUs, where they are one model
			m, ok = src.Models.ByReported(folderGPU(dir))
		}
		// The space the tune stage searched: the machine model's launch
		// defaults join it; the rest of the folder's default (the generated
		// values) is its default only, as the tuner measures it, and its
		// values do not widen the space.
		if ok {
			src.joinLaunchDefaults(g.key.Cell, m, t.Space)
		}
		if g.def != nil {
			t.Space.markDefault(g.def)
		}
		if ok && m.Kind == machine.KindGPU {
			gpu := m.GPU
			o.Machine = MachineOf(gpu.MaxThreadsPerBlock, gpu.WarpSize, max(gpu.SharedMemoryPerBlockBytes, gpu.SharedMemoryPerBlockOptin))
			o.Model = Occupancy{Model: m, Resources: map[string][]machine.Resources{g.key.Cell: kernels[g.key.BuildKey]}}
		}
		tr := &Truth{Target: t, Options: o, Measured: g.ms}
		for _, m := range g.ms {
			if m.ok() && (tr.Optimum == nil || m.MedianS < tr.Optimum.MedianS) {
				tr.Optimum = &m
			}
		}
		all := o
		all.Strategy = Exhaustive
		_, feasible, err := all.candidates(t)
		if err != nil {
			return nil, err
		}
		tr.Feasible = len(feasible)
		for _, c := range feasible {
			if _, ok := g.ms[c.String()]; !ok {
				tr.Missing = append(tr.Missing, c.String())
			}
		}
		tr.Admitted = tr.Feasible
		if o.Model != nil {
			all.Strategy = Pruned
			_, admitted, _ := all.candidates(t)
			tr.Admitted = len(admitted)
		}
		out = append(out, tr)
	}
	return out, nil
}

// target is the tuning target of a cell ID (kernel.variant.toolchain) at
// a size, its space from the tree.
func (src TruthSource) target(k Key) (Target, error) {
	parts := strings.SplitN(k.Cell, ".", 3)
	if len(parts) < 3 {
		return Target{}, fmt.Errorf("%s: not a cell ID (kernel.variant.toolchain)", k.Cell)
	}
	kern, v := src.Tree.Kernels[parts[0]], src.Tree.Variants[parts[1]]
	if kern == nil || v == nil {
		return Target{}, fmt.Errorf("%s: the source tree has no kernel %s or variant %s", k.Cell, parts[0], parts[1])
	}
	t, err := src.Tree.Spaces.Target(&matrix.Cell{ID: k.Cell, Kernel: kern, Variant: v}, src.Tree.Kernels, k.Size, k.BuildKey)
	if err != nil {
		return Target{}, err
	}
	return t, nil
}

// JoinDefaults makes d the default, its values joining the space: the
// machine model's launch defaults, which the tune stage puts in
// (session.modelDefaults) and the ground truth and the dry run with it.
func (c *CellSpace) JoinDefaults(d Config) {
	for name, v := range d {
		if _, ok := c.Default[name]; !ok {
			continue
		}
		c.Default[name] = v
		if c.Fixed[name] != "" {
			c.Values[name] = []int64{v}
		} else if !slices.Contains(c.Values[name], v) {
			c.Values[name] = append(slices.Clone(c.Values[name]), v)
			slices.Sort(c.Values[name])
		}
	}
}

// markDefault makes d the default without widening the space: the
// configuration the program is generated with, which the tuner measures
// whether or not its values are among those searched.
func (c *CellSpace) markDefault(d Config) {
	for name, v := range d {
		if _, ok := c.Default[name]; ok {
			c.Default[name] = v
		}
	}
}

// folderGPU is the model name of dir's GPUs (run.json) where they are
// one model, else "".
func folderGPU(dir string) string {
	run, err := results.ReadRun(dir)
	if err != nil || len(run.GPUs) == 0 {
		return ""
	}
	for _, g := range run.GPUs {
		if g.Name != run.GPUs[0].Name {
			return ""
		}
	}
	return run.GPUs[0].Name
}

// deviceNames maps each device key of dir's tuning.jsonl to its model name
// (device_name; a key that is no UUID is the name).
func deviceNames(dir string) (map[string]string, error) {
	c := newCache(dir)
	data, err := os.ReadFile(c.File)
	if err != nil {
		return nil, err
	}
	if _, err := c.read(data); err != nil {
		return nil, err
	}
	out := map[string]string{}
	for _, k := range c.seen {
		out[k.Device] = cmp.Or(c.names[k.Device], k.Device)
	}
	return out, nil
}

// WriteCheck writes the curves of the truths, as a table, to w.
func WriteCheck(w io.Writer, truths []*Truth, curves [][]Curve) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for i, tr := range truths {
		fmt.Fprintf(tw, "%s size %d: %d configurations measured of %d feasible (%d admitted by the model); optimum %s at %s\n",
			tr.Target.Cell, tr.Target.Size, len(tr.Measured), tr.Feasible, tr.Admitted, tr.Optimum.Config, seconds(tr.Optimum.MedianS))
		if len(tr.Missing) > 0 {
			fmt.Fprintf(tw, "  not a whole truth: %d feasible configurations not measured (first %s)\n", len(tr.Missing), tr.Missing[0])
		}
		fmt.Fprintf(tw, "  budget\t%s\n", strings.Join(strategyNames(curves[i]), "\t"))
		for j := range curves[i][0].Points {
			row := []string{strconv.Itoa(curves[i][0].Points[j].Budget)}
			for _, c := range curves[i] {
				p := c.Points[j]
				row = append(row, fmt.Sprintf("%.3f [%.3f, %.3f]", p.Median, p.Lo, p.Hi))
			}
			fmt.Fprintf(tw, "  %s\n", strings.Join(row, "\t"))
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

func strategyNames(cs []Curve) []string {
	var out []string
	for _, c := range cs {
		out = append(out, string(c.Strategy))
	}
	return out
}

// checkHeader is tuning-check.csv's header (CheckCSV writes it, ReadCheck
// reads by it).
const checkHeader = "cell,size,device,space_feasible,space_admitted,optimum_s,strategy,budget,seeds,median,lo,hi,at_optimum,evaluations,processes,unknown"

// CheckCSV is the curves as CSV rows, one per (cell, size, strategy,
// budget): tuning-check.csv (CheckFile). optimum_s is the optimum's
// median time in seconds, the numerator of every fraction of its cell.
func CheckCSV(w io.Writer, truths []*Truth, curves [][]Curve) error {
	if _, err := fmt.Fprintln(w, checkHeader); err != nil {
		return err
	}
	for i, tr := range truths {
		for _, c := range curves[i] {
			for _, p := range c.Points {
				if _, err := fmt.Fprintf(w, "%s,%d,%s,%d,%d,%.6g,%s,%d,%d,%.4f,%.4f,%.4f,%.3f,%.1f,%.1f,%d\n", tr.Target.Cell, tr.Target.Size, tr.Options.Device,
					tr.Feasible, tr.Admitted, tr.Optimum.MedianS, c.Strategy, p.Budget, p.Seeds, p.Median, p.Lo, p.Hi, p.AtOptimum, p.Evaluations, p.Rounds, p.Unknown); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// CheckRow is one row of tuning-check.csv: a search's Point at one budget
// against one truth.
type CheckRow struct {
	Cell               string
	Size               int64
	Device             string
	Feasible, Admitted int
	OptimumS           float64 // the optimum's median, seconds
	Strategy           Strategy
	Point
}

// ReadCheck reads dir's tuning-check.csv (CheckCSV's rows, in file order);
// a folder without one has none. A bad row is an error at its line.
func ReadCheck(dir string) ([]CheckRow, error) {
	file := filepath.Join(dir, CheckFile)
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	recs, err := csv.NewReader(bytes.NewReader(data)).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	if len(recs) == 0 || strings.Join(recs[0], ",") != checkHeader {
		return nil, fmt.Errorf("%s:1: not the header of tunecheck's curves (%s): run tunecheck on the folder again", file, checkHeader)
	}
	var out []CheckRow
	for i, r := range recs[1:] {
		var row CheckRow
		var perr error
		num := func(s string) float64 {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil && perr == nil {
				perr = err
			}
			return v
		}
		row.Cell, row.Device, row.Strategy = r[0], r[2], Strategy(r[6])
		row.Size = int64(num(r[1]))
		row.Feasible, row.Admitted = int(num(r[3])), int(num(r[4]))
		row.OptimumS = num(r[5])
		row.Budget, row.Seeds = int(num(r[7])), int(num(r[8]))
		row.Median, row.Lo, row.Hi, row.AtOptimum = num(r[9]), num(r[10]), num(r[11]), num(r[12])
		row.Evaluations, row.Rounds, row.Unknown = num(r[13]), num(r[14]), int(num(r[15]))
		if perr != nil {
			return nil, fmt.Errorf("%s:%d: %v", file, i+2, perr)
		}
		out = append(out, row)
	}
	return out, nil
}

// sortTruths orders truths by cell and size.
func sortTruths(ts []*Truth) {
	slices.SortStableFunc(ts, func(a, b *Truth) int {
		return cmp.Or(strings.Compare(a.Target.Cell, b.Target.Cell), cmp.Compare(a.Target.Size, b.Target.Size))
	})
}
