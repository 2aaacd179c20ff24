package pipeline

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"

	"github.com/portmatrix/portmatrix/internal/diag"
	models "github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/mapping"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// Explain prints, for each kernel written as a loop nest (PM_KERNELS
// narrows them), the dependence verdicts, each loop's level with its reason,
// the sizes the machine model gave, and the pattern tree the backends lower.
// It reads only the kernel descriptions and the machine models.
func Explain(cfg Config, w io.Writer) error {
	cfg.Defaults()
	kernels, err := spec.LoadDir(filepath.Join(cfg.Root, "templates", "kernels"))
	if err != nil {
		return err
	}
	if err := lowerLoops(cfg.Root, kernels); err != nil {
		return err
	}
	var names []string
	for _, k := range kernels {
		names = append(names, k.Name)
	}
	for _, want := range cfg.Kernels {
		if !slices.Contains(names, want) {
			return fmt.Errorf("PM_KERNELS: unknown kernel %q%s", want, diag.DidYouMean(want, names))
		}
	}
	n := 0
	for _, k := range kernels {
		if k.Loops == nil || len(cfg.Kernels) > 0 && !slices.Contains(cfg.Kernels, k.Name) {
			continue
		}
		n++
		fmt.Fprintf(w, "kernel %s (%s):\n%s", k.Name, k.File, k.Mapping)
		fmt.Fprintln(w, "pattern tree:")
		mapping.PrintTree(w, k.Pattern, "  ")
	}
	if n == 0 {
		fmt.Fprintln(w, "explain: no kernel written as loops: (docs/loopnest.md) among those selected")
	}
	return nil
}

// mapKernels maps the kernels written as loop nests onto the pattern tree
// with the default GPU model (docs/loopnest.md).
func mapKernels(p *Project) error { return lowerLoops(p.Cfg.Root, p.Kernels) }

// lowerLoops reads the machine models only when a kernel needs them.
func lowerLoops(root string, kernels []*spec.Kernel) error {
	if !slices.ContainsFunc(kernels, func(k *spec.Kernel) bool { return k.Loops != nil }) {
		return nil
	}
	set, err := models.Load(filepath.Join(root, models.Dir))
	if err != nil {
		return err
	}
	m, err := set.Get(mapping.DefaultGPU)
	if err != nil {
		return err
	}
	return mapping.LowerAll(kernels, m)
}
