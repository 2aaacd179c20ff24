package render

import (
	"fmt"

	"github.com/portmatrix/portmatrix/internal/spec"
)

// snapDecls builds a SNAP system in main (docs/testsnap.md): the 2J8 W
// potential on a perturbed bcc W lattice of bcc_w cells per side, or the
// user's LAMMPS dump (PM_SNAP_DUMP, docs/inputs.md), kept as
// pm::SnapSystem <name>_data; kernels get its device view <name>.
func snapDecls(a spec.Arg) []string {
	return []string{
		fmt.Sprintf("pm::SnapSystem %s_data(%q, pm::snap_input(%s));", a.Name, a.Name, a.Init.Grid),
		fmt.Sprintf("const snap::System %s = %s_data.dev();", a.Name, a.Name),
	}
}

// snapFill fills an array from a stage of the kernel's SNAP system's reference.
func snapFill(k *spec.Kernel, a spec.Arg) string {
	return fmt.Sprintf("%s_data.fill_values(%s_data.stage(%q));", a.Name, k.SnapSource(), a.Init.Stage)
}
