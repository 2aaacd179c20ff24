package claims

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"gopkg.in/yaml.v3"

	"github.com/portmatrix/portmatrix/internal/layout"
	"github.com/portmatrix/portmatrix/internal/report/dataset"
	"github.com/portmatrix/portmatrix/internal/report/internal/reporttest"
	"github.com/portmatrix/portmatrix/internal/report/reportspec"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/tune"
)

// checkLikeForLike fails on a ratio whose two sides differ in what the
// claim keeps equal: the toolchain (keep toolchain; keep family for two
// series of one compiler family), the library (keep library: the project's
// layer against a library), the size, and the premises of each side.
func checkLikeForLike(t *testing.T, where string, ds *dataset.Set, r Result) {
	t.Helper()
	c := r.Claim
	for _, x := range r.Ratios {
		nv, ntc, _ := strings.Cut(x.Numerator, "@")
		dv, dtc, _ := strings.Cut(x.Denominator, "@")
		what := where + ": " + c.ID + ": " + x.Numerator + " / " + x.Denominator
		if c.SameToolchain {
			assert.Equal(t, ntc, dtc, "%s: the claim keeps the toolchain", what)
		}
		if c.WithinFamily && ds.Family(ntc) == ds.Family(dtc) {
			assert.Equal(t, ntc, dtc, "%s: one compiler family, so one toolchain", what)
		}
		assert.Equal(t, x.Size, x.DenSize, "%s: one size", what)
		if c.SameLibrary && c.RanOn[nv] != "" && c.RanOn[dv] != "" {
			assert.Equal(t, c.RanOn[nv], c.RanOn[dv], "%s: the claim keeps the library", what)
		}
		nk, dk := x.Kernel, x.Kernel
		if a, b, ok := strings.Cut(x.Kernel, "/"); ok {
			nk, dk = a, b
		}
		for _, side := range []struct {
			sel reportspec.Selector
			key dataset.Key
			cfg map[string]int64
		}{{c.Numerator, dataset.Key{Kernel: nk, Variant: nv, Toolchain: ntc}, x.NumConfig},
			{c.Denominator, dataset.Key{Kernel: dk, Variant: dv, Toolchain: dtc}, x.DenConfig}} {
			if side.cfg != nil && Selects(c, ds, side.sel, side.key) {
				assert.True(t, side.sel.Holds(side.cfg), "%s: %v drops the premises %s", what, side.cfg, side.sel.PremiseText())
			}
		}
	}
}

// Every claim of claims.yaml, evaluated on every committed folder of
// results/index.yaml (as published, tuned, and a folder's tuning alone),
// pairs only what its statement keeps equal.
func TestCommittedFoldersPairLikeForLike(t *testing.T) {
	root := reporttest.Root(t)
	specs, err := reportspec.LoadClaims(filepath.Join(reporttest.SpecDir(t), "claims.yaml"), reporttest.Vocab(t))
	require.NoError(t, err)
	data, err := os.ReadFile(filepath.Join(root, layout.Results, "index.yaml"))
	require.NoError(t, err)
	var ix struct{ Current []struct{ Folder string } }
	require.NoError(t, yaml.Unmarshal(data, &ix))
	require.NotEmpty(t, ix.Current)
	seen := map[string]bool{}
	ratios := 0
	for _, e := range ix.Current {
		if seen[e.Folder] {
			continue
		}
		seen[e.Folder] = true
		dir := filepath.Join(root, layout.Results, e.Folder)
		if tune.Has(dir) {
			judged, err := EvaluateTuning(dir, specs)
			require.NoError(t, err)
			run, err := results.ReadRun(dir)
			require.NoError(t, err)
			ds := dataset.Empty(run.Toolchains)
			for _, r := range judged {
				checkLikeForLike(t, e.Folder+" (tuning)", ds, r)
				ratios += len(r.Ratios)
			}
		}
		if _, err := os.Stat(filepath.Join(dir, results.JSONLFile)); err != nil {
			continue
		}
		res, err := results.Load(dir)
		require.NoError(t, err)
		published, _ := dataset.SplitViews(res.Kernel)
		ds := dataset.New(dataset.View(res, published))
		judged := Evaluate(specs, ds)
		EvaluateTunedFolder(specs, judged, res)
		EvaluateLibraries(specs, judged, ds, results.Union(res.Run.Vocabulary, reporttest.Vocab(t)))
		for _, r := range judged {
			checkLikeForLike(t, e.Folder, ds, r)
			ratios += len(r.Ratios)
			if r.Tuned != nil {
				checkLikeForLike(t, e.Folder+" (tuned)", ds, *r.Tuned)
			}
			if r.Library != nil {
				checkLikeForLike(t, e.Folder+" (on the libraries)", ds, *r.Library)
			}
		}
	}
	assert.Greater(t, ratios, 100, "the committed folders decide claims")
}

