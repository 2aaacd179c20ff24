package pipeline

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/mapping"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/session"
	"github.com/portmatrix/portmatrix/internal/testenv"
)

// The CPU pipeline end to end with g++, at small sizes, in one copied tree,
// one generate, one build folder and one run (the programs' builds are most
// of its time; one run measures STREAM once): each part below builds its own
// cells into the build folder, and the run measures and verifies all of them
// against the float64 reference.
//
//   - A new kernel: a kernel description dropped into templates/kernels and
//     nothing else changed (scale) is generated in every backend that lowers
//     its patterns, built, run and verified; the folder reads back through the
//     report's loader and its run.json counts what the build and the run did;
//     a second build rebuilds nothing.
//   - Kernels written as sequential loop nests (docs/loopnest.md): the mapper
//     lowers them into the pattern tree, and they are generated in every
//     backend, and built, run and verified on the CPU in the two that lower a
//     team to threads there (the Kokkos layer's form b and direct OpenMP).
//     row_recurrence carries a dependence along j: its mapping must keep j
//     sequential (the rows go to league, team and vector) and the result must
//     verify; col_recurrence's outer loop carries it and moves inside the
//     lanes; gemv_acc's inner loop reduces on the vector level; colsum_reg
//     keeps its sum in a register.
//   - The team- and league-level reductions: atx_team (a team per column, its
//     threads' sums combined by team_thread_reduce) and sumsq_team (the same
//     per row, then league_add into the kernel's result) under serial,
//     omp-host and, through the OpenMP target host fallback with real team
//     threads, kk-omp-b and omp-raw, both sizes verified.
//   - The team extensions (team scratch, a team barrier, a two-dimensional
//     team-thread range, thread-vector loops and an atomic sum in
//     stencil_tiled; a two-dimensional range and atomics in stencil_md):
//     generated in every backend that lowers them, built, run and verified;
//     the backends that cannot lower them are off with the reason.
//   - The mapcheck strategy (docs/loopnest.md, "Checked in every order") runs
//     every loop the mapper calls parallel in reverse and in a seeded shuffle
//     on one thread. Every kernel written as loops (the project's and the loop
//     nests above, with row_shift: two sequential row sweeps fused with a
//     shift, their columns too) must verify in both orders; a planted wrong
//     schedule, row_recurrence_misdeclared (its declared read hides the
//     dependence j carries, so the mapper splits j over team threads and
//     vector lanes), must fail in both, though serial, which runs the same
//     loops in order, verifies it; so must a planted wrong fusion (every
//     order) and a planted wrong shift, shift_chain_misdeclared (a fusion
//     shifted one iteration too far, whose fused loop carries the dependence
//     the mapper thought it aligned). One program a kernel checks both orders:
//     mapcheck-both reverses the first call and shuffles the next, by turns,
//     and the harness verifies each of its three runs (first run reversed,
//     warm-up shuffled, timed rep reversed), so a cell that verifies in 3 of 3
//     runs verified both orders and one that fails in 3 of 3 failed both.
//
// The planted kernels' three mapcheck cells are the run's only failures.
func TestCPUPipelineWithNewKernelsTeamsAndMapcheck(t *testing.T) {
	t.Parallel()
	testenv.Long(t) // builds and runs about 60 programs with g++
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
	for _, f := range []string{"scale.yaml", "loops/row_recurrence.yaml", "loops/col_recurrence.yaml", "loops/gemv_acc.yaml",
		"loops/colsum_reg.yaml", "loops/row_shift.yaml", "mapcheck/" + planted + ".yaml", "mapcheck/" + fusedWrong + ".yaml",
		"mapcheck/" + shiftWrong + ".yaml"} {
		src, err := os.ReadFile(filepath.Join("testdata", f))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(root, "templates", "kernels", filepath.Base(f)), src, 0o644))
	}
	loopNests := []string{"row_recurrence", "col_recurrence", "gemv_acc", "colsum_reg"}
	loopVariants := []string{"kk-omp-b", "omp-raw"}
	reductions := []string{"atx_team", "sumsq_team"}
	reductionVariants := []string{"serial", "omp-host", "kk-omp-b", "omp-raw"}
	teams := []string{"stencil_tiled", "stencil_md"}
	teamVariants := []string{"serial", "omp-host", "kk-omp-a", "kk-omp-b", "omp-raw", "omp-lambda", "omp-class"}
	all, err := mapping.LoadKernels(root)
	require.NoError(t, err)
	var mapped []string // every kernel written as loops, the planted ones included
	for _, k := range all {
		if k.Loops != nil {
			mapped = append(mapped, k.Name)
		}
	}
	require.Contains(t, mapped, "atx_mapped")
	require.Contains(t, mapped, planted)
	for _, k := range append([]string{"jacobi2d_mapped", "stencil_chain_mapped", "laplace_nests_mapped", "shift_chain_mapped"}, loopNests...) {
		require.Contains(t, mapped, k, "the kernels of several nests are checked too")
	}
	checks := []string{"mapcheck-both"}

	// Each part's selection, built into the one build folder (build.Update
	// keeps the cells of the builds before).
	base := Config{Root: root, Toolchains: []string{"gcc-host"}, FlushL2: "off"}
	type part struct {
		name              string
		kernels, variants []string
	}
	parts := []part{
		{"new kernel", []string{"scale"}, nil}, // every variant
		{"loop nests", loopNests, loopVariants},
		{"team reductions", reductions, reductionVariants},
		{"team extensions", teams, teamVariants},
		{"mapcheck", mapped, checks},
		// The planted schedule and the planted shift in order (serial): lucky
		// schedules, which verify.
		{"planted in order", []string{planted, shiftWrong}, []string{"serial"}},
	}
	built := map[string][]build.Result{}
	var everyBuild []build.Result
	var newKernel *Project
	for i, pt := range parts {
		var log bytes.Buffer
		cfg := base
		cfg.Kernels, cfg.Variants, cfg.Log = pt.kernels, pt.variants, &log
		p, err := Load(context.Background(), cfg)
		require.NoError(t, err, pt.name)
		switch pt.name {
		case "new kernel":
			newKernel = p
		case "mapcheck":
			assertMappings(t, p, planted, fusedWrong, shiftWrong)
		}
		if i == 0 {
			require.NoError(t, Generate(p)) // every program of the tree, once
			assertGenerated(t, root, planted, loopNests, teams)
		}
		res, err := Build(context.Background(), p)
		require.NoError(t, err, "%s: %s", pt.name, log.String())
		if pt.name != "new kernel" { // scale's omp-lambda cell is a known g++ failure
			assert.NotContains(t, log.String(), "FAILED", "%s: %s", pt.name, log.String())
		}
		built[pt.name] = res
		everyBuild = append(everyBuild, res...)
	}
	off := map[string]string{}
	for _, r := range built["team extensions"] {
		if r.Status == build.Skipped {
			off[r.Cell.ID] = r.Reason
		}
	}
	assert.Equal(t, "backend omp-lambda does not lower team_barrier, team_scratch, team_thread_for, thread_vector_for, thread_vector_reduce", off["stencil_tiled.omp-lambda.gcc-host"])
	assert.Equal(t, "backend omp-class does not lower mdrange_for", off["stencil_md.omp-class.gcc-host"])

	// One run of every cell built above: the planted kernels' mapcheck cells
	// each fail, every run of them (the order is the same in each), and
	// nothing else does.
	sizes := Sizes{"scale": {6}}
	for _, k := range append(append([]string{}, loopNests...), reductions...) {
		sizes[k] = []int64{37, 333}
	}
	for _, k := range teams {
		sizes[k] = []int64{37}
	}
	var kernels []string
	for _, pt := range parts {
		kernels = append(kernels, pt.kernels...)
	}
	var log bytes.Buffer
	cfg := base
	cfg.Kernels, cfg.Sizes, cfg.Reps, cfg.Warmup, cfg.Threads = kernels, sizes, 1, 1, 2
	// STREAM's runs stop after 3 x rep-seconds (and 5 runs): it is checked,
	// not measured, here; every call is far shorter, so no warm-up is dropped.
	cfg.RepSeconds, cfg.RepSecondsSet = testRepSeconds, true
	cfg.Out, cfg.Log = filepath.Join(root, "results", "test"), &log
	dir, err := session.Run(context.Background(), cfg)
	require.Error(t, err, log.String())
	var fails diag.Failures
	require.ErrorAs(t, err, &fails, "a measurement not verified fails the run, after it is written")
	assert.Contains(t, err.Error(), "3 failures:")
	for _, v := range checks {
		assert.Regexp(t, `run: `+planted+`\.`+v+`\.gcc-host size 31 trial 1: verification failed in 3 of 3 runs; first: run 1 of 3 \(first run\): y: error`, err.Error())
		assert.Regexp(t, `run: `+fusedWrong+`\.`+v+`\.gcc-host size 31 trial 1: verification failed in 3 of 3 runs; first: run 1 of 3 \(first run\): [cd]: error`, err.Error())
		assert.Regexp(t, `run: `+shiftWrong+`\.`+v+`\.gcc-host size 31 trial 1: verification failed in 3 of 3 runs; first: run 1 of 3 \(first run\): c( holds \d+ NaN/Inf values|: error)`, err.Error())
	}
	recs, err := results.ReadJSONL(dir)
	require.NoError(t, err)
	verified := map[string]bool{} // every measurement of the cell verified
	sizesVerified := map[string]int{}
	for _, r := range recs {
		// Every record, STREAM ones too, ran with PM_THREADS's threads, bound.
		assert.Equal(t, []any{2, "close", "cores"}, []any{r.Threads, r.Bind, r.Places}, "%s %s%s", r.Cell, r.Kind, r.Op)
		if r.Kind != results.KindKernel {
			continue
		}
		if _, seen := verified[r.Cell]; !seen {
			verified[r.Cell] = true
		}
		verified[r.Cell] = verified[r.Cell] && r.Verified
		if r.Verified {
			sizesVerified[r.Cell]++
		}
		if k := strings.Split(r.Cell, ".")[0]; !(wrong(k) && strings.Contains(r.Cell, ".mapcheck-")) {
			assert.True(t, r.Verified, "%s size %v: %s", r.Cell, r.Size, r.Error)
		}
		assert.Equal(t, "test", r.RunID)
		assert.NotEmpty(t, r.BuildKey, r.Cell)
		assert.NotEmpty(t, r.ToolchainVersion, r.Cell)
	}
	// Every cell that built has a measurement, verified unless it is a
	// planted kernel's mapcheck cell.
	for _, r := range everyBuild {
		if r.OK() {
			plantedCheck := wrong(r.Cell.Kernel.Name) && strings.HasPrefix(r.Cell.Variant.ID, "mapcheck-")
			require.Contains(t, verified, r.Cell.ID, "built cell %s has no measurement", r.Cell.ID)
			assert.Equal(t, !plantedCheck, verified[r.Cell.ID], r.Cell.ID)
		}
	}
	assert.True(t, verified["scale.kk-omp-b.gcc-host"])
	assert.True(t, verified["scale.omp-raw.gcc-host"])
	for _, k := range loopNests {
		for _, v := range loopVariants {
			assert.True(t, verified[k+"."+v+".gcc-host"], "%s.%s.gcc-host not verified", k, v)
		}
	}
	for _, k := range reductions {
		for _, v := range reductionVariants {
			assert.Equal(t, 2, sizesVerified[k+"."+v+".gcc-host"], "%s.%s.gcc-host: both sizes verified", k, v)
		}
	}
	for _, k := range teams {
		for _, v := range []string{"serial", "omp-host", "kk-omp-a", "kk-omp-b", "omp-raw"} {
			assert.True(t, verified[k+"."+v+".gcc-host"], "%s.%s.gcc-host not verified", k, v)
		}
	}
	for _, k := range mapped {
		for _, v := range checks {
			cell := k + "." + v + ".gcc-host"
			require.Contains(t, verified, cell, "%s measured", cell)
			assert.Equal(t, !wrong(k), verified[cell], cell)
		}
	}
	for _, k := range []string{planted, shiftWrong} {
		assert.True(t, verified[k+".serial.gcc-host"], "%s.serial.gcc-host: in order, the schedule verifies", k)
	}
	for _, f := range []string{"run.json", "results.csv", "build.csv"} {
		assert.FileExists(t, filepath.Join(dir, f))
	}
	csv, _ := os.ReadFile(filepath.Join(dir, "results.csv"))
	assert.Contains(t, string(csv), "scale.serial.gcc-host,scale,serial,serial,gcc-host,6,")

	// The folder reads back through the loader the report uses, and its
	// run.json counts what the builds and the run did.
	folder, err := results.Load(dir)
	require.NoError(t, err)
	ok := 0
	for _, r := range everyBuild {
		if r.OK() {
			ok++
		}
	}
	assert.Equal(t, &results.HostThreads{Threads: 2, Bind: "close", Places: "cores", From: "PM_THREADS"}, folder.Run.HostThreads)
	c := folder.Run.Cells
	assert.Equal(t, len(everyBuild), c.Total)
	assert.Equal(t, ok, c.Built+c.Cached)
	assert.Equal(t, len(everyBuild), c.Built+c.Cached+c.Failed+c.Skipped)
	assert.Equal(t, len(verified), c.Ran)
	require.NotNil(t, folder.Run.Vocabulary)
	assert.Contains(t, folder.Run.Vocabulary.KernelNames(), "scale")
	assert.Equal(t, "vector length n", folder.Run.Vocabulary.SizeLabel("scale"))
	kernelRecs := 0
	for _, r := range recs {
		if r.Kind == results.KindKernel {
			kernelRecs++
		}
	}
	assert.Len(t, folder.Kernel, kernelRecs, "every kernel record loads (copy and stream records apart)")
	require.NoError(t, Report(cfg, dir), log.String())
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	require.NoError(t, err)
	assert.Contains(t, string(page), fmt.Sprintf("%d total, %d built (", c.Total, c.Built+c.Cached))

	// A second build rebuilds nothing.
	log.Reset()
	newKernel.Cfg.Log = &log
	res, err := Build(context.Background(), newKernel)
	require.NoError(t, err)
	for _, r := range res {
		assert.NotEqual(t, "built", r.Status, r.Cell.ID)
	}
	assert.Contains(t, log.String(), " 0 built,")
}

