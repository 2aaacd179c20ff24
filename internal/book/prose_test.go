package book

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/report"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/vocabulary"
)

// The history's prose between these markers cites the archived first H200 folder:
// every number of it (ratios with two or more decimals, GB/s figures) must be
// in that folder's tables or claims as the report makes them now.
const (
	historyFile = "../../docs/book/history.md"
	proseFolder = "../../results/archive/20261121-220700-nvidia-h200"
	proseBegin  = "<!-- prose checked against the tables -->"
	proseEnd    = "<!-- end prose check -->"
)

// numbers of prose that must come from the data: decimals (ratios) and
// three- to five-digit figures (GB/s, sizes).
var proseNumber = regexp.MustCompile(`\b\d+\.\d{2,3}\b|\b\d{3,5}\b`)

func TestHistoryProseAgreesWithItsFolder(t *testing.T) {
	doc, err := os.ReadFile(historyFile)
	require.NoError(t, err)
	dir := filepath.Join(t.TempDir(), filepath.Base(proseFolder))
	require.NoError(t, os.CopyFS(dir, os.DirFS(proseFolder)))
	voc, err := vocabulary.Load("../..")
	require.NoError(t, err)
	_, err = report.Generate(dir, report.Options{SpecDir: filepath.Join("../..", report.DefaultSpecDir), Vocabulary: voc})
	require.NoError(t, err)
	tables, err := os.ReadFile(filepath.Join(dir, "tables.md"))
	require.NoError(t, err)
	claims, err := os.ReadFile(filepath.Join(dir, results.ClaimsFile))
	require.NoError(t, err)
	data := string(tables) + string(claims)
	regions := proseRegions(string(doc))
	require.NotEmpty(t, regions)
	checked := 0
	for _, r := range regions {
		for _, n := range proseNumber.FindAllString(r, -1) {
			checked++
			assert.Regexp(t, `(^|[^\d.])`+regexp.QuoteMeta(n)+`($|[^\d])`, data, "docs/book/history.md cites %s, which neither tables.md nor claims.md of %s holds", n, proseFolder)
		}
	}
	// Since the report compares like clocks only, the history's OpenMP/KK-CUDA
	// ratios of that folder (two clocks) stand outside the markers.
	assert.Greater(t, checked, 25)
}

func TestProseNumbersAreChecked(t *testing.T) {
	r := proseRegions("a 0.99\n" + proseBegin + "\nx 0.12 and 4054 GB/s (1992 vs 3359 GB/s), 2406 / 3359 = 0.72\n" + proseEnd + "\n0.5")
	require.Len(t, r, 1)
	got := proseNumber.FindAllString(r[0], -1)
	assert.Equal(t, []string{"0.12", "4054", "1992", "3359", "2406", "3359", "0.72"}, got)
}

func proseRegions(doc string) []string {
	var out []string
	for {
		i := strings.Index(doc, proseBegin)
		if i < 0 {
			return out
		}
		doc = doc[i+len(proseBegin):]
		j := strings.Index(doc, proseEnd)
		if j < 0 {
			return out
		}
		out = append(out, doc[:j])
		doc = doc[j:]
	}
}
