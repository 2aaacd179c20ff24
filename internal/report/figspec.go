package report

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/portmatrix/portmatrix/internal/results"
)

// FigureSpec is one figure of figures.yaml.
type FigureSpec struct {
	ID       string       `yaml:"id"`     // file name of the figure: figures/<id>.svg|.png
	Title    string       `yaml:"title"`  // shown above the panels
	Paper    string       `yaml:"paper"`  // the figure it reproduces, e.g. "002 Fig. 1"
	Kernel   string       `yaml:"kernel"` // axpby, dot, spmv or cgsolve
	X        string       `yaml:"x"`      // "size" (the only x axis)
	XLabel   string       `yaml:"x_label"`
	Y        string       `yaml:"y"`        // gbps or median_s
	Panel    string       `yaml:"panel_by"` // toolchain or none
	Target   string       `yaml:"target"`   // any, host or device: which toolchains
	Families []string     `yaml:"families"` // only toolchains of these families; empty: all
	LogX     bool         `yaml:"log_x"`
	Kind     string       `yaml:"kind"`  // lines or bars
	Sizes    []int64      `yaml:"sizes"` // only these sizes; bars default to three spread sizes
	Series   []SeriesSpec `yaml:"variants"`
	Node     *yaml.Node   `yaml:"-"`
}

// SeriesSpec is one variant of a figure and its legend label. A reference
// series (the native KK-CUDA) is drawn in every panel from whichever
// toolchain built it.
type SeriesSpec struct {
	Variant   string     `yaml:"variant"`
	Label     string     `yaml:"label"`
	Reference bool       `yaml:"reference"`
	Node      *yaml.Node `yaml:"-"`
}

type figuresDoc struct {
	Figures []FigureSpec `yaml:"figures"`
}

// Values of the enumerated figure fields; the first is the default.
var (
	yValues      = []string{"gbps", "median_s"}
	panelValues  = []string{"toolchain", "none"}
	targetValues = []string{"any", "host", "device"}
	kindValues   = []string{"lines", "bars"}
	idRE         = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)
)

// LoadFigures reads and validates a figures file.
func LoadFigures(path string, v *results.Vocabulary) ([]FigureSpec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseFigures(path, data, v)
}

// ParseFigures decodes and validates figures.yaml; file names the errors.
// Every problem is reported, as file:line:col: message, sorted.
func ParseFigures(file string, data []byte, v *results.Vocabulary) ([]FigureSpec, error) {
	root, err := parseDoc(file, data)
	if err != nil {
		return nil, err
	}
	var ff figuresDoc
	var errs ErrorList
	decodeStrict(file, root, &ff, &errs)
	if valueNode(root, "figures") == root {
		errs.at(file, root, "figures is missing")
	}
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

func (f *FigureSpec) defaults(v *results.Vocabulary) {
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
	if f.XLabel == "" {
		f.XLabel = v.SizeLabel(f.Kernel)
	}
	for i := range f.Series {
		if f.Series[i].Label == "" {
			f.Series[i].Label = f.Series[i].Variant
		}
	}
}

func (f *FigureSpec) validate(file string, seen map[string]*yaml.Node, errs *ErrorList, v *results.Vocabulary) {
	n := f.Node
	if n == nil {
		return // not a mapping: already reported
	}
	name := checkID(file, n, "figure", f.ID, seen, errs)
	if f.Title == "" {
		errs.at(file, n, "%s: title is missing", name)
	}
	checkName(file, valueNode(n, "kernel"), name, "kernel", f.Kernel, v.KernelNames(), errs)
	checkEnum(file, n, name, "x", f.X, []string{"size"}, errs)
	checkEnum(file, n, name, "y", f.Y, yValues, errs)
	checkEnum(file, n, name, "panel_by", f.Panel, panelValues, errs)
	checkEnum(file, n, name, "target", f.Target, targetValues, errs)
	checkEnum(file, n, name, "kind", f.Kind, kindValues, errs)
	if f.Kind == "bars" && f.LogX {
		errs.at(file, valueNode(n, "log_x"), "%s: log_x does not apply to bars", name)
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

func (f *FigureSpec) validateSeries(file, name string, errs *ErrorList, v *results.Vocabulary) {
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
		if seen[s.Variant] {
			errs.at(file, vn, "%s: variant %q listed twice", name, s.Variant)
		}
		seen[s.Variant] = true
	}
}

// checkID reports a missing, malformed or repeated id and returns how
// messages name the item.
func checkID(file string, n *yaml.Node, what, id string, seen map[string]*yaml.Node, errs *ErrorList) string {
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
func checkName(file string, n *yaml.Node, owner, field, value string, known []string, errs *ErrorList) {
	switch {
	case value == "":
		errs.at(file, n, "%s: %s is missing", owner, field)
	case !slices.Contains(known, value):
		errs.at(file, n, "%s: unknown %s %q (known: %s)", owner, field, value, strings.Join(known, ", "))
	}
}

// checkEnum reports a field whose value is not one of values.
func checkEnum(file string, owner *yaml.Node, name, field, value string, values []string, errs *ErrorList) {
	if !slices.Contains(values, value) {
		errs.at(file, valueNode(owner, field), "%s: %s must be one of %s, not %q", name, field, strings.Join(values, ", "), value)
	}
}
