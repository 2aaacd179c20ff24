package tables

import (
	"bytes"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/portmatrix/portmatrix/internal/report/dataset"
	"github.com/portmatrix/portmatrix/internal/report/reportspec"
	"github.com/portmatrix/portmatrix/internal/stats"
)

// stepRow is one cell at one size.
type stepRow struct {
	Variant, Toolchain string
	P                  dataset.Point
	Items              float64
	StepMS             float64   // median time per step, ms
	Grind, Lo, Hi      float64   // ms per item-step, the 95% interval
	Kernels            []float64 // each section's seconds for PerSteps steps (median over trials); NaN: not recorded
}

type stepTable struct {
	Spec reportspec.StepTable
	Size int64
	Rows []stepRow
}

// buildStepTables makes one table per spec and size, largest size first;
// sizes without a step record (no sections) make none.
func buildStepTables(specs []reportspec.StepTable, ds *dataset.Set) []stepTable {
	var out []stepTable
	for _, s := range specs {
		bySize := map[int64][]stepRow{}
		for k, pts := range ds.Series {
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
