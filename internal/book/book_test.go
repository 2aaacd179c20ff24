package book

import (
	"html/template"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/report"
	"github.com/portmatrix/portmatrix/internal/report/reportspec"
	"github.com/portmatrix/portmatrix/internal/vocabulary"
)

// The book rendered from the committed index has a chapter per paper, a card
// per claim of those papers, a section per reported folder and the prose of
// docs/book/; a paper without data says so.
func TestBookHoldsEveryPaperClaimAndFolder(t *testing.T) {
	root, b := committedBook(t)
	page, err := os.ReadFile(b.HTML)
	require.NoError(t, err)
	summary, err := os.ReadFile(b.Markdown)
	require.NoError(t, err)
	html, md := string(page), string(summary)
	// the benchmark set's section: the committed loop-nest folder measured
	// the multiply, the transpose and the triangular product in their three
	// forms (the mapped over cuBLAS's rate in the same run) and the mapped
	// 2-D Jacobi alone
	assert.Contains(t, html, `id="benchset"`)
	assert.Contains(t, md, "## Loop nests beyond HOMMEXX")
	for _, nest := range []string{"gemm", "transpose", "trmv", "jacobi2d"} {
		assert.Contains(t, md, "### "+nest+": ")
	}
	assert.Contains(t, md, "vendor: cuBLAS DGEMM (gemm_team under cublas)")
	assert.NotContains(t, md, "Not measured yet: gemm (")
	ix, err := LoadIndex(Root(root))
	require.NoError(t, err)
	voc, err := vocabulary.Load("../..")
	require.NoError(t, err)
	claims, err := reportspec.LoadClaims(filepath.Join("../..", report.DefaultSpecDir, "claims.yaml"), voc)
	require.NoError(t, err)
	papers := map[string]bool{}
	for _, p := range ix.Papers {
		papers[p.ID] = true
		assert.Contains(t, html, `id="paper-`+p.ID+`"`)
	}
	n := 0
	for _, c := range claims {
		if papers[paperOf(c.Paper)] {
			n++
			assert.Equal(t, 1, strings.Count(html, `id="claim-`+c.ID+`"`), c.ID)
			assert.Contains(t, md, "### "+c.ID+" ")
		}
	}
	assert.Greater(t, n, 20)
	for _, f := range ix.Folders() {
		assert.Contains(t, html, `id="folder-`+f+`"`)
		assert.Contains(t, md, `id="folder-`+f+`"`)
	}
	paper004 := html[strings.Index(html, `id="paper-004"`):]
	paper004 = paper004[:strings.Index(paper004, "</section>")]
	assert.Contains(t, paper004, `id="claim-c004-laplace-mapped-kokkos-gpu"`, "004 has its claims, measured or not")
	// Each paper's table: every claim of the paper a row with the paper's
	// number beside ours, and every sentence nothing here measures a row.
	cf, err := reportspec.LoadClaimsFile(filepath.Join("../..", report.DefaultSpecDir, "claims.yaml"), voc)
	require.NoError(t, err)
	for _, p := range ix.Papers {
		sec := html[strings.Index(html, `id="paper-`+p.ID+`"`):]
		sec = sec[:strings.Index(sec, "</section>")]
		table := sec[strings.Index(sec, `id="table-`+p.ID+`"`):]
		table = table[:strings.Index(table, "</table>")]
		for _, c := range cf.Claims {
			if paperOf(c.Paper) == p.ID {
				assert.Contains(t, table, `<a href="#claim-`+c.ID+`">`, c.ID)
				assert.Contains(t, table, template.HTMLEscapeString(c.PaperSays), c.ID)
			}
		}
		for _, u := range cf.NotMeasurable {
			if paperOf(u.Paper) == p.ID {
				assert.Contains(t, table, template.HTMLEscapeString(u.Reason), u.Quote)
			}
		}
	}
	assert.Contains(t, md, "| claim | the paper says | ratio: numerator / denominator")
	// A host folder names its CPU, not the GPUs of the host it ran on, and
	// the CPU figures are drawn.
	hostCard := md[strings.Index(md, `id="folder-host-xeon-matrix"`):]
	hostCard = hostCard[:strings.Index(hostCard, "\n### ")]
	assert.Contains(t, hostCard, "- CPU: Intel(R) Xeon(R) Processor, 32 cores")
	assert.NotContains(t, hostCard, "H100")
	assert.Contains(t, html, `id="fig-cpu-axpby-host-xeon-matrix"`)
	assert.Contains(t, html, "Results history", "docs/book/history.md is the book's prose")
	assert.NotContains(t, html, "<!-- tables:", "the log holds no generated tables")
	// The libraries folder's layer-against-library tables, their titles
	// from the catalog's releases, and the claims' verdicts on the libraries.
	layers := html[strings.Index(html, `id="layers"`):]
	layers = layers[:strings.Index(layers, "</section>")]
	for _, title := range []string{"portmatrix's Kokkos layer against Kokkos 4.6.01", "portmatrix's RAJA layer against RAJA v2025.09.1"} {
		assert.Contains(t, layers, title)
		assert.Contains(t, md, "### "+title+"\n")
	}
	assert.Contains(t, layers, "<td>kk-cuda-3lvl</td>\n<td>kokkos-cuda-3lvl</td>")
	assert.Contains(t, html, "<b>on the libraries:</b>")
	assert.Contains(t, md, "; on the libraries: ")
	ids := map[string]int{}
	for _, m := range regexp.MustCompile(`\sid="([^"]*)"`).FindAllStringSubmatch(html, -1) {
		ids[m[1]]++
	}
	for id, n := range ids {
		assert.Equal(t, 1, n, "id %q repeated: links to it are ambiguous", id)
	}
}

