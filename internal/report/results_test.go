package report

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/report/internal/reporttest"
	"github.com/portmatrix/portmatrix/internal/results"
)

func TestLoadResults(t *testing.T) {
	dir := reporttest.NewRun(t, reporttest.GPURun())
	res, err := results.Load(dir)
	require.NoError(t, err)

	assert.Equal(t, "20260101-120000-gpu1", res.Run.ID)
	assert.Len(t, res.Run.Toolchains, 6)
	assert.Len(t, res.Copy, 6)
	assert.NotEmpty(t, res.Builds)
	assert.Equal(t, "results.jsonl:7", res.Kernel[0].Source)

	var crash results.Record
	for _, r := range res.Kernel {
		if r.Cell == "axpby.omp-class.clang16-sm90" {
			crash = r
		}
	}
	assert.Equal(t, "timeout after 60s", crash.Error, "the run stage's error record")

	// results.csv is a view: a row results.jsonl lacks is not a measurement.
	n := len(res.Kernel)
	reporttest.WriteFile(t, filepath.Join(dir, results.CSVFile), "cell,kernel,variant,strategy,toolchain,size,reps,median_s,min_s,gbps,gflops,copy_gbps,verified,max_rel_err,error\n"+
		"axpby.omp-class.gcc-host,axpby,omp-class,omp,gcc-host,65536,5,1e-5,1e-5,99,9,21,true,0,\n")
	res, err = results.Load(dir)
	require.NoError(t, err)
	assert.Len(t, res.Kernel, n)
}

func TestLoadResultsMalformedLine(t *testing.T) {
	dir := reporttest.NewRun(t, reporttest.GPURun())
	path := filepath.Join(dir, results.JSONLFile)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, append([]byte("{\"kind\":\"copy\"}\n{\"kind\": kernel}\n"), data...), 0o644))

	_, err = results.Load(dir)
	require.Error(t, err)
	assert.Equal(t, path+":2: invalid character 'k' looking for beginning of value", err.Error())
}

func TestLoadResultsWithoutBuildCSV(t *testing.T) {
	s := reporttest.GPURun()
	s.NoBuildCSV = true
	res, err := results.Load(reporttest.NewRun(t, s))
	require.NoError(t, err)
	assert.Nil(t, res.Builds)
	assert.NotEmpty(t, res.Kernel)
}

func TestLoadResultsBadCSVNumber(t *testing.T) {
	dir := reporttest.NewRun(t, reporttest.GPURun())
	reporttest.WriteFile(t, filepath.Join(dir, results.BuildFile), "cell,kernel,variant,toolchain,status,reason,seconds,log\na.b.c,a,b,c,built,,fast,\n")
	_, err := results.Load(dir)
	require.Error(t, err)
	assert.Equal(t, filepath.Join(dir, results.BuildFile)+`:2: column seconds: "fast" is not a number`, err.Error())
}

func TestCellStatuses(t *testing.T) {
	res, err := results.Load(reporttest.NewRun(t, reporttest.GPURun()))
	require.NoError(t, err)
	byCell := map[string]CellStatus{}
	for _, c := range CellStatuses(res) {
		byCell[c.Cell] = c
	}

	c := byCell["spmv.kk-omp-a.gcc12-nvptx"]
	assert.Equal(t, StatusBuildFailed, c.Status)
	assert.Contains(t, c.Reason, "ptxas fatal")
	assert.Equal(t, "logs/build/spmv.kk-omp-a.gcc12-nvptx.log", c.BuildLog)

	assert.Equal(t, StatusSkipped, byCell["spmv.kk-ompx.clang16-sm90"].Status)
	assert.Equal(t, "ompx_bare needs llvm >= 18", byCell["spmv.kk-ompx.clang16-sm90"].Reason)

	c = byCell["dot.omp-class.gcc12-nvptx"]
	assert.Equal(t, StatusVerifyFailed, c.Status)
	assert.Equal(t, "size 16777216: max rel err 0.5 > tolerance 1e-12", c.Reason)
	assert.Equal(t, 2, c.Verified)
	assert.Equal(t, 3, c.Sizes)
	assert.Equal(t, "logs/run/dot.omp-class.gcc12-nvptx.log", c.RunLog)

	c = byCell["axpby.omp-class.clang16-sm90"]
	assert.Equal(t, StatusRunError, c.Status)
	assert.Equal(t, "size 65536: timeout after 60s", c.Reason)

	assert.Equal(t, StatusVerified, byCell["spmv.kk-cuda-3lvl.nvcc-sm90"].Status)
	assert.Equal(t, "ok", byCell["spmv.kk-cuda-3lvl.nvcc-sm90"].Class())
}

// Trials: the last record of each (size, trial) counts, and one failing
// trial fails the size.
func TestCellStatusesWithTrials(t *testing.T) {
	rec := func(trial int, ok bool, err string) results.Record {
		return results.Record{Kind: "kernel", Cell: "dot.omp-raw.clang19-sm90", Kernel: "dot", Variant: "omp-raw", Toolchain: "clang19-sm90",
			Size: 100, Trial: trial, Verified: ok, Error: err, MaxRelErr: reporttest.Ptr(0.5), Tolerance: 1e-12}
	}
	res := &results.Folder{Kernel: []results.Record{rec(0, true, ""), rec(1, true, ""), rec(2, false, "crash"), rec(2, true, "")}}
	c := CellStatuses(res)[0]
	assert.Equal(t, StatusVerified, c.Status, "trial 2's newer success replaces its crash")
	assert.Equal(t, 1, c.Verified)

	res.Kernel = append(res.Kernel, rec(1, false, ""))
	c = CellStatuses(res)[0]
	assert.Equal(t, StatusVerifyFailed, c.Status)
	assert.Equal(t, "size 100 trial 1: max rel err 0.5 > tolerance 1e-12", c.Reason)
	assert.Equal(t, 0, c.Verified)
}
