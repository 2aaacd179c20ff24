// Package failures explains the failed builds and measurements of results
// folders: results/failures.yaml lists each kind of failure (matched by
// stage, kernel, variant and toolchain globs and an error pattern, never by
// folder) with its cause, its resolution (a fix, a capability gate, or a
// compiler bug with its upstream report) and a reproducer under docs/repro/.
// A test holds every current folder of results/index.yaml to it
// (docs/failures.md).
package failures

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/hashicorp/go-version"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/layout"
	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/toolchain"
	"github.com/portmatrix/portmatrix/internal/tune"
)

// File is the list of explanations, relative to the repository root.
const File = "results/failures.yaml"

// Stages a failure can happen in.
const (
	StageBuild = "build" // a row of build.csv with status failed
	StageRun   = "run"   // a kernel record with an error or not verified
	StageTune  = "tune"  // a tuning evaluation (tuning.jsonl) with an error or not verified
)

// Stages lists the stages, in pipeline order.
var Stages = []string{StageBuild, StageRun, StageTune}

// Resolutions of an explanation, and the field each one needs.
const (
	Fixed       = "fixed"        // the project's bug, fixed by commit Fix
	Gated       = "gate"         // the toolchain lacks capability Gate (variants/capabilities.yaml)
	CompilerBug = "compiler-bug" // the compiler's bug, reported at Upstream
)

// Explanation is one entry of results/failures.yaml.
type Explanation struct {
	ID                         string
	Stage                      string
	Kernel, Variant, Toolchain string         // path.Match globs
	Error                      *regexp.Regexp // on the record's error or the build's reason
	Cause                      string
	Resolution                 string
	Fix, Gate, Upstream        string // the one Resolution needs
	Repro                      string // a folder under docs/repro/, relative to the repository root
	Pos                        diag.Pos
}

// Failure is one failed build row or measurement of a results folder.
type Failure struct {
	Folder                     string // the folder's base name, for messages only
	Stage                      string
	Kernel, Variant, Toolchain string
	Error                      string
	Tool                       results.Toolchain // the toolchain as the folder's run.json records it
}

// Load reads the explanations and reports every problem with its position:
// unknown fields, a stage or resolution not in the vocabulary, a bad glob or
// pattern, a resolution without its field, a repeated id.
func Load(file string) ([]Explanation, error) {
	var errs diag.List
	root := diag.ReadYAML(file, &errs)
	if root == nil {
		return nil, errs.Err()
	}
	d := diag.Decoder{File: file, Errs: &errs}
	var out []Explanation
	seen := map[string]bool{}
	top := d.Fields(root, "failures file", "failures")
	for _, n := range d.Seq(top["failures"], "failures") {
		f := d.Fields(n, "explained failure", "id", "stage", "kernel", "variant", "toolchain", "error",
			"cause", "resolution", "fix", "gate", "upstream", "repro")
		if !d.Require(n, f, "explained failure", "id", "stage", "kernel", "variant", "toolchain", "error", "cause", "resolution", "repro") {
			continue
		}
		e := Explanation{
			ID: d.String(f["id"], "id"), Stage: d.String(f["stage"], "stage"),
			Kernel: d.String(f["kernel"], "kernel"), Variant: d.String(f["variant"], "variant"), Toolchain: d.String(f["toolchain"], "toolchain"),
			Cause: d.String(f["cause"], "cause"), Resolution: d.String(f["resolution"], "resolution"),
			Repro: d.String(f["repro"], "repro"), Pos: d.Pos(n),
		}
		if seen[e.ID] {
			d.Add(f["id"], "explanation %q is listed twice", e.ID)
		}
		seen[e.ID] = true
		if !slices.Contains(Stages, e.Stage) {
			d.Add(f["stage"], "stage %q is not one of %s", e.Stage, strings.Join(Stages, ", "))
		}
		for _, g := range []string{"kernel", "variant", "toolchain"} {
			if _, err := path.Match(d.String(f[g], g), ""); err != nil {
				d.Add(f[g], "bad %s pattern: %v", g, err)
			}
		}
		re, err := regexp.Compile(d.String(f["error"], "error"))
		if err != nil {
			d.Add(f["error"], "bad error pattern: %v", err)
		}
		e.Error = re
		need := map[string]string{Fixed: "fix", Gated: "gate", CompilerBug: "upstream"}[e.Resolution]
		if need == "" {
			d.Add(f["resolution"], "resolution %q is not %s, %s or %s", e.Resolution, Fixed, Gated, CompilerBug)
		} else if f[need] == nil {
			d.Add(n, "resolution %s needs a %s field", e.Resolution, need)
		}
		if f["fix"] != nil {
			e.Fix = d.String(f["fix"], "fix")
			if !commitID.MatchString(e.Fix) {
				d.Add(f["fix"], "fix %q is not a commit id (7 to 40 hex digits)", e.Fix)
			}
		}
		if f["gate"] != nil {
			e.Gate = d.String(f["gate"], "gate")
		}
		if f["upstream"] != nil {
			e.Upstream = d.String(f["upstream"], "upstream")
		}
		out = append(out, e)
	}
	return out, errs.Err()
}

