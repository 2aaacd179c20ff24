package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// corpusTree is the tree the cases of one bad-input test run in: one copy
// of the inputs (with more done to it), made once per test. A case edits
// the files it names in place and restore gives the tree back as it was
// made, so a case writes only what it changes instead of a copy of the
// whole tree.
type corpusTree struct {
	root  string
	files map[string][]byte    // every file of the tree as made, by slash path relative to root
	times map[string]time.Time // when each was last written: a file not written since is not read again
	dirs  map[string]bool      // every folder of the tree as made
}

// kept are the folders a case may leave behind: generated/, which the build
// stage rewrites whole (render.Write writes what differs and removes what no
// program makes), so that a build case writes only the sources its edits
// change instead of all of them.
var kept = map[string]bool{"generated": true}

func newCorpusTree(t *testing.T, more func(*testing.T, string)) *corpusTree {
	t.Helper()
	root := filepath.Join(t.TempDir(), "tree")
	copyInputs(t, root)
	if more != nil {
		more(t, root)
	}
	tr := &corpusTree{root: root, files: map[string][]byte{}, times: map[string]time.Time{}, dirs: map[string]bool{}}
	require.NoError(t, filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == root {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, root+string(filepath.Separator)))
		if d.IsDir() {
			tr.dirs[rel] = true
			return nil
		}
		b, err := os.ReadFile(path)
		tr.files[rel] = b
		if err == nil {
			err = tr.stamp(rel)
		}
		return err
	}))
	return tr
}

// restore gives the tree back as it was made: a file a case added or a
// folder it made (a build folder, a results folder) goes, and a file it
// edited or removed is written again. A file is read only when its size or
// time changed, or when it is among edited (the files the case wrote: a
// write of the same size may keep the time, whose clock is coarse). It
// names what it had to put back, so that a case that changes the tree where
// it should not shows.
func (tr *corpusTree) restore(edited ...string) (changed []string, err error) {
	var extra []string
	seen := map[string]bool{}
	seenDirs := map[string]bool{}
	err = filepath.WalkDir(tr.root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || path == tr.root {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(path, tr.root+string(filepath.Separator)))
		switch {
		case d.IsDir() && kept[rel]:
			return fs.SkipDir
		case d.IsDir() && !tr.dirs[rel]:
			extra = append(extra, path)
			return fs.SkipDir
		case d.IsDir():
			seenDirs[rel] = true
			return nil
		}
		want, ok := tr.files[rel]
		if !ok {
			extra = append(extra, path)
			return nil
		}
		seen[rel] = true
		if info, err := d.Info(); err == nil && d.Type().IsRegular() && info.Size() == int64(len(want)) &&
			info.ModTime().Equal(tr.times[rel]) && !slices.Contains(edited, rel) {
			return nil
		}
		if got, err := os.ReadFile(path); err != nil || !bytes.Equal(got, want) || !d.Type().IsRegular() {
			changed = append(changed, rel)
			return nil
		}
		return tr.stamp(rel) // written again as it was
	})
	if err != nil {
		return nil, err
	}
	for _, p := range extra {
		if err := os.RemoveAll(p); err != nil {
			return nil, err
		}
	}
	for rel := range tr.files {
		if !seen[rel] {
			changed = append(changed, rel)
		}
	}
	for rel := range tr.dirs {
		if !seenDirs[rel] {
			if err := os.MkdirAll(filepath.Join(tr.root, filepath.FromSlash(rel)), 0o755); err != nil {
				return nil, err
			}
		}
	}
	sort.Strings(changed)
	for _, rel := range changed {
		p := filepath.Join(tr.root, filepath.FromSlash(rel))
		if err := os.RemoveAll(p); err != nil { // a link or a folder where the file was
			return nil, err
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(p, tr.files[rel], 0o644); err != nil {
			return nil, err
		}
		if err := tr.stamp(rel); err != nil {
			return nil, err
		}
	}
	return changed, nil
}

// stamp notes when the file rel was last written.
func (tr *corpusTree) stamp(rel string) error {
	info, err := os.Lstat(filepath.Join(tr.root, filepath.FromSlash(rel)))
	if err == nil {
		tr.times[rel] = info.ModTime()
	}
	return err
}

// probes stands for toolchain.ExecProbe in this package's tests: a
// compiler's --version is asked once per test binary, not once per Load.
// What a probe answers does not change while the tests run.
var probes = &probeMemo{kept: map[string]probeAnswer{}}

type probeMemo struct {
	mu   sync.Mutex
	kept map[string]probeAnswer
	runs int // probes run, not answered from kept
}

type probeAnswer struct {
	out string
	err error
}

func (m *probeMemo) probe(ctx context.Context, name string, args ...string) (string, error) {
	key := fmt.Sprintf("%q", append([]string{name}, args...))
	m.mu.Lock()
	a, ok := m.kept[key]
	m.mu.Unlock()
	if ok {
		return a.out, a.err
	}
	out, err := toolchain.ExecProbe(ctx, name, args...)
	if ctx.Err() != nil { // a probe cut short by its caller says nothing of the compiler
		return out, err
	}
	m.mu.Lock()
	m.kept[key] = probeAnswer{out, err}
	m.runs++
	m.mu.Unlock()
	return out, err
}
