package build

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/portmatrix/portmatrix/internal/fsutil"
	"github.com/portmatrix/portmatrix/internal/machine"
)

// MachinesDir is where a build folder keeps the machine models
// (<dir>/machines/*.yaml, the tree's files byte for byte), so that the run
// and tune stages on a host with the build folder alone look up a device's
// model, its launch defaults and its occupancy as the tree would.
func MachinesDir(dir string) string { return filepath.Join(dir, machine.Dir) }

// CopyMachines makes dir's machines/ the models of src (the tree's
// machines/): every model file copied unchanged, a file no longer in src
// removed. The models must load (machine.Load, positioned errors), so that
// the build never hands on a model the run stage cannot read. A tree without
// machines/ copies nothing and removes the build folder's models.
func CopyMachines(dir, src string) error {
	out := MachinesDir(dir)
	if _, err := os.Stat(src); errors.Is(err, fs.ErrNotExist) {
		return os.RemoveAll(out)
	}
	if _, err := machine.Load(src); err != nil {
		return err
	}
	files, err := filepath.Glob(filepath.Join(src, "*.yaml"))
	if err != nil {
		return err
	}
	sort.Strings(files)
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	keep := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		dst := filepath.Join(out, filepath.Base(f))
		keep[dst] = true
		if old, err := os.ReadFile(dst); err == nil && bytes.Equal(old, data) {
			continue
		}
		if err := fsutil.WriteFile(dst, data, 0o644); err != nil {
			return err
		}
	}
	stale, err := filepath.Glob(filepath.Join(out, "*.yaml"))
	if err != nil {
		return err
	}
	for _, f := range stale {
		if !keep[f] {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	return nil
}

// Machines loads the machine models the run and tune stages use: the build
// folder dir's (MachinesDir). A build folder made before the build carried
// them falls back to root's machines/, and note says so in one line; with
// neither, the error says where it looked.
func Machines(dir, root string) (set *machine.Set, note string, err error) {
	own := MachinesDir(dir)
	if _, err := os.Stat(own); err == nil {
		set, err := machine.Load(own)
		return set, "", err
	}
	tree := filepath.Join(root, machine.Dir)
	note = fmt.Sprintf("%s has no machine models (built before the build carried them): reading %s; build again to carry them", dir, tree)
	set, err = machine.Load(tree)
	return set, note, err
}