// assertMappings checks what the mapper made of the loop kernels: the loop
// nests' mappings and the planted schedule, fusion and shift.
func assertMappings(t *testing.T, p *Project, planted, fusedWrong, shiftWrong string) {
	t.Helper()
	rec := p.ByName["row_recurrence"]
	require.NotNil(t, rec.Pattern)
	assert.Contains(t, rec.Mapping, "loop j (")
	assert.Contains(t, rec.Mapping, "loop j -> sequential: sequential: carries flow")
	assert.Contains(t, rec.Mapping, "loop i -> league+team+vector")
	col := p.ByName["col_recurrence"]
	assert.Contains(t, col.Mapping, "loop j -> sequential: sequential: carries flow")
	assert.Contains(t, col.Mapping, "loop j: sequential, moved inside the mapped loops")
	assert.Contains(t, col.Mapping, "loop i -> league+team+vector")
	gemv := p.ByName["gemv_acc"]
	assert.Contains(t, gemv.Mapping, "loop j -> vector")
	assert.Contains(t, gemv.Mapping, "loop i -> league+team")
	assert.Contains(t, gemv.Kinds(), "thread_vector_reduce")
	colsum := p.ByName["colsum_reg"]
	assert.Contains(t, colsum.Mapping, "keep sum's accumulation into y[i] (")
	assert.Contains(t, colsum.Mapping, ") in register pm_acc_0 across loop j: ")

	assert.Contains(t, p.ByName[planted].Mapping, "loop j -> team+vector", "the planted schedule: j called parallel")
	assert.Contains(t, p.ByName[fusedWrong].Mapping, "one launch: nest i#1", "the planted fusion: the three loops one launch")
	assert.Contains(t, p.ByName[shiftWrong].Mapping, "one launch: fusing with a shift of 2", "the planted shift: off by one")
	assert.Contains(t, p.ByName["shift_chain_mapped"].Mapping, "one launch: nest i#1", "the shifted fusion: the three loops one launch")
	assert.Contains(t, p.ByName["row_shift"].Mapping, "the bands fused 2 loops deep", "the sequential rows fused with a shift, their columns too")
}

