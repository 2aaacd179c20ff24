package book

import (
	"path/filepath"
	"strings"

	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/report"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/tune"
)

// gapInputs is what the gap table's reasons of the tuning in dir are
// computed from, read from the committed source tree at root: the machine
// models (the device by its name, else the folder's GPUs when they are one
// model) and the leagues and row lengths of the kernel descriptions and
// tuning spaces; the registers only from the folder's tuning-kernels.json
// (a local build folder would make the committed book depend on what was
// built here). Where a tuning did not record them, the reasons say so.
func gapInputs(root, dir string) report.GapInputs {
	var in report.GapInputs
	if set, err := machine.Load(filepath.Join(root, machine.Dir)); err == nil {
		fallback := ""
		if run, err := results.ReadRun(dir); err == nil && len(run.GPUs) > 0 {
			fallback = run.GPUs[0].Name
			for _, g := range run.GPUs {
				if g.Name != fallback {
					fallback = ""
				}
			}
		}
		in.Model = func(device string) *machine.Model {
			if device == "" {
				device = fallback
			}
			m, _ := set.ByReported(device)
			return m
		}
	}
	in.League, in.RowLength = leagues(root)
	if k, err := tune.ReadKernels(dir); err == nil {
		in.Resources = k
	}
	return in
}

// leagues evaluates a cell's team launches' leagues at a configuration
// through its tuning space (tune.CellSpace.Leagues), and the mean row
// length of its CSR argument (spec.Kernel.Env: nnz / nrows).
func leagues(root string) (func(cell string, size int64, cfg tune.Config) (int64, bool), func(cell string, size int64) (float64, bool)) {
	tree, err := tune.LoadTree(root)
	if err != nil {
		return nil, nil
	}
	byName := tree.Kernels
	rowLength := func(cell string, size int64) (float64, bool) {
		k := byName[strings.SplitN(cell, ".", 2)[0]]
		if k == nil {
			return 0, false
		}
		env := k.Env(size)
		for _, a := range k.Args {
			nnz, ok1 := env[a.Name+".nnz"]
			rows, ok2 := env[a.Name+".nrows"]
			if a.Type == "csr" && ok1 && ok2 && nnz.Int && rows.Int && rows.I > 0 {
				return float64(nnz.I) / float64(rows.I), true
			}
		}
		return 0, false
	}
	league := func(cell string, size int64, cfg tune.Config) (int64, bool) {
		parts := strings.SplitN(cell, ".", 3)
		if len(parts) < 3 || byName[parts[0]] == nil || tree.Variants[parts[1]] == nil {
			return 0, false
		}
		cellOf := &matrix.Cell{ID: cell, Kernel: byName[parts[0]], Variant: tree.Variants[parts[1]]}
		target, err := tree.Spaces.Target(cellOf, byName, size, "")
		if err != nil {
			return 0, false
		}
		space := target.Space
		full := tune.Config{}
		for name, v := range space.Default {
			full[name] = v
		}
		for name, v := range cfg {
			full[name] = v
		}
		ls, ok := space.Leagues(full)
		if !ok || len(ls) == 0 {
			return 0, false
		}
		n := ls[0]
		for _, l := range ls {
			n = max(n, l)
		}
		return n, true
	}
	return league, rowLength
}
