// Package spec reads kernel descriptions: each kernel written once, as data
// (arguments, sizes, a tree of parallel patterns with C++ body snippets, the
// float64 reference, bytes, flops and tolerance). See docs/kernels.md.
package spec

import (
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/loopnest"
)

// Kernel is one kernel description.
type Kernel struct {
	File string
	Name string
	Doc  string
	// Family groups kernels of one origin (a paper, a suite: 002, testsnap,
	// lcals, stencils); the quick suite covers every family. Default: Name.
	Family   string
	Size     Size
	Uses     []string // kernels a composite calls from its driver
	Args     []Arg
	Result   string // "" or "double": the value the kernel returns
	Tunables []Tunable
	Pattern  *Node // the parallel pattern tree, or nil for a composite
	// Loops is the kernel written as sequential loops (loops:, instead of
	// pattern:); the mapper sets Pattern from it after loading
	// (mapping.Lower), and Mapping explains how.
	Loops   *loopnest.Program
	Mapping string
	Driver  string // host code of a composite, calling the kernels it uses
	// Reference is the float64 host reference, the body of a function with
	// the kernel's signature. A composite's is optional: without one its
	// driver runs over the references of the kernels it uses.
	Reference string
	Bytes     string // C++ expression over the arguments: the papers' byte convention
	BytesMin  string // the kernel's minimum memory traffic (defaults to Bytes)
	Flops     string
	// Tolerance is a C++ expression over the arguments and eps (machine
	// epsilon): the largest relative error accepted, a bound on the rounding
	// the kernel's arithmetic accumulates; evaluated per size.
	Tolerance    string
	ToleranceWhy string // required when the tolerance is loose (>= LooseTolerance)
	Pos          diag.Pos
	// Variation is set when the kernel is a variation of another
	// (variation_of:, variation.go): the base's description, re-read.
	Variation *Variation
	// Vendor are the kernel's forms as calls of a vendor library
	// (vendor:, vendor.go), which a strategy naming the library calls.
	Vendor []VendorForm
}

// Size is the kernel's size parameter and its size sets.
type Size struct {
	Name string
	Doc  string
	Sets map[string][]int64 // "ci", "default", "gpu"
	// SetPos is where each set is written.
	SetPos map[string]diag.Pos
}

// SizeSets are the named size sets every kernel gives.
var SizeSets = []string{"ci", "default", "gpu"}

// Arg is a kernel argument: a scalar, an array or a CSR matrix.
type Arg struct {
	Name   string
	Type   string // int64, double, double[], int64[], csr, snap
	Value  string // scalars: a C++ expression, may use "size"
	Extent string // arrays: a C++ expression over earlier arguments
	Init   Init
	Intent string // arrays: in, out, inout, scratch
	Pos    diag.Pos
}

// Init says how an array is filled.
type Init struct {
	Kind   string // random, zero, formula, minife27, bcc_w, snap, or "" (outputs)
	Lo, Hi float64
	Grid   string // minife27, bcc_w: the size expression
	Stage  string // snap: the reference stage that fills the array (snap.go)
	Field  string // sphere: the element-geometry field that fills the array (sphere.go)
	Expr   string // formula: element k's value, a C++ expression over k and the scalars
	// Requires is "spd" where the kernel needs a symmetric positive definite
	// matrix (CG-Solve): a user's matrix (PM_MATRIX) is checked for it.
	Requires string
}

// Tunable is a named integer constant of the kernel a strategy may override.
type Tunable struct {
	Name  string
	Value int64
	Pos   diag.Pos // of the value, where variants/tuning.yaml's bounds are checked
	Host  int64    // the value on a host CPU where it differs (the mapper's, from a CPU model); 0: Value
	// Registers is the value where the strategy keeps a work item's state in
	// registers (item_registers: true; the mapper's, ItemState) and it
	// differs; 0: Value.
	Registers int64
	// Rendered: a constant of the program, not read at run time: the
	// compiler folds it into trip counts and scratch strides (the staged
	// multiply's step ran 1.6x slower as a run-time value on an H200).
	// A strategy's value renders another program; the tuner holds it.
	Rendered bool
}

