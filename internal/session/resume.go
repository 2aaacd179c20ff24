package session

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/suite"
)

// resumeKnobs are the knobs a results folder records the settings of
// (results.Selection): each changes what is measured, so a resumption must
// give them as the folder records them.
var resumeKnobs = []string{"PM_KERNELS", "PM_VARIANTS", "PM_TOOLCHAINS", "PM_SUITE", "PM_SIZE_SET", "PM_SIZES",
	"PM_REPS", "PM_WARMUP", "PM_REP_SECONDS", "PM_TRIALS", "PM_GPU", "PM_TUNED", "PM_COPY_BYTES", "PM_FLUSH_L2",
	"PM_THREADS", "PM_BIND", "PM_WORK"}

// legacyKnobs are those a folder written before selections were recorded
// names in run.json.
var legacyKnobs = []string{"PM_SIZE_SET", "PM_REPS", "PM_WARMUP", "PM_REP_SECONDS", "PM_TRIALS"}

// selectionOf is what cfg asks a run to measure: trials and gpu as the run
// resolved them, cells the cells it measures.
func selectionOf(cfg config.Config, trials int, gpu bool, cells []string) results.Selection {
	sample := cfg.Sample()
	if sample == "" {
		sample = suite.Full
	}
	return results.Selection{Kernels: sortedSet(cfg.Kernels), Variants: sortedSet(cfg.Variants), Toolchains: sortedSet(cfg.Toolchains),
		Suite: sample, SizeSet: cfg.SizeSet, Sizes: cfg.Sizes.String(), Reps: cfg.Reps, Warmup: cfg.Warmup, RepSeconds: cfg.RepSeconds,
		Trials: trials, GPU: gpu, Tuned: cfg.Tuned, CopyBytes: cfg.CopyBytes, FlushL2: cfg.FlushL2, Threads: cfg.Threads, Bind: cfg.Bind,
		Work: cfg.Work, Cells: sortedSet(cells)}
}

func sortedSet(l []string) []string {
	l = slices.Clone(l)
	slices.Sort(l)
	return slices.Compact(l)
}

// configOf is the configuration whose knobs give sel: what the knob table
// prints of it.
func configOf(sel results.Selection) config.Config {
	sizes, _ := config.ParseSizes(sel.Sizes)
	gpu := "0"
	if sel.GPU {
		gpu = "1"
	}
	return config.Config{Kernels: sel.Kernels, Variants: sel.Variants, Toolchains: sel.Toolchains, Suite: sel.Suite,
		SizeSet: sel.SizeSet, Sizes: sizes, Reps: sel.Reps, Warmup: sel.Warmup, WarmupSet: true, RepSeconds: sel.RepSeconds,
		RepSecondsSet: true, Trials: sel.Trials, GPU: gpu, Tuned: sel.Tuned, CopyBytes: sel.CopyBytes, FlushL2: sel.FlushL2,
		Threads: sel.Threads, Bind: sel.Bind, Work: sel.Work}
}

// difference is one setting a resumption asks otherwise than its folder
// records.
type difference struct {
	What, Recorded, Asked string
}

// differences lists where asked differs from recorded: the knobs of knobs,
// then the cells measured (which the same knobs give unless the build
// folder changed).
func differences(recorded, asked results.Selection, knobs []string) []difference {
	var out []difference
	rc, ac := configOf(recorded), configOf(asked)
	for _, name := range knobs {
		k := config.Lookup(name)
		r, a := k.Value(&rc), k.Value(&ac)
		if r == a {
			continue
		}
		out = append(out, difference{name, shown(name, r), shown(name, a)})
	}
	if !slices.Equal(recorded.Cells, asked.Cells) {
		out = append(out, difference{"cells measured", cellList(recorded.Cells), cellList(asked.Cells)})
	}
	return out
}

