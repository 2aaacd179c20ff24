package results

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/portmatrix/portmatrix/internal/layout"
)

// Latest returns the newest results folder (by name, which starts with the time).
func Latest(root string) (string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return "", err
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(root, e.Name(), JSONLFile)); err == nil {
				dirs = append(dirs, e.Name())
			}
		}
	}
	if len(dirs) == 0 {
		return "", fmt.Errorf("no results folder under %s", root)
	}
	sort.Strings(dirs)
	return filepath.Join(root, dirs[len(dirs)-1]), nil
}

// Slug is s in lower-case letters, digits and '-', a space made '-' ("host"
// when none is left): a part of a results folder's name ("NVIDIA H200" is
// "nvidia-h200").
func Slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(s)) {
		switch {
		case r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	if b.Len() == 0 {
		return "host"
	}
	return b.String()
}

// CheckOut checks PM_OUT (out) for a run: a folder that holds a run is refused
// unless PM_RESUME asks to continue it; a file, or a place that cannot be
// written, is refused.
func CheckOut(out string, resume bool) error {
	if resume && out == "" {
		return fmt.Errorf("PM_RESUME: needs PM_OUT (-out), the folder to resume")
	}
	if out == "" {
		return nil
	}
	st, err := os.Stat(out)
	switch {
	case err == nil && !st.IsDir():
		return fmt.Errorf("PM_OUT: %s is a file, not a results folder", out)
	case err == nil && Exists(out) && !resume:
		r, rerr := ReadRun(out)
		state := "a run"
		if rerr == nil {
			state = "a " + r.Status() + " run"
		}
		return fmt.Errorf("PM_OUT: %s holds %s; results folders are never overwritten: resume it with PM_RESUME=1 (-resume) or choose another folder", out, state)
	case err == nil:
		return nil
	case !errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("PM_OUT: %w", err)
	}
	// The nearest existing ancestor must be a writable folder.
	dir := filepath.Dir(filepath.Clean(out))
	for {
		st, err := os.Stat(dir)
		if err == nil {
			if !st.IsDir() {
				return fmt.Errorf("PM_OUT: %s: %s is not a folder", out, dir)
			}
			if syscall.Access(dir, 2) != nil { // W_OK
				return fmt.Errorf("PM_OUT: %s: cannot create it in %s (not writable)", out, dir)
			}
			return nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil
		}
		dir = parent
	}
}

// RunsDir is the folder of results folders in a repository (or on a GPU host).
const RunsDir = layout.Results

// NewFolder makes a new, empty results folder under parent and returns its
// path: the run id is the UTC time to the second and the slugs of parts
// ("20261125-094050-nvidia-h200-bundle-p"), with "-2", "-3"... when a run of
// the same second took the name first. os.Mkdir decides, so two runs started
// at once never share a folder.
func NewFolder(parent string, now time.Time, parts ...string) (string, error) {
	name := now.UTC().Format("20060102-150405")
	for _, p := range parts {
		name += "-" + Slug(p)
	}
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	for n := 1; ; n++ {
		dir := filepath.Join(parent, name)
		if n > 1 {
			dir += "-" + strconv.Itoa(n)
		}
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return "", err
		}
	}
}
