package spec

import (
	"fmt"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// HardwareWidths are the widths a loop may be split by whatever the
// strategy: SIMD lanes, warps, CUDA blocks.
var HardwareWidths = []int64{2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}

// CheckSizes enforces the size-set rule on every kernel: each size set holds
// a size at which no array's extent is a multiple of any loop width, so that
// a dropped remainder or an overrun shows there. The widths are
// HardwareWidths, the kernel's tunable values and tunables: every tunable
// value of the strategies (the project knows them, spec does not). A TestSNAP system's
// extents follow from its generated lattice, not from arithmetic on the size:
// such a kernel is not checked.
func CheckSizes(kernels []*Kernel, tunables []int64) error {
	var errs diag.List
	for _, k := range kernels {
		if slices.ContainsFunc(k.Args, func(a Arg) bool { return a.Type == "snap" }) {
			continue
		}
		ws := k.widths(tunables)
		for _, set := range SizeSets {
			sizes := k.Size.Sets[set]
			if len(sizes) == 0 {
				continue // a missing set is reported by Parse
			}
			var first string
			clean := false
			for _, size := range sizes {
				why, ok := k.multipleAt(size, ws)
				if !ok {
					clean = true // not evaluable: the expression's own check says so
					break
				}
				if why == "" {
					clean = true
					break
				}
				if first == "" {
					first = fmt.Sprintf("at %d: %s", size, why)
				}
			}
			if clean {
				continue
			}
			eg := ""
			if s := k.cleanSizeNear(sizes[0], ws); s > 0 {
				eg = fmt.Sprintf(", e.g. %d", s)
			}
			errs.Add(k.Size.SetPos[set], "size set %q [%s]: at every size an array's extent is a multiple of a loop width (%s), where a dropped remainder or an overrun does not show; add a size at which none is%s (widths: %s)",
				set, joinInts(sizes), first, eg, joinInts(ws))
		}
	}
	return errs.Err()
}

// widths are the loop widths of k: the hardware's, its tunables and more,
// each above 1, sorted.
func (k *Kernel) widths(more []int64) []int64 {
	ws := slices.Clone(HardwareWidths)
	for _, t := range k.Tunables {
		ws = append(ws, t.Value)
	}
	ws = append(ws, more...)
	ws = slices.DeleteFunc(ws, func(w int64) bool { return w < 2 })
	slices.Sort(ws)
	return slices.Compact(ws)
}

// multipleAt says which array's extent at size is a multiple of one of ws
// ("" when none is); ok is false when an extent does not evaluate to an
// integer.
func (k *Kernel) multipleAt(size int64, ws []int64) (why string, ok bool) {
	env := k.Env(size)
	for _, a := range k.Args {
		if !a.IsArray() {
			continue
		}
		v, err := Eval(a.Extent, env)
		if err != nil || !v.Int {
			return "", false
		}
		for i := len(ws) - 1; i >= 0; i-- {
			if v.I%ws[i] == 0 {
				return fmt.Sprintf("%s's extent %d is a multiple of %d", a.Name, v.I, ws[i]), true
			}
		}
	}
	return "", true
}

// cleanSizeNear is the size nearest to from (within a thousand) at which no
// extent is a multiple of a width, or 0.
func (k *Kernel) cleanSizeNear(from int64, ws []int64) int64 {
	for d := int64(1); d <= 1000; d++ {
		for _, s := range []int64{from - d, from + d} {
			if s < 1 {
				continue
			}
			if why, ok := k.multipleAt(s, ws); ok && why == "" {
				return s
			}
		}
	}
	return 0
}

func joinInts(xs []int64) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}
