package vocabulary

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/layout"
)

// The vocabulary of the repository names every kernel description of
// templates/kernels, and every strategy.
func TestVocabularyOfTheRepository(t *testing.T) {
	root := filepath.Join("..", "..")
	v, err := Load(root)
	require.NoError(t, err)
	files, err := filepath.Glob(filepath.Join(layout.Path(root, layout.Kernels), "*.yaml"))
	require.NoError(t, err)
	assert.Len(t, v.Kernels, len(files))
	assert.NotEmpty(t, v.Strategies)
	assert.NotEmpty(t, v.Devices)
}
