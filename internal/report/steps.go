package report

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/stats"
)

// tablesFields are the top-level fields of tables.yaml: GB/s tables
// (tables.go), step tables and the launch split (launch.go).
var tablesFields = []string{"tables", "steps", "launch"}

// StepTableSpec is one entry of tables.yaml's steps: a composite that repeats
// a step (TestSNAP's snap_step), every cell at every size it measured: the
// time per step, the grind time (milliseconds per item and step: the median
// time over steps x items, items = Factor * size^Power) and each kernel's
// time for PerSteps steps from the record's sections (000 Fig. 7, 8, 13 plot
// the kernels' time for 100 steps).
type StepTableSpec struct {
	Kernel   string
	Sections []string // the kernels it calls, in step order: the columns
	Item     string   // what the grind time is per: "atom"
	Factor   float64
	Power    int64
	PerSteps int64
	Node     *yaml.Node
}

// Items is the number of items at a size.
func (s StepTableSpec) Items(size int64) float64 {
	return s.Factor * math.Pow(float64(size), float64(s.Power))
}

// LoadStepTables reads the steps of tables.yaml.
func LoadStepTables(path string, v *results.Vocabulary) ([]StepTableSpec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseStepTables(path, data, v)
}

// ParseStepTables decodes and validates the steps of tables.yaml; file names
// the errors.
func ParseStepTables(file string, data []byte, v *results.Vocabulary) ([]StepTableSpec, error) {
	var errs ErrorList
	d := diag.Decoder{File: file, Errs: (*diag.List)(&errs)}
	root := diag.ParseYAML(file, data, (*diag.List)(&errs))
	var out []StepTableSpec
	if root != nil {
		f := fields(d, root, "tables file", tablesFields...)
		for _, item := range d.Seq(f["steps"], "steps") {
			g := fields(d, item, "step table", "kernel", "sections", "items", "per_steps")
			if item.Kind != yaml.MappingNode {
				continue
			}
			t := StepTableSpec{Kernel: d.String(g["kernel"], "kernel"), Sections: d.Strings(g["sections"], "sections"),
				PerSteps: d.Int(g["per_steps"], "per_steps"), Node: item}
			name := fmt.Sprintf("step table %q", t.Kernel)
			checkName(file, valueNode(item, "kernel"), name, "kernel", t.Kernel, v.KernelNames(), &errs)
			if g["sections"] != nil && g["sections"].Kind == yaml.SequenceNode {
				for i, s := range t.Sections {
					checkName(file, g["sections"].Content[i], name+" sections", "kernel", s, v.KernelNames(), &errs)
				}
			}
			if len(t.Sections) == 0 {
				errs.at(file, item, "%s: sections is missing: the kernels it calls, in step order", name)
			}
			if t.PerSteps <= 0 {
				errs.at(file, item, "%s: per_steps must be positive: the steps the kernels' times are shown for", name)
			}
			it := fields(d, g["items"], "items", "name", "factor", "size_power")
			t.Item, t.Factor, t.Power = d.String(it["name"], "name"), d.Float(it["factor"], "factor"), d.Int(it["size_power"], "size_power")
			if t.Item == "" || t.Factor <= 0 || t.Power < 0 {
				errs.at(file, item, "%s: items needs a name, a positive factor and a size_power >= 0 (items = factor * size^size_power)", name)
			}
			out = append(out, t)
		}
	}
	if err := errs.errs(); err != nil {
		return nil, err
	}
	return out, nil
}

// stepRow is one cell at one size.
type stepRow struct {
	Variant, Toolchain string
	P                  point
	Items              float64
	StepMS             float64   // median time per step, ms
	Grind, Lo, Hi      float64   // ms per item-step, the 95% interval
	Kernels            []float64 // each section's seconds for PerSteps steps (median over trials); NaN: not recorded
}

type stepTable struct {
	Spec StepTableSpec
	Size int64
	Rows []stepRow
}

