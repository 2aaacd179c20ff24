package report

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// File names of a results folder (docs/results-format.md).
const (
	runFile     = "run.json"
	jsonlFile   = "results.jsonl"
	csvFile     = "results.csv"
	buildFile   = "build.csv"
	figuresDir  = "figures"
	claimsFile  = "claims.md"
	reportFile  = "report.html"
	kindKernel  = "kernel"
	kindCopy    = "copy"
	maxLineSize = 64 << 20
)

// Run is run.json: the provenance of a results folder.
type Run struct {
	ID         string            `json:"id"`
	Started    string            `json:"started"`
	Finished   string            `json:"finished"`
	Commit     string            `json:"commit"`
	Dirty      bool              `json:"dirty"`
	Host       Host              `json:"host"`
	GPUs       []GPU             `json:"gpus"`
	Toolchains []Toolchain       `json:"toolchains"`
	Templates  map[string]string `json:"templates"`
	Sizes      string            `json:"sizes"`
	Reps       int               `json:"reps"`
	Cells      CellCounts        `json:"cells"`
}

// Host describes the machine that ran the cells.
type Host struct {
	Hostname string `json:"hostname"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
	CPU      string `json:"cpu"`
	Cores    int    `json:"cores"`
}

// GPU is one device of the host.
type GPU struct {
	Name      string `json:"name"`
	Driver    string `json:"driver"`
	MemoryMiB int    `json:"memory_mib"`
}

// Toolchain is one compiler setup of the run.
type Toolchain struct {
	ID      string `json:"id"`
	Family  string `json:"family"`
	Version string `json:"version"`
	Command string `json:"command"`
	Target  string `json:"target"`
}

// CellCounts are the run's own cell totals.
type CellCounts struct {
	Total    int `json:"total"`
	Built    int `json:"built"`
	Ran      int `json:"ran"`
	Verified int `json:"verified"`
	Skipped  int `json:"skipped"`
}

// Section is the share of one kernel inside a composite kernel (CG-Solve).
type Section struct {
	Calls   int     `json:"calls"`
	Seconds float64 `json:"seconds"`
	Bytes   float64 `json:"bytes"`
}

// Record is one line of results.jsonl: a kernel measurement or a copy
// bandwidth measurement. Source is "file:line" of where it was read.
type Record struct {
	Kind      string             `json:"kind"`
	Cell      string             `json:"cell"`
	Kernel    string             `json:"kernel"`
	Variant   string             `json:"variant"`
	Strategy  string             `json:"strategy"`
	Toolchain string             `json:"toolchain"`
	Device    string             `json:"device"`
	Size      int64              `json:"size"`
	Reps      int                `json:"reps"`
	TimesS    []float64          `json:"times_s"`
	MedianS   float64            `json:"median_s"`
	MinS      float64            `json:"min_s"`
	Bytes     float64            `json:"bytes"`
	Flops     float64            `json:"flops"`
	GBps      float64            `json:"gbps"`
	GFlops    float64            `json:"gflops"`
	Verified  bool               `json:"verified"`
	MaxRelErr float64            `json:"max_rel_err"`
	Tolerance float64            `json:"tolerance"`
	Sections  map[string]Section `json:"sections"`
	Error     string             `json:"error"`
	Source    string             `json:"-"`
}

// ok reports whether a kernel record is a usable measurement.
func (r Record) ok() bool {
	return r.Verified && r.Error == "" && r.GBps > 0 && !math.IsInf(r.GBps, 0)
}

// BuildRow is one row of build.csv.
type BuildRow struct {
	Cell, Kernel, Variant, Toolchain string
	Status, Reason                   string
	Seconds                          float64
	Log                              string
}

// Results is everything the report reads from a results folder.
type Results struct {
	Dir    string
	Run    Run
	Kernel []Record   // kind "kernel", file order; rows only in results.csv appended
	Copy   []Record   // kind "copy"
	Builds []BuildRow // nil when build.csv is absent
	Other  int        // records of other kinds, ignored
}

// LoadResults reads run.json, results.jsonl and, when present, build.csv and
// results.csv of a results folder. Rows of results.csv that results.jsonl
// lacks (a run that crashed before printing) are added as kernel records.
func LoadResults(dir string) (*Results, error) {
	res := &Results{Dir: dir}
	if err := readJSONFile(filepath.Join(dir, runFile), &res.Run); err != nil {
		return nil, err
	}
	if err := res.readJSONL(filepath.Join(dir, jsonlFile)); err != nil {
		return nil, err
	}
	builds, err := readBuildCSV(filepath.Join(dir, buildFile))
	if err != nil {
		return nil, err
	}
	res.Builds = builds
	rows, err := readResultsCSV(filepath.Join(dir, csvFile))
	if err != nil {
		return nil, err
	}
	res.addMissing(rows)
	return res, nil
}

func readJSONFile(path string, v any) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

func (res *Results) readJSONL(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var errs ErrorList
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), maxLineSize)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(line, &r); err != nil {
			errs.line(path, n, "%v", err)
			continue
		}
		r.Source = fmt.Sprintf("%s:%d", jsonlFile, n)
		res.add(r)
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return errs.errs()
}

func (res *Results) add(r Record) {
	switch r.Kind {
	case kindKernel, "":
		r.Kind = kindKernel
		res.Kernel = append(res.Kernel, r)
	case kindCopy:
		res.Copy = append(res.Copy, r)
	default:
		res.Other++
	}
}

// addMissing appends the results.csv rows whose (cell, size) has no record.
func (res *Results) addMissing(rows []Record) {
	have := map[cellSize]bool{}
	for _, r := range res.Kernel {
		have[cellSize{r.Cell, r.Size}] = true
	}
	for _, r := range rows {
		if !have[cellSize{r.Cell, r.Size}] {
			res.Kernel = append(res.Kernel, r)
		}
	}
}

type cellSize struct {
	Cell string
	Size int64
}

// csvTable reads a CSV file with a header row. A missing file gives nil rows.
type csvTable struct {
	path string
	cols map[string]int
	rows [][]string
	errs ErrorList
}

func readCSV(path string) (*csvTable, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	r := csv.NewReader(bytes.NewReader(data))
	r.FieldsPerRecord = -1
	header, err := r.Read()
	if err == io.EOF {
		return &csvTable{path: path}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	t := &csvTable{path: path, cols: map[string]int{}}
	for i, h := range header {
		t.cols[strings.TrimSpace(h)] = i
	}
	t.rows, err = r.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

func (t *csvTable) str(row []string, col string) string {
	i, ok := t.cols[col]
	if !ok || i >= len(row) {
		return ""
	}
	return strings.TrimSpace(row[i])
}

// num parses a numeric column; n is the row index (line n+2 of the file).
func (t *csvTable) num(row []string, n int, col string) float64 {
	s := t.str(row, col)
	if s == "" {
		return 0
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.errs.line(t.path, n+2, "column %s: %q is not a number", col, s)
	}
	return v
}

func (t *csvTable) boolean(row []string, n int, col string) bool {
	s := t.str(row, col)
	if s == "" {
		return false
	}
	v, err := strconv.ParseBool(s)
	if err != nil {
		t.errs.line(t.path, n+2, "column %s: %q is not true or false", col, s)
	}
	return v
}

func readBuildCSV(path string) ([]BuildRow, error) {
	t, err := readCSV(path)
	if t == nil || err != nil {
		return nil, err
	}
	out := make([]BuildRow, 0, len(t.rows))
	for n, row := range t.rows {
		out = append(out, BuildRow{
			Cell: t.str(row, "cell"), Kernel: t.str(row, "kernel"),
			Variant: t.str(row, "variant"), Toolchain: t.str(row, "toolchain"),
			Status: t.str(row, "status"), Reason: t.str(row, "reason"),
			Seconds: t.num(row, n, "seconds"), Log: t.str(row, "log"),
		})
	}
	return out, t.errs.errs()
}

func readResultsCSV(path string) ([]Record, error) {
	t, err := readCSV(path)
	if t == nil || err != nil {
		return nil, err
	}
	out := make([]Record, 0, len(t.rows))
	for n, row := range t.rows {
		out = append(out, Record{
			Kind: kindKernel, Cell: t.str(row, "cell"), Kernel: t.str(row, "kernel"),
			Variant: t.str(row, "variant"), Strategy: t.str(row, "strategy"),
			Toolchain: t.str(row, "toolchain"), Size: int64(t.num(row, n, "size")),
			Reps: int(t.num(row, n, "reps")), MedianS: t.num(row, n, "median_s"),
			MinS: t.num(row, n, "min_s"), GBps: t.num(row, n, "gbps"),
			GFlops: t.num(row, n, "gflops"), Verified: t.boolean(row, n, "verified"),
			MaxRelErr: t.num(row, n, "max_rel_err"), Error: t.str(row, "error"),
			Source: fmt.Sprintf("%s:%d", csvFile, n+2),
		})
	}
	return out, t.errs.errs()
}
