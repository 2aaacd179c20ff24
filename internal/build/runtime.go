package build

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"

	"github.com/portmatrix/portmatrix/internal/toolchain"
)

var soVersion = regexp.MustCompile(`^(.*\.so)(\.\d+)+$`)

// Bundle copies a toolchain's runtime libraries into <dir>/<toolchain>/lib,
// where the run stage points LD_LIBRARY_PATH, so that its programs run on a
// GPU host that has none of them. Each versioned library also gets its
// unversioned name: the LLVM offload runtime opens its plugins that way.
// A toolchain whose binaries never run (toolchain.NotRun: AMD targets) has
// nothing to bundle.
func Bundle(dir string, t *toolchain.Toolchain) error {
	if len(t.RuntimeLibs) == 0 || !t.Found() || toolchain.NotRun(t.Target) != "" {
		return nil
	}
	lib := filepath.Join(dir, t.ID, "lib")
	if err := os.MkdirAll(lib, 0o755); err != nil {
		return err
	}
	for _, src := range t.RuntimeLibs {
		name := filepath.Base(src)
		dst := filepath.Join(lib, name)
		if _, err := os.Stat(dst); err == nil {
			continue
		}
		if err := copyResolved(src, dst); err != nil {
			return fmt.Errorf("toolchain %s: runtime library: %w", t.ID, err)
		}
		if m := soVersion.FindStringSubmatch(name); m != nil {
			link := filepath.Join(lib, m[1])
			if _, err := os.Lstat(link); err != nil {
				if err := os.Symlink(name, link); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func copyResolved(src, dst string) error {
	real, err := filepath.EvalSymlinks(src)
	if err != nil {
		return err
	}
	in, err := os.Open(real)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
