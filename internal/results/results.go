// Package results writes a results folder: run.json (provenance),
// results.jsonl (each measurement as soon as it is made), results.csv,
// build.csv and logs/. See docs/results-format.md.
package results

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
)

// Record is one JSON line: the harness's fields plus the cell's.
type Record map[string]any

// Str returns a string field.
func (r Record) Str(k string) string { s, _ := r[k].(string); return s }

// Num returns a number field (0 when absent).
func (r Record) Num(k string) float64 {
	switch v := r[k].(type) {
	case float64:
		return v
	case json.Number:
		f, _ := v.Float64()
		return f
	case int:
		return float64(v)
	case int64:
		return float64(v)
	}
	return 0
}

// Bool returns a boolean field.
func (r Record) Bool(k string) bool { b, _ := r[k].(bool); return b }

// BuildRow is one row of build.csv.
type BuildRow struct {
	Cell, Kernel, Variant, Toolchain, Status, Reason, Log string
	Seconds                                               float64
}

// Writer appends to a results folder.
type Writer struct {
	Dir     string
	mu      sync.Mutex
	jsonl   *os.File
	records []Record
}

// Create makes dir (and dir/logs) and opens results.jsonl for appending.
func Create(dir string) (*Writer, error) {
	if err := os.MkdirAll(filepath.Join(dir, "logs", "run"), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, "results.jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
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

// ReadJSONL reads results.jsonl; a bad line is an error naming file:line.
func ReadJSONL(dir string) ([]Record, error) {
	file := filepath.Join(dir, "results.jsonl")
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for line := 1; sc.Scan(); line++ {
		if len(sc.Bytes()) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return out, fmt.Errorf("%s:%d: %v", file, line, err)
		}
		out = append(out, r)
	}
	return out, sc.Err()
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
		if r.Str("kind") == "copy" {
			copyBW[r.Str("toolchain")] = r.Num("gbps")
		}
	}
	f, err := os.Create(filepath.Join(dir, "results.csv"))
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write(CSVHeader)
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	for _, r := range recs {
		if r.Str("kind") != "kernel" {
			continue
		}
		cb := ""
		if v, ok := copyBW[r.Str("toolchain")]; ok {
			cb = num(v)
		}
		maxErr := ""
		if _, ok := r["max_rel_err"].(float64); ok {
			maxErr = num(r.Num("max_rel_err"))
		}
		w.Write([]string{r.Str("cell"), r.Str("kernel"), r.Str("variant"), r.Str("strategy"), r.Str("toolchain"),
			strconv.FormatInt(int64(r.Num("size")), 10), strconv.FormatInt(int64(r.Num("reps")), 10),
			num(r.Num("median_s")), num(r.Num("min_s")), num(r.Num("gbps")), num(r.Num("gflops")), cb,
			strconv.FormatBool(r.Bool("verified")), maxErr, r.Str("error")})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// WriteBuildCSV writes build.csv.
func WriteBuildCSV(dir string, rows []BuildRow) error {
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Cell < rows[j].Cell })
	f, err := os.Create(filepath.Join(dir, "build.csv"))
	if err != nil {
		return err
	}
	w := csv.NewWriter(f)
	w.Write([]string{"cell", "kernel", "variant", "toolchain", "status", "reason", "seconds", "log"})
	for _, r := range rows {
		w.Write([]string{r.Cell, r.Kernel, r.Variant, r.Toolchain, r.Status, r.Reason,
			strconv.FormatFloat(r.Seconds, 'f', 2, 64), r.Log})
	}
	w.Flush()
	if err := w.Error(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
