package mapping

import (
	"github.com/portmatrix/portmatrix/internal/layout"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// LoadKernels reads the kernel descriptions of the tree at root and lowers
// those written as loops, so that every reader (the pipeline, the tuner, the
// book) sees the pattern tree and the launch tunables (map_team_size,
// map_vector_size) the programs were generated with.
func LoadKernels(root string) ([]*spec.Kernel, error) {
	kernels, err := spec.LoadDir(layout.Path(root, layout.Kernels))
	if err != nil {
		return kernels, err
	}
	return kernels, LowerLoops(root, kernels)
}
