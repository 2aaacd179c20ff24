package pipeline

import (
	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/verify"
)

// Verify checks the selection's build and, when PM_OUT names a results
// folder, its run (verify.Stage), over the cells of the selection that are on.
func Verify(p *Project) error {
	var on []verify.Cell
	for _, c := range p.Cells() {
		if c.On {
			on = append(on, verify.Cell{ID: c.ID, Target: c.Toolchain.Target})
		}
	}
	return verify.Stage(p.Cfg, on, p.path(build.KnownFile))
}
