package report

import (
	"bytes"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/report/claims"
	"github.com/portmatrix/portmatrix/internal/report/internal/reporttest"
	"github.com/portmatrix/portmatrix/internal/results"
)

func generate(t *testing.T, s reporttest.RunSpec) (string, *Summary, string) {
	t.Helper()
	dir := reporttest.NewRun(t, s)
	var progress bytes.Buffer
	sum, err := Generate(dir, Options{SpecDir: specDir, Progress: &progress})
	require.NoError(t, err)
	return dir, sum, progress.String()
}

func hashFiles(t *testing.T, dir string, names ...string) map[string][32]byte {
	t.Helper()
	out := map[string][32]byte{}
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		require.NoError(t, err)
		out[n] = sha256.Sum256(data)
	}
	return out
}

func TestGenerateGPURun(t *testing.T) {
	dir := reporttest.NewRun(t, reporttest.GPURun())
	inputs := []string{results.RunFile, results.JSONLFile, results.CSVFile, results.BuildFile}
	before := hashFiles(t, dir, inputs...)
	reporttest.WriteFile(t, filepath.Join(dir, results.FiguresDir, "stale-figure.svg"), "<svg/>")

	var progress bytes.Buffer
	sum, err := Generate(dir, Options{SpecDir: specDir, Progress: &progress})
	require.NoError(t, err)

	assert.Equal(t, before, hashFiles(t, dir, inputs...), "the run's own files are never modified")
	assert.NoFileExists(t, filepath.Join(dir, results.FiguresDir, "stale-figure.svg"))
	for _, f := range sum.Figures {
		if strings.Contains(f.ID, "testsnap") || strings.Contains(f.ID, "-004-") { // the synthetic run has no TestSNAP or HOMMEXX records
			assert.NotEmpty(t, f.Note, f.ID)
			continue
		}
		assert.Empty(t, f.Note, f.ID)
		for _, file := range f.Files {
			assert.FileExists(t, filepath.Join(dir, file))
		}
	}
	assert.Contains(t, sum.Written, "claims.md")
	assert.Contains(t, sum.Written, "report.html")
	assert.Contains(t, sum.Written, "figures/fig18-spmv-ompx.png")
	assert.Equal(t, map[claims.Outcome]int{claims.Reproduced: 25, claims.NotReproduced: 2, claims.Inconclusive: 2, claims.NotMeasurable: 25}, claims.Counts(sum.Claims))

	assert.Equal(t, `report: read DIR: 409 kernel records, 6 bandwidth records
report: 2 kernel records unverified or failed: left out of figures and claims
report: figures: drew fig1-axpby, fig2-dot, fig3-spmv, cgsolve, cgsolve-time, dot-compilers, fig18-spmv-ompx, fig19-spmv-ompx-opt and 7 more into figures/; what each figure needs: ../../templates/report/figures.yaml
report: claims: judged 29: 25 reproduced, 2 not reproduced, 2 inconclusive; claims.md has them and what the others need
report: cells: 135 verified, 1 failed to build, 1 run error, 1 failed to verify (every cell, off and not run ones too: report.html)
report: wrote 33 files into DIR
`, strings.ReplaceAll(progress.String(), dir, "DIR"))

	md, err := os.ReadFile(filepath.Join(dir, results.ClaimsFile))
	require.NoError(t, err)
	reporttest.Golden(t, "claims_gpu.md", md)
	tables, err := os.ReadFile(filepath.Join(dir, results.TablesFile))
	require.NoError(t, err)
	reporttest.Golden(t, "tables_gpu.md", tables)

	svg, err := os.ReadFile(filepath.Join(dir, results.FiguresDir, "fig1-axpby.svg"))
	require.NoError(t, err)
	for _, s := range []string{"KK-CUDA", "OMP-lambda", "OMP-class", "measured: runtime copy", "clang19-sm90", "gcc12-nvptx", "2^24"} {
		assert.Contains(t, string(svg), s)
	}
	assert.NotContains(t, string(svg), "gcc-host", "host toolchains are not in results.GPU figures")
}

func TestGenerateIsDeterministic(t *testing.T) {
	dir, _, _ := generate(t, reporttest.GPURun())
	names := []string{"figures/fig3-spmv.svg", "figures/fig3-spmv.png", "figures/fig18-spmv-ompx.svg", "claims.md", "report.html"}
	first := hashFiles(t, dir, names...)
	_, err := Generate(dir, Options{SpecDir: specDir})
	require.NoError(t, err)
	assert.Equal(t, first, hashFiles(t, dir, names...))
}

