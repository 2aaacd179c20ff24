package pipeline

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/results"
)

// The merge stage takes the kernels and toolchains PM_KERNELS and
// PM_TOOLCHAINS name: one suite out of folders that ran several.
func TestMergeStageTakesTheSelectedKernels(t *testing.T) {
	root := t.TempDir()
	var dirs []string
	for _, id := range []string{"a", "b"} {
		dir := filepath.Join(root, id)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		require.NoError(t, results.WriteRun(dir, results.Run{ID: id, Finished: "x"}))
		require.NoError(t, results.WriteRecords(dir, []results.Record{
			{Kind: results.KindKernel, Cell: "dot.kk-omp-b." + id, Kernel: "dot", Toolchain: id, Size: 8, Verified: true},
			{Kind: results.KindKernel, Cell: "eos.raja-omp." + id, Kernel: "eos", Toolchain: id, Size: 8, Verified: true},
		}))
		dirs = append(dirs, dir)
	}
	out := filepath.Join(root, "merged")
	cfg, err := config.FromEnviron([]string{"PM_OUT=" + out, "PM_KERNELS=dot", "PM_TOOLCHAINS=b"})
	require.NoError(t, err)
	cfg.Log = io.Discard
	require.NoError(t, Stage(context.Background(), "merge", cfg, dirs[0]+","+dirs[1]))
	recs, err := results.ReadJSONL(out)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	assert.Equal(t, "dot.kk-omp-b.b", recs[0].Cell)
}