// Figures sit beside the claims they decide: same paper, a reference part in
// common and, for a figure of one kernel, a kernel of the claim.
func TestFiguresDecideClaimsOfTheirPaperPartAndKernel(t *testing.T) {
	voc, err := vocabulary.Load("../..")
	require.NoError(t, err)
	dir := filepath.Join("../..", report.DefaultSpecDir)
	figs, err := reportspec.LoadFigures(filepath.Join(dir, "figures.yaml"), voc)
	require.NoError(t, err)
	claims, err := reportspec.LoadClaims(filepath.Join(dir, "claims.yaml"), voc)
	require.NoError(t, err)
	fig := map[string]reportspec.Figure{}
	for _, f := range figs {
		fig[f.ID] = f
	}
	claim := map[string]reportspec.Claim{}
	for _, c := range claims {
		claim[c.ID] = c
	}
	assert.True(t, decides(fig["fig2-dot"], claim["c002-dot-llvm"]))
	assert.False(t, decides(fig["fig1-axpby"], claim["c002-dot-llvm"]), "another figure of the paper")
	assert.True(t, decides(fig["fig3-spmv"], claim["c002-spmv-best-openmp"]))
	assert.False(t, decides(fig["fig2-dot"], claim["c000-spmv-ompx-vs-omp"]), "another paper")
	assert.Equal(t, "000", paperOf("beyond 000 (warp-only reduction)"))
	assert.Equal(t, []string{"Sec. 2.3", "Fig. 3"}, refParts("002 Sec. 2.3, Fig. 3"))
}

// The committed book is what `go run mage.go book` makes from the committed
// index, folders, specs and prose (as generated/ is what the templates render).
func TestCommittedBookIsCurrent(t *testing.T) {
	_, b := committedBook(t)
	for _, f := range []string{b.HTML, b.Markdown} {
		got, err := os.ReadFile(f)
		require.NoError(t, err)
		want, err := os.ReadFile(filepath.Join("../../results", Dir, filepath.Base(f)))
		require.NoError(t, err)
		assert.True(t, string(got) == string(want), "results/%s/%s is stale: run go run mage.go book", Dir, filepath.Base(f))
	}
}