// OnItems is the tunable's generated value on a harness device for a
// strategy that keeps a work item's state in registers or not
// (item_registers): Registers there where one is given, else On(device).
func (t Tunable) OnItems(device string, registers bool) int64 {
	if registers && t.Registers > 0 {
		return t.Registers
	}
	return t.On(device)
}

// On is the tunable's generated value on a harness device: Host on the
// host where one is given, else Value.
func (t Tunable) On(device string) int64 {
	if device == "host" && t.Host > 0 {
		return t.Host
	}
	return t.Value
}

// Node is one pattern of the tree.
type Node struct {
	Kind     string // code, range_for, range_reduce, team, team_thread_for, thread_vector_reduce; launches (the mapper's, launches.go)
	Code     string // code: C++ statements; loops: the body when it is one snippet
	Index    string
	Begin    string
	End      string
	Acc      string // reductions: the accumulator the body adds to
	Into     string // range_reduce: the element of a double[] argument its sum stays in, on the device (into.go)
	League   string // team
	TeamSize string
	Vector   string
	Seq      Sequence // sequence and indexset_for (sequence.go)
	Body     []*Node
	Else     []*Node // item_state: the body that keeps the state in team scratch (itemstate.go)
	Pos      diag.Pos
	// Multi-dimensional loops (team.go): one index, begin and end per dimension.
	Indices, Begins, Ends []string
	Scratch               []Scratch // team: scratch views
	Target, Value         string    // atomic_add: target += value
	Cond                  string    // atomic_add: only where this C++ condition holds (optional)
}

// Patterns lists the node kinds, and where each may appear.
var Patterns = map[string]string{
	"code":                 "anywhere",
	"range_for":            "top",
	"range_reduce":         "top",
	"team":                 "top",
	"team_thread_for":      "team",
	"thread_vector_reduce": "team_thread_for",
	"sequence":             "top",
	"indexset_for":         "sequence",
}

// IsArray reports whether the argument is an array.
func (a Arg) IsArray() bool { return strings.HasSuffix(a.Type, "[]") }

// Elem is the element type of an array argument.
func (a Arg) Elem() string { return strings.TrimSuffix(a.Type, "[]") }

// Kinds returns the hooks the tree needs (pattern kinds, and team_scratch
// for a team with scratch views), sorted.
func (k *Kernel) Kinds() []string {
	seen := map[string]bool{}
	var walk func(n *Node)
	walk = func(n *Node) {
		if n == nil {
			return
		}
		if n.Kind != ItemState { // lowered by the renderer, both forms' patterns needed
			seen[n.Hook()] = true
		}
		for _, c := range n.Body {
			walk(c)
		}
		for _, c := range n.Else {
			walk(c)
		}
	}
	walk(k.Pattern)
	var out []string
	for kind := range seen {
		out = append(out, kind)
	}
	sort.Strings(out)
	return out
}

