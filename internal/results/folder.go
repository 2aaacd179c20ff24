// Package results writes a results folder: run.json (provenance),
// results.jsonl (each measurement as soon as it is made), results.csv,
// build.csv and logs/. See docs/results-format.md.
package results

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// File and folder names of a results folder (docs/results-format.md).
const (
	RunFile     = "run.json"
	JSONLFile   = "results.jsonl"
	CSVFile     = "results.csv"
	BuildFile   = "build.csv"
	LogsDir     = "logs"
	FiguresDir  = "figures"
	ClaimsFile  = "claims.md"
	ReportFile  = "report.html"
	maxLineSize = 64 << 20
)

// BuildLog is the path, in a results folder, of a cell's build log.
func BuildLog(cell string) string { return LogsDir + "/build/" + cell + ".log" }

// RunLog is the path, in a results folder, of a cell's run log.
func RunLog(cell string) string { return LogsDir + "/run/" + cell + ".log" }

// Writer appends to a results folder.
type Writer struct {
	Dir     string
	mu      sync.Mutex
	jsonl   *os.File
	records []Record
}

// Create makes dir (and dir/logs) and opens results.jsonl for appending.
func Create(dir string) (*Writer, error) {
	if err := os.MkdirAll(filepath.Join(dir, LogsDir, "run"), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, JSONLFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &Writer{Dir: dir, jsonl: f}, nil
}

// Add appends a record and syncs it to disk, so a later crash loses nothing.
func (w *Writer) Add(r Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	if _, err := w.jsonl.Write(append(b, '\n')); err != nil {
		return err
	}
	w.records = append(w.records, r)
	return w.jsonl.Sync()
}

// Records returns what was added so far.
func (w *Writer) Records() []Record {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Record(nil), w.records...)
}

// Close writes results.csv from every record of results.jsonl.
func (w *Writer) Close() error {
	err := w.jsonl.Close()
	if cerr := WriteCSV(w.Dir); err == nil {
		err = cerr
	}
	return err
}

// WriteJSON writes v as indented JSON to dir/name.
func WriteJSON(dir, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, name), append(b, '\n'), 0o644)
}

// ReadJSONL reads results.jsonl. Every bad line is an error naming
// file:line; the good ones are returned all the same. Each record's Source
// is "results.jsonl:<line>".
func ReadJSONL(dir string) ([]Record, error) {
	file := filepath.Join(dir, JSONLFile)
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Record
	var errs diag.List
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), maxLineSize)
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(b, &r); err != nil {
			errs.Add(diag.Pos{File: file, Line: line}, "%v", err)
			continue
		}
		r.Source = fmt.Sprintf("%s:%d", JSONLFile, line)
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("%s: %w", file, err)
	}
	return out, errs.Err()
}

// CSVHeader is the column list of results.csv.
var CSVHeader = []string{"cell", "kernel", "variant", "strategy", "toolchain", "size", "reps", "median_s", "min_s",
	"gbps", "gflops", "copy_gbps", "verified", "max_rel_err", "error"}

// WriteCSV writes results.csv from results.jsonl: a row per kernel record,
// with the copy bandwidth measured by the same toolchain in the same run.
func WriteCSV(dir string) error {
	recs, err := ReadJSONL(dir)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	copyBW := map[string]float64{}
	for _, r := range recs {
		if r.IsRoofline() {
			copyBW[r.Toolchain] = r.GBps
		}
	}
	f, err := os.Create(filepath.Join(dir, CSVFile))
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write(CSVHeader)
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for _, r := range recs {
		if r.Kind != KindKernel {
			continue
		}
		cb := ""
		if v, ok := copyBW[r.Toolchain]; ok {
			cb = num(v)
		}
		maxErr := ""
		if r.MaxRelErr != nil {
			maxErr = num(*r.MaxRelErr)
		}
		w.Write([]string{r.Cell, r.Kernel, r.Variant, r.Strategy, r.Toolchain,
			strconv.FormatInt(r.Size, 10), strconv.Itoa(r.Reps),
			num(r.MedianS), num(r.MinS), num(r.GBps), num(r.GFlops), cb,
			strconv.FormatBool(r.Verified), maxErr, r.Error})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
