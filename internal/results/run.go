package results

import (
	"errors"
	"os"
	"slices"
	"strings"
	"syscall"
)

// Run is run.json: the provenance of a results folder, written by the run
// stage (first at its start, again at its end) and by Merge, read by the
// report and Compare.
type Run struct {
	ID          string            `json:"id"`
	Started     string            `json:"started"`
	Finished    string            `json:"finished"`
	Commit      string            `json:"commit"`
	Dirty       bool              `json:"dirty"`
	BuildCommit string            `json:"build_commit"`
	BuildDirty  bool              `json:"build_dirty,omitempty"` // the binaries were built from an uncommitted tree
	Host        Host              `json:"host"`
	GPUs        []GPU             `json:"gpus"`
	Toolchains  []Toolchain       `json:"toolchains"`
	Templates   map[string]string `json:"templates"`
	Sizes       string            `json:"sizes"`
	Reps        int               `json:"reps"`
	Warmup      int               `json:"warmup"`
	RepSeconds  float64           `json:"rep_seconds,omitempty"` // bound on a measurement's timed calls (reps shrink to at least 3)
	Cells       Cells             `json:"cells"`
	Vocabulary  *Vocabulary       `json:"vocabulary,omitempty"`
	MergedFrom  []string          `json:"merged_from,omitempty"`
	Batches     []Batch           `json:"batches,omitempty"`
	MergeNotes  []string          `json:"merge_notes,omitempty"` // what a merge dropped, and why
	// State is "running" from the run's start, then "finished" or
	// "interrupted"; a "running" folder whose process is gone was killed
	// (Status says so). Older folders have none: finished.
	State   string   `json:"state,omitempty"`
	PID     int      `json:"pid,omitempty"`
	Trials  int      `json:"trials,omitempty"`
	Resumed []string `json:"resumed,omitempty"` // when each resumption started
	// The OpenMP threads and binding the run gave its host programs.
	HostThreads *HostThreads `json:"host_threads,omitempty"`
	// MachineModel names the machine model (machines/<name>.yaml) whose
	// launch defaults the run passed (harness --defaults); empty when none
	// matched the GPU. DefaultNotes says where a default fell back.
	MachineModel string   `json:"machine_model,omitempty"`
	DefaultNotes []string `json:"default_notes,omitempty"`
	// Selection is what the run was asked to measure; a resumption must ask
	// the same, or add a batch of its own (Batches). Older folders have none.
	Selection *Selection `json:"selection,omitempty"`
}

// HostThreads is how a run set its host programs' OpenMP threads: count,
// OMP_PROC_BIND, OMP_PLACES ("" unset), and where the count came from
// (PM_THREADS, OMP_NUM_THREADS, SLURM_CPUS_PER_TASK or affinity).
type HostThreads struct {
	Threads int    `json:"threads"`
	Bind    string `json:"bind"`
	Places  string `json:"places,omitempty"`
	From    string `json:"from"`
}

// Batch is one part a folder was made from: a run or a part of a merged
// folder, or a batch that a resumption asked for explicitly added to a run
// (PM_RESUME=batch; its records name it in batch_id, the first batch's
// records name none): its own provenance and what it contributed. Dirty on
// any batch makes the folder dirty.
type Batch struct {
	ID          string   `json:"id"`
	Folder      string   `json:"folder,omitempty"` // the results folder its records were taken from
	Commit      string   `json:"commit"`
	Dirty       bool     `json:"dirty"`
	BuildCommit string   `json:"build_commit,omitempty"`
	BuildDirty  bool     `json:"build_dirty,omitempty"`
	Interrupted bool     `json:"interrupted,omitempty"` // no run.json, no finish time, or stopped
	Sizes       string   `json:"sizes,omitempty"`       // its size set
	Trials      int      `json:"trials,omitempty"`
	Resumed     []string `json:"resumed,omitempty"`
	// What the merged folder holds of it: the kernels, the compilers with
	// their versions ("clang19-sm90 19.1.7") and the GPUs of its records,
	// and how many kernel records.
	Kernels    []string `json:"kernels,omitempty"`
	Toolchains []string `json:"toolchains,omitempty"`
	GPUs       []string `json:"gpus,omitempty"`
	Records    int      `json:"records"`
	// Its run's template hashes where they differ from the folder's
	// (run.json templates, the newest part's); "" where it had none.
	Templates map[string]string `json:"templates,omitempty"`
	// A run's batch: when it began and what it was asked to measure.
	Started   string     `json:"started,omitempty"`
	Selection *Selection `json:"selection,omitempty"`
}

