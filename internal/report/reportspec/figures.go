package reportspec

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/results"
)

// Figure is one figure of figures.yaml.
type Figure struct {
	ID       string // file name of the figure: figures/<id>.svg|.png
	Title    string // shown above the panels
	Paper    string // the figure it reproduces, e.g. "002 Fig. 1"
	Kernel   string // axpby, dot, spmv or cgsolve
	X        string // "size" (the only x axis)
	XLabel   string
	Y        string   // gbps or median_s
	Panel    string   // toolchain or none
	Target   string   // any, host or device: which toolchains
	Families []string // only toolchains of these families; empty: all
	LogX     bool
	// LogY draws the y axis on a log scale (lines only; 004 Fig. 2's GPU
	// panel), YLabel names it where the default does not say the unit
	// (TestSNAP: per call, per 100 steps).
	LogY   bool
	YLabel string
	Kind   string  // lines or bars
	Sizes  []int64 // only these sizes; bars default to three spread sizes
	// kind normalized: every kernel of Kernels on the x axis, each series'
	// median time over NormalizeTo's (same kernel and toolchain) at the
	// smallest or largest size both measured (At), or among Sizes.
	Kernels     []string
	NormalizeTo string
	At          string // largest (default) or smallest
	Series      []Series
	Node        *yaml.Node
}

// Series is one variant of a figure and its legend label. A reference
// series (the native KK-CUDA) is drawn in every panel from whichever
// toolchain built it.
type Series struct {
	Kernel    string // this series' kernel, where not the figure's (004 Fig. 2: one operator in several forms)
	Variant   string
	Label     string
	Reference bool
	Node      *yaml.Node
}

type figuresDoc struct {
	Figures []Figure
}

// decodeFigures reads the figures file's nodes (internal/diag's idiom).
func decodeFigures(d diag.Decoder, root *yaml.Node) figuresDoc {
	var ff figuresDoc
	if root == nil {
		return ff
	}
	f := fields(d, root, "figures file", "figures")
	if root.Kind == yaml.MappingNode && f["figures"] == nil {
		d.Add(root, "figures is missing")
	}
	for _, item := range d.Seq(f["figures"], "figures") {
		g := fields(d, item, "figure", "id", "title", "paper", "kernel", "x", "x_label", "y", "panel_by", "target",
			"families", "log_x", "log_y", "y_label", "kind", "sizes", "variants", "kernels", "normalize_to", "at")
		fs := Figure{ID: d.String(g["id"], "id"), Title: d.String(g["title"], "title"), Paper: d.String(g["paper"], "paper"),
			Kernel: d.String(g["kernel"], "kernel"), X: d.String(g["x"], "x"), XLabel: d.String(g["x_label"], "x_label"),
			Y: d.String(g["y"], "y"), Panel: d.String(g["panel_by"], "panel_by"), Target: d.String(g["target"], "target"),
			Families: d.Strings(g["families"], "families"), LogX: d.Bool(g["log_x"], "log_x"), Kind: d.String(g["kind"], "kind"),
			Sizes: d.Ints(g["sizes"], "sizes"), Kernels: d.Strings(g["kernels"], "kernels"),
			NormalizeTo: d.String(g["normalize_to"], "normalize_to"), At: d.String(g["at"], "at"),
			LogY: d.Bool(g["log_y"], "log_y"), YLabel: d.String(g["y_label"], "y_label")}
		if item.Kind == yaml.MappingNode {
			fs.Node = item
		}
		for _, s := range d.Seq(g["variants"], "variants") {
			sf := fields(d, s, "variant entry", "kernel", "variant", "label", "reference")
			ss := Series{Kernel: d.String(sf["kernel"], "kernel"), Variant: d.String(sf["variant"], "variant"), Label: d.String(sf["label"], "label"),
				Reference: d.Bool(sf["reference"], "reference")}
			if s.Kind == yaml.MappingNode {
				ss.Node = s
			}
			fs.Series = append(fs.Series, ss)
		}
		ff.Figures = append(ff.Figures, fs)
	}
	return ff
}