// assertGenerated checks the programs generate wrote for the test's kernels.
func assertGenerated(t *testing.T, root, planted string, loopNests, teams []string) {
	t.Helper()
	read := func(kernel, file string) string {
		b, err := os.ReadFile(filepath.Join(root, "generated", kernel, file))
		require.NoError(t, err)
		return string(b)
	}
	ext := func(v string) string {
		if strings.HasPrefix(v, "kk-cuda") {
			return ".cu"
		}
		return ".cpp"
	}
	// The new kernel in every backend that lowers its patterns.
	for _, v := range []string{"serial", "omp-host", "kk-omp-a", "kk-omp-b-wo-num-teams", "omp-raw", "omp-lambda", "omp-class", "kk-cuda-3lvl"} {
		assert.FileExists(t, filepath.Join(root, "generated", "scale", v+ext(v)))
	}
	// The loop nests in every backend, j sequential where it carries a
	// dependence, the register kept as a local.
	assert.Contains(t, read("row_recurrence", "serial.cpp"), "for (int64_t j = 1; j < m; ++j) {", "j stays a sequential loop")
	colsum := read("colsum_reg", "serial.cpp")
	assert.Contains(t, colsum, "double pm_acc_0 = 0;")
	assert.Contains(t, colsum, "pm_acc_0 += A[j * n + i] * x[j];")
	assert.Contains(t, colsum, "y[i] = pm_acc_0;")
	for _, k := range loopNests {
		assert.FileExists(t, filepath.Join(root, "generated", k, "kk-cuda-3lvl.cu"))
		assert.FileExists(t, filepath.Join(root, "generated", k, "direct-ompx.cpp"))
	}
	// The reductions' shares meet in the team's slot, then the league's.
	raw := read("sumsq_team", "omp-raw.cpp")
	assert.Contains(t, raw, "pm_team_sum[0] += s;", "the threads' shares meet in the team's slot")
	assert.Contains(t, raw, "pm_league_sum[0] += s;", "each team adds to the league's sum")
	// The team extensions in the GPU backends too.
	for _, k := range teams {
		for _, v := range []string{"direct-ompx", "kk-ompx-shfl", "kk-cuda-3lvl"} {
			assert.FileExists(t, filepath.Join(root, "generated", k, v+ext(v)))
		}
	}
	// The planted schedule's lanes run in the check's order.
	src := read(planted, "mapcheck-both.cpp")
	assert.Contains(t, src, "for (const int64_t j_v : pm::mapcheck::order(", "the vector lanes of j run in the check's order")
	assert.Contains(t, src, "pm::mapcheck::begin_call();", "a call starts the next order")
}
