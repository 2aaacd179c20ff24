// Package tune searches the launch parameters of a cell: the tunables its
// kernel declares, each over the space variants/tuning.yaml gives it, under
// constraints over tunables and the device's properties. Evaluations are
// cached in the results folder (tuning.jsonl) so that a cut tuning resumes
// and a repeated one costs nothing. See docs/tuning.md.
package tune

import (
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// File is the search-space file, relative to the repository root.
const File = "variants/tuning.yaml"

// Derived names a constraint may use besides tunables and machine
// properties: values the tuner computes for the cell from its configuration.
var Derived = map[string]string{
	"scratch_bytes": "bytes of level-0 (team-shared) scratch per team: the kernel's scratch views at this configuration",
}

// MaxValues bounds the values of one tunable's space, and MaxConfigs the
// configurations of one cell's space: a search beyond them is not a tuning
// anyone can afford to run.
const (
	MaxValues  = 1 << 12
	MaxConfigs = 1 << 20
)

// Spaces is variants/tuning.yaml: every tunable's bounds and search space,
// the machine properties constraints may read, and the constraints.
type Spaces struct {
	File        string
	Machine     map[string]string // property -> what it is
	Tunables    map[string]*Decl
	Constraints []Constraint // every cell whose configuration has the tunables named
	Strategies  map[string]*Scope
	Kernels     map[string]*Scope
}

// Decl is one tunable: the values a program accepts (Min, Max) and those the
// search walks (Space).
type Decl struct {
	Name   string
	Doc    string
	Min    int64
	Max    int64
	HasMax bool // false: no upper bound
	Space  []int64
	// Patterns: a launch parameter the backend's layer reads (pm::tune) at
	// every launch of these pattern kinds, not a kernel's: a strategy or knob
	// value gives its default, and a cell has it when its kernels use one of
	// the patterns (max_teams of a team launch means nothing to AXPBY).
	Patterns []string
	// NotWithScratch: a team launch with team scratch does not read it (the
	// kernel-mode layers size those by occupancy, resident_teams).
	NotWithScratch bool
	// Block: the value is the threads of a block of its patterns' launches
	// (range_block), which the occupancy model judges as it judges a team's.
	Block   bool
	Pos     diag.Pos
	SpaceAt diag.Pos
}

// Scope narrows the spaces of some tunables and adds constraints for one
// strategy or kernel.
type Scope struct {
	Name        string
	Space       map[string][]int64
	Held        map[string]bool // "default": held at the cell's default value
	Constraints []Constraint
	// ScratchConsts: for a kernel, the values of the C++ terms its scratch
	// sizes use that the tuner cannot evaluate (sizeof(snap::CKD), the
	// problem's S.t.twojmax), so scratch_bytes is checked for it; a test
	// compiles the harness and checks each against the program.
	ScratchConsts map[string]int64
	Pos           diag.Pos
}

// Constraint is a condition over tunables, machine properties, derived
// values and (for a kernel's) the kernel's arguments and size.
type Constraint struct {
	Expr  string   `json:"expr"`
	Names []string `json:"names,omitempty"`
	Pos   diag.Pos `json:"at"`
}

// Machine is the properties of a device that constraints read
// (max_threads_per_block, warp_size, shared_mem_per_block, ...): the machine
// model provides them; nil when there is none, and then constraints that
// read a property are not checked.
type Machine map[string]float64

// Load reads a search-space file, reporting every problem at its position.
func Load(file string) (*Spaces, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return Parse(file, data)
}

// Parse reads the search spaces in data, read from file.
func Parse(file string, data []byte) (*Spaces, error) {
	var errs diag.List
	root := diag.ParseYAML(file, data, &errs)
	if root == nil {
		return nil, errs.Err()
	}
	d := diag.Decoder{File: file, Errs: &errs}
	s := &Spaces{File: file, Machine: map[string]string{}, Tunables: map[string]*Decl{},
		Strategies: map[string]*Scope{}, Kernels: map[string]*Scope{}}
	f := d.Fields(root, "tuning file", "machine", "tunables", "constraints", "strategies", "kernels")
	d.Require(root, f, "tuning file", "tunables")
	for _, kv := range d.Pairs(f["machine"], "machine") {
		s.Machine[kv[0].Value] = d.String(kv[1], "machine property "+kv[0].Value)
	}
	for _, kv := range d.Pairs(f["tunables"], "tunables") {
		t := decl(d, kv[0], kv[1])
		if _, clash := s.Machine[t.Name]; clash {
			d.Add(kv[0], "tunable %s is also a machine property", t.Name)
		}
		s.Tunables[t.Name] = t
	}
	known := s.knownNames()
	s.Constraints = constraints(d, f["constraints"], known)
	for _, scope := range []struct {
		key string
		out map[string]*Scope
	}{{"strategies", s.Strategies}, {"kernels", s.Kernels}} {
		for _, kv := range d.Pairs(f[scope.key], scope.key) {
			sc := &Scope{Name: kv[0].Value, Space: map[string][]int64{}, Held: map[string]bool{}, Pos: d.Pos(kv[0])}
			sf := d.Fields(kv[1], scope.key+" entry", "space", "constraints", "scratch_consts")
			if sf["scratch_consts"] != nil && scope.key != "kernels" {
				d.Add(sf["scratch_consts"], "scratch_consts: a kernel's, not a strategy's")
			}
			for _, kc := range d.Pairs(sf["scratch_consts"], "scratch_consts") {
				if sc.ScratchConsts == nil {
					sc.ScratchConsts = map[string]int64{}
				}
				sc.ScratchConsts[kc[0].Value] = d.Int(kc[1], "scratch_consts: "+kc[0].Value)
			}
			for _, sp := range d.Pairs(sf["space"], "space") {
				t, ok := s.Tunables[sp[0].Value]
				if !ok {
					d.Add(sp[0], "space of undeclared tunable %q%s (declare it under tunables:)", sp[0].Value, diag.DidYouMean(sp[0].Value, slices.Sorted(maps.Keys(s.Tunables))))
					continue
				}
				if sp[1].Kind == yaml.ScalarNode && sp[1].Value == "default" {
					sc.Held[sp[0].Value] = true
					continue
				}
				vals := space(d, sp[1], sp[0].Value)
				t.inBounds(d, sp[1], vals)
				sc.Space[sp[0].Value] = vals
			}
			kernelNames := known
			if scope.key == "kernels" {
				kernelNames = nil // a kernel's constraints may read its arguments: checked per cell
			}
			sc.Constraints = constraints(d, sf["constraints"], kernelNames)
			scope.out[sc.Name] = sc
		}
	}
	return s, errs.Err()
}

func decl(d diag.Decoder, key, n *yaml.Node) *Decl {
	t := &Decl{Name: key.Value, Pos: d.Pos(key)}
	f := d.Fields(n, "tunable "+t.Name, "doc", "min", "max", "space", "patterns", "not_with_scratch", "block")
	d.Require(n, f, "tunable "+t.Name, "min", "space")
	t.Doc = d.String(f["doc"], "doc")
	t.Min = d.Int(f["min"], t.Name+": min")
	t.Max, t.HasMax = d.Int(f["max"], t.Name+": max"), f["max"] != nil
	if f["max"] != nil && t.Max < t.Min {
		d.Add(f["max"], "%s: max %d is below min %d", t.Name, t.Max, t.Min)
	}
	if t.Min < 0 {
		d.Add(f["min"], "%s: min must not be negative", t.Name)
	}
	for _, p := range d.Seq(f["patterns"], t.Name+": patterns") {
		name := d.String(p, t.Name+": pattern")
		if _, ok := spec.Patterns[name]; !ok {
			d.Add(p, "%s: unknown pattern %q%s", t.Name, name, diag.DidYouMean(name, slices.Sorted(maps.Keys(spec.Patterns))))
		}
		t.Patterns = append(t.Patterns, name)
	}
	if f["not_with_scratch"] != nil {
		t.NotWithScratch = d.Bool(f["not_with_scratch"], t.Name+": not_with_scratch")
		if len(t.Patterns) == 0 {
			d.Add(f["not_with_scratch"], "%s: not_with_scratch needs patterns", t.Name)
		}
	}
	if f["block"] != nil {
		t.Block = d.Bool(f["block"], t.Name+": block")
		if len(t.Patterns) == 0 {
			d.Add(f["block"], "%s: block needs patterns (the launches whose threads it is)", t.Name)
		}
	}
	t.Space = space(d, f["space"], t.Name)
	t.SpaceAt = d.Pos(f["space"])
	t.inBounds(d, f["space"], t.Space)
	return t
}

// space reads a list of values, {pow2: [lo, hi]} or {range: [lo, hi], step: s}.
func space(d diag.Decoder, n *yaml.Node, name string) []int64 {
	if n == nil {
		return nil
	}
	var out []int64
	before := len(*d.Errs)
	switch n.Kind {
	case yaml.SequenceNode:
		out = d.Ints(n, name+": space")
	case yaml.MappingNode:
		f := d.Fields(n, name+": space", "pow2", "range", "step")
		bounds := func(b *yaml.Node, what string) (int64, int64, bool) {
			v := d.Ints(b, name+": "+what)
			if len(v) != 2 || v[0] > v[1] {
				d.Add(b, "%s: %s is [lo, hi] with lo <= hi", name, what)
				return 0, 0, false
			}
			return v[0], v[1], true
		}
		switch {
		case f["pow2"] != nil && f["range"] == nil && f["step"] == nil:
			lo, hi, ok := bounds(f["pow2"], "pow2")
			if ok && lo < 1 {
				d.Add(f["pow2"], "%s: pow2 bounds must be >= 1", name)
				ok = false
			}
			for p := int64(1); ok && p <= hi && p > 0; p *= 2 { // p > 0: stop before 2^63 wraps
				if p >= lo {
					out = append(out, p)
				}
			}
		case f["range"] != nil && f["pow2"] == nil:
			lo, hi, ok := bounds(f["range"], "range")
			step := int64(1)
			if f["step"] != nil {
				step = d.Int(f["step"], name+": step")
			}
			if step < 1 {
				d.Add(f["step"], "%s: step must be >= 1", name)
				ok = false
			}
			if ok && uint64(hi-lo)/uint64(step) >= MaxValues {
				d.Add(f["range"], "%s: the range holds more than %d values", name, MaxValues)
				ok = false
			}
			for i := int64(0); ok && uint64(i) <= uint64(hi-lo)/uint64(step); i++ { // no v += step: it could wrap past hi
				out = append(out, lo+i*step)
			}
		default:
			d.Add(n, "%s: a space is a list of values, {pow2: [lo, hi]} or {range: [lo, hi], step: s}", name)
		}
	default:
		d.Add(n, "%s: a space is a list of values, {pow2: [lo, hi]}, {range: [lo, hi], step: s} or (in a scope) default", name)
	}
	if len(out) == 0 && len(*d.Errs) == before {
		d.Add(n, "%s: the space is empty", name)
	}
	seen := map[int64]bool{}
	for _, v := range out {
		if seen[v] {
			d.Add(n, "%s: value %d repeated in the space", name, v)
		}
		seen[v] = true
	}
	slices.Sort(out)
	return out
}

// inBounds reports the values of vals outside t's bounds, at n.
func (t *Decl) inBounds(d diag.Decoder, n *yaml.Node, vals []int64) {
	for _, v := range vals {
		if why := t.Bounds(v); why != "" {
			d.Add(n, "%s: space value %d: %s", t.Name, v, why)
			return
		}
	}
}

// Bounds says why v is not a value of the tunable ("" when it is).
func (t *Decl) Bounds(v int64) string {
	switch {
	case v < t.Min:
		return fmt.Sprintf("must be >= %d, not %d", t.Min, v)
	case t.HasMax && v > t.Max:
		return fmt.Sprintf("must be <= %d, not %d", t.Max, v)
	}
	return ""
}

func constraints(d diag.Decoder, n *yaml.Node, known []string) []Constraint {
	var out []Constraint
	for _, item := range d.Seq(n, "constraints") {
		c := Constraint{Expr: d.String(item, "constraint"), Pos: d.Pos(item)}
		names, err := spec.Names(c.Expr)
		if err != nil {
			d.Add(item, "constraint %q: %v", c.Expr, err)
			continue
		}
		c.Names = names
		ones := spec.Env{} // the form is checked with every name 1
		for _, name := range names {
			ones[name] = spec.Value{I: 1, Int: true}
		}
		if _, err := spec.Holds(c.Expr, ones); err != nil && !strings.Contains(err.Error(), "division by zero") {
			d.Add(item, "constraint %q: %v", c.Expr, err)
			continue
		}
		for _, name := range names {
			if known != nil && !slices.Contains(known, name) {
				d.Add(item, "constraint %q: unknown name %q%s (tunables, machine properties and %s)", c.Expr, name, diag.DidYouMean(name, known), strings.Join(slices.Sorted(maps.Keys(Derived)), ", "))
			}
		}
		out = append(out, c)
	}
	return out
}

func (s *Spaces) knownNames() []string {
	var out []string
	out = slices.AppendSeq(out, maps.Keys(s.Tunables))
	out = slices.AppendSeq(out, maps.Keys(s.Machine))
	out = slices.AppendSeq(out, maps.Keys(Derived))
	sort.Strings(out)
	return out
}

// Check validates the tunables kernels and strategies declare against the
// file: each is declared, each value within its bounds (an error at the
// value: "rows_per_team: must be >= 1, not 0"), and the file's strategy and
// kernel scopes name strategies and kernels that exist.
func (s *Spaces) Check(kernels []*spec.Kernel, strategies []*matrix.Strategy) error {
	var errs diag.List
	check := func(name string, v int64, at diag.Pos) {
		t, ok := s.Tunables[name]
		if !ok {
			errs.Add(at, "tunable %s has no search space: declare it in %s%s", name, s.File, diag.DidYouMean(name, slices.Sorted(maps.Keys(s.Tunables))))
			return
		}
		if why := t.Bounds(v); why != "" {
			errs.Add(at, "%s: %s (bounds at %s)", name, why, t.Pos)
		}
	}
	var kernelNames, strategyNames []string
	for _, k := range kernels {
		kernelNames = append(kernelNames, k.Name)
		for _, t := range k.Tunables {
			at := t.Pos
			if at.File == "" { // a tunable the mapper made (loops:): the kernel's
				at = k.Pos
			}
			check(t.Name, t.Value, at)
		}
	}
	for _, st := range strategies {
		strategyNames = append(strategyNames, st.Name)
		for _, name := range slices.Sorted(maps.Keys(st.Tunables)) {
			check(name, st.Tunables[name], st.TuneAt[name])
		}
		for _, kn := range st.Knobs {
			for _, kv := range kn.Values {
				for _, name := range slices.Sorted(maps.Keys(kv.Tunables)) {
					check(name, kv.Tunables[name], kv.TuneAt[name])
				}
			}
		}
	}
	for _, sc := range s.Strategies {
		if !slices.Contains(strategyNames, sc.Name) {
			errs.Add(sc.Pos, "unknown strategy %q%s", sc.Name, diag.DidYouMean(sc.Name, strategyNames))
		}
	}
	byName := spec.ByName(kernels)
	for _, sc := range s.Kernels {
		if !slices.Contains(kernelNames, sc.Name) {
			errs.Add(sc.Pos, "unknown kernel %q%s", sc.Name, diag.DidYouMean(sc.Name, kernelNames))
			continue
		}
		for _, term := range slices.Sorted(maps.Keys(sc.ScratchConsts)) {
			if !slices.ContainsFunc(byName[sc.Name].Pattern.Teams(), func(t *spec.Node) bool {
				return slices.ContainsFunc(t.Scratch, func(v spec.Scratch) bool { return strings.Contains(v.Size, term) })
			}) {
				errs.Add(sc.Pos, "scratch_consts: %s is in no scratch size of %s", term, sc.Name)
			}
		}
	}
	return errs.Err()
}

// Config is one point of a cell's space: a value per tunable.
type Config map[string]int64

// String is the configuration as the harness's --config flag takes it:
// name=value pairs sorted by name, joined by commas ("" for none).
func (c Config) String() string {
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(c)) {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k + "=" + strconv.FormatInt(c[k], 10))
	}
	return b.String()
}

// ParseConfig reads what String writes.
func ParseConfig(s string) (Config, error) {
	c := Config{}
	if s == "" {
		return c, nil
	}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(kv, "=")
		n, err := strconv.ParseInt(v, 10, 64)
		if !ok || err != nil || k == "" {
			return nil, fmt.Errorf("configuration %q: %q is not name=integer", s, kv)
		}
		if _, dup := c[k]; dup {
			return nil, fmt.Errorf("configuration %q: %s given twice", s, k)
		}
		c[k] = n
	}
	return c, nil
}