func TestGenerateCPUOnlyRun(t *testing.T) {
	dir, sum, _ := generate(t, reporttest.CPURun())
	drawn := map[string]bool{}
	notes := map[string]string{}
	for _, f := range sum.Figures {
		drawn[f.ID] = f.Note == ""
		notes[f.ID] = f.Note
	}
	for _, id := range []string{"cpu-axpby", "cpu-dot", "cpu-spmv", "cpu-cgsolve"} {
		assert.True(t, drawn[id], id)
	}
	assert.Equal(t, "no verified axpby results of kk-cuda-3lvl, kk-omp-b, omp-lambda, omp-raw, omp-class on device toolchains", notes["fig1-axpby"])
	assert.Equal(t, "no verified spmv results of kk-ompx-opt, kk-cuda-3lvl, direct-ompx, kk-ompx-warp, direct-ompx-warp on device llvm/nvcc toolchains", notes["fig19-spmv-ompx-opt"])
	assert.NoFileExists(t, filepath.Join(dir, results.FiguresDir, "fig1-axpby.svg"))
	assert.Equal(t, len(sum.Claims), claims.Counts(sum.Claims)[claims.NotMeasurable])

	page, err := os.ReadFile(filepath.Join(dir, results.ReportFile))
	require.NoError(t, err)
	assert.Contains(t, string(page), `<ul id="skipped-figures">`)
	assert.Contains(t, string(page), `<li><b>fig1-axpby</b> (AXPBY): no verified axpby results`)
	assert.Contains(t, string(page), `id="fig-cpu-spmv"`)
}

func TestGenerateReportsSpecErrors(t *testing.T) {
	dir := reporttest.NewRun(t, reporttest.CPURun())
	spec := t.TempDir()
	reporttest.WriteFile(t, filepath.Join(spec, "figures.yaml"), "figures:\n  - {id: f, title: T, kernel: spmvv, variants: []}\n")
	reporttest.WriteFile(t, filepath.Join(spec, "claims.yaml"), "claims: []\n")
	reporttest.WriteFile(t, filepath.Join(spec, "tables.yaml"), "tables:\n  - {kernel: dott, reference: {variants: [omp-raw]}}\n")
	reporttest.WriteFile(t, filepath.Join(spec, pageFile), "{{.RunID}")
	_, err := Generate(dir, Options{SpecDir: spec})
	require.Error(t, err)
	msg := strings.ReplaceAll(err.Error(), spec+"/", "")
	assert.Equal(t, `figures.yaml:2:31: figure "f": unknown kernel "spmvv" (known: `+strings.Join(reporttest.Vocab(t).KernelNames(), ", ")+`); did you mean "spmv"?
figures.yaml:2:48: figure "f": variants is empty
tables.yaml:2:14: table "dott": unknown kernel "dott" (known: `+strings.Join(reporttest.Vocab(t).KernelNames(), ", ")+`); did you mean "dot"?
template: page.html.tmpl:1: bad character U+007D '}'`, msg)
	assert.NoFileExists(t, filepath.Join(dir, results.ReportFile), "nothing is written when a spec is wrong")
}

func TestPageContents(t *testing.T) {
	dir, _, _ := generate(t, reporttest.GPURun())
	data, err := os.ReadFile(filepath.Join(dir, results.ReportFile))
	require.NoError(t, err)
	page := string(data)

	for _, want := range []string{
		// provenance
		"<title>portmatrix report: 20260101-120000-gpu1</title>",
		"<th>commit</th><td>0123456789abcdef0123456789abcdef01234567</td>",
		"<th>host</th><td>gpu1 (linux/amd64)</td>",
		"<th>CPU</th><td>Intel(R) Xeon(R) Platinum 8480&#43;, 16 cores</td>",
		"NVIDIA H100 80GB HBM3 (driver 580.159.04, 81559 MiB)",
		"<tr><td>clang19-sm90</td><td>llvm</td><td>19.1.7</td><td><code>clang&#43;&#43;-19</code></td><td>sm_90</td></tr>",
		// claims
		`<table id="claims">`,
		`<tr class="fail"><td>c002-cgsolve-kk-omp</td>`,
		"not reproduced (of 2 ratios 0 in the band, 2 outside, 0 across a bound)",
		"<q>Running the CG-Solve example with the OpenMPTarget backend of Kokkos",
		"<th>95% interval</th>",
		"not measurable (no rocm device toolchain in this run)",
		"<td>omp-raw@clang19-sm90</td><td>kk-cuda-3lvl@nvcc-sm90</td><td>64</td>",
		"<summary>1 ratio</summary>",
		// figures, inline
		`<figure class="figure" id="fig-fig1-axpby">`,
		`<a href="figures/fig18-spmv-ompx.png">`,
		// cells
		`<table id="cells">`,
		"1 failed to build, 1 run error, 1 failed to verify, 8 skipped, 135 verified",
		`<td class="status">failed to build</td>`,
		"ptxas fatal: Unresolved extern function &#39;omp_get_team_num&#39;",
		`<a href="logs/build/spmv.kk-omp-a.gcc12-nvptx.log">build</a>`,
		`<td class="status">failed to verify</td><td>2/3</td><td class="reason">size 16777216: max rel err 0.5 &gt; tolerance 1e-12</td>`,
		`<a href="logs/run/dot.omp-class.gcc12-nvptx.log">run</a>`,
		`<td class="status">run error</td><td>0/1</td><td class="reason">size 65536: timeout after 60s</td>`,
		`<td class="status">skipped</td><td>0/0</td><td class="reason">ompx_bare needs llvm &gt;= 18</td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("report.html lacks %s", want)
		}
	}
	assert.Equal(t, 15, strings.Count(page, "<svg"), "every figure is inline")
	assert.NotContains(t, page, "<?xml")
	assert.NotContains(t, page, `src="http`, "self-contained")
}

// specDir is the repository's report spec folder, seen from this package.
const specDir = "../../" + DefaultSpecDir
