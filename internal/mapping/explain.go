package mapping

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// ExplainKernels prints, for each kernel written as a loop nest (PM_KERNELS
// narrows them), the dependence verdicts, each loop's level with its reason,
// the sizes the machine model gave, and the pattern tree the backends lower.
// It reads only the kernel descriptions and the machine models. A refused
// description is printed first and the others explained; the error is the
// refusals of the kernels selected (all when none is named).
func ExplainKernels(root string, only []string, w io.Writer) error {
	kernels, err := LoadKernels(root)
	var refused spec.Refused
	if err != nil && !errors.As(err, &refused) {
		return err
	}
	if len(refused) > 0 {
		fmt.Fprintf(w, "explain: %d kernel descriptions refused, the others explained:\n%s\n", len(refused), refused)
	}
	var names []string
	for _, k := range kernels {
		names = append(names, k.Name)
	}
	names = append(names, refused.Names()...)
	for _, want := range only {
		if !slices.Contains(names, want) {
			return fmt.Errorf("PM_KERNELS: unknown kernel %q%s", want, diag.DidYouMean(want, names))
		}
	}
	n := 0
	for _, k := range kernels {
		if k.Loops == nil || len(only) > 0 && !slices.Contains(only, k.Name) {
			continue
		}
		n++
		explainKernel(w, k)
	}
	if n == 0 {
		fmt.Fprintln(w, "explain: no kernel written as loops: (docs/loopnest.md) among those selected")
	}
	return refused.Of(only).Err()
}

// explainKernel writes what the explain stage says of one lowered kernel:
// its mapping and its pattern tree.
func explainKernel(w io.Writer, k *spec.Kernel) {
	fmt.Fprintf(w, "kernel %s (%s):\n%s", k.Name, k.File, k.Mapping)
	fmt.Fprintln(w, "pattern tree:")
	PrintTree(w, k.Pattern, "  ")
}

// LowerLoops maps the kernels written as loop nests onto the pattern tree
// with the default GPU model, and gives them their host sizes from the
// default CPU model (docs/loopnest.md); it reads the machine models
// only when a kernel needs them.
func LowerLoops(root string, kernels []*spec.Kernel) error {
	if !slices.ContainsFunc(kernels, func(k *spec.Kernel) bool { return k.Loops != nil }) {
		return nil
	}
	set, err := machine.Load(filepath.Join(root, machine.Dir))
	if err != nil {
		return err
	}
	m, err := set.Get(DefaultGPU)
	if err != nil {
		return err
	}
	cpu, err := set.Get(DefaultCPU)
	if err != nil {
		return err
	}
	err = LowerAll(kernels, m)
	LowerHost(kernels, cpu)
	return err
}