var commitID = regexp.MustCompile(`^[0-9a-f]{7,40}$`)

// Matches reports whether the explanation covers the failure.
func (e *Explanation) Matches(f Failure) bool {
	return e.Stage == f.Stage && glob(e.Kernel, f.Kernel) && glob(e.Variant, f.Variant) &&
		glob(e.Toolchain, f.Toolchain) && e.Error.MatchString(f.Error)
}

func glob(pattern, name string) bool {
	ok, _ := path.Match(pattern, name)
	return ok
}

// Explain returns the first explanation that covers the failure, or nil.
func Explain(ex []Explanation, f Failure) *Explanation {
	for i := range ex {
		if ex[i].Matches(f) {
			return &ex[i]
		}
	}
	return nil
}

// Collect reads a results folder's failures: the failed rows of build.csv,
// the kernel records that carry an error or were not verified, and the
// tuning evaluations (tuning.jsonl, each key's last) that were not verified.
// A folder without one of those files has no failure of its kind.
func Collect(dir string) ([]Failure, error) {
	run, err := results.ReadRun(dir)
	if err != nil {
		return nil, err
	}
	tools := map[string]results.Toolchain{}
	for _, t := range run.Toolchains {
		tools[t.ID] = t
	}
	base := filepath.Base(dir)
	var out []Failure
	rows, err := results.ReadBuildCSV(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, r := range rows {
		if r.Failed() {
			out = append(out, Failure{base, StageBuild, r.Kernel, r.Variant, r.Toolchain, r.Reason, tools[r.Toolchain]})
		}
	}
	recs, err := results.ReadJSONL(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	for _, r := range recs {
		if r.Error != "" || (r.Kind == results.KindKernel && !r.Verified) {
			out = append(out, Failure{base, StageRun, r.Kernel, r.Variant, r.Toolchain, reason(r.Error), tools[r.Toolchain]})
		}
	}
	keys, evals, err := tune.Evaluations(dir)
	if err != nil {
		return nil, err
	}
	for i, k := range keys {
		if evals[i].Verified {
			continue
		}
		kernel, variant, tc, ok := matrix.SplitCellID(k.Cell)
		if !ok {
			return nil, fmt.Errorf("%s: cell %q is not kernel.variant.toolchain", tune.CachePath(dir), k.Cell)
		}
		out = append(out, Failure{base, StageTune, kernel, variant, tc, reason(evals[i].Error), tools[tc]})
	}
	return out, nil
}

// reason is a failed measurement's error, or "not verified" for a wrong
// result without one (the error pattern an explanation matches).
func reason(err string) string {
	if err == "" {
		return "not verified"
	}
	return err
}

// Group is the failures of one (explanation, stage, variant, toolchain,
// error signature): what docs/failures.md and the test's message list.
type Group struct {
	Stage, Variant, Toolchain, Signature string
	Kernels                              []string
	Count                                int
	By                                   *Explanation // nil: unexplained
}

// Signature is an error's first line without a leading source position
// and with its numbers blanked, so that one cause gives one signature across
// sizes, kernels and source files.
func Signature(err string) string {
	return strings.TrimSpace(number.ReplaceAllString(position.ReplaceAllString(firstLine(err), ""), "N"))
}

var position = regexp.MustCompile(`^[^ :]+:[0-9]+:[0-9]+: `)

var number = regexp.MustCompile(`[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?`)

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimLeft(s, "\" \n"), "\n")
	return s
}

