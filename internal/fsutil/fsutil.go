// Package fsutil writes files atomically (a temporary file in the same
// folder, synced, then renamed over the target, so a reader or a run killed
// midway sees the old file or the new one, never half of one) and keeps
// machine paths out of the logs that results folders keep.
package fsutil

import (
	"os"
	"path/filepath"
	"regexp"
)

// WriteFile writes data to path atomically, creating its folder.
func WriteFile(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if _, err := f.Write(data); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Chmod(perm); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return nil
}

// Portable rewrites a command line for a log that is kept in a results
// folder: paths under the working directory (the repository root when
// the pipeline runs) become relative, so that the log names no machine path.
func Portable(line string) string {
	wd, err := os.Getwd()
	if err != nil || wd == "/" {
		return line
	}
	re := regexp.MustCompile(regexp.QuoteMeta(wd) + `(/|[\s"'=:,;]|$)`)
	return re.ReplaceAllStringFunc(line, func(m string) string {
		rest := m[len(wd):]
		if rest == "/" {
			return ""
		}
		return "." + rest
	})
}
