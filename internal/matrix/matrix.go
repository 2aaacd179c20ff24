// Package matrix expands the variant file into variants (a strategy with one
// value of each knob) and crosses them with kernels and toolchains into cells,
// each on, or off with its reason.
package matrix

import (
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/library"
	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/spec"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// Strategy is one way of writing the kernels.
type Strategy struct {
	Name     string
	Doc      string
	Backend  string // templates/backends/<backend>
	Layer    string // header of a Kokkos-like layer, for the kokkos backend
	Device   string // harness device (toolchain.HarnessDevices)
	Lang     string // cpp or cuda
	Requires []string
	Optional []string
	Tunables map[string]int64
	TuneAt   map[string]diag.Pos // where each of Tunables is written
	// ModelDefaults: launch parameters that take the machine model's default
	// (parameter -> kind of machine.DefaultKinds) when the run knows the GPU.
	ModelDefaults map[string]string
	Knobs         []Knob
	Kernels       []string
	KernelAt      []diag.Pos          // where each of Kernels is written
	Flags         map[string][]string // extra compiler flags by family
	Pos           diag.Pos
	DeviceAt      diag.Pos // where Device is written
	// Library: the installed library the strategy's programs are compiled
	// and linked against (nil: the project's own layer or none).
	Library *LibraryRef
	// Twins: the layer variants (of strategies without a library) that
	// every variant of this library strategy stands for: the same user
	// code on the project's own layer (`twins:`; a knob value adds its own).
	Twins   []string
	TwinsAt []diag.Pos // where each of Twins is written
	// LoopsOnly: the strategy applies to the kernels written as loop nests
	// only (spec.Kernel.Loops, the mapper's; `loops_only: true`): mapcheck,
	// which checks the mapper's parallel loops.
	LoopsOnly bool
	// ItemRegisters: a work item (a team thread's vector lane) is one
	// hardware thread for the whole team body and the team barrier is a
	// real barrier, so state private to a work item may stay in its
	// registers across barriers (`item_registers: true`; spec.ItemState).
	// False, the default: such state lives in team scratch.
	ItemRegisters bool
	// Vendor: the strategy calls a vendor library (cublas): a kernel's
	// vendor form of that name (spec.Kernel.Vendor) instead of its
	// patterns; it applies to the kernels that declare one only.
	Vendor   string
	VendorAt diag.Pos
	// HostIgnores are the strategy's launch tunables its layer does not
	// read when the program runs on the host CPU (`host_ignores`: kk-omp's
	// layer lowers its launches there as Kokkos' host backend does, without
	// the target clauses): a host cell's tuning space leaves them out.
	HostIgnores   []string
	HostIgnoresAt []diag.Pos
}

// DeclaresTunables says whether the strategy's programs declare the
// kernels' tunables: a vendor form calls its library, whose launch they are
// not, so its programs declare and read none (the renderer, the recorded
// tunables and the tuning space all follow this).
func (s *Strategy) DeclaresTunables() bool { return s.Vendor == "" }

// LibraryRef names one install of a library a strategy builds against: the
// library (kokkos, raja) and its backend (cuda, omptarget, openmp, ...); the
// toolchain is the cell's.
type LibraryRef struct {
	Name    string
	Backend string
	Pos     diag.Pos
}

// Knob is one axis of a strategy.
type Knob struct {
	Name   string
	Doc    string
	Values []KnobValue
}

// KnobValue is one value of a knob.
type KnobValue struct {
	Value    string
	Suffix   string
	Doc      string
	Defines  map[string]string
	Requires []string
	Tunables map[string]int64
	TuneAt   map[string]diag.Pos // where each of Tunables is written
	// ModelDefaults as the strategy's, for this value (a knob value's wins).
	ModelDefaults map[string]string
	// Twins as the strategy's, for the variants with this value.
	Twins   []string
	TwinsAt []diag.Pos
}

// Variant is a strategy with one value per knob.
type Variant struct {
	ID       string
	Strategy *Strategy
	Values   []KnobValue // in knob order
	Defines  [][2]string // sorted by name
	Requires []string
	Tunables map[string]int64
	// ModelDefaults: the strategy's and its knob values' model_defaults.
	ModelDefaults map[string]string
	// Twins: the layer variants a library variant stands for, the
	// strategy's and its knob values' (none for other variants).
	Twins []string
}

// Form reports whether the variant varies its strategy's first knob only,
// every other knob at its first value: one of the forms a paper names
// (KK-OMP-A and -B), not a variation of one (-B without num_teams). A
// strategy without knobs, or with one, has only forms.
func (v *Variant) Form() bool {
	for i := 1; i < len(v.Values) && i < len(v.Strategy.Knobs); i++ {
		if v.Values[i].Value != v.Strategy.Knobs[i].Values[0].Value {
			return false
		}
	}
	return true
}

// Knob returns the value of the named knob.
func (v *Variant) Knob(name string) string {
	for i, k := range v.Strategy.Knobs {
		if k.Name == name {
			return v.Values[i].Value
		}
	}
	return ""
}

// Cell is one (kernel, variant, toolchain).
type Cell struct {
	ID        string
	Kernel    *spec.Kernel
	Variant   *Variant
	Toolchain *toolchain.Toolchain
	On        bool
	Reason    string   // why it is off
	Fallbacks []string // optional capabilities missing: rendered fallbacks
	Runnable  bool     // on, and its target is here (host, or a GPU that is present; never an AMD target)
	// Library is the install a library strategy's cell builds against
	// (variants/libraries.yaml); nil for other strategies and when none is
	// installed (the cell is then off, Reason saying how to install it).
	Library *library.Install
}

// Source is the generated file a cell builds (it does not depend on the toolchain).
func (c *Cell) Source() string { return SourcePath(c.Kernel, c.Variant) }

// SourcePath is generated/<kernel>/<variant>.<ext>, relative to the repo.
func SourcePath(k *spec.Kernel, v *Variant) string {
	ext := ".cpp"
	if v.Strategy.Lang == "cuda" {
		ext = ".cu"
	}
	return "generated/" + k.Name + "/" + v.ID + ext
}

// CellID is kernel.variant.toolchain.
func CellID(kernel, variant, tc string) string { return kernel + "." + variant + "." + tc }

// SplitCellID reads what CellID writes (false when id is not three
// non-empty parts).
func SplitCellID(id string) (kernel, variant, tc string, ok bool) {
	p := strings.SplitN(id, ".", 3)
	if len(p) != 3 || p[0] == "" || p[1] == "" || p[2] == "" {
		return "", "", "", false
	}
	return p[0], p[1], p[2], true
}

// Load reads the strategies file; capability names are checked against caps.
func Load(file string, caps *toolchain.Table) ([]*Strategy, error) {
	var errs diag.List
	root := diag.ReadYAML(file, &errs)
	if root == nil {
		return nil, errs.Err()
	}
	d := diag.Decoder{File: file, Errs: &errs}
	f := d.Fields(root, "strategies file", "strategies")
	var out []*Strategy
	seen := map[string]bool{}
	for _, item := range d.Seq(f["strategies"], "strategies") {
		sf := d.Fields(item, "strategy", "name", "doc", "backend", "layer", "device", "lang", "requires",
			"optional", "tunables", "model_defaults", "knobs", "kernels", "loops_only", "item_registers", "flags", "library", "twins", "vendor", "host_ignores")
		if !d.Require(item, sf, "strategy", "name", "backend", "device") {
			continue
		}
		s := &Strategy{Name: d.String(sf["name"], "name"), Doc: d.String(sf["doc"], "doc"),
			Backend: d.String(sf["backend"], "backend"), Layer: d.String(sf["layer"], "layer"),
			Device: d.String(sf["device"], "device"), Lang: d.String(sf["lang"], "lang"),
			Requires: d.Strings(sf["requires"], "requires"), Optional: d.Strings(sf["optional"], "optional"),
			Kernels: d.Strings(sf["kernels"], "kernels"), LoopsOnly: d.Bool(sf["loops_only"], "loops_only"),
			ItemRegisters: d.Bool(sf["item_registers"], "item_registers"),
			Vendor:        d.String(sf["vendor"], "vendor"), VendorAt: d.Pos(sf["vendor"]),
			Pos: d.Pos(item), DeviceAt: d.Pos(sf["device"])}
		s.Tunables, s.TuneAt = tunables(d, sf["tunables"])
		s.Library = libraryRef(d, sf["library"])
		s.Twins, s.TwinsAt = names(d, sf["twins"], "twins")
		s.HostIgnores, s.HostIgnoresAt = names(d, sf["host_ignores"], "host_ignores")
		for i, name := range s.HostIgnores {
			if _, ok := s.Tunables[name]; !ok {
				errs.Add(s.HostIgnoresAt[i], "strategy %s: host_ignores names %s, which is not one of its tunables (%s)", s.Name, name, strings.Join(slices.Sorted(maps.Keys(s.Tunables)), ", "))
			}
		}
		s.ModelDefaults = modelDefaults(d, sf["model_defaults"])
		if n := sf["kernels"]; n != nil && n.Kind == yaml.SequenceNode {
			for _, kn := range n.Content {
				s.KernelAt = append(s.KernelAt, d.Pos(kn))
			}
		}
		s.Flags = map[string][]string{}
		for _, kv := range d.Pairs(sf["flags"], "flags") {
			s.Flags[kv[0].Value] = d.Strings(kv[1], "flags of "+kv[0].Value)
		}
		if s.Lang == "" {
			s.Lang = "cpp"
		}
		if s.Lang != "cpp" && s.Lang != "cuda" {
			d.Add(sf["lang"], "lang is cpp or cuda, not %q", s.Lang)
		}
		if seen[s.Name] {
			d.Add(sf["name"], "strategy %q defined twice", s.Name)
		}
		seen[s.Name] = true
		capsKnown(d, sf["requires"], s.Requires, caps)
		capsKnown(d, sf["optional"], s.Optional, caps)
		for _, kn := range d.Seq(sf["knobs"], "knobs") {
			s.Knobs = append(s.Knobs, knob(d, kn, caps))
		}
		out = append(out, s)
	}
	uniqueVariants(d, out)
	checkTwins(d, out)
	return out, errs.Err()
}

// checkTwins reports a twin that names no variant, one that names a
// library strategy's variant, and twins on a strategy without a library.
func checkTwins(d diag.Decoder, strategies []*Strategy) {
	var layer []string
	library := map[string]bool{}
	for _, v := range Variants(strategies) {
		if v.Strategy.Library == nil {
			layer = append(layer, v.ID)
		} else {
			library[v.ID] = true
		}
	}
	check := func(s *Strategy, twins []string, at []diag.Pos) {
		for i, t := range twins {
			switch {
			case s.Library == nil:
				d.Errs.Add(at[i], "twins: strategy %q builds against no library (library:), so it stands for no layer variant", s.Name)
			case library[t]:
				d.Errs.Add(at[i], "twin %q of strategy %q is a library strategy's variant: a twin is a variant of the project's own layer", t, s.Name)
			case !slices.Contains(layer, t):
				d.Errs.Add(at[i], "twin %q of strategy %q names no variant%s", t, s.Name, diag.DidYouMean(t, layer))
			}
		}
	}
	for _, s := range strategies {
		check(s, s.Twins, s.TwinsAt)
		for _, k := range s.Knobs {
			for _, v := range k.Values {
				check(s, v.Twins, v.TwinsAt)
			}
		}
	}
}

// names reads a list of names with the position of each.
func names(d diag.Decoder, n *yaml.Node, what string) ([]string, []diag.Pos) {
	out := d.Strings(n, what)
	var at []diag.Pos
	if n != nil && n.Kind == yaml.SequenceNode {
		for _, x := range n.Content {
			at = append(at, d.Pos(x))
		}
	}
	for len(at) < len(out) {
		at = append(at, d.Pos(n))
	}
	return out, at
}

// uniqueVariants reports a variant ID made by two strategies, at the later
// strategy, naming both.
func uniqueVariants(d diag.Decoder, strategies []*Strategy) {
	by := map[string]*Strategy{}
	for _, s := range strategies {
		for _, v := range Variants([]*Strategy{s}) {
			prev, dup := by[v.ID]
			if dup && prev != s { // within one strategy, the suffix check reports it
				d.Errs.Add(s.Pos, "variant %q of strategy %q is also a variant of strategy %q (%s): variant IDs must be unique", v.ID, s.Name, prev.Name, prev.Pos)
			}
			if !dup {
				by[v.ID] = s
			}
		}
	}
}

// CheckDevices reports a strategy whose device the harness does not
// implement (devices: toolchain.HarnessDevices).
func CheckDevices(strategies []*Strategy, devices []string) error {
	var errs diag.List
	for _, s := range strategies {
		if !slices.Contains(devices, s.Device) {
			errs.Add(s.DeviceAt, "unknown device %q (known: %s)%s", s.Device, strings.Join(devices, ", "), diag.DidYouMean(s.Device, devices))
		}
	}
	return errs.Err()
}

// CheckKernels reports a strategy's `kernels:` entry that names no kernel.
func CheckKernels(strategies []*Strategy, kernels []string) error {
	var errs diag.List
	for _, s := range strategies {
		for i, k := range s.Kernels {
			if slices.Contains(kernels, k) {
				continue
			}
			pos := s.Pos
			if i < len(s.KernelAt) {
				pos = s.KernelAt[i]
			}
			errs.Add(pos, "strategy %q names unknown kernel %q%s (known: %s)", s.Name, k, diag.DidYouMean(k, kernels), strings.Join(kernels, ", "))
		}
	}
	return errs.Err()
}

// CheckVendors reports a kernel's vendor form that no strategy calls (a
// strategy's vendor:). A vendor strategy without kernels is not an error:
// the kernels with its forms may be refused, and every other kernel goes on.
func CheckVendors(strategies []*Strategy, kernels []*spec.Kernel) error {
	var errs diag.List
	var libs []string
	for _, s := range strategies {
		if s.Vendor != "" {
			libs = append(libs, s.Vendor)
		}
	}
	for _, k := range kernels {
		for _, f := range k.Vendor {
			if !slices.Contains(libs, f.Library) {
				errs.Add(f.Pos, "kernel %q: vendor form %q: no strategy calls it (a strategy's vendor:; known: %s)%s",
					k.Name, f.Library, strings.Join(libs, ", "), diag.DidYouMean(f.Library, libs))
			}
		}
	}
	return errs.Err()
}

// TunableValues lists every tunable value the strategies set, their own and
// their knob values', once each, sorted: the loop widths the size rule
// (spec.CheckSizes) adds to the hardware's.
func TunableValues(strategies []*Strategy) []int64 {
	var out []int64
	add := func(m map[string]int64) {
		for _, v := range m {
			out = append(out, v)
		}
	}
	for _, s := range strategies {
		add(s.Tunables)
		for _, k := range s.Knobs {
			for _, v := range k.Values {
				add(v.Tunables)
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// libraryRef reads a strategy's `library: {name: ..., backend: ...}`.
func libraryRef(d diag.Decoder, n *yaml.Node) *LibraryRef {
	if n == nil {
		return nil
	}
	lf := d.Fields(n, "library", "name", "backend")
	if !d.Require(n, lf, "library", "name", "backend") {
		return nil
	}
	return &LibraryRef{Name: d.String(lf["name"], "name"), Backend: d.String(lf["backend"], "backend"), Pos: d.Pos(n)}
}

func knob(d diag.Decoder, n *yaml.Node, caps *toolchain.Table) Knob {
	kf := d.Fields(n, "knob", "name", "doc", "values")
	d.Require(n, kf, "knob", "name", "values")
	k := Knob{Name: d.String(kf["name"], "name"), Doc: d.String(kf["doc"], "doc")}
	suffixes := map[string]bool{}
	for _, vn := range d.Seq(kf["values"], "values") {
		vf := d.Fields(vn, "knob value", "value", "suffix", "doc", "defines", "requires", "tunables", "model_defaults", "twins")
		d.Require(vn, vf, "knob value", "value", "suffix")
		v := KnobValue{Value: d.String(vf["value"], "value"), Suffix: d.String(vf["suffix"], "suffix"),
			Doc: d.String(vf["doc"], "doc"), Requires: d.Strings(vf["requires"], "requires"),
			Defines: map[string]string{}}
		v.Tunables, v.TuneAt = tunables(d, vf["tunables"])
		v.ModelDefaults = modelDefaults(d, vf["model_defaults"])
		v.Twins, v.TwinsAt = names(d, vf["twins"], "twins")
		if suffixes[v.Suffix] {
			d.Add(vf["suffix"], "suffix %q repeated in knob %s: variant IDs would collide", v.Suffix, k.Name)
		}
		suffixes[v.Suffix] = true
		capsKnown(d, vf["requires"], v.Requires, caps)
		for _, kv := range d.Pairs(vf["defines"], "defines") {
			v.Defines[kv[0].Value] = d.String(kv[1], "define")
		}
		k.Values = append(k.Values, v)
	}
	return k
}

func tunables(d diag.Decoder, n *yaml.Node) (map[string]int64, map[string]diag.Pos) {
	out, at := map[string]int64{}, map[string]diag.Pos{}
	for _, kv := range d.Pairs(n, "tunables") {
		out[kv[0].Value] = d.Int(kv[1], "tunable "+kv[0].Value)
		at[kv[0].Value] = d.Pos(kv[1])
	}
	return out, at
}

// modelDefaults reads `model_defaults: {parameter: kind}`: each kind must be
// one of machine.DefaultKinds and give that parameter.
func modelDefaults(d diag.Decoder, n *yaml.Node) map[string]string {
	out := map[string]string{}
	for _, kv := range d.Pairs(n, "model_defaults") {
		param, kind := kv[0].Value, d.String(kv[1], "model default of "+kv[0].Value)
		k, ok := machine.DefaultKinds[kind]
		switch {
		case !ok:
			d.Add(kv[1], "unknown kind of model default %q%s (known: %s)", kind, diag.DidYouMean(kind, machine.DefaultKindNames()),
				strings.Join(machine.DefaultKindNames(), ", "))
		case !slices.Contains(k.Params, param):
			d.Add(kv[0], "a model default of kind %s gives %s, not %q", kind, strings.Join(k.Params, " or "), param)
		default:
			out[param] = kind
		}
	}
	return out
}

func capsKnown(d diag.Decoder, n *yaml.Node, names []string, caps *toolchain.Table) {
	for i, c := range names {
		if caps != nil && !caps.Has(c) {
			d.Add(n.Content[i], "unknown capability %q%s (see variants/capabilities.yaml)", c, diag.DidYouMean(c, caps.Names()))
		}
	}
}

// Variants expands every strategy into its variants, in file order.
func Variants(strategies []*Strategy) []*Variant {
	var out []*Variant
	for _, s := range strategies {
		combos := [][]KnobValue{nil}
		for _, k := range s.Knobs {
			var next [][]KnobValue
			for _, c := range combos {
				for _, v := range k.Values {
					next = append(next, append(append([]KnobValue(nil), c...), v))
				}
			}
			combos = next
		}
		for _, c := range combos {
			out = append(out, newVariant(s, c))
		}
	}
	return out
}

func newVariant(s *Strategy, values []KnobValue) *Variant {
	v := &Variant{ID: s.Name, Strategy: s, Values: values, Tunables: map[string]int64{}, ModelDefaults: map[string]string{}}
	for k, x := range s.ModelDefaults {
		v.ModelDefaults[k] = x
	}
	v.Requires = append(v.Requires, s.Requires...)
	v.Twins = append(v.Twins, s.Twins...)
	for k, x := range s.Tunables {
		v.Tunables[k] = x
	}
	defs := map[string]string{}
	for _, kv := range values {
		v.ID += kv.Suffix
		v.Requires = append(v.Requires, kv.Requires...)
		for _, t := range kv.Twins {
			if !slices.Contains(v.Twins, t) {
				v.Twins = append(v.Twins, t)
			}
		}
		for k, x := range kv.Defines {
			defs[k] = x
		}
		for k, x := range kv.Tunables {
			v.Tunables[k] = x
		}
		for k, x := range kv.ModelDefaults {
			v.ModelDefaults[k] = x
		}
	}
	for k, x := range defs {
		v.Defines = append(v.Defines, [2]string{k, x})
	}
	sort.Slice(v.Defines, func(i, j int) bool { return v.Defines[i][0] < v.Defines[j][0] })
	return v
}

// Applies says why a variant does not apply to a kernel ("" when it does);
// missing returns the pattern kinds a backend cannot lower.
func Applies(k *spec.Kernel, v *Variant, kernels map[string]*spec.Kernel, missing func(backend string, kinds []string) []string) string {
	s := v.Strategy
	if len(s.Kernels) > 0 && !slices.Contains(s.Kernels, k.Name) {
		return fmt.Sprintf("%s is written for %s only", s.Name, strings.Join(s.Kernels, ", "))
	}
	if s.LoopsOnly && k.Loops == nil {
		return s.Name + " checks the mapper's schedules: it applies to kernels written as loop nests (loops:) only"
	}
	if s.Vendor != "" { // the library's call, not the patterns, is rendered
		if k.VendorForm(s.Vendor) == nil {
			return fmt.Sprintf("%s calls the vendor library %s: it applies only to kernels that declare a %s form (vendor:)", s.Name, s.Vendor, s.Vendor)
		}
		return ""
	}
	if m := missing(s.Backend, k.KindsUsed(kernels)); len(m) > 0 {
		return fmt.Sprintf("backend %s does not lower %s", s.Backend, strings.Join(m, ", "))
	}
	return ""
}

// Expand crosses kernels, variants and toolchains into cells. notFor says why
// a variant does not apply to a kernel ("" when it does). A strategy naming a
// library has cells only for the toolchains its backend installs for (libs;
// none when libs is nil), each off while the install is missing.
func Expand(kernels []*spec.Kernel, variants []*Variant, tcs []*toolchain.Toolchain, caps *toolchain.Table,
	notFor func(*spec.Kernel, *Variant) string, gpuPresent bool, libs *library.Set) []*Cell {
	var cells []*Cell
	for _, k := range kernels {
		for _, v := range variants {
			why := notFor(k, v)
			for _, t := range tcs {
				if !t.Builds(v.Strategy.Device) {
					continue
				}
				var lk library.Lookup
				if ref := v.Strategy.Library; ref != nil {
					if lk = libs.Find(ref.Name, ref.Backend, t); !lk.Listed {
						continue
					}
				}
				c := &Cell{ID: CellID(k.Name, v.ID, t.ID), Kernel: k, Variant: v, Toolchain: t, Library: lk.Install}
				c.Reason = reason(v, t, caps, why, lk, libs)
				c.On = c.Reason == ""
				if c.On {
					for _, o := range v.Strategy.Optional {
						if !t.Caps[o] {
							c.Fallbacks = append(c.Fallbacks, fmt.Sprintf("%s needs %s", o, caps.Need(o, t.Family)))
						}
					}
				}
				c.Runnable = c.On && (!t.GPU() || gpuPresent) && toolchain.NotRun(t.Target) == ""
				cells = append(cells, c)
			}
		}
	}
	return cells
}

func reason(v *Variant, t *toolchain.Toolchain, caps *toolchain.Table, notFor string, lk library.Lookup, libs *library.Set) string {
	switch {
	case notFor != "":
		return notFor
	case !t.Found():
		return "toolchain " + t.ID + ": " + t.Missing
	case lk.Listed && lk.Install == nil:
		return lk.Why
	}
	var missing []string
	for _, r := range v.Requires {
		if t.Caps[r] || lk.Install != nil && slices.Contains(lk.Install.Caps, r) {
			continue
		}
		if l, cp := libs.Capability(r); l != nil {
			have := "no " + l.Name + " install"
			if lk.Install != nil && lk.Install.Name == l.Name {
				have = l.Name + " " + lk.Install.Version
			}
			missing = append(missing, fmt.Sprintf("%s (needs %s %s, have %s)", r, l.Name, cp.Raw, have))
			continue
		}
		var on []string // the targets of the rows whose version gate the toolchain meets
		for _, c := range caps.Caps {
			if con, ok := c.When[t.Family]; ok && c.Name == r && t.Version != nil && con.Check(t.Version) && len(c.Targets) > 0 {
				on = append(on, c.Targets...)
			}
		}
		if len(on) > 0 {
			missing = append(missing, fmt.Sprintf("%s (%s targets only; %s is %s)", r, strings.Join(on, ", "), t.ID, t.Target))
			continue
		}
		missing = append(missing, fmt.Sprintf("%s (needs %s, have %s %s)", r, caps.Need(r, t.Family), t.Family, t.VersionString()))
	}
	if len(missing) > 0 {
		return "missing " + strings.Join(missing, "; ")
	}
	if t.Broken != "" {
		return "known break " + t.Broken
	}
	return ""
}
