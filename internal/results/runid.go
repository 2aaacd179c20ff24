package results

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
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

// Slug is s in lower-case letters, digits and '-' ("host" when none is left):
// the machine part of a results folder's name.
func Slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			b.WriteRune(r)
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
