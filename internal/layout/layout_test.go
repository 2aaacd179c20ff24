package layout

import (
	"go/build"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every path of the layout exists in the repository, and the package
// imports no package of the project (it holds paths only).
func TestLayoutOfTheRepository(t *testing.T) {
	root := filepath.Join("..", "..")
	for _, rel := range []string{Templates, Kernels, Capabilities, Strategies, KnownFailures, Toolchains, ReportSpecs, Results, Libraries} {
		_, err := os.Stat(Path(root, rel))
		assert.NoError(t, err, rel)
	}
	pkg, err := build.ImportDir(".", 0)
	require.NoError(t, err)
	for _, imp := range pkg.Imports {
		assert.False(t, strings.HasPrefix(imp, "github.com/portmatrix/portmatrix/"), "layout imports %s", imp)
	}
}