// Selection is what a run is asked to measure: the cells picked and every
// setting a measurement depends on, as the knobs named in each field's
// comment gave them (after their defaults). A resumption that asks for
// another is refused with the differences named, or, asked for explicitly,
// recorded as a new batch (docs/results-format.md).
type Selection struct {
	Kernels    []string `json:"kernels,omitempty"`    // PM_KERNELS, sorted; none: every kernel
	Variants   []string `json:"variants,omitempty"`   // PM_VARIANTS
	Toolchains []string `json:"toolchains,omitempty"` // PM_TOOLCHAINS
	Suite      string   `json:"suite"`                // the sample taken (PM_SUITE: quick, wide; full: every selected cell)
	SizeSet    string   `json:"size_set"`             // PM_SIZE_SET
	Sizes      string   `json:"sizes,omitempty"`      // PM_SIZES, as it reads them; none: the size set's
	Reps       int      `json:"reps"`                 // PM_REPS
	Warmup     int      `json:"warmup"`               // PM_WARMUP
	RepSeconds float64  `json:"rep_seconds"`          // PM_REP_SECONDS
	Trials     int      `json:"trials"`               // PM_TRIALS, or its default
	GPU        bool     `json:"gpu"`                  // GPU cells run (PM_GPU, or a GPU was found)
	Tuned      string   `json:"tuned,omitempty"`      // PM_TUNED
	CopyBytes  int64    `json:"copy_bytes,omitempty"` // PM_COPY_BYTES
	FlushL2    string   `json:"flush_l2,omitempty"`   // PM_FLUSH_L2
	Threads    int      `json:"threads,omitempty"`    // PM_THREADS
	Bind       string   `json:"bind,omitempty"`       // PM_BIND
	Work       string   `json:"work,omitempty"`       // PM_WORK
	// Cells are the cells it measures, sorted: what the build folder gave
	// the settings above when the run began.
	Cells []string `json:"cells,omitempty"`
}

// AppendNew appends to have each of more that it lacks, in order: the GPUs
// of a merged or resumed folder, the names of a widened vocabulary.
func AppendNew[T comparable](have []T, more ...T) []T {
	for _, x := range more {
		if !slices.Contains(have, x) {
			have = append(have, x)
		}
	}
	return have
}

// Run states.
const (
	StateRunning     = "running"
	StateFinished    = "finished"
	StateInterrupted = "interrupted"
)

// Status is the run's state as a reader should take it: "running" only
// while the process that wrote it is alive on this host, else "interrupted".
func (r Run) Status() string {
	switch r.State {
	case "":
		return StateFinished
	case StateRunning:
		if r.PID > 0 && r.Host.Hostname == hostname() && alive(r.PID) {
			return StateRunning
		}
		return StateInterrupted
	}
	return r.State
}

// Toolchain is one compiler setup, as the build manifest records it
// (build.ToolchainInfo).
type Toolchain struct {
	ID       string   `json:"id"`
	Family   string   `json:"family"`
	Version  string   `json:"version"`
	CUDA     string   `json:"cuda,omitempty"`
	Command  string   `json:"command"`
	Path     string   `json:"path"`
	Identity string   `json:"identity"`
	Target   string   `json:"target"`
	Caps     []string `json:"capabilities"`
	Missing  string   `json:"missing,omitempty"`
	Broken   string   `json:"broken,omitempty"`
	// Candidates: with pick: newest, every command found as "path version".
	Candidates []string `json:"candidates,omitempty"`
}

// Build statuses of a cell (build.csv's status column; internal/build's
// Built, Cached, Failed and Skipped).
const (
	StatusBuilt   = "built"
	StatusCached  = "cached"
	StatusFailed  = "failed"
	StatusSkipped = "skipped"
)

