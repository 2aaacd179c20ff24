package spec

import (
	"math"
	"sort"

	"gopkg.in/yaml.v3"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// LooseTolerance is the tolerance from which on a description must say why
// (tolerance_why): 1e-6 relative hides real bugs in double precision.
const LooseTolerance = 1e-6

// checkWork evaluates the tolerance and bytes_min at every size of every
// size set: a tolerance must be positive, finite and below LooseTolerance
// unless tolerance_why explains it; bytes_min positive and finite.
func checkWork(d diag.Decoder, k *Kernel, f map[string]*yaml.Node) {
	var sets []string
	for set := range k.Size.Sets {
		sets = append(sets, set)
	}
	sort.Strings(sets)
	tolDone, bytesDone := false, false
	for _, set := range sets {
		for _, size := range k.Size.Sets[set] {
			env := k.Env(size)
			if f["tolerance"] != nil && !tolDone {
				v, err := Eval(k.Tolerance, env)
				t := v.Float()
				switch {
				case err != nil:
					d.Add(f["tolerance"], "tolerance: %v", err)
					tolDone = true
				case math.IsNaN(t) || math.IsInf(t, 0) || t <= 0:
					d.Add(f["tolerance"], "tolerance is %g at %s=%d (size set %s): it must be positive and finite", t, k.Size.Name, size, set)
					tolDone = true
				case t >= LooseTolerance && k.ToleranceWhy == "":
					d.Add(f["tolerance"], "tolerance %.3g at %s=%d (size set %s) is loose (>= %g): derive a bound from the kernel's arithmetic or give tolerance_why", t, k.Size.Name, size, set, LooseTolerance)
					tolDone = true
				}
			}
			if f["bytes_min"] != nil && !bytesDone {
				v, err := Eval(k.BytesMin, env)
				b := v.Float()
				switch {
				case err != nil:
					d.Add(f["bytes_min"], "bytes_min: %v", err)
					bytesDone = true
				case math.IsNaN(b) || math.IsInf(b, 0) || b <= 0:
					d.Add(f["bytes_min"], "bytes_min is %g at %s=%d (size set %s): it must be positive and finite", b, k.Size.Name, size, set)
					bytesDone = true
				}
			}
		}
	}
	if f["tolerance_why"] != nil && k.ToleranceWhy == "" {
		d.Add(f["tolerance_why"], "tolerance_why must say why")
	}
}

// ToleranceAt is the tolerance at one size.
func (k *Kernel) ToleranceAt(size int64) (float64, error) {
	v, err := Eval(k.Tolerance, k.Env(size))
	return v.Float(), err
}