// A statement that says the compiler is kept ("same toolchain", "same
// compiler", "same LLVM") asks same_toolchain or within-family of its claim.
func TestStatementsThatKeepTheCompilerPairWithinIt(t *testing.T) {
	specs, err := reportspec.LoadClaims(filepath.Join(reporttest.SpecDir(t), "claims.yaml"), reporttest.Vocab(t))
	require.NoError(t, err)
	keeps := regexp.MustCompile(`(?i)same (\w+ )?(toolchain|compiler)|same (llvm|nvhpc|rocm|host)`)
	for _, c := range specs {
		if keeps.MatchString(strings.Join(strings.Fields(c.Statement), " ")) {
			assert.True(t, c.SameToolchain || c.WithinFamily, "%s: the statement keeps the compiler, the claim pairs across compilers", c.ID)
		}
	}
}

// Every shipped claim says what it keeps equal (keep:), so that a reader
// of claims.yaml sees the pairing beside the sentence, not a default.
func TestShippedClaimsStateWhatTheyKeep(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(reporttest.SpecDir(t), "claims.yaml"))
	require.NoError(t, err)
	var doc struct{ Claims []map[string]any }
	require.NoError(t, yaml.Unmarshal(data, &doc))
	require.NotEmpty(t, doc.Claims)
	for _, c := range doc.Claims {
		assert.Contains(t, c, "keep", "%v: say what the claim keeps equal, keep: [toolchain, library, size] or [family, library, size] (docs/report.md)", c["id"])
	}
}

// A synthetic tuning: yi's kk-omp-b fastest at vector 32, slower at the
// premise's vector 1; kk-ompx at 32; KK-CUDA measured only at vector 8.
func writeTuning(t *testing.T) string {
	dir := t.TempDir()
	reporttest.WriteFile(t, filepath.Join(dir, "run.json"), `{"id": "tune", "toolchains": [
  {"id": "clang19-sm90", "family": "llvm", "target": "sm_90"},
  {"id": "clang22-sm90", "family": "llvm", "target": "sm_90"},
  {"id": "nvcc-sm90", "family": "nvcc", "target": "sm_90"}]}`)
	line := func(cell, cfg string, s float64, def bool) string {
		d := ""
		if def {
			d = `, "default": true`
		}
		return `{"cell": "` + cell + `", "size": 10, "config": "` + cfg + `", "build_key": "b", "device": "GPU-0", "median_s": ` +
			strings.TrimRight(strings.TrimRight(strconv.FormatFloat(s, 'f', 6, 64), "0"), ".") +
			`, "lo_s": ` + strconv.FormatFloat(s*0.99, 'f', 7, 64) + `, "hi_s": ` + strconv.FormatFloat(s*1.01, 'f', 7, 64) +
			`, "gbps": ` + strconv.FormatFloat(1/s, 'f', 3, 64) + `, "verified": true, "clock": "host"` + d + "}\n"
	}
	reporttest.WriteFile(t, filepath.Join(dir, tune.CacheFile),
		line("snap_yi.kk-omp-b.clang19-sm90", "snap_vector=1", 0.010, true)+
			line("snap_yi.kk-omp-b.clang19-sm90", "snap_vector=32", 0.004, false)+
			line("snap_yi.kk-ompx.clang19-sm90", "snap_vector=32", 0.008, true)+
			line("snap_yi.kk-ompx.clang19-sm90", "snap_vector=8", 0.007, false)+
			line("snap_yi.kk-ompx.clang22-sm90", "snap_vector=32", 0.006, true)+
			line("snap_yi.kk-cuda-3lvl.nvcc-sm90", "snap_vector=8", 0.003, false))
	return dir
}