// Values of the enumerated figure fields; the first is the default.
var (
	yValues      = []string{"gbps", "median_s"}
	panelValues  = []string{"toolchain", "none"}
	targetValues = []string{"any", "host", "device"}
	kindValues   = []string{"lines", "bars", "normalized"}
	atValues     = []string{"largest", "smallest"}
	idRE         = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
)

// LoadFigures reads and validates a figures file.
func LoadFigures(path string, v *results.Vocabulary) ([]Figure, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseFigures(path, data, v)
}

// ParseFigures decodes and validates figures.yaml; file names the errors.
// Every problem is reported, as file:line:col: message, sorted.
func ParseFigures(file string, data []byte, v *results.Vocabulary) ([]Figure, error) {
	var errs errorList
	ff := decodeFigures(decoder(file, &errs), parse(file, data, &errs))
	seen := map[string]*yaml.Node{}
	for i := range ff.Figures {
		f := &ff.Figures[i]
		f.defaults(v)
		f.validate(file, seen, &errs, v)
	}
	if err := errs.errs(); err != nil {
		return nil, err
	}
	return ff.Figures, nil
}

func (f *Figure) defaults(v *results.Vocabulary) {
	def := func(s *string, values []string) {
		if *s == "" {
			*s = values[0]
		}
	}
	def(&f.X, []string{"size"})
	def(&f.Y, yValues)
	def(&f.Panel, panelValues)
	def(&f.Target, targetValues)
	def(&f.Kind, kindValues)
	if f.Kind == "normalized" {
		def(&f.At, atValues)
		f.Y = "normalized"
		if f.XLabel == "" {
			f.XLabel = "kernel"
		}
	}
	if f.XLabel == "" {
		f.XLabel = v.SizeLabel(f.Kernel)
	}
	for i := range f.Series {
		if f.Series[i].Label == "" {
			f.Series[i].Label = f.Series[i].Variant
		}
		// The legend says which library or layer each bar ran (the
		// vocabulary's data: a strategy's library release, or its layer).
		f.Series[i].Label = v.Legend(f.Series[i].Label, f.Series[i].Variant)
	}
}

func (f *Figure) validate(file string, seen map[string]*yaml.Node, errs *errorList, v *results.Vocabulary) {
	n := f.Node
	if n == nil {
		return // not a mapping: already reported
	}
	name := checkID(file, n, "figure", f.ID, seen, errs)
	if f.Title == "" {
		errs.at(file, n, "%s: title is missing", name)
	}
	if f.Kind == "normalized" {
		f.validateNormalized(file, name, errs, v)
	} else {
		checkName(file, valueNode(n, "kernel"), name, "kernel", f.Kernel, v.KernelNames(), errs)
		checkEnum(file, n, name, "y", f.Y, yValues, errs)
		for _, field := range []string{"kernels", "normalize_to", "at"} {
			if hasKey(n, field) {
				errs.at(file, valueNode(n, field), "%s: %s applies to kind normalized only", name, field)
			}
		}
	}
	checkEnum(file, n, name, "x", f.X, []string{"size"}, errs)
	checkEnum(file, n, name, "panel_by", f.Panel, panelValues, errs)
	checkEnum(file, n, name, "target", f.Target, targetValues, errs)
	checkEnum(file, n, name, "kind", f.Kind, kindValues, errs)
	if f.Kind == "bars" && f.LogX {
		errs.at(file, valueNode(n, "log_x"), "%s: log_x does not apply to bars", name)
	}
	if f.Kind == "bars" && f.LogY {
		errs.at(file, valueNode(n, "log_y"), "%s: log_y does not apply to bars", name)
	}
	for i, s := range f.Sizes {
		if s <= 0 {
			errs.at(file, itemNode(n, "sizes", i), "%s: size %d is not positive", name, s)
		}
	}
	for i, fam := range f.Families {
		checkName(file, itemNode(n, "families", i), name, "family", fam, v.Families, errs)
	}
	f.validateSeries(file, name, errs, v)
}