// shown is a knob's value in a message: "" says what it stands for.
func shown(knob, v string) string {
	switch {
	case v != "":
		return v
	case knob == "PM_SIZES":
		return "(the size set's)"
	case knob == "PM_KERNELS" || knob == "PM_VARIANTS" || knob == "PM_TOOLCHAINS":
		return "(all)"
	}
	return "(unset)"
}

// cellList names cells, the first few of a long list.
func cellList(cells []string) string {
	const most = 6
	switch {
	case len(cells) == 0:
		return "(none)"
	case len(cells) > most:
		return strings.Join(cells[:most], ", ") + " and " + strconv.Itoa(len(cells)-most) + " more"
	}
	return strings.Join(cells, ", ")
}

// settingsOf is sel as the knobs (env) and as the CLI's flags that ask for
// it, with the resumption of dir in front: those of knobs.
func settingsOf(sel results.Selection, dir string, knobs []string) (env, flags string) {
	c := configOf(sel)
	envs, fl := []string{"PM_RESUME=1", "PM_OUT=" + dir}, []string{"-resume", "-out", dir}
	for _, name := range knobs {
		k := config.Lookup(name)
		if v := k.Value(&c); v != "" {
			envs = append(envs, name+"="+v)
			fl = append(fl, "-"+k.Flag+"="+v)
		}
	}
	return strings.Join(envs, " "), strings.Join(fl, " ")
}

// recordedSelection is what the folder's run.json says it measures (its
// last batch's), and the knobs it records. A folder written before
// selections were recorded names its size set, reps, warm-up, rep seconds
// and trials in run.json, and the cells it measured in build.csv.
func recordedSelection(dir string, prev results.Run) (results.Selection, []string, error) {
	if n := len(prev.Batches); n > 0 && prev.Batches[n-1].Selection != nil {
		return *prev.Batches[n-1].Selection, resumeKnobs, nil
	}
	if prev.Selection != nil {
		return *prev.Selection, resumeKnobs, nil
	}
	sel := results.Selection{SizeSet: prev.Sizes, Reps: prev.Reps, Warmup: prev.Warmup, RepSeconds: prev.RepSeconds, Trials: prev.Trials}
	rows, err := results.ReadBuildCSV(dir)
	if err != nil {
		return sel, nil, err
	}
	for _, r := range rows {
		if (r.Status == results.StatusBuilt || r.Status == results.StatusCached) && r.Reason == "" {
			sel.Cells = append(sel.Cells, r.Cell)
		}
	}
	sel.Cells = sortedSet(sel.Cells)
	knobs := slices.Clone(legacyKnobs)
	if prev.Trials == 0 {
		knobs = slices.DeleteFunc(knobs, func(k string) bool { return k == "PM_TRIALS" })
	}
	return sel, knobs, nil
}

