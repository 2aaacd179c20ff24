package build

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// DeviceHash hashes what decides a cell's device code: the preprocessor
// lines before the reference (the layer's #defines and #includes) and the
// generated `namespace dev` block, comment lines and blank lines left out,
// plus the compiler flags that are not file names, plus the harness headers
// the source reaches through its #include "..." lines (layers; nil: the
// text alone): a fix in a layer's launch is other device code, and a results
// merge keeps only the later code's trials. Two cells of one
// toolchain with the same hash compile the same device code from the same
// text; the report shows them as one group. A #define that no code path of
// the kernel reads still counts (it cannot be told safely from the text), so
// the grouping errs towards keeping cells apart. Empty when the source has no
// `namespace dev` block.
func DeviceHash(src []byte, flags []string, layers Layers) string {
	var part [][]byte
	inDev := false
	found := false
	for _, line := range bytes.Split(src, []byte("\n")) {
		t := bytes.TrimSpace(line)
		switch {
		case len(t) == 0 || bytes.HasPrefix(t, []byte("//")):
			continue
		case !found && !inDev && bytes.HasPrefix(t, []byte("#")):
			part = append(part, t)
		case bytes.Equal(t, []byte("namespace dev {")):
			inDev, found = true, true
			part = append(part, t)
		case inDev:
			part = append(part, bytes.TrimRight(line, " \t"))
			if bytes.HasPrefix(t, []byte("}  // namespace dev")) {
				inDev = false
			}
		}
	}
	if !found {
		return ""
	}
	h := sha256.New()
	h.Write([]byte(strings.Join(flags, "\x00")))
	h.Write([]byte{0})
	h.Write(bytes.Join(part, []byte("\n")))
	for _, f := range layers.closure(src) {
		fmt.Fprintf(h, "\x00%s\x00%d\x00", f, len(layers[f]))
		h.Write(layers[f])
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// Layers are the files under harness/ by their slash-separated path there,
// read once per build.
type Layers map[string][]byte

// ReadLayers reads every file under root's harness/.
func ReadLayers(root string) (Layers, error) {
	dir := filepath.Join(root, "harness")
	l := Layers{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		l[filepath.ToSlash(rel)] = b
		return err
	})
	return l, err
}

// closure is the harness files src reaches through #include "..." lines,
// each resolved against its includer's folder and then harness/ (the -I
// every command gives), in sorted order; names found in neither (system
// headers, the library's) are not the harness's.
func (l Layers) closure(src []byte) []string {
	if len(l) == 0 {
		return nil
	}
	seen := map[string]bool{}
	var walk func(from string, text []byte)
	walk = func(from string, text []byte) {
		for _, line := range bytes.Split(text, []byte("\n")) {
			t := bytes.TrimSpace(line)
			if !bytes.HasPrefix(t, []byte("#")) {
				continue
			}
			t = bytes.TrimSpace(t[1:])
			if !bytes.HasPrefix(t, []byte("include")) {
				continue
			}
			t = bytes.TrimSpace(t[len("include"):])
			if len(t) < 2 || t[0] != '"' {
				continue
			}
			end := bytes.IndexByte(t[1:], '"')
			if end < 0 {
				continue
			}
			name := string(t[1 : 1+end])
			for _, cand := range []string{path.Join(from, name), path.Clean(name)} {
				if b, ok := l[cand]; ok {
					if !seen[cand] {
						seen[cand] = true
						walk(path.Dir(cand), b)
					}
					break
				}
			}
		}
	}
	walk(".", src)
	return slices.Sorted(maps.Keys(seen))
}

// deviceFlags are the arguments of a compile command that shape the device
// code: everything but the compiler path, the output and the source file.
func deviceFlags(cmd []string) []string {
	var out []string
	for i := 1; i < len(cmd); i++ {
		switch {
		case cmd[i] == "-o":
			i++
		case i == len(cmd)-1, strings.HasPrefix(cmd[i], "-I"):
		default:
			out = append(out, cmd[i])
		}
	}
	return out
}