var ident = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// Parse reads one description; problems go to errs.
func Parse(file string, data []byte, errs *diag.List) *Kernel {
	root := diag.ParseYAML(file, data, errs)
	if root == nil {
		return nil
	}
	d := diag.Decoder{File: file, Errs: errs}
	k := &Kernel{File: file, Pos: d.Pos(root)}
	if diag.Value(root, "variation_of") != nil {
		parseVariation(d, k, root)
		checkName(d, k, file, root)
		return k
	}
	f := d.Fields(root, "kernel description", "kernel", "family", "doc", "size", "uses", "args", "result", "tunables",
		"pattern", "loops", "driver", "reference", "bytes", "bytes_min", "flops", "tolerance", "tolerance_why", "vendor")
	if !d.Require(root, f, "kernel description", "kernel", "size", "args", "bytes", "flops", "tolerance") {
		return k
	}
	k.Name = d.String(f["kernel"], "kernel")
	checkName(d, k, file, root)
	k.Doc = d.String(f["doc"], "doc")
	k.Family = d.String(f["family"], "family")
	if k.Family == "" {
		k.Family = k.Name
	}
	k.Size = parseSize(d, f["size"])
	k.Uses = d.Strings(f["uses"], "uses")
	k.Result = d.String(f["result"], "result")
	if k.Result != "" && k.Result != "double" {
		d.Add(f["result"], "result must be double (the only reduction type so far), not %q", k.Result)
	}
	k.Args = parseArgs(d, f["args"])
	k.Tunables = parseTunables(d, f["tunables"])
	k.Reference = d.String(f["reference"], "reference")
	k.Bytes = d.String(f["bytes"], "bytes")
	k.BytesMin = d.String(f["bytes_min"], "bytes_min")
	if k.BytesMin == "" {
		k.BytesMin = k.Bytes
	}
	k.Flops = d.String(f["flops"], "flops")
	k.Tolerance = d.String(f["tolerance"], "tolerance")
	k.ToleranceWhy = d.String(f["tolerance_why"], "tolerance_why")
	k.Driver = d.String(f["driver"], "driver")
	switch {
	case f["loops"] != nil && (f["pattern"] != nil || f["driver"] != nil):
		d.Add(f["@loops"], "a kernel has loops (to be mapped) or a pattern or a driver, one of them")
	case f["loops"] != nil:
		parseLoops(d, k, f["loops"])
		if f["reference"] == nil {
			d.Add(root, "kernel description needs field \"reference\": the float64 host reference")
		}
		if k.Result != "" {
			d.Add(f["@result"], "a loop-nest kernel returns nothing: write the sum into an array of one element")
		}
		if len(k.Uses) > 0 {
			d.Add(f["@uses"], "uses is for composites (a driver), not for loops")
		}
	case f["pattern"] != nil && f["driver"] != nil:
		d.Add(f["@driver"], "a kernel has a pattern or a driver, not both")
	case f["pattern"] == nil && f["driver"] == nil:
		d.Add(root, "kernel description needs a pattern, loops (to be mapped), or, for a composite, a driver and uses")
	case f["pattern"] != nil:
		k.Pattern = parseNode(d, f["pattern"], "top")
		if len(k.Uses) > 0 {
			d.Add(f["@uses"], "uses is for composites (a driver), not for a pattern")
		}
	default:
		if len(k.Uses) == 0 {
			d.Add(f["@driver"], "a driver needs uses: the kernels it calls")
		}
	}
	if k.Pattern != nil && f["reference"] == nil {
		d.Add(root, "kernel description needs field \"reference\": the float64 host reference")
	}
	if k.Pattern != nil {
		checkResult(d, k, f)
		checkInto(d, k)
		checkScratchLevels(d, k)
		checkLeagueAdds(d, k)
	}
	parseVendor(d, k, f["vendor"])
	checkWork(d, k, f)
	return k
}

// checkName checks that k's name is a C++ identifier and its file's name.
func checkName(d diag.Decoder, k *Kernel, file string, root *yaml.Node) {
	at := diag.Value(root, "kernel")
	if base := strings.TrimSuffix(filepath.Base(file), ".yaml"); k.Name != "" && k.Name != base {
		d.Add(at, "kernel %q must be described in %s.yaml", k.Name, k.Name)
	}
	if k.Name != "" && !ident.MatchString(k.Name) {
		d.Add(at, "kernel name %q is not a C++ identifier", k.Name)
	}
}

func checkResult(d diag.Decoder, k *Kernel, f map[string]*yaml.Node) {
	reduces := (k.Pattern.Kind == "range_reduce" && k.Pattern.Into == "") || EndsInReduce(k.Pattern) || k.Pattern.LeagueReduces()
	switch {
	case reduces && k.Result == "":
		d.Add(f["@pattern"], "range_reduce (or a team with acc) returns its sum: add result: double")
	case !reduces && k.Result != "" && k.Pattern.Into == "": // with into, checkInto says why
		d.Add(f["@result"], "result needs a range_reduce (or a team with acc) at the top")
	}
}

