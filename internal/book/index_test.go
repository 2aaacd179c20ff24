package book

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/results"
)

// The committed index loads, and every committed folder is in it: a folder
// that no entry names is either current and unindexed or superseded and left
// behind. (Folders a local run made, not committed, are not asked about.)
func TestCommittedIndex(t *testing.T) {
	ix, err := LoadIndex("../../results")
	require.NoError(t, err)
	assert.NotEmpty(t, ix.Folders())
	named := map[string]bool{}
	for _, e := range ix.Current {
		named[e.Folder] = true
	}
	out, err := exec.Command("git", "-C", "../..", "ls-files", "--", "results/*/"+results.RunFile, "results/*/"+results.JSONLFile).Output()
	if err != nil {
		t.Skipf("no git tree to list the committed folders: %v", err)
	}
	for _, f := range strings.Fields(string(out)) {
		parts := strings.Split(f, "/") // git's * spans folders: results/archive/<id>/run.json too
		if len(parts) != 3 {
			continue
		}
		folder := parts[1]
		assert.True(t, named[folder], "results/%s is in no entry of results/index.yaml: index it or remove it (results/ARCHIVE.md)", folder)
	}
}

func TestIndexErrorsArePositioned(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "run-a"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run-a", results.RunFile), []byte(`{"gpus":[{"name":"NVIDIA H200"}]}`), 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "run-h100"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run-h100", results.RunFile), []byte(`{"gpus":[{"name":"NVIDIA H100 80GB HBM3"}],"host":{"cpu":"AMD EPYC"}}`), 0o644))
	src := `papers:
  - {id: "002", title: A paper}
suites:
  - {id: matrix, title: The matrix}
  - {id: matrix, title: Again}
platforms:
  - {id: nvidia-h200, title: H200, gpu: NVIDIA H200}
  - {id: host-cpu, title: The host, cpu: Intel Xeon}
current:
  - {suite: matrix, platform: nvidia-h200, folder: run-a}
  - {suite: matrix, platform: nvidia-h200, folder: run-a, colour: red}
  - {suite: matrx, platform: nvidia-h100, folder: ../run-b}
  - {suite: matrix, platform: host-cpu, part: b, folder: run-c}
  - {suite: matrix, part: c}
  - {suite: matrix, platform: nvidia-h200, folder: run-h100}
  - {suite: matrix, platform: host-cpu, folder: run-h100}
`
	require.NoError(t, os.WriteFile(filepath.Join(dir, IndexFile), []byte(src), 0o644))
	_, err := LoadIndex(dir)
	require.Error(t, err)
	file := filepath.Join(dir, IndexFile)
	require.NoError(t, diag.CheckPositioned(err, file))
	got := strings.ReplaceAll(err.Error(), dir+string(filepath.Separator), "")
	for _, want := range []string{
		`index.yaml:5:10: suite "matrix" declared twice`,
		`index.yaml:11:59: unknown field "colour" in entry`,
		`index.yaml:11:5: a second entry for suite "matrix", platform "nvidia-h200": merge the folders into one`,
		`index.yaml:12:13: unknown suite "matrx"; did you mean "matrix"?`,
		`index.yaml:12:30: unknown platform "nvidia-h100"; did you mean "nvidia-h200"?`,
		`index.yaml:12:51: folder "../run-b" must be a folder name under`,
		`index.yaml:13:41: unknown field "part" in entry`,
		`index.yaml:13:58: folder run-c holds no run`,
		`index.yaml:14:5: entry needs field "platform"`,
		`index.yaml:14:5: entry needs field "folder"`,
		`index.yaml:15:52: folder run-h100 ran on NVIDIA H100 80GB HBM3, platform nvidia-h200 is NVIDIA H200`,
		`index.yaml:16:49: folder run-h100 ran on a host of CPU "AMD EPYC", platform host-cpu is "Intel Xeon"`,
	} {
		assert.Contains(t, got, want)
	}
}

// Each current folder says which run and which card gave each number: every
// kernel record names its GPU (GPU platforms) and a part of run.json's
// batches, and each part's record count is what the folder holds of it.
func TestCurrentFoldersNameEachRecordsPartAndCard(t *testing.T) {
	ix, err := LoadIndex("../../results")
	require.NoError(t, err)
	for _, e := range ix.Current {
		dir := filepath.Join("../../results", e.Folder)
		run, err := results.ReadRun(dir)
		require.NoError(t, err)
		if len(run.Batches) == 0 || run.Batches[0].Folder == "" {
			continue // one run, or merged before parts named their folder (the scheduler's)
		}
		recs, err := results.ReadJSONL(dir)
		require.NoError(t, err)
		count := map[string]int{}
		for _, r := range recs {
			if r.Kind != results.KindKernel {
				continue
			}
			count[r.BatchID]++
			if ix.platform(e.Platform).GPU != "" {
				assert.NotEmpty(t, r.GPUUUID, "%s: %s names no GPU", r.Source, r.Cell)
			}
		}
		for _, b := range run.Batches {
			assert.Equal(t, b.Records, count[b.ID], "%s: part %s", e.Folder, b.ID)
			delete(count, b.ID)
		}
		assert.Empty(t, count, "%s: records of parts run.json does not list", e.Folder)
	}
}