const likeClaims = `claims:
  - id: yi
    paper: "000"
    quote: Q
    statement: S
    kernels: [snap_yi]
    numerator: {variants: [kk-ompx], families: [llvm], premises: {snap_vector: 32}}
    denominator: {variants: [kk-omp-b], families: [llvm], premises: {snap_vector: 1}}
    same_toolchain: true
    range: [1.1, 1.45]
  - id: yi-free
    paper: "000"
    quote: Q
    statement: S
    kernels: [snap_yi]
    numerator: {variants: [kk-ompx], families: [llvm]}
    denominator: {variants: [kk-omp-b], families: [llvm]}
    same_toolchain: true
    range: [1.1, 1.45]
  - id: best
    paper: "000"
    quote: Q
    statement: S
    type: order
    kernels: [snap_yi]
    numerator: {variants: [kk-ompx], families: [llvm]}
    denominator: {variants: [kk-omp-b, kk-cuda-3lvl], families: [llvm, nvcc]}
    same_toolchain: within-family
    aggregate: all
  - id: unheld
    paper: "000"
    quote: Q
    statement: S
    kernels: [snap_yi]
    numerator: {variants: [kk-ompx], families: [llvm]}
    denominator: {variants: [kk-cuda-3lvl], families: [nvcc], premises: {snap_vector: 32}}
    range: [0, 10]
`

func TestTuningHoldsPremisesAndPairsWithinFamily(t *testing.T) {
	specs, err := reportspec.ParseClaims("like.yaml", []byte(likeClaims), reporttest.Vocab(t))
	require.NoError(t, err)
	dir := writeTuning(t)
	got, err := EvaluateTuning(dir, specs)
	require.NoError(t, err)
	run, err := results.ReadRun(dir)
	require.NoError(t, err)
	for _, r := range got {
		checkLikeForLike(t, "tuning", dataset.Empty(run.Toolchains), r)
	}

	yi := got[0]
	require.Len(t, yi.Ratios, 1, "clang22 has no kk-omp-b: one pair, of one toolchain")
	x := yi.Ratios[0]
	assert.Equal(t, map[string]int64{"snap_vector": 1}, x.DenConfig, "kk-omp-b at its premise, not at its faster vector 32")
	assert.Equal(t, map[string]int64{"snap_vector": 32}, x.NumConfig, "kk-ompx at 32, not at its faster vector 8")
	assert.InDelta(t, 0.010/0.008, x.Value, 1e-5)
	assert.Equal(t, Reproduced, yi.Outcome)

	free := got[1] // without premises each side is the tuner's best: 4 ms against 7 ms
	assert.InDelta(t, 0.004/0.007, free.Ratios[0].Value, 1e-5)
	assert.Equal(t, NotReproduced, free.Outcome)

	best := got[2]
	var pairs []string
	for _, r := range SortedRatios(best.Ratios) {
		pairs = append(pairs, r.Numerator+" / "+r.Denominator)
	}
	assert.Equal(t, []string{
		"kk-ompx@clang19-sm90 / kk-cuda-3lvl@nvcc-sm90",
		"kk-ompx@clang19-sm90 / kk-omp-b@clang19-sm90",
		"kk-ompx@clang22-sm90 / kk-cuda-3lvl@nvcc-sm90",
	}, pairs, "LLVM against LLVM of one toolchain only; each LLVM toolchain against nvcc")

	unheld := got[3]
	assert.Equal(t, NotMeasurable, unheld.Outcome)
	assert.True(t, unheld.Premise)
	assert.Equal(t, "not measurable (no tuned configuration of kk-cuda-3lvl on nvcc holds snap_vector=32)", unheld.Verdict())
}

// A folder's tuned records: a claim with premises takes the fastest
// configuration that holds them (or the as-published one), not the fastest.
func TestFolderTunedViewHoldsPremises(t *testing.T) {
	rec := func(variant string, s float64, cfg map[string]int64) results.Record {
		return results.Record{Kind: "kernel", Cell: "snap_yi." + variant + ".clang19-sm90", Kernel: "snap_yi", Variant: variant,
			Toolchain: "clang19-sm90", Size: 10, MedianS: s, Bytes: 1e6, GBps: 1e6 / s / 1e9, Verified: true, Config: cfg,
			TimesS: []float64{s * 0.99, s, s * 1.01}}
	}
	res := &results.Folder{Run: results.Run{ID: "r", Toolchains: []results.Toolchain{{ID: "clang19-sm90", Family: "llvm", Target: "sm_90"}}},
		Kernel: []results.Record{
			rec("kk-omp-b", 0.010, nil), // as published: vector 1
			rec("kk-omp-b", 0.004, map[string]int64{"snap_vector": 32}),
			rec("kk-omp-b", 0.009, map[string]int64{"snap_vector": 1}),
			rec("kk-ompx", 0.008, nil),
			rec("kk-ompx", 0.007, map[string]int64{"snap_vector": 32}),
		}}
	specs, err := reportspec.ParseClaims("like.yaml", []byte(likeClaims), reporttest.Vocab(t))
	require.NoError(t, err)
	published, _ := dataset.SplitViews(res.Kernel)
	ds := dataset.New(dataset.View(res, published))
	judged := Evaluate(specs[:2], ds)
	EvaluateTunedFolder(specs[:2], judged, res)
	for _, r := range judged {
		require.NotNil(t, r.Tuned)
		checkLikeForLike(t, "folder", ds, *r.Tuned)
	}
	held := judged[0].Tuned.Ratios[0]
	assert.InDelta(t, 0.009/0.007, held.Value, 1e-2, "kk-omp-b's best at vector 1 (9 ms), not at 32 (4 ms)")
	assert.Equal(t, map[string]int64{"snap_vector": 1}, held.DenConfig)
	assert.InDelta(t, 0.004/0.007, judged[1].Tuned.Ratios[0].Value, 1e-2, "without premises, best against best")
}

