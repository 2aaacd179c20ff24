package reporttest

import (
	"flag"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	gold "github.com/portmatrix/portmatrix/internal/golden"
	"github.com/portmatrix/portmatrix/internal/layout"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/vocabulary"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

var (
	rootOnce  sync.Once
	root      string
	vocabOnce sync.Once
	vocab     *results.Vocabulary
)

// Root is the repository's root: the first folder above the test's with a
// go.mod.
func Root(t testing.TB) string {
	rootOnce.Do(func() {
		dir, err := filepath.Abs(".")
		if err != nil {
			t.Fatal(err)
		}
		for {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				root = dir
				return
			}
			up := filepath.Dir(dir)
			if up == dir {
				t.Fatal("no go.mod above the test's folder")
			}
			dir = up
		}
	})
	return root
}

// SpecDir is the repository's report spec folder.
func SpecDir(t testing.TB) string { return filepath.Join(Root(t), layout.ReportSpecs) }

// Vocab is the vocabulary of the repository's own project.
func Vocab(t testing.TB) *results.Vocabulary {
	vocabOnce.Do(func() {
		v, err := vocabulary.Load(Root(t))
		if err != nil {
			t.Fatal(err)
		}
		vocab = v
	})
	return vocab
}

// Golden compares got with testdata/name, or rewrites it under -update;
// the file names the lists of the repository's vocabulary by placeholder.
func Golden(t *testing.T, name string, got []byte) {
	t.Helper()
	GoldenOf(t, name, got, Vocab(t))
}

// GoldenOf is Golden with the lists of vocabulary v.
func GoldenOf(t *testing.T, name string, got []byte, v *results.Vocabulary) {
	t.Helper()
	lists := VocabLists(v)
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(lists.Abstract(string(got))), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test with -update to create it")
	require.Equal(t, lists.Expand(string(want)), string(got), "differs from %s; rerun with -update if intended", path)
}

// VocabLists is the lists of v that the report's messages print after "known:".
func VocabLists(v *results.Vocabulary) gold.Vocab {
	return gold.Vocab{{Name: "kernels", Items: v.KernelNames()}, {Name: "variants", Items: v.VariantNames()},
		{Name: "families", Items: v.Families}, {Name: "devices", Items: v.Devices}}
}
