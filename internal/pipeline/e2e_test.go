package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/session"
)

// testRepSeconds bounds the timed calls of the end-to-end tests' runs
// (PM_REP_SECONDS): their kernels' calls take far less, so each still runs
// its warm-up and reps, and STREAM, which a run measures once (three arrays
// of four times the caches), stops after its 5 runs instead of the default's
// 6 s: the tests check that it verifies, not its rate.
const testRepSeconds = 0.05

// copyInputs copies the inputs of the pipeline into a scratch repository.
func copyInputs(t *testing.T, dst string) {
	t.Helper()
	for _, dir := range []string{"templates", "variants", "harness", "machines"} {
		src := filepath.Join("..", "..", dir)
		require.NoError(t, filepath.Walk(src, func(path string, info os.FileInfo, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(filepath.Join("..", ".."), path)
			target := filepath.Join(dst, rel)
			if info.IsDir() {
				return os.MkdirAll(target, 0o755)
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			return os.WriteFile(target, b, 0o644)
		}))
	}
	b, err := os.ReadFile("../../toolchains.yaml")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dst, "toolchains.yaml"), b, 0o644))
}

// A variant that writes nothing fails verification: the harness poisons
// outputs before each run, so a no-op body leaves NaN behind.
func TestNoOpVariantFailsVerification(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not found")
	}
	root := t.TempDir()
	copyInputs(t, root)
	src, err := os.ReadFile("testdata/scale.yaml")
	require.NoError(t, err)
	noop := strings.Replace(string(src), "body: z[i] = s * x[i] + y[i] * y[i];", "body: (void)z;", 1)
	require.NoError(t, os.WriteFile(filepath.Join(root, "templates", "kernels", "scale.yaml"), []byte(noop), 0o644))
	var log bytes.Buffer
	cfg := Config{Root: root, Kernels: []string{"scale"}, Variants: []string{"serial"}, Toolchains: []string{"gcc-host"},
		Sizes: Sizes{"": {100}}, Reps: 1, Warmup: 1, RepSeconds: testRepSeconds, RepSecondsSet: true, FlushL2: "off", Out: filepath.Join(root, "results", "noop"), Log: &log}
	p, err := Load(context.Background(), cfg)
	require.NoError(t, err)
	require.NoError(t, Generate(p))
	_, err = Build(context.Background(), p)
	require.NoError(t, err)
	dir, err := session.Run(context.Background(), p.Cfg)
	var fails diag.Failures
	require.ErrorAs(t, err, &fails, "a measurement not verified fails the run, after it is written")
	assert.Contains(t, err.Error(), "run: scale.serial.gcc-host size 100 trial 1: verification failed")
	recs, err := results.ReadJSONL(dir)
	require.NoError(t, err)
	require.Len(t, recs, 5) // the measurement, STREAM copy, triad and dot, the runtime's copy
	assert.Equal(t, "kernel", recs[0].Kind)
	assert.False(t, recs[0].Verified)
	assert.Equal(t, "verification failed in 3 of 3 runs; first: run 1 of 3 (first run): "+
		"z holds 100 NaN/Inf values of 100 (first at index 0): not written?", recs[0].Error)
}

// A template edit regenerates only the files it affects; a file no job makes
// any more is removed.
func TestTemplateEditRegeneratesOnlyWhatItAffects(t *testing.T) {
	root := t.TempDir()
	copyInputs(t, root)
	var log bytes.Buffer
	p, err := Load(context.Background(), Config{Root: root, Log: &log})
	require.NoError(t, err)
	require.NoError(t, Generate(p))
	stale := filepath.Join(root, "generated", "axpby", "no-such-variant.cpp")
	require.NoError(t, os.WriteFile(stale, []byte("old"), 0o644))
	// The programs the edit affects: those with the edited line (the flat
	// loops of omp-class: axpby, dot and any kernel added like them).
	var affected []string
	programs, _ := filepath.Glob(filepath.Join(root, "generated", "*", "omp-class.cpp"))
	for _, f := range programs {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), "// the trip count, read from the object") {
			rel, _ := filepath.Rel(root, f)
			affected = append(affected, filepath.ToSlash(rel))
		}
	}
	require.Subset(t, affected, []string{"generated/axpby/omp-class.cpp", "generated/dot/omp-class.cpp"})

	tmpl := filepath.Join(root, "templates", "backends", "omp-class", "patterns.tmpl")
	b, err := os.ReadFile(tmpl)
	require.NoError(t, err)
	edited := strings.Replace(string(b), "// the trip count, read from the object", "// the trip count (edited), read from the object", -1)
	require.NoError(t, os.WriteFile(tmpl, []byte(edited), 0o644))
	log.Reset()
	p, err = Load(context.Background(), Config{Root: root, Log: &log})
	require.NoError(t, err)
	require.NoError(t, Generate(p))
	assert.Contains(t, log.String(), fmt.Sprintf(" %d written, 1 removed", len(affected)))
	for _, f := range affected {
		assert.Contains(t, log.String(), "wrote "+f)
	}
	assert.Contains(t, log.String(), "removed generated/axpby/no-such-variant.cpp")
	assert.NoFileExists(t, stale)
}

func TestUnknownNamesAreErrors(t *testing.T) {
	_, err := Load(context.Background(), Config{Root: "../..", Kernels: []string{"axpy"}, Variants: []string{"kk-omp-c"},
		SizeSet: "huge", Log: io.Discard})
	require.Error(t, err)
	lines := strings.Split(err.Error(), "\n")
	require.Len(t, lines, 3)
	vocab := vocabOf(t, "../..")
	assert.Equal(t, vocab.Expand(`PM_KERNELS: unknown kernel "axpy"; did you mean "axpby"? (known: {{kernels}})`), lines[0])
	assert.Equal(t, vocab.Expand(`PM_VARIANTS: unknown variant "kk-omp-c"; did you mean "kk-omp-a"? (known: {{variants}})`), lines[1])
	assert.Contains(t, lines[2], `unknown size set "huge"`)
}
