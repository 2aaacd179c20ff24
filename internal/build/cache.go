package build

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/portmatrix/portmatrix/internal/fsutil"
	"github.com/portmatrix/portmatrix/internal/matrix"
)

// CacheEnv names a folder of built programs shared between build folders and
// checkouts, as ccache shares objects: a cell whose program some build folder
// already made from the same inputs (its source, the harness, the command, the
// compiler, the library install, the environment of KeyEnv: everything of Key
// but where the checkout and the build folder are) is copied from there instead
// of compiled again. Only programs that built are kept; a failure is always
// compiled again. Unset, nothing is shared. CI sets it for all its steps, so
// that the tests' end-to-end pipelines, each in its own temporary checkout,
// reuse the quick job's programs and each other's.
const CacheEnv = "PM_BUILD_CACHE"

// sharedKey is Key with the checkout's and the build folder's paths replaced
// by placeholders: the same inputs anywhere give the same key.
func sharedKey(c *matrix.Cell, cmd []string, src []byte, layers Layers, root, dir string) string {
	place := func(s string) string {
		for _, p := range []struct{ path, name string }{{dir, "<build>"}, {root, "<root>"}} {
			if abs, err := filepath.Abs(p.path); err == nil && abs != "/" {
				s = strings.ReplaceAll(s, abs, p.name)
			}
			if p.path != "" && p.path != "." && p.path != "/" {
				s = strings.ReplaceAll(s, p.path, p.name)
			}
		}
		return s
	}
	return hashKey(c, cmd, src, layers.hash(""), place)
}

// CacheDir is the shared folder of programs the environment names, or ""
// (the pipeline's builds set Options.Cache from it).
func CacheDir() string { return os.Getenv(CacheEnv) }

// fromCache copies the program of shared key into binary when the cache holds
// it, and reports whether it did.
func fromCache(cache, shared, binary string) bool {
	if cache == "" {
		return false
	}
	return copyProgram(filepath.Join(cache, shared[:2], shared), binary) == nil
}

// toCache keeps a program that built under its shared key.
func toCache(cache, shared, binary string) {
	if cache == "" {
		return
	}
	dst := filepath.Join(cache, shared[:2], shared)
	if _, err := os.Stat(dst); err == nil {
		return
	}
	copyProgram(binary, dst)
}

// copyProgram copies an executable: fsutil.WriteFile's temporary file and
// rename, so a concurrent build never reads half a program and a running
// one keeps its own.
func copyProgram(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return fsutil.WriteFile(dst, b, 0o755)
}
