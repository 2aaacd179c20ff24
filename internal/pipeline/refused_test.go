package pipeline

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// brokenKernel is a kernel description with a typo, as a user may leave one.
const brokenKernel = "kernel: broken\ndoc: y = 2 x\nsize: {name: n, ci: [1001], default: [1001], gpu: [1001]}\n" +
	"args:\n  - {name: n, type: int64, value: size}\n  - {name: y, type: \"double[]\", extent: n, intnt: out}\n" +
	"pattern:\n  range_for: {index: i, end: n, body: \"y[i] = 2.0 * i;\"}\n" +
	"reference: \"for (int64_t i = 0; i < n; ++i) y[i] = 2.0 * i;\"\nbytes: 8.0 * n\nflops: 1.0 * n\ntolerance: 2 * eps\n"

// One broken kernel description beside the others: every stage that loads
// the project reports it, positioned, and does its work for the others;
// with PM_KERNELS naming others they succeed. generate keeps the sources it
// generated for the broken kernel before, and check still finds the other
// kernels' stale sources.
func TestBrokenKernelLeavesTheOthers(t *testing.T) {
	if os.Getenv("PM_LONG_TESTS") != "1" {
		t.Skip("long end-to-end test: PM_LONG_TESTS=1 runs it")
	}
	root := t.TempDir()
	copyInputs(t, root)
	require.NoError(t, os.WriteFile(filepath.Join(root, "templates", "kernels", "broken.yaml"), []byte(brokenKernel), 0o644))
	old := filepath.Join(root, "generated", "broken", "serial.cpp")
	require.NoError(t, os.MkdirAll(filepath.Dir(old), 0o755))
	require.NoError(t, os.WriteFile(old, []byte("// generated before the typo\n"), 0o644))
	const where = "templates/kernels/broken.yaml:6:44: unknown field \"intnt\""
	ctx := context.Background()
	var log bytes.Buffer
	others := Config{Root: root, Kernels: []string{"axpby", "atx_mapped"}, Toolchains: []string{"gcc-host"}, Log: &log}
	whole := Config{Root: root, Toolchains: []string{"gcc-host"}, Log: &log}

	// The whole project: generate writes the others and fails at the end,
	// naming the broken file's position.
	err := Stage(ctx, "generate", whole)
	require.Error(t, err)
	assert.Contains(t, err.Error(), where)
	assert.Contains(t, log.String(), "load: 1 kernel descriptions refused (broken), the other kernels go on:")
	assert.FileExists(t, filepath.Join(root, "generated", "axpby", "serial.cpp"))
	b, err := os.ReadFile(old)
	require.NoError(t, err, "generate removed the refused kernel's source")
	assert.Equal(t, "// generated before the typo\n", string(b))
	assert.Contains(t, log.String(), "kept 1 sources of refused kernels (broken) as they were")

	// A selection of other kernels: every stage succeeds.
	for _, stage := range []string{"generate", "check", "doctor", "explain"} {
		log.Reset()
		require.NoError(t, Stage(ctx, stage, others), "%s: %s", stage, log.String())
		assert.Contains(t, log.String(), where, stage)
	}
	require.NoError(t, Stage(ctx, "doctor", others))
	assert.Contains(t, log.String(), "refused kernel descriptions (no cells; the other kernels go on): broken")
	assert.FileExists(t, old)

	// check still fails on a stale source of a kernel that loads, and on
	// the broken kernel when the selection names it (or names none).
	stale := filepath.Join(root, "generated", "axpby", "serial.cpp")
	require.NoError(t, os.WriteFile(stale, []byte("// edited\n"), 0o644))
	err = Stage(ctx, "check", others)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "generated/ is stale")
	assert.Contains(t, err.Error(), "generated/axpby/serial.cpp")
	assert.NotContains(t, err.Error(), "broken")
	require.NoError(t, Stage(ctx, "generate", others))
	err = Stage(ctx, "check", whole)
	require.Error(t, err)
	assert.Contains(t, err.Error(), where)
	assert.NotContains(t, err.Error(), "stale")
	onlyBroken := whole
	onlyBroken.Kernels = []string{"broken"}
	err = Stage(ctx, "check", onlyBroken)
	require.Error(t, err)
	assert.Contains(t, err.Error(), where)

	// A composite using a refused kernel is refused with it, saying why.
	axpby := filepath.Join(root, "templates", "kernels", "axpby.yaml")
	src, err := os.ReadFile(axpby)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(axpby, []byte(strings.Replace(string(src), "intent: inout", "intent: both", 1)), 0o644))
	log.Reset()
	spmv := others
	spmv.Kernels = []string{"spmv"}
	require.NoError(t, Stage(ctx, "generate", spmv))
	assert.Contains(t, log.String(), `templates/kernels/cgsolve.yaml:4:1: kernel "cgsolve" uses kernel "axpby", whose description is refused (`)
	assert.Contains(t, log.String(), "refused (axpby, broken, cgsolve, cgsolve_fused, cgsolve_resident)")
}