func parseSize(d diag.Decoder, n *yaml.Node) Size {
	f := d.Fields(n, "size", append([]string{"name", "doc"}, SizeSets...)...)
	s := Size{Name: d.String(f["name"], "size name"), Doc: d.String(f["doc"], "size doc"), Sets: map[string][]int64{}, SetPos: map[string]diag.Pos{}}
	d.Require(n, f, "size", append([]string{"name"}, SizeSets...)...)
	if s.Name != "" && !ident.MatchString(s.Name) {
		d.Add(f["name"], "size name %q is not a C++ identifier", s.Name)
	}
	for _, set := range SizeSets {
		s.Sets[set] = d.Ints(f[set], "size "+set)
		s.SetPos[set] = d.Pos(f[set])
		for i, v := range s.Sets[set] {
			if v < 1 {
				d.Add(f[set].Content[i], "sizes must be positive, not %d", v)
			}
		}
		if f[set] != nil && len(s.Sets[set]) == 0 {
			d.Add(f[set], "size %s must list at least one size", set)
		}
	}
	return s
}

var argTypes = map[string]bool{"int64": true, "double": true, "double[]": true, "int64[]": true, "csr": true, "snap": true}
var intents = map[string]bool{"in": true, "out": true, "inout": true, "scratch": true}

func parseArgs(d diag.Decoder, n *yaml.Node) []Arg {
	var args []Arg
	seen := map[string]bool{"size": true}
	for _, item := range d.Seq(n, "args") {
		f := d.Fields(item, "argument", "name", "type", "value", "extent", "init", "intent")
		a := Arg{Name: d.String(f["name"], "name"), Type: d.String(f["type"], "type"), Pos: d.Pos(item)}
		if !d.Require(item, f, "argument", "name", "type") {
			continue
		}
		switch {
		case !ident.MatchString(a.Name):
			d.Add(f["name"], "argument name %q is not a C++ identifier", a.Name)
		case seen[a.Name]:
			d.Add(f["name"], "argument %q defined twice (or shadows size)", a.Name)
		}
		seen[a.Name] = true
		if !argTypes[a.Type] {
			d.Add(f["type"], "unknown argument type %q (known: csr, double, double[], int64, int64[], snap)", a.Type)
			continue
		}
		a.Value = d.String(f["value"], "value")
		a.Extent = d.String(f["extent"], "extent")
		a.Intent = d.String(f["intent"], "intent")
		a.Init = parseInit(d, f["init"])
		switch {
		case a.Type == "snap" || a.Init.Kind == "bcc_w":
			checkSnapArg(d, item, f, a)
		case a.Type == "csr":
			if a.Init.Kind != "minife27" {
				d.Add(item, "csr argument %q needs init: {minife27: <grid size>}", a.Name)
			}
		case a.IsArray():
			d.Require(item, f, fmt.Sprintf("array %q", a.Name), "extent", "intent")
			if a.Intent != "" && !intents[a.Intent] {
				d.Add(f["intent"], "unknown intent %q (known: in, inout, out, scratch)", a.Intent)
			}
			if a.Intent == "out" && f["init"] != nil {
				d.Add(f["init"], "array %q is an output: it is poisoned, not initialised", a.Name)
			}
			if (a.Intent == "in" || a.Intent == "inout") && f["init"] == nil {
				d.Add(item, "input array %q needs init", a.Name)
			}
			if a.Init.Kind == "minife27" {
				d.Add(f["init"], "minife27 initialises a csr argument, not an array")
			}
			if a.Type == "int64[]" && a.Intent != "in" {
				d.Add(f["intent"], "int64[] array %q must be an input (the harness checks double outputs only)", a.Name)
			}
		default:
			d.Require(item, f, fmt.Sprintf("scalar %q", a.Name), "value")
			for _, field := range []string{"extent", "init", "intent"} {
				if f[field] != nil {
					d.Add(f["@"+field], "scalar %q takes no %s", a.Name, field)
				}
			}
		}
		if a.Init.Kind == "snap" {
			checkSnapStage(d, f["init"], a, args)
		}
		if a.Init.Kind == "sphere" {
			checkSphereField(d, f["init"], a)
		}
		args = append(args, a)
	}
	return args
}