// validateNormalized checks a figure of kind normalized: kernels instead of
// kernel, the variant every time is divided by, and which size.
func (f *Figure) validateNormalized(file, name string, errs *errorList, v *results.Vocabulary) {
	n := f.Node
	if f.Kernel != "" {
		errs.at(file, valueNode(n, "kernel"), "%s: kind normalized takes kernels, not kernel", name)
	}
	if len(f.Kernels) == 0 {
		errs.at(file, n, "%s: kind normalized needs kernels", name)
	}
	for i, k := range f.Kernels {
		checkName(file, itemNode(n, "kernels", i), name, "kernel", k, v.KernelNames(), errs)
	}
	checkName(file, valueNode(n, "normalize_to"), name, "normalize_to", f.NormalizeTo, v.VariantNames(), errs)
	checkEnum(file, n, name, "at", f.At, atValues, errs)
	if f.LogX || f.LogY {
		errs.at(file, n, "%s: log_x and log_y do not apply to kind normalized", name)
	}
	if hasKey(n, "y") {
		errs.at(file, valueNode(n, "y"), "%s: kind normalized draws time over the reference's; y does not apply", name)
	}
}

func (f *Figure) validateSeries(file, name string, errs *errorList, v *results.Vocabulary) {
	if len(f.Series) == 0 {
		errs.at(file, valueNode(f.Node, "variants"), "%s: variants is empty", name)
	}
	seen := map[string]bool{}
	for _, s := range f.Series {
		if s.Node == nil {
			continue // not a mapping: already reported
		}
		vn := valueNode(s.Node, "variant")
		checkName(file, vn, name, "variant", s.Variant, v.VariantNames(), errs)
		if s.Kernel != "" {
			checkName(file, valueNode(s.Node, "kernel"), name, "kernel", s.Kernel, v.KernelNames(), errs)
		}
		if seen[s.Kernel+"."+s.Variant] {
			errs.at(file, vn, "%s: variant %q listed twice", name, s.Variant)
		}
		seen[s.Kernel+"."+s.Variant] = true
	}
}

// checkID reports a missing, malformed or repeated id and returns how
// messages name the item.
func checkID(file string, n *yaml.Node, what, id string, seen map[string]*yaml.Node, errs *errorList) string {
	switch {
	case id == "":
		errs.at(file, n, "%s: id is missing", what)
		return what
	case !idRE.MatchString(id):
		errs.at(file, valueNode(n, "id"), "%s id %q: use lower-case letters, digits and '-'", what, id)
	case seen[id] != nil:
		errs.at(file, valueNode(n, "id"), "%s id %q repeated (first at line %d)", what, id, seen[id].Line)
	default:
		seen[id] = valueNode(n, "id")
	}
	return fmt.Sprintf("%s %q", what, id)
}

// checkName reports a missing or unknown name of a closed vocabulary.
func checkName(file string, n *yaml.Node, owner, field, value string, known []string, errs *errorList) {
	switch {
	case value == "":
		errs.at(file, n, "%s: %s is missing", owner, field)
	case !slices.Contains(known, value):
		errs.at(file, n, "%s: unknown %s %q (known: %s)%s", owner, field, value, strings.Join(known, ", "), diag.DidYouMean(value, known))
	}
}

// checkEnum reports a field whose value is not one of values.
func checkEnum(file string, owner *yaml.Node, name, field, value string, values []string, errs *errorList) {
	if !slices.Contains(values, value) {
		errs.at(file, valueNode(owner, field), "%s: %s must be one of %s, not %q", name, field, strings.Join(values, ", "), value)
	}
}

// hasKey reports whether the mapping n has the key.
func hasKey(n *yaml.Node, key string) bool { return diag.Value(n, key) != nil }

// Where names the toolchains the figure takes: its target, and its
// families where given.
func (f Figure) Where() string {
	where := map[string]string{"any": "any", "host": "host", "device": "device"}[f.Target]
	if len(f.Families) > 0 {
		where += " " + strings.Join(f.Families, "/")
	}
	return where
}