// Without keep a claim keeps the family's toolchain and the library: two
// LLVM toolchains are never paired, and on the libraries a layer variant
// without a twin (kk-ompx) is not paired with the library that stands for
// the other side (kokkos-omptarget for kk-omp-b).
func TestDefaultKeepPairsLikeForLike(t *testing.T) {
	tcs := []results.Toolchain{{ID: "clang19-sm90", Family: "llvm", Target: "sm_90"}, {ID: "clang22-sm90", Family: "llvm", Target: "sm_90"}}
	var recs []results.Record
	for _, tc := range []string{"clang19-sm90", "clang22-sm90"} {
		for v, s := range map[string]float64{"kk-ompx": 0.007, "kk-omp-b": 0.010, "kokkos-omptarget": 0.009} {
			recs = append(recs, results.Record{Kind: "kernel", Cell: "spmv." + v + "." + tc, Kernel: "spmv", Variant: v, Toolchain: tc, Size: 10,
				MedianS: s, Bytes: 1e6, GBps: 1e6 / s / 1e9, Verified: true, TimesS: []float64{s * 0.99, s, s * 1.01}})
		}
	}
	res := &results.Folder{Run: results.Run{ID: "r", Toolchains: tcs}, Kernel: recs}
	specs, err := reportspec.ParseClaims("keep.yaml", []byte(`claims:
  - id: ompx-omp
    paper: "000"
    quote: Q
    statement: S
    kernels: [spmv]
    numerator: {variants: [kk-ompx], families: [llvm]}
    denominator: {variants: [kk-omp-b], families: [llvm]}
    aggregate: all
    range: [1.1, 1.6]
  - id: across
    paper: "000"
    quote: Q
    statement: S
    kernels: [spmv]
    numerator: {variants: [kk-ompx], toolchains: [clang22-sm90]}
    denominator: {variants: [kk-ompx], toolchains: [clang19-sm90]}
    range: [0.9, 1.1]
`), reporttest.Vocab(t))
	require.NoError(t, err)
	ds := dataset.New(res)
	judged := Evaluate(specs, ds)
	EvaluateLibraries(specs, judged, ds, reporttest.Vocab(t))
	for _, r := range judged {
		checkLikeForLike(t, "keep", ds, r)
	}
	var pairs []string
	for _, x := range SortedRatios(judged[0].Ratios) {
		pairs = append(pairs, x.Numerator+" / "+x.Denominator)
	}
	assert.Equal(t, []string{"kk-ompx@clang19-sm90 / kk-omp-b@clang19-sm90", "kk-ompx@clang22-sm90 / kk-omp-b@clang22-sm90"}, pairs)
	lib := judged[0].Library
	require.NotNil(t, lib)
	assert.Equal(t, NotMeasurable, lib.Outcome)
	assert.Equal(t, []string{"kk-ompx / kokkos-omptarget: pm layer against Kokkos 4.6.01"}, lib.Mixed)
	assert.Equal(t, "not measurable (numerator and denominator run on different implementations of the layer, which the claim keeps: kk-ompx / kokkos-omptarget: pm layer against Kokkos 4.6.01)", judged[0].LibraryVerdict())
	assert.Equal(t, "not measurable (numerator and denominator of one compiler family have no toolchain in common (the claim keeps the family's toolchain))", judged[1].Verdict(),
		"one variant on two LLVM toolchains: the claim must say keep: [library, size] to pair them")
}