// resumption decides how a run resumes the folder dir, whose run.json is
// prev, asking for asked. The same selection resumes the run (nil batch); another is
// refused with the differences named and how to resume the folder as it
// was, unless PM_RESUME=batch asks for a new batch: then the batch is
// returned (the folder's batches are then those of prev.Batches, or the
// first run as one, and this one). A batch is added only to a finished
// folder, so that no folder is finished with cells it began with missing.
func resumption(cfg config.Config, dir string, prev results.Run, asked results.Selection, now time.Time, commit string, dirty bool) (*results.Batch, error) {
	if len(prev.MergedFrom) > 0 {
		return nil, fmt.Errorf("PM_OUT: %s is a merged folder; a merged folder is not resumed (run into another folder and merge it in)", dir)
	}
	recorded, knobs, err := recordedSelection(dir, prev)
	if err != nil {
		return nil, fmt.Errorf("PM_OUT: cannot resume %s: %w", dir, err)
	}
	diffs := differences(recorded, asked, knobs)
	if len(diffs) == 0 {
		return nil, nil
	}
	env, flags := settingsOf(recorded, dir, knobs)
	asWas := fmt.Sprintf("resume it as it was: %s\n  (flags: %s)", env, flags)
	if len(knobs) < len(resumeKnobs) {
		asWas += fmt.Sprintf("\n  with the PM_KERNELS, PM_VARIANTS and PM_TOOLCHAINS that select its cells (%s): the folder predates recorded selections",
			cellList(recorded.Cells))
	}
	var b strings.Builder
	for _, d := range diffs {
		fmt.Fprintf(&b, "\n  %s: recorded %s, asked %s", d.What, d.Recorded, d.Asked)
	}
	if !cfg.ResumeBatch {
		return nil, fmt.Errorf("PM_OUT: %s records another selection than this run asks for; not resumed, nothing written:%s\n%s\n"+
			"or measure the new selection into it as a batch of its own with PM_RESUME=batch (-resume=batch), or choose another folder",
			dir, b.String(), asWas)
	}
	if st := prev.Status(); st != results.StateFinished {
		return nil, fmt.Errorf("PM_OUT: %s is an %s run; a batch is added to a finished one only, nothing written:%s\n%s\nthen add the batch",
			dir, st, b.String(), asWas)
	}
	n := len(prev.Batches)
	if n == 0 {
		n = 1
	}
	sel := asked
	return &results.Batch{ID: fmt.Sprintf("%s-b%d", prev.ID, n+1), Started: now.UTC().Format(time.RFC3339), Selection: &sel,
		Commit: commit, Dirty: dirty, Sizes: asked.SizeSet, Trials: asked.Trials}, nil
}

// firstBatch is the run a folder held before its first added batch, as a
// batch.
func firstBatch(prev results.Run, recorded *results.Selection) results.Batch {
	return results.Batch{ID: prev.ID, Started: prev.Started, Selection: recorded, Commit: prev.Commit, Dirty: prev.Dirty,
		BuildCommit: prev.BuildCommit, BuildDirty: prev.BuildDirty, Sizes: prev.Sizes, Trials: prev.Trials, Resumed: prev.Resumed}
}

// currentBatch is the id the records of the folder's last batch carry
// ("" for the first batch, the run itself).
func currentBatch(prev results.Run) string {
	if n := len(prev.Batches); n > 1 {
		return prev.Batches[n-1].ID
	}
	return ""
}

// doneOf is the units the batch whose records carry batch holds.
func doneOf(recs []results.Record, batch string) map[results.Unit]bool {
	var mine []results.Record
	for _, r := range recs {
		if r.BatchID == batch {
			mine = append(mine, r)
		}
	}
	return results.FinishedOf(mine)
}

// CheckResume refuses, before anything is built, a resumption of PM_OUT that
// asks for other settings than the folder records, as Run does (Run also
// compares the cells measured, which the build gives). A folder that does
// not hold a run yet passes.
func CheckResume(cfg config.Config) error {
	cfg.Defaults()
	if !cfg.Resume || cfg.Out == "" || !results.Exists(cfg.Out) {
		return nil
	}
	prev, err := results.ReadRun(cfg.Out)
	if err != nil {
		return nil // Run says why it cannot resume it
	}
	gpu := GPU(cfg)
	trials := trialsOf(cfg, &prev, gpu)
	recorded, _, err := recordedSelection(cfg.Out, prev)
	if err != nil {
		return nil
	}
	_, err = resumption(cfg, cfg.Out, prev, selectionOf(cfg, trials, gpu, recorded.Cells), time.Now(), "", false)
	return err
}

// trialsOf is the trials of a run: PM_TRIALS, else the resumed folder's
// (prev, nil when none), else 3 where GPU cells run and 1 where not.
func trialsOf(cfg config.Config, prev *results.Run, gpu bool) int {
	switch {
	case cfg.Trials > 0:
		return cfg.Trials
	case prev != nil && prev.Trials > 0:
		return prev.Trials
	case gpu:
		return 3
	}
	return 1
}