func parseInit(d diag.Decoder, n *yaml.Node) Init {
	if n == nil {
		return Init{}
	}
	f := d.Fields(n, "init", "random", "zero", "formula", "minife27", "bcc_w", "snap", "sphere", "requires")
	requires := ""
	if f["requires"] != nil {
		requires = d.String(f["requires"], "requires")
		if f["minife27"] == nil || requires != "spd" {
			d.Add(f["requires"], "requires: spd goes with minife27: <grid> (a csr matrix a user may replace), not %q", requires)
		}
		delete(f, "requires")
		delete(f, "@requires")
	}
	if len(f) != 2 {
		d.Add(n, "init needs exactly one of random: [lo, hi], zero: true, formula: <expr of k>, minife27: <grid>, bcc_w: <cells>, snap: <stage>, sphere: <field>")
		return Init{}
	}
	switch {
	case f["formula"] != nil:
		e := d.String(f["formula"], "formula")
		if e == "" {
			d.Add(f["formula"], "formula needs a C++ expression of the element number k")
		}
		return Init{Kind: "formula", Expr: e}
	case f["sphere"] != nil:
		return Init{Kind: "sphere", Field: d.String(f["sphere"], "sphere")}
	case f["bcc_w"] != nil:
		return Init{Kind: "bcc_w", Grid: d.String(f["bcc_w"], "bcc_w")}
	case f["snap"] != nil:
		return Init{Kind: "snap", Stage: d.String(f["snap"], "snap")}
	case f["random"] != nil:
		r := f["random"]
		items := d.Seq(r, "random")
		if len(items) != 2 {
			d.Add(r, "random needs [lo, hi]")
			return Init{}
		}
		in := Init{Kind: "random", Lo: d.Float(items[0], "random lo"), Hi: d.Float(items[1], "random hi")}
		if in.Lo >= in.Hi {
			d.Add(r, "random range [%g, %g] is empty", in.Lo, in.Hi)
		}
		return in
	case f["zero"] != nil:
		if !d.Bool(f["zero"], "zero") {
			d.Add(f["zero"], "zero: false is not an initialisation")
		}
		return Init{Kind: "zero"}
	}
	return Init{Kind: "minife27", Grid: d.String(f["minife27"], "minife27"), Requires: requires}
}

func parseTunables(d diag.Decoder, n *yaml.Node) []Tunable {
	var out []Tunable
	for _, kv := range d.Pairs(n, "tunables") {
		t := Tunable{Name: kv[0].Value, Value: d.Int(kv[1], "tunable "+kv[0].Value), Pos: d.Pos(kv[1])}
		if !ident.MatchString(t.Name) {
			d.Add(kv[0], "tunable name %q is not a C++ identifier", t.Name)
		}
		if t.Value < 0 {
			d.Add(kv[1], "tunable %s must not be negative (0 is a value, e.g. a scratch level)", t.Name)
		}
		out = append(out, t)
	}
	return out
}

