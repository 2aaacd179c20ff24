package book

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/report"
	"github.com/portmatrix/portmatrix/internal/report/claims"
	"github.com/portmatrix/portmatrix/internal/report/reportspec"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/vocabulary"
)

// A merged current folder loses no evaluation of the runs it was merged
// from: every claim a source folder measured alone is measured in the merged
// folder, with each of that folder's ratios, same value; where either side's
// measurement pools trials of several parts (the same code, results merge),
// the merged ratio is the pooled one and only its presence is checked. What the merged
// folder adds (pairs across parts: clang 16's runs against the matrix run's
// nvcc baseline) and how the verdicts compare, docs/book.md records.
func TestMergedFoldersKeepEveryRatioOfTheirParts(t *testing.T) {
	ix, err := LoadIndex("../../results")
	require.NoError(t, err)
	voc, err := vocabulary.Load("../..")
	require.NoError(t, err)
	specs, err := reportspec.LoadClaims(filepath.Join("../..", report.DefaultSpecDir, "claims.yaml"), voc)
	require.NoError(t, err)
	merged, compared := 0, 0
	for _, name := range ix.Folders() {
		f, err := results.Load(filepath.Join("../../results", name))
		require.NoError(t, err)
		if len(f.Run.Batches) == 0 || f.Run.Batches[0].Folder == "" {
			continue
		}
		merged++
		pooled := pooledMeasurements(f)
		all := byClaim(claims.EvaluateFolder(specs, f))
		for source, part := range sourceFolders(f) {
			for id, r := range byClaim(claims.EvaluateFolder(specs, part)) {
				if r.Outcome == claims.NotMeasurable {
					continue
				}
				m := all[id]
				if !assert.NotEqual(t, claims.NotMeasurable, m.Outcome, "%s: claim %s, measured in %s alone, is not in the merged folder", name, id, source) {
					continue
				}
				// A claim at the largest (smallest) size of a pair takes, for a
				// pair measured at a second size set in another part, the larger
				// (smaller) size: the same pair then, another size.
				have := map[string]claims.Ratio{}
				for _, x := range m.Ratios {
					have[pairKey(x, r.Claim.Sizes)] = x
				}
				for _, x := range r.Ratios {
					compared++
					y, ok := have[pairKey(x, r.Claim.Sizes)]
					switch {
					case !ok:
						assert.Fail(t, "ratio lost", "%s: claim %s: ratio %s of %s is not in the merged folder", name, id, pairKey(x, "all"), source)
					case y.Size == x.Size && (pooledSide(pooled, x, x.Size) || x.From != 0 && pooledSide(pooled, x, x.From)):
					case y.Size == x.Size:
						assert.Equal(t, x.Value, y.Value, "%s: claim %s: ratio %s of %s", name, id, pairKey(x, "all"), source)
					case r.Claim.Sizes == "largest":
						assert.Greater(t, y.Size, x.Size, "%s: claim %s: %s", name, id, pairKey(x, "all"))
					default:
						assert.Less(t, y.Size, x.Size, "%s: claim %s: %s", name, id, pairKey(x, "all"))
					}
				}
			}
		}
	}
	assert.GreaterOrEqual(t, merged, 3, "at least the matrix, TestSNAP and LCALS folders of the H200")
	assert.Greater(t, compared, 100, "ratios of the source folders compared")
}

func byClaim(rs []claims.Result) map[string]claims.Result {
	out := map[string]claims.Result{}
	for _, r := range rs {
		out[r.Claim.ID] = r
	}
	return out
}

// pooledMeasurements are the (cell, size) of f whose records come from
// several of its parts' folders: trials of the same code pooled by the merge.
func pooledMeasurements(f *results.Folder) map[string]bool {
	folderOf := batchFolders(f)
	parts := map[string]map[string]bool{}
	for _, r := range f.Kernel {
		k := fmt.Sprintf("%s@%d", r.Cell, r.Size)
		if parts[k] == nil {
			parts[k] = map[string]bool{}
		}
		parts[k][folderOf[r.BatchID]] = true
	}
	out := map[string]bool{}
	for k, ps := range parts {
		out[k] = len(ps) > 1
	}
	return out
}

// pooledSide reports whether either side of a ratio at size pools trials of
// several parts. A ratio of two kernels names them "numerator/denominator".
func pooledSide(pooled map[string]bool, x claims.Ratio, size int64) bool {
	num, den, two := strings.Cut(x.Kernel, "/")
	if !two {
		den = num
	}
	return pooled[side(num, x.Numerator, size)] || pooled[side(den, x.Denominator, size)]
}

// side names the measurement of one side of a ratio (variant@toolchain) as
// pooledMeasurements does.
func side(kernel, variantAtToolchain string, size int64) string {
	return fmt.Sprintf("%s.%s@%d", kernel, strings.Replace(variantAtToolchain, "@", ".", 1), size)
}

// pairKey names a ratio's pair, and its size when the claim takes all sizes.
func pairKey(r claims.Ratio, sizes string) string {
	if sizes != "all" && sizes != "at" { // largest, smallest: one ratio a pair; listed sizes: one each
		return fmt.Sprintf("%s %s/%s", r.Kernel, r.Numerator, r.Denominator)
	}
	return fmt.Sprintf("%s@%d %s/%s", r.Kernel, r.Size, r.Numerator, r.Denominator)
}

// sourceFolders splits a merged folder's records back into the folders they
// came from (run.json's batches name each part's folder).
func sourceFolders(f *results.Folder) map[string]*results.Folder {
	folderOf := batchFolders(f)
	out := map[string]*results.Folder{}
	part := func(r results.Record) *results.Folder {
		name := folderOf[r.BatchID]
		if out[name] == nil {
			out[name] = &results.Folder{Dir: f.Dir, Run: f.Run, Builds: f.Builds}
		}
		return out[name]
	}
	for _, r := range f.Kernel {
		p := part(r)
		p.Kernel = append(p.Kernel, r)
	}
	for _, r := range f.Stream {
		p := part(r)
		p.Stream = append(p.Stream, r)
	}
	for _, r := range f.Copy {
		p := part(r)
		p.Copy = append(p.Copy, r)
	}
	return out
}

// batchFolders maps each batch of a merged folder to the folder it came from.
func batchFolders(f *results.Folder) map[string]string {
	out := map[string]string{}
	for _, b := range f.Run.Batches {
		out[b.ID] = b.Folder
	}
	return out
}
