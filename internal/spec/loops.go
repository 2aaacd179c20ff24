package spec

// A kernel written as sequential loops (`loops:`, docs/loopnest.md) instead
// of a pattern tree. The loader reads the loop nest and checks it against
// the arguments; the mapper (internal/mapping) turns it into the pattern tree
// after loading (MappedFrom), so every backend lowers it as a hand-written
// tree.

import (
	"gopkg.in/yaml.v3"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/loopnest"
)

// parseLoops reads the loops: field and checks that its parameters are the
// kernel's int64 scalars and its arrays the kernel's double[] arguments,
// each argument's extent the product of the array's shape at every size.
func parseLoops(d diag.Decoder, k *Kernel, n *yaml.Node) {
	before := len(*d.Errs)
	k.Loops = loopnest.Decode(d, n)
	if len(*d.Errs) > before {
		return
	}
	args := map[string]Arg{}
	for _, a := range k.Args {
		args[a.Name] = a
	}
	for _, p := range k.Loops.Params {
		if a, ok := args[p]; !ok || a.Type != "int64" {
			d.Errs.Add(k.Loops.Pos, "loops: parameter %q must be an int64 scalar argument of the kernel", p)
		}
	}
	for _, arr := range k.Loops.Arrays {
		a, ok := args[arr.Name]
		if !ok || a.Type != "double[]" {
			d.Errs.Add(arr.Pos, "loops: array %q must be a double[] argument of the kernel", arr.Name)
			continue
		}
		checkShape(d, k, arr, a)
	}
}

// checkShape compares an argument's extent with the product of the loop
// nest's shape of it at every size of every set (the first mismatch only).
func checkShape(d diag.Decoder, k *Kernel, arr *loopnest.Array, a Arg) {
	for _, set := range SizeSets {
		for _, size := range k.Size.Sets[set] {
			env := k.Env(size)
			params := map[string]int64{}
			for _, p := range k.Loops.Params {
				params[p] = env[p].I
			}
			want := int64(1)
			for _, e := range arr.Extent {
				want *= e.Eval(params)
			}
			got, err := Eval(a.Extent, env)
			if err != nil || !got.Int {
				continue // the extent's own check reports it
			}
			if got.I != want {
				d.Errs.Add(arr.Pos, "loops: array %q has %d elements at %s=%d (size set %s), but argument %s's extent %s is %d", arr.Name, want, k.Size.Name, size, set, a.Name, a.Extent, got.I)
				return
			}
		}
	}
}
