package library

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// ApplyFixes applies fixes to the sources unpacked in dir, in order: each
// fix's find text must occur exactly once in its file, else nothing more is
// applied and the error names the file, the fix and where it is written.
// It returns the names of the fixes applied.
func ApplyFixes(dir string, fixes []Fix) ([]string, error) {
	var names []string
	for _, f := range fixes {
		file := filepath.Join(dir, filepath.FromSlash(f.File))
		b, err := os.ReadFile(file)
		if err != nil {
			return names, fmt.Errorf("%s: fix %q: %v", f.Pos, f.Name, err)
		}
		switch n := strings.Count(string(b), f.Find); n {
		case 1:
		case 0:
			return names, fmt.Errorf("%s: fix %q: its find text does not occur in %s (a changed release? check the fix against it)", f.Pos, f.Name, f.File)
		default:
			return names, fmt.Errorf("%s: fix %q: its find text occurs %d times in %s, not once (make it longer)", f.Pos, f.Name, n, f.File)
		}
		st, err := os.Stat(file)
		if err != nil {
			return names, err
		}
		if err := os.WriteFile(file, []byte(strings.Replace(string(b), f.Find, f.Replace, 1)), st.Mode().Perm()); err != nil {
			return names, fmt.Errorf("%s: fix %q: %v", f.Pos, f.Name, err)
		}
		names = append(names, f.Name)
	}
	return names, nil
}

// CheckSHA256 reports a file whose sha256 is not want.
func CheckSHA256(file, want string) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return fmt.Errorf("%s: %v", file, err)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != want {
		return fmt.Errorf("%s: sha256 is %s, variants/libraries.yaml says %s: not the release it names (a damaged or other file)", file, got, want)
	}
	return nil
}
