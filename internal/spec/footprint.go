package spec

import (
	"fmt"
	"math"
	"strings"
)

// Footprint is what the memory a kernel's program holds at a size is
// computed from, without the kernel's description: its arguments' types,
// values, extents and intents. The build stage writes it into the build
// folder (project.json), so the run stage refuses a size that cannot fit
// before anything runs.
type Footprint struct {
	Args []FootArg `json:"args"`
}

// FootArg is one argument of a Footprint.
type FootArg struct {
	Name   string `json:"name"`
	Type   string `json:"type"`
	Value  string `json:"value,omitempty"`  // scalars
	Extent string `json:"extent,omitempty"` // arrays
	Intent string `json:"intent,omitempty"` // arrays
	Grid   string `json:"grid,omitempty"`   // csr: minife27's grid
}

// Footprint is k's.
func (k *Kernel) Footprint() Footprint {
	var f Footprint
	for _, a := range k.Args {
		f.Args = append(f.Args, FootArg{Name: a.Name, Type: a.Type, Value: a.Value, Extent: a.Extent, Intent: a.Intent, Grid: a.Init.Grid})
	}
	return f
}

// Memory is what a program holds at size, in bytes: Host on the host and
// Device on the GPU (a host program holds everything on the host). The
// harness (harness/pm/harness.hpp) keeps per array of n elements its host
// data (not an output's), the reference's copy (not an input's), the
// program's array, and on the device the initial copy (not an output's)
// and, for a GPU program's output, the reference's copy; a CSR matrix its
// host data, device data and initial copy. Data holds the arrays' bytes
// once. A TestSNAP system's memory follows from its lattice: not counted.
type Memory struct {
	Host, Device, Data float64
}

// Memory evaluates the footprint at size; gpu says where the program's
// arrays live. An extent beyond 64 bits (or reading a scalar that is) is an
// error naming it; one that reads what only C++ evaluates (std::sqrt) is
// not counted.
func (f Footprint) Memory(size int64, gpu bool) (Memory, error) {
	env := Env{"size": intVal(size), "eps": floatVal(Eps)}
	overflow := map[string]error{} // scalars beyond 64 bits
	extentErr := func(a FootArg, expr string, err error) error {
		names, _ := Names(expr)
		for _, n := range names {
			if e, ok := overflow[n]; ok {
				return fmt.Errorf("%s's extent %s: %v", a.Name, expr, e)
			}
		}
		if strings.Contains(err.Error(), "overflow") {
			return fmt.Errorf("%s's extent %s: %v", a.Name, expr, err)
		}
		return nil // not evaluable here: not counted
	}
	var m Memory
	add := func(bytes float64, host, device int) {
		m.Data += bytes
		if gpu {
			m.Host += float64(host) * bytes
			m.Device += float64(device) * bytes
		} else {
			m.Host += float64(host+device) * bytes
		}
	}
	for _, a := range f.Args {
		switch {
		case a.Type == "csr":
			g, err := Eval(a.Grid, env)
			if err != nil {
				if err := extentErr(a, a.Grid, err); err != nil {
					return m, err
				}
				continue
			}
			n1, nz := g.Float()+1, 3*g.Float()+1
			rows, nnz := n1*n1*n1, nz*nz*nz
			env[a.Name+".nrows"], env[a.Name+".nnz"] = intOrFloat(rows), intOrFloat(nnz)
			add(8*(rows+1)+16*nnz, 1, 2)
		case a.Type == "snap":
		case Arg{Type: a.Type}.IsArray():
			v, err := Eval(a.Extent, env)
			if err != nil {
				if err := extentErr(a, a.Extent, err); err != nil {
					return m, err
				}
				continue
			}
			host, device := 2, 2 // in: host data; the array, its initial copy
			switch a.Intent {
			case "out": // the reference's copy; the array, the reference's device copy
				host, device = 1, 1
				if gpu {
					device = 2
				}
			case "inout": // host data and the reference's copy; the array, its initial copy (and the reference's)
				if gpu {
					device = 3
				}
			case "scratch": // host data and the reference's copy; the array (never filled: no initial copy)
				device = 1
			}
			add(8*v.Float(), host, device)
		default:
			v, err := Eval(a.Value, env)
			if err != nil {
				if strings.Contains(err.Error(), "overflow") {
					overflow[a.Name] = fmt.Errorf("%s = %s: %v", a.Name, a.Value, err)
				}
				continue
			}
			if a.Type == "int64" && !v.Int {
				v = intVal(int64(v.F))
			}
			env[a.Name] = v
		}
	}
	return m, nil
}

func intOrFloat(x float64) Value {
	if x < math.MaxInt64 {
		return intVal(int64(x))
	}
	return floatVal(x)
}