// Groups groups failures with their explanations, unexplained first.
func Groups(fs []Failure, ex []Explanation) []Group {
	idx := map[string]int{}
	var out []Group
	for _, f := range fs {
		by := Explain(ex, f)
		id := ""
		if by != nil {
			id = by.ID
		}
		key := strings.Join([]string{id, f.Stage, f.Variant, f.Toolchain, Signature(f.Error)}, "\x00")
		i, ok := idx[key]
		if !ok {
			i = len(out)
			idx[key] = i
			out = append(out, Group{Stage: f.Stage, Variant: f.Variant, Toolchain: f.Toolchain, Signature: Signature(f.Error), By: by})
		}
		out[i].Count++
		out[i].Kernels = results.AppendNew(out[i].Kernels, f.Kernel)
	}
	slices.SortStableFunc(out, func(a, b Group) int {
		return cmp.Or(cmp.Compare(explained(a), explained(b)), cmp.Compare(a.Stage, b.Stage),
			cmp.Compare(a.Variant, b.Variant), cmp.Compare(a.Toolchain, b.Toolchain), cmp.Compare(a.Signature, b.Signature))
	})
	for i := range out {
		slices.Sort(out[i].Kernels)
	}
	return out
}

func explained(g Group) int {
	if g.By == nil {
		return 0
	}
	return 1
}

// String is a group as one line: count, cell pattern, signature, explanation.
func (g Group) String() string {
	by := "UNEXPLAINED"
	if g.By != nil {
		by = g.By.ID + " (" + g.By.Pos.String() + ")"
	}
	return fmt.Sprintf("%d %s %s x %s x %s: %s -> %s", g.Count, g.Stage, strings.Join(g.Kernels, ","), g.Variant, g.Toolchain, g.Signature, by)
}

// CheckGate reports a gate that does not stop the failure's cell now: the
// capability must be in the table and off for the toolchain the folder
// recorded (its family, version and target).
func CheckGate(tb *toolchain.Table, e *Explanation, f Failure) error {
	if !tb.Has(e.Gate) {
		return fmt.Errorf("%s: explanation %s: gate %q is not a capability of %s", e.Pos, e.ID, e.Gate, layout.Capabilities)
	}
	v, err := version.NewVersion(f.Tool.Version)
	if err != nil {
		return fmt.Errorf("%s: explanation %s: toolchain %s of %s has no version in run.json to gate", e.Pos, e.ID, f.Toolchain, f.Folder)
	}
	t := &toolchain.Toolchain{ID: f.Tool.ID, Family: f.Tool.Family, Target: f.Tool.Target, Version: v}
	toolchain.Derive(t, tb)
	if t.Caps[e.Gate] {
		return fmt.Errorf("%s: explanation %s: gate %s is on for %s (%s %s, %s), so it does not keep %s.%s off",
			e.Pos, e.ID, e.Gate, f.Toolchain, t.Family, f.Tool.Version, t.Target, f.Kernel, f.Variant)
	}
	return nil
}

// CheckRepro reports an explanation whose reproducer folder is missing
// under root (the repository root).
func CheckRepro(root string, e Explanation) error {
	st, err := os.Stat(filepath.Join(root, e.Repro))
	if err != nil || !st.IsDir() {
		return fmt.Errorf("%s: explanation %s: reproducer folder %s is missing", e.Pos, e.ID, e.Repro)
	}
	return nil
}
