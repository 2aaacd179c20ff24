package report

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The committed results log: its generated block is what `mage report`
// writes for the committed folder now, and every number of its checked prose
// (ratios with two or more decimals, GB/s figures) appears in the folder's
// tables or claims.
const (
	resultsLog     = "../../docs/gpu-results.md"
	committedGPU   = "../../results/20261121-220700-nvidia-h200"
	proseBegin     = "<!-- prose checked against the tables -->"
	proseEnd       = "<!-- end prose check -->"
	committedGPUID = "20261121-220700-nvidia-h200"
)

func TestResultsLogTablesAreGenerated(t *testing.T) {
	doc, err := os.ReadFile(resultsLog)
	require.NoError(t, err)
	block := logBlock(doc, committedGPUID)
	require.NotNil(t, block, "docs/gpu-results.md has the marked block of the committed folder")
	tables, err := os.ReadFile(filepath.Join(committedGPU, tablesFile))
	require.NoError(t, err)
	want := strings.TrimPrefix(string(tables), "# Tables: "+committedGPUID+"\n\n")
	assert.Equal(t, "\n"+want+"\n", string(block), "rerun: go run ./cmd/portmatrix report results/%s", committedGPUID)
}

// numbers of prose that must come from the data: decimals (ratios) and
// three- to five-digit figures (GB/s, sizes).
var proseNumber = regexp.MustCompile(`\b\d+\.\d{2,3}\b|\b\d{3,5}\b`)

func TestResultsLogProseAgreesWithTables(t *testing.T) {
	doc, err := os.ReadFile(resultsLog)
	require.NoError(t, err)
	tables, err := os.ReadFile(filepath.Join(committedGPU, tablesFile))
	require.NoError(t, err)
	claims, err := os.ReadFile(filepath.Join(committedGPU, claimsFile))
	require.NoError(t, err)
	data := string(tables) + string(claims)
	regions := proseRegions(string(doc))
	require.NotEmpty(t, regions)
	checked := 0
	for _, r := range regions {
		for _, m := range proseNumber.FindAllString(r, -1) {
			n := m
			checked++
			assert.Regexp(t, `(^|[^\d.])`+regexp.QuoteMeta(n)+`($|[^\d])`, data, "docs/gpu-results.md cites %s, which neither tables.md nor claims.md holds", n)
		}
	}
	assert.Greater(t, checked, 30)
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
