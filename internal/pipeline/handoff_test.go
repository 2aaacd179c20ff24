package pipeline

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/run"
	"github.com/portmatrix/portmatrix/internal/tune"
)

// The build folder is the whole hand-off to the tune stage and run -tuned:
// a build copied where there is no source tree (no templates/, variants/,
// toolchains.yaml, machines/), as onto a GPU host, tunes and runs at the
// tuned best from the manifest's recorded spaces alone, and finds a GPU's
// machine model in the build folder's machines/.
func TestTuneAndTunedRunFromTheBuildFolderAlone(t *testing.T) {
	if os.Getenv("PM_LONG_TESTS") != "1" {
		t.Skip("long end-to-end test: PM_LONG_TESTS=1 runs it")
	}
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not found")
	}
	root := t.TempDir()
	copyInputs(t, root)
	copyTree(t, filepath.Join("..", "..", "generated", "spmv"), filepath.Join(root, "generated", "spmv"))
	var log bytes.Buffer
	cfg := Config{Root: root, Kernels: []string{"spmv"}, Variants: []string{"omp-host"}, Toolchains: []string{"gcc-host"},
		BuildDir: filepath.Join(root, "build"), Log: &log}
	p, err := Load(context.Background(), cfg)
	require.NoError(t, err)
	_, err = Build(context.Background(), p)
	require.NoError(t, err, log.String())

	// Elsewhere: the build folder only, and an empty working tree.
	away := t.TempDir()
	bd := filepath.Join(away, "build")
	copyTree(t, cfg.BuildDir, bd)
	bare := filepath.Join(away, "bare")
	require.NoError(t, os.MkdirAll(bare, 0o755))
	// The GPU's machine model (its launch defaults, the occupancy pruning)
	// comes from the build folder too.
	var models bytes.Buffer
	m, note := run.Model(bd, bare, "NVIDIA H200", &models)
	require.NotNil(t, m, note)
	assert.Equal(t, "h200-sxm-141gb", m.Name)
	assert.Empty(t, models.String(), "no fallback to a tree's machines/")
	tuned := filepath.Join(away, "tuning")
	here := Config{Root: bare, BuildDir: bd, Kernels: []string{"spmv"}, Sizes: Sizes{"": {6}}, Reps: 2, Warmup: 1, Threads: 2,
		RepSeconds: testRepSeconds, RepSecondsSet: true, TuneEvals: 3, FlushL2: "off", Out: tuned, Log: &log}
	require.NoError(t, Stage(context.Background(), "tune", here), log.String())
	keys, evals, err := tune.Evaluations(tuned)
	require.NoError(t, err)
	require.Len(t, keys, 3, "the space of rows_per_team, read from the manifest, three evaluations")
	for i, k := range keys {
		assert.Equal(t, "spmv.omp-host.gcc-host", k.Cell)
		assert.Contains(t, k.Config, "rows_per_team=", "the recorded space's tunable")
		assert.True(t, evals[i].Verified, "%s: %s", k.Config, evals[i].Error)
	}
	assert.FileExists(t, filepath.Join(tuned, tune.ReportFile))

	out := filepath.Join(away, "run")
	here.Out, here.Tuned = out, tuned
	require.NoError(t, Stage(context.Background(), "run", here), log.String())
	recs, err := results.ReadJSONL(out)
	require.NoError(t, err)
	var asPublished, atBest int
	for _, r := range recs {
		if r.Kind != results.KindKernel {
			continue
		}
		assert.True(t, r.Verified, "%s %s: %s", r.Cell, r.Config, r.Error)
		if r.Tuned() {
			atBest++
		} else {
			asPublished++
		}
	}
	assert.Equal(t, 1, asPublished, log.String())
	assert.Equal(t, 1, atBest, "run -tuned measures the tuned best beside the as-published launch")
	for _, dir := range []string{"templates", "variants", "machines"} {
		assert.NoDirExists(t, filepath.Join(bare, dir))
	}
}

// copyTree copies the files under src to dst, modes kept (binaries stay
// executable).
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	require.NoError(t, filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		target := filepath.Join(dst, rel)
		if info.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !info.Mode().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, info.Mode().Perm())
	}))
}
