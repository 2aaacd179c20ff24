package layout

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every path of the layout exists in the repository, and the vocabulary
// names every kernel description of templates/kernels.
func TestLayoutOfTheRepository(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, rel := range []string{Templates, Kernels, Capabilities, Strategies, KnownFailures, Toolchains, ReportSpecs, Results} {
		_, err := os.Stat(Path(root, rel))
		assert.NoError(t, err, rel)
	}
	v, err := LoadVocabulary(root)
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(Path(root, Kernels), "*.yaml"))
	require.NoError(t, err)
	assert.Len(t, v.Kernels, len(files))
	assert.NotEmpty(t, v.Strategies)
}