// buildStepTables makes one table per spec and size, largest size first;
// sizes without a step record (no sections) make none.
func buildStepTables(specs []StepTableSpec, ds *dataset) []stepTable {
	var out []stepTable
	for _, s := range specs {
		bySize := map[int64][]stepRow{}
		for k, pts := range ds.series {
			if k.Kernel != s.Kernel {
				continue
			}
			for _, p := range pts {
				if p.Steps <= 0 {
					continue
				}
				items := s.Items(p.Size)
				per := float64(p.Steps) * items / 1e3 // ms per item-step from seconds
				r := stepRow{Variant: k.Variant, Toolchain: k.Toolchain, P: p, Items: items,
					StepMS: 1e3 * p.M.Median / float64(p.Steps), Grind: p.M.Median / per, Lo: p.M.Lo / per, Hi: p.M.Hi / per}
				for _, name := range s.Sections {
					v := math.NaN()
					if c := p.PerCall[name]; len(c) > 0 {
						v = stats.Median(c) * float64(s.PerSteps)
					}
					r.Kernels = append(r.Kernels, v)
				}
				bySize[p.Size] = append(bySize[p.Size], r)
			}
		}
		var sizes []int64
		for size := range bySize {
			sizes = append(sizes, size)
		}
		sort.Slice(sizes, func(i, j int) bool { return sizes[i] > sizes[j] })
		for _, size := range sizes {
			rows := bySize[size]
			sort.Slice(rows, func(i, j int) bool {
				if rows[i].Grind != rows[j].Grind {
					return rows[i].Grind < rows[j].Grind
				}
				return rows[i].Variant+"@"+rows[i].Toolchain < rows[j].Variant+"@"+rows[j].Toolchain
			})
			out = append(out, stepTable{Spec: s, Size: size, Rows: rows})
		}
	}
	return out
}

// stepTablesMarkdown renders the step tables; nothing when there are none
// (a folder without step records keeps its tables.md as it was).
func stepTablesMarkdown(tables []stepTable) []byte {
	if len(tables) == 0 {
		return nil
	}
	var b bytes.Buffer
	b.WriteString("\nStep tables: a composite that repeats a step, every cell. Step time is the\n")
	b.WriteString("median time of a call over its steps (the calls of each kernel in its sections\n")
	b.WriteString("run); grind time is the step time over the items, in ms per item-step, with the\n")
	b.WriteString("95% interval; each kernel's time is its sections-run seconds per call (median over\n")
	b.WriteString("trials) times the steps shown, synchronised around every call.\n")
	for _, t := range tables {
		s := t.Spec
		fmt.Fprintf(&b, "\n### %s at size %d: grind time and the kernels' time for %d steps\n\n", strings.ToUpper(s.Kernel), t.Size, s.PerSteps)
		fmt.Fprintf(&b, "| variant | toolchain | %ss | steps | ms / step | ms / %s-step | 95%% interval |", s.Item, s.Item)
		for _, k := range s.Sections {
			fmt.Fprintf(&b, " %s s / %d steps |", k, s.PerSteps)
		}
		b.WriteString(" trials × reps |\n|---|---|---:|---:|---:|---:|---|")
		b.WriteString(strings.Repeat("---:|", len(s.Sections)))
		b.WriteString("---|\n")
		for _, r := range t.Rows {
			fmt.Fprintf(&b, "| %s | %s | %.0f | %d | %.4g | %.4g | [%.4g, %.4g] |", r.Variant, r.Toolchain, r.Items, r.P.Steps,
				r.StepMS, r.Grind, r.Lo, r.Hi)
			for _, v := range r.Kernels {
				if math.IsNaN(v) {
					b.WriteString(" – |")
				} else {
					fmt.Fprintf(&b, " %.4g |", v)
				}
			}
			fmt.Fprintf(&b, " %s |\n", trialsReps(r.P.M))
		}
	}
	return b.Bytes()
}