// Cells counts the cells of a run: by build status (of the manifest entries
// selected) and by what the run measured.
type Cells struct {
	Total                int `json:"total"`
	Built                int `json:"built"`
	Cached               int `json:"cached"`
	Failed               int `json:"failed"`
	Skipped              int `json:"skipped"`
	Ran                  int `json:"ran"`
	Verified             int `json:"verified"`
	VerifiedMeasurements int `json:"verified_measurements"`
	FailedMeasurements   int `json:"failed_measurements,omitempty"`
}

// AddBuild counts one cell of build status status.
func (c *Cells) AddBuild(status string) {
	c.Total++
	switch status {
	case StatusBuilt:
		c.Built++
	case StatusCached:
		c.Cached++
	case StatusFailed:
		c.Failed++
	case StatusSkipped:
		c.Skipped++
	}
}

// CountRuns sets Ran (cells with a kernel record), Verified (cells whose
// every kernel record verified) and the measurements either way.
func (c *Cells) CountRuns(recs []Record) {
	ok := map[string]bool{}
	c.VerifiedMeasurements, c.FailedMeasurements = 0, 0
	for _, r := range recs {
		if r.Kind != KindKernel {
			continue
		}
		if _, seen := ok[r.Cell]; !seen {
			ok[r.Cell] = true
		}
		if r.Verified {
			c.VerifiedMeasurements++
		} else {
			ok[r.Cell] = false
			c.FailedMeasurements++
		}
	}
	c.Ran, c.Verified = len(ok), 0
	for _, v := range ok {
		if v {
			c.Verified++
		}
	}
}

// Vocabulary is the names a run used, taken from the project that built it,
// so that a results folder is reported on without the source tree.
type Vocabulary struct {
	Kernels    []KernelName   `json:"kernels"`
	Strategies []StrategyName `json:"strategies"`
	Families   []string       `json:"families"`
	Devices    []string       `json:"devices"`
	// From the source tree only (vocabulary.Load), not recorded in
	// run.json: the toolchain ids of toolchains.yaml, each kernel's sizes
	// (every size set), and the tunables each cell has with its generated
	// value (kernel -> variant -> tunable -> value). Claims are checked
	// against them where the tree is at hand.
	Toolchains []string                               `json:"-"`
	Sizes      map[string][]int64                     `json:"-"`
	Tunables   map[string]map[string]map[string]int64 `json:"-"`
}

// KernelName is a kernel and the label of its size axis.
type KernelName struct {
	Name      string `json:"name"`
	SizeLabel string `json:"size_label"`
}

// StrategyName is a strategy and its variants, and what it builds
// against: the project's own layer (Layer, a header of harness/) or a
// library's install (Library), whose variants stand for layer variants
// (Twins: library variant -> the layer variants).
type StrategyName struct {
	Name     string              `json:"name"`
	Variants []string            `json:"variants"`
	Layer    string              `json:"layer,omitempty"`
	Library  *LibraryName        `json:"library,omitempty"`
	Twins    map[string][]string `json:"twins,omitempty"`
}

// LibraryName is the library a strategy builds against: its name and
// backend (variants/strategies.yaml) and, where the catalog was read, its
// release as its project names it ("Kokkos 4.6.01", "RAJA v2025.09.1").
type LibraryName struct {
	Name    string `json:"name"`
	Backend string `json:"backend"`
	Title   string `json:"title,omitempty"` // as its project writes its name: Kokkos, RAJA
	Release string `json:"release,omitempty"`
}

// Titled is the library's title, else its name.
func (l *LibraryName) Titled() string {
	if l.Title != "" {
		return l.Title
	}
	return l.Name
}

// Named is the library's release, else its name.
func (l *LibraryName) Named() string {
	if l.Release != "" {
		return l.Release
	}
	return l.Name
}

// Strategy is the strategy of a variant, or nil.
func (v *Vocabulary) Strategy(variant string) *StrategyName {
	if v == nil {
		return nil
	}
	for i := range v.Strategies {
		if slices.Contains(v.Strategies[i].Variants, variant) {
			return &v.Strategies[i]
		}
	}
	return nil
}

// TwinsOf lists the library variants that stand for a layer variant, in
// strategy order (none for a variant without one).
func (v *Vocabulary) TwinsOf(layer string) []string {
	if v == nil {
		return nil
	}
	var out []string
	for _, s := range v.Strategies {
		for _, lv := range s.Variants { // variant order, not the map's
			if slices.Contains(s.Twins[lv], layer) {
				out = AppendNew(out, lv)
			}
		}
	}
	return out
}

