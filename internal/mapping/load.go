package mapping

import (
	"fmt"

	"github.com/portmatrix/portmatrix/internal/layout"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// LoadKernels reads the kernel descriptions of the tree at root and lowers
// those written as loops, so that every reader (the pipeline, the tuner, the
// book) sees the pattern tree and the launch tunables (map_team_size,
// map_vector_size) the programs were generated with.
//
// A description with a problem, its mapping's included, is refused
// (spec.Load): the others come back lowered, with the refusals as the error
// (a spec.Refused, which a reader may take for a warning). Any other error
// (no descriptions, machine models that do not load) stops every kernel.
func LoadKernels(root string) ([]*spec.Kernel, error) {
	kernels, refused, err := spec.Load(layout.Path(root, layout.Kernels))
	if err != nil {
		if len(refused) > 0 {
			return kernels, fmt.Errorf("%s\n%w", refused, err)
		}
		return kernels, err
	}
	kernels, err = refused.Take(kernels, LowerLoops(root, kernels))
	if err != nil {
		if len(refused) > 0 {
			return kernels, fmt.Errorf("%s\n%w", refused, err)
		}
		return kernels, err
	}
	return kernels, refused.Err()
}
