package pipeline

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/mapping"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/session"
	"github.com/portmatrix/portmatrix/internal/testenv"
)

// The mapcheck strategy (docs/loopnest.md, "Checked in every order") runs
// every loop the mapper calls parallel in reverse and in a seeded shuffle on
// one thread. Every kernel of the project written as loops, with the loop
// tests' row_recurrence (j carries a dependence and stays sequential),
// gemv_acc (a thread_vector_reduce and its atomic update) and row_shift
// (two sequential row sweeps fused with a shift, their columns too), must verify in
// both orders at the ci sizes; a planted wrong schedule,
// row_recurrence_misdeclared (its declared read hides the dependence j
// carries, so the mapper splits j over team threads and vector lanes), must
// fail in both, though serial, which runs the same loops in order, verifies
// it; so must a planted wrong fusion (every order) and a planted wrong
// shift, shift_chain_misdeclared (a fusion shifted one iteration too far,
// whose fused loop carries the dependence the mapper thought it aligned). One program a kernel checks both orders: mapcheck-both reverses the
// first call and shuffles the next, by turns, and the harness verifies each
// of its three runs (first run reversed, warm-up shuffled, timed rep
// reversed), so a cell that verifies in 3 of 3 runs verified both orders and
// one that fails in 3 of 3 failed both.
func TestMapcheckCatchesAWrongSchedule(t *testing.T) {
	t.Parallel()
	testenv.Long(t) // builds and runs every loop-nest kernel twice with g++
	if _, err := exec.LookPath("g++"); err != nil {
		t.Skip("g++ not found")
	}
	root := t.TempDir()
	copyInputs(t, root)
	const planted = "row_recurrence_misdeclared"
	// A planted wrong fusion: every order fails it, serial's too.
	const fusedWrong = "stencil_chain_misdeclared"
	// A planted wrong shift: in order it verifies, reversed or shuffled not.
	const shiftWrong = "shift_chain_misdeclared"
	wrong := func(k string) bool { return k == planted || k == fusedWrong || k == shiftWrong }
	for _, f := range []string{"loops/row_recurrence.yaml", "loops/gemv_acc.yaml", "loops/row_shift.yaml", "mapcheck/" + planted + ".yaml", "mapcheck/" + fusedWrong + ".yaml", "mapcheck/" + shiftWrong + ".yaml"} {
		src, err := os.ReadFile(filepath.Join("testdata", f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(root, "templates", "kernels", filepath.Base(f)), src, 0o644))
	}
	all, err := mapping.LoadKernels(root)
	require.NoError(t, err)
	var kernels []string // every kernel written as loops, the planted one included
	for _, k := range all {
		if k.Loops != nil {
			kernels = append(kernels, k.Name)
		}
	}
	require.Contains(t, kernels, "atx_mapped")
	require.Contains(t, kernels, planted)
	for _, k := range []string{"jacobi2d_mapped", "stencil_chain_mapped", "laplace_nests_mapped", "shift_chain_mapped"} {
		require.Contains(t, kernels, k, "the kernels of several nests are checked too")
	}

	checks := []string{"mapcheck-both"}
	var log bytes.Buffer
	cfg := Config{Root: root, Kernels: kernels, Toolchains: []string{"gcc-host"}, Variants: checks,
		Reps: 1, Warmup: 1, FlushL2: "off", Out: filepath.Join(root, "results", "mapcheck"), Log: &log}
	p, err := Load(context.Background(), cfg)
	require.NoError(t, err)
	assert.Contains(t, p.ByName[planted].Mapping, "loop j -> team+vector", "the planted schedule: j called parallel")
	assert.Contains(t, p.ByName["row_recurrence"].Mapping, "loop j -> sequential")
	assert.Contains(t, p.ByName[fusedWrong].Mapping, "one launch: nest i#1", "the planted fusion: the three loops one launch")
	assert.Contains(t, p.ByName[shiftWrong].Mapping, "one launch: fusing with a shift of 2", "the planted shift: off by one")
	assert.Contains(t, p.ByName["shift_chain_mapped"].Mapping, "one launch: nest i#1", "the shifted fusion: the three loops one launch")
	assert.Contains(t, p.ByName["row_shift"].Mapping, "the bands fused 2 loops deep", "the sequential rows fused with a shift, their columns too")

	require.NoError(t, Generate(p))
	src, err := os.ReadFile(filepath.Join(root, "generated", planted, "mapcheck-both.cpp"))
	require.NoError(t, err)
	assert.Contains(t, string(src), "for (const int64_t j_v : pm::mapcheck::order(", "the vector lanes of j run in the check's order")
	assert.Contains(t, string(src), "pm::mapcheck::begin_call();", "a call starts the next order")
	_, err = Build(context.Background(), p)
	require.NoError(t, err, log.String())
	dir, err := session.Run(context.Background(), p.Cfg)
	// The planted kernels' cells each fail, every run of them (the order is
	// the same in each), and nothing else does.
	require.Error(t, err, log.String())
	assert.Contains(t, err.Error(), "3 failures:")
	for _, v := range checks {
		assert.Regexp(t, `run: `+planted+`\.`+v+`\.gcc-host size 31 trial 1: verification failed in 3 of 3 runs; first: run 1 of 3 \(first run\): y: error`, err.Error())
		assert.Regexp(t, `run: `+fusedWrong+`\.`+v+`\.gcc-host size 31 trial 1: verification failed in 3 of 3 runs; first: run 1 of 3 \(first run\): [cd]: error`, err.Error())
		assert.Regexp(t, `run: `+shiftWrong+`\.`+v+`\.gcc-host size 31 trial 1: verification failed in 3 of 3 runs; first: run 1 of 3 \(first run\): c( holds \d+ NaN/Inf values|: error)`, err.Error())
	}
	recs, err := results.ReadJSONL(dir)
	require.NoError(t, err)
	verified := map[string]bool{}
	for _, r := range recs {
		if r.Kind == results.KindKernel {
			if _, seen := verified[r.Cell]; !seen {
				verified[r.Cell] = true
			}
			verified[r.Cell] = verified[r.Cell] && r.Verified
			if k := strings.Split(r.Cell, ".")[0]; !wrong(k) {
				assert.True(t, r.Verified, "%s size %d: %s", r.Cell, r.Size, r.Error)
			}
		}
	}
	for _, k := range kernels {
		for _, v := range checks {
			cell := k + "." + v + ".gcc-host"
			require.Contains(t, verified, cell, "%s measured", cell)
			assert.Equal(t, !wrong(k), verified[cell], cell)
		}
	}

	// The same planted schedule and the planted shift in order (serial):
	// lucky schedules, which verify.
	log.Reset()
	cfg.Kernels, cfg.Variants, cfg.Out = []string{planted, shiftWrong}, []string{"serial"}, filepath.Join(root, "results", "serial")
	p, err = Load(context.Background(), cfg)
	require.NoError(t, err)
	require.NoError(t, Generate(p))
	_, err = Build(context.Background(), p)
	require.NoError(t, err, log.String())
	dir, err = session.Run(context.Background(), p.Cfg)
	require.NoError(t, err, log.String())
	recs, err = results.ReadJSONL(dir)
	require.NoError(t, err)
	n := 0
	for _, r := range recs {
		if r.Kind == results.KindKernel {
			n++
			assert.True(t, r.Verified, "%s: %s", r.Cell, r.Error)
		}
	}
	assert.Equal(t, 2, n, "one measurement each of %s.serial and %s.serial", planted, shiftWrong)
}