// RanOn says what a variant's program ran on, for a legend: the library's
// release and backend for a library variant ("Kokkos 4.6.01 cuda"),
// LayerMark for a variant of the project's own Kokkos-like or RAJA-like
// layer, "" for code written directly (omp-raw, direct-ompx).
func (v *Vocabulary) RanOn(variant string) string {
	s := v.Strategy(variant)
	switch {
	case s == nil:
		return ""
	case s.Library != nil:
		return s.Library.Named() + " " + s.Library.Backend
	case s.Layer != "":
		return LayerMark
	}
	return ""
}

// LayerMark names the project's own layers in a legend.
const LayerMark = "pm layer"

// Legend is a series' legend label that says what the variant ran on
// (RanOn): "KK-CUDA (pm layer)", "kokkos-cuda-3lvl (Kokkos 4.6.01 cuda)".
func (v *Vocabulary) Legend(label, variant string) string {
	on := v.RanOn(variant)
	if on == "" || strings.Contains(label, "("+on+")") {
		return label
	}
	return label + " (" + on + ")"
}

// KernelNames lists the kernels.
func (v *Vocabulary) KernelNames() []string {
	var out []string
	for _, k := range v.Kernels {
		out = append(out, k.Name)
	}
	return out
}

// VariantNames lists every variant of every strategy.
func (v *Vocabulary) VariantNames() []string {
	var out []string
	for _, s := range v.Strategies {
		out = append(out, s.Variants...)
	}
	return out
}

// Union is a's names, then b's that a lacks (a strategy of both gets the
// variants of both): a results folder's vocabulary, widened by the source
// tree's, so that figures and claims about kernels newer than the folder
// still load (they find no data). nil when both are.
func Union(a, b *Vocabulary) *Vocabulary {
	if a == nil || b == nil {
		if a == nil {
			return b
		}
		return a
	}
	out := &Vocabulary{}
	for _, k := range append(append([]KernelName{}, a.Kernels...), b.Kernels...) {
		if !slices.Contains(out.KernelNames(), k.Name) {
			out.Kernels = append(out.Kernels, k)
		}
	}
	for _, s := range append(append([]StrategyName{}, a.Strategies...), b.Strategies...) {
		i := slices.IndexFunc(out.Strategies, func(o StrategyName) bool { return o.Name == s.Name })
		if i < 0 {
			out.Strategies = append(out.Strategies, StrategyName{Name: s.Name, Variants: slices.Clone(s.Variants),
				Layer: s.Layer, Library: s.Library, Twins: s.Twins})
			continue
		}
		o := &out.Strategies[i]
		o.Variants = AppendNew(o.Variants, s.Variants...)
		// A folder recorded before strategies named their library and
		// twins takes the tree's; the tree's release where the folder has none.
		if o.Layer == "" {
			o.Layer = s.Layer
		}
		if o.Library == nil {
			o.Library = s.Library
		} else if s.Library != nil && o.Library.Release == "" && o.Library.Name == s.Library.Name {
			l := *o.Library
			l.Release, l.Title = s.Library.Release, s.Library.Title
			o.Library = &l
		}
		if o.Twins == nil {
			o.Twins = s.Twins
		}
	}
	out.Families = AppendNew(AppendNew([]string(nil), a.Families...), b.Families...)
	out.Devices = AppendNew(AppendNew([]string(nil), a.Devices...), b.Devices...)
	out.Toolchains = AppendNew(AppendNew([]string(nil), a.Toolchains...), b.Toolchains...)
	out.Sizes, out.Tunables = b.Sizes, b.Tunables // the tree's, where b is the tree
	if out.Sizes == nil {
		out.Sizes = a.Sizes
	}
	if out.Tunables == nil {
		out.Tunables = a.Tunables
	}
	return out
}

// SizeLabel is the size axis label of a kernel ("" when unknown).
func (v *Vocabulary) SizeLabel(kernel string) string {
	for _, k := range v.Kernels {
		if k.Name == kernel {
			return k.SizeLabel
		}
	}
	return ""
}

func hostname() string {
	h, _ := os.Hostname()
	return h
}

// alive reports whether a process pid exists.
func alive(pid int) bool {
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}
