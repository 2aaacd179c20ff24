package report

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	gold "github.com/portmatrix/portmatrix/internal/golden"
	"github.com/portmatrix/portmatrix/internal/results"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// specDir is the repository's report spec folder, seen from this package.
const specDir = "../../" + DefaultSpecDir

// golden compares got with testdata/name, or rewrites it under -update;
// the file names the lists of the repository's vocabulary by placeholder.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenOf(t, name, got, testVocab(t))
}

// goldenOf is golden with the lists of vocabulary v.
func goldenOf(t *testing.T, name string, got []byte, v *results.Vocabulary) {
	t.Helper()
	lists := vocabLists(v)
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(lists.Abstract(string(got))), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./internal/report -update to create it")
	require.Equal(t, lists.Expand(string(want)), string(got), "differs from %s; rerun with -update if intended", path)
}

// vocabLists is the lists of v that the report's messages print after "known:".
func vocabLists(v *results.Vocabulary) gold.Vocab {
	return gold.Vocab{{Name: "kernels", Items: v.KernelNames()}, {Name: "variants", Items: v.VariantNames()},
		{Name: "families", Items: v.Families}, {Name: "devices", Items: v.Devices}}
}