// parseNode reads one pattern: a mapping with a single key, the node kind.
// where is the enclosing kind ("top" at the root).
func parseNode(d diag.Decoder, n *yaml.Node, where string) *Node {
	if n.Kind == yaml.ScalarNode && n.Value == "team_barrier" {
		// a pattern without fields may be written as its name alone
		n = &yaml.Node{Kind: yaml.MappingNode, Line: n.Line, Column: n.Column,
			Content: []*yaml.Node{n, {Kind: yaml.ScalarNode, Tag: "!!null", Line: n.Line, Column: n.Column}}}
	}
	if n.Kind != yaml.MappingNode || len(n.Content) != 2 {
		d.Add(n, "a pattern is a mapping with one key, its kind (known: %s)", strings.Join(kindNames(), ", "))
		return nil
	}
	key, val := n.Content[0], n.Content[1]
	node := &Node{Kind: key.Value, Pos: d.Pos(key)}
	in, placed := allowedIn(node.Kind, where)
	if _, ok := Patterns[node.Kind]; !ok {
		d.Add(key, "unknown pattern %q (known: %s)", node.Kind, strings.Join(kindNames(), ", "))
		return nil
	}
	if !placed && !inSequence(node.Kind, where) {
		d.Add(key, "%s cannot appear in %s (only in %s)", node.Kind, where, in)
	}
	if node.Kind == "code" {
		node.Code = d.String(val, "code")
		return node
	}
	if node.Kind == "team_barrier" && val.Kind == yaml.ScalarNode && val.Tag == "!!null" {
		return node
	}
	if parseSequenceNode(d, val, node) {
		return node
	}
	f := d.Fields(val, node.Kind, nodeFields[node.Kind]...)
	if parseExtra(d, val, f, node) {
		return node
	}
	parseLoop(d, f, node)
	node.Acc = d.String(f["acc"], "acc")
	node.Into = d.String(f["into"], "into")
	node.League = d.String(f["league"], "league")
	node.TeamSize = d.String(f["team_size"], "team_size")
	node.Vector = d.String(f["vector"], "vector")
	switch node.Kind {
	case "team":
		d.Require(val, f, node.Kind, "league", "team_size", "vector", "body")
	default:
		d.Require(val, f, node.Kind, "index", "end", "body")
		reduces := strings.HasSuffix(node.Kind, "_reduce")
		if reduces && f["acc"] == nil {
			d.Add(val, "%s needs field \"acc\": the accumulator its body adds to", node.Kind)
		}
	}
	if node.Begin == "" {
		node.Begin = "0"
	}
	parent := node
	if node.Sequential() { // its body is placed as in the enclosing pattern (seqfor.go)
		parent = &Node{Kind: where}
	}
	node.Body = parseBody(d, f["body"], parent)
	if node.Kind == "team" {
		node.AddTeamSumView()
	}
	return node
}

// parseBody reads a body: one snippet, or a list of patterns.
func parseBody(d diag.Decoder, n *yaml.Node, parent *Node) []*Node {
	if n == nil {
		return nil
	}
	if n.Kind == yaml.ScalarNode {
		return []*Node{{Kind: "code", Code: n.Value, Pos: d.Pos(n)}}
	}
	var out []*Node
	for _, item := range d.Seq(n, "body") {
		if c := parseNode(d, item, parent.Kind); c != nil {
			out = append(out, c)
		}
	}
	return out
}

func kindNames() []string {
	var out []string
	for k := range Patterns {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func checkUses(kernels []*Kernel, errs *diag.List) {
	byName := map[string]*Kernel{}
	for _, k := range kernels {
		if prev, dup := byName[k.Name]; dup {
			errs.Add(k.Pos, "kernel %q already described in %s", k.Name, prev.File)
		}
		byName[k.Name] = k
	}
	var names []string
	for _, k := range kernels {
		names = append(names, k.Name)
	}
	for _, k := range kernels {
		for _, u := range k.Uses {
			switch used, ok := byName[u]; {
			case !ok:
				errs.Add(k.Pos, "kernel %q uses unknown kernel %q%s", k.Name, u, diag.DidYouMean(u, names))
			case used.Pattern == nil && used.Loops == nil:
				errs.Add(k.Pos, "kernel %q uses %q, itself a composite; composites call pattern kernels only", k.Name, u)
			}
		}
	}
}

// ByName indexes kernels.
func ByName(kernels []*Kernel) map[string]*Kernel {
	m := map[string]*Kernel{}
	for _, k := range kernels {
		m[k.Name] = k
	}
	return m
}
