package tune

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"

	"github.com/portmatrix/portmatrix/internal/fsutil"
	"github.com/portmatrix/portmatrix/internal/machine"
)

// Kernels are the device kernels of the tuned binaries, by build key: the
// registers and shared memory the build read (cuobjdump), kept in the
// tuning folder so that the occupancy model's account of a tuning (the
// report's gap reasons) uses the binary that was measured.
type Kernels map[string][]machine.Resources

// ReadKernels reads dir's tuning-kernels.json; a folder without one has
// none (nil, nil).
func ReadKernels(dir string) (Kernels, error) {
	file := filepath.Join(dir, KernelsFile)
	data, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	k := Kernels{}
	if err := json.Unmarshal(data, &k); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return k, nil
}

// WriteKernels adds k to dir's tuning-kernels.json (a resumed or second
// tuning into the folder keeps the binaries it recorded before); with
// nothing to add (host cells have no kernel resources) it writes nothing.
func WriteKernels(dir string, k Kernels) error {
	if len(k) == 0 {
		return nil
	}
	all, err := ReadKernels(dir)
	if err != nil {
		return err
	}
	if all == nil {
		all = Kernels{}
	}
	maps.Copy(all, k)
	data, err := json.MarshalIndent(all, "", "  ")
	if err != nil {
		return err
	}
	return fsutil.WriteFile(filepath.Join(dir, KernelsFile), append(data, '\n'), 0o644)
}
