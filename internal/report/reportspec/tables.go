package reportspec

import (
	"fmt"
	"math"
	"os"

	"gopkg.in/yaml.v3"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/results"
)

// Tables is tables.yaml: the GB/s tables, the step tables and the launch
// split of tables.md.
type Tables struct {
	Tables []Table     // tables: one per kernel
	Steps  []StepTable // steps: composites that repeat a step
	Launch *Launch     // launch: nil without one
}

// Table is one table of tables.yaml: a kernel at the largest size its
// reference series measured, every device cell of that size.
type Table struct {
	Kernel    string
	Reference Selector
	Node      *yaml.Node
}

// StepTable is one entry of tables.yaml's steps: a composite that repeats
// a step (TestSNAP's snap_step), every cell at every size it measured: the
// time per step, the grind time (milliseconds per item and step: the median
// time over steps x items, items = Factor * size^Power) and each kernel's
// time for PerSteps steps from the record's sections (000 Fig. 7, 8, 13 plot
// the kernels' time for 100 steps).
type StepTable struct {
	Kernel   string
	Sections []string // the kernels it calls, in step order: the columns
	Item     string   // what the grind time is per: "atom"
	Factor   float64
	Power    int64
	PerSteps int64
	Node     *yaml.Node
}

// Items is the number of items at a size.
func (s StepTable) Items(size int64) float64 {
	return s.Factor * math.Pow(float64(size), float64(s.Power))
}

// Launch is tables.yaml's launch entry: the launch-overhead kernels and
// the composites whose time is split into bandwidth and launch cost
// (docs/analysis/launch.md):
//
//	T_model = sum over called kernels k of bytes_k * (t_k - l_k) / b_k
//	        + sum over calls of l_k
//
// where l_k is t_reduce for a kernel whose scalar returns to the host and
// t_flat otherwise (the Reduce and Flat kernels' median time per call at
// their smallest size), bytes_k the composite's bytes through k, and t_k,
// b_k kernel k's median time and bytes per call measured alone (same variant
// and toolchain) at the size whose bytes per call are nearest the
// composite's: the first term is the bandwidth time, its call's latency
// taken out.
type Launch struct {
	Empty, Flat, Reduce string   // the launch kernels
	Composites          []string // kernels with sections whose time is split
	Reducing            []string // called kernels whose scalar returns to the host
}

// LoadTables reads and validates tables.yaml.
func LoadTables(path string, v *results.Vocabulary) (*Tables, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseTables(path, data, v)
}

// ParseTables decodes and validates tables.yaml; file names the errors.
// Every problem is reported, as file:line:col: message, sorted.
func ParseTables(file string, data []byte, v *results.Vocabulary) (*Tables, error) {
	var errs errorList
	d := decoder(file, &errs)
	out := &Tables{}
	if root := parse(file, data, &errs); root != nil {
		f := fields(d, root, "tables file", "tables", "steps", "launch")
		for _, item := range d.Seq(f["tables"], "tables") {
			g := fields(d, item, "table", "kernel", "reference")
			t := Table{Kernel: d.String(g["kernel"], "kernel"), Reference: decodeSelector(d, g["reference"]), Node: item}
			if item.Kind != yaml.MappingNode {
				continue
			}
			name := fmt.Sprintf("table %q", t.Kernel)
			checkName(file, valueNode(item, "kernel"), name, "kernel", t.Kernel, v.KernelNames(), &errs)
			t.Reference.validate(file, valueNode(item, "reference"), name+" reference", &errs, v)
			out.Tables = append(out.Tables, t)
		}
		for _, item := range d.Seq(f["steps"], "steps") {
			if t, ok := decodeStepTable(d, item, &errs, v); ok {
				out.Steps = append(out.Steps, t)
			}
		}
		if n := f["launch"]; n != nil {
			out.Launch = decodeLaunch(d, n, &errs, v)
		}
	}
	if err := errs.errs(); err != nil {
		return nil, err
	}
	return out, nil
}

// decodeStepTable reads and checks one entry of steps; false when it is not
// a mapping.
func decodeStepTable(d diag.Decoder, item *yaml.Node, errs *errorList, v *results.Vocabulary) (StepTable, bool) {
	file := d.File
	g := fields(d, item, "step table", "kernel", "sections", "items", "per_steps")
	if item.Kind != yaml.MappingNode {
		return StepTable{}, false
	}
	t := StepTable{Kernel: d.String(g["kernel"], "kernel"), Sections: d.Strings(g["sections"], "sections"),
		PerSteps: d.Int(g["per_steps"], "per_steps"), Node: item}
	name := fmt.Sprintf("step table %q", t.Kernel)
	checkName(file, valueNode(item, "kernel"), name, "kernel", t.Kernel, v.KernelNames(), errs)
	if g["sections"] != nil && g["sections"].Kind == yaml.SequenceNode {
		for i, s := range t.Sections {
			checkName(file, g["sections"].Content[i], name+" sections", "kernel", s, v.KernelNames(), errs)
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
	return t, true
}

// decodeLaunch reads and checks the launch entry n.
func decodeLaunch(d diag.Decoder, n *yaml.Node, errs *errorList, v *results.Vocabulary) *Launch {
	file := d.File
	g := fields(d, n, "launch", "empty", "flat", "reduce", "composites", "reducing")
	s := Launch{Empty: d.String(g["empty"], "empty"), Flat: d.String(g["flat"], "flat"), Reduce: d.String(g["reduce"], "reduce"),
		Composites: d.Strings(g["composites"], "composites"), Reducing: d.Strings(g["reducing"], "reducing")}
	known := v.KernelNames()
	for _, k := range []struct{ field, value string }{{"empty", s.Empty}, {"flat", s.Flat}, {"reduce", s.Reduce}} {
		node := g[k.field]
		if node == nil {
			node = n
		}
		checkName(file, node, "launch", k.field, k.value, known, errs)
	}
	for _, field := range []string{"composites", "reducing"} {
		list := g[field]
		if list == nil || len(list.Content) == 0 {
			errs.at(file, n, "launch: %s is missing", field)
			continue
		}
		for _, item := range list.Content {
			checkName(file, item, "launch "+field, "kernel", item.Value, known, errs)
		}
	}
	return &s
}
