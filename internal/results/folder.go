// Package results writes a results folder: run.json (provenance),
// results.jsonl (each measurement as soon as it is made), results.csv,
// build.csv and logs/. See docs/results-format.md.
package results

import (
	"bufio"
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/fsutil"
)

// File and folder names of a results folder (docs/results-format.md); a
// tuning's files are internal/tune's (tune.CacheFile and the others).
const (
	RunFile    = "run.json"
	JSONLFile  = "results.jsonl"
	CSVFile    = "results.csv"
	BuildFile  = "build.csv"
	LogsDir    = "logs"
	FiguresDir = "figures"
	ClaimsFile = "claims.md"
	TablesFile = "tables.md"
	ReportFile = "report.html"
	// CampaignFile is a collected campaign's summary (internal/cluster:
	// items planned, measured, missing; the GPUs' agreement).
	CampaignFile = "cluster.json"
	maxLineSize  = 64 << 20
)

// BuildLog is the path, in a results folder, of a cell's build log.
func BuildLog(cell string) string { return LogsDir + "/build/" + cell + ".log" }

// RunLog is the path, in a results folder, of a cell's run log.
func RunLog(cell string) string { return LogsDir + "/run/" + cell + ".log" }

// Writer appends to a results folder. It holds every record of the folder
// (those a resumed folder had, read once when opened, and those added), so
// that a stage reads results.jsonl once.
type Writer struct {
	Dir     string
	mu      sync.Mutex
	jsonl   *os.File
	records []Record
	closed  bool
}

// Create makes dir (and dir/logs) and opens results.jsonl for appending.
// It refuses a folder that holds a run already: use Open to resume one.
func Create(dir string) (*Writer, error) {
	if Exists(dir) {
		return nil, fmt.Errorf("%s holds a run already; results folders are never overwritten (resume it with PM_RESUME=1 or -resume, or choose another folder)", dir)
	}
	return open(dir)
}

// Exists reports whether dir holds a run (run.json or results.jsonl).
func Exists(dir string) bool {
	for _, f := range []string{RunFile, JSONLFile} {
		if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}

// Open opens dir for appending, creating it when it does not exist. A torn
// last line of results.jsonl (a run killed while writing) is cut off first,
// with a warning, so that what is appended starts on a line of its own.
func Open(dir string) (*Writer, error) {
	if err := repairTail(filepath.Join(dir, JSONLFile)); err != nil {
		return nil, err
	}
	recs, err := ReadJSONL(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	w, err := open(dir)
	if w != nil {
		w.records = recs
	}
	return w, err
}

func open(dir string) (*Writer, error) {
	if err := os.MkdirAll(filepath.Join(dir, LogsDir, "run"), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(filepath.Join(dir, JSONLFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	return &Writer{Dir: dir, jsonl: f}, nil
}

// repairTail truncates file after its last newline when what follows it is
// not a whole record.
func repairTail(file string) error {
	b, err := os.ReadFile(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if len(b) == 0 || b[len(b)-1] == '\n' {
		return nil
	}
	cut := bytes.LastIndexByte(b, '\n') + 1
	var r Record
	if json.Unmarshal(b[cut:], &r) == nil {
		// A whole record without its newline: keep it, end its line.
		f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			return err
		}
		_, err = f.Write([]byte{'\n'})
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	line := bytes.Count(b[:cut], []byte{'\n'}) + 1
	fmt.Fprintf(Warnings, "warning: %s:%d: torn last line (%d bytes) dropped; its measurement runs again\n", file, line, len(b)-cut)
	return os.Truncate(file, int64(cut))
}

// Warnings receives what readers and writers skip (a torn last line).
var Warnings io.Writer = os.Stderr

// Add appends a record and syncs it to disk, so a later crash loses nothing.
func (w *Writer) Add(r Record) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	b, err := appendLine(nil, r)
	if err != nil {
		return err
	}
	if _, err := w.jsonl.Write(b); err != nil {
		return err
	}
	w.records = append(w.records, r)
	return w.jsonl.Sync()
}

// appendLine appends r as one line of results.jsonl: the one encoding of a
// record, for the Writer and WriteRecords.
func appendLine(b []byte, r Record) ([]byte, error) {
	line, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	return append(append(b, line...), '\n'), nil
}

// WriteRecords writes results.jsonl of dir at once (merge, collect), and
// makes dir.
func WriteRecords(dir string, recs []Record) error {
	var b []byte
	for _, r := range recs {
		var err error
		if b, err = appendLine(b, r); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return fsutil.WriteFile(filepath.Join(dir, JSONLFile), b, 0o644)
}

// Records returns every record of the folder: those it held when opened
// and those added since.
func (w *Writer) Records() []Record {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Record(nil), w.records...)
}

// Close writes results.csv from every record of results.jsonl; a second
// Close does nothing.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	w.closed = true
	err := w.jsonl.Close()
	if cerr := writeCSV(w.Dir, w.records); err == nil {
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
	return fsutil.WriteFile(filepath.Join(dir, name), append(b, '\n'), 0o644)
}

// ReadJSONL reads results.jsonl. Every bad line is an error naming
// file:line; the good ones are returned all the same. A bad last line
// without its newline is a record torn by a killed run: it is skipped with a
// warning naming file and line (to Warnings). Each record's Source is
// "results.jsonl:<line>".
func ReadJSONL(dir string) ([]Record, error) {
	file := filepath.Join(dir, JSONLFile)
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return parseJSONL(file, data)
}

// parseJSONL is the one parser of results.jsonl (file names it in errors).
func parseJSONL(file string, data []byte) ([]Record, error) {
	torn := len(data) > 0 && data[len(data)-1] != '\n'
	var out []Record
	var errs diag.List
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), maxLineSize)
	lines := bytes.Count(data, []byte{'\n'}) + 1
	for line := 1; sc.Scan(); line++ {
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		var r Record
		if err := json.Unmarshal(b, &r); err != nil {
			if torn && line == lines {
				fmt.Fprintf(Warnings, "warning: %s:%d: torn last line skipped (%v)\n", file, line, err)
				continue
			}
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

// CSVHeader is the column list of results.csv. The all_trials_ columns are
// the (cell, size) measurement over every trial, as tables.md shows it: GB/s
// of the median of all repetitions, its 95% bootstrap interval, and the
// minimum-traffic GB/s; empty where a trial failed.
var CSVHeader = []string{"cell", "kernel", "variant", "strategy", "toolchain", "size", "reps", "median_s", "min_s",
	"gbps", "gflops", "copy_gbps", "verified", "max_rel_err", "error",
	"trial", "gbps_min", "all_trials_gbps", "all_trials_gbps_lo", "all_trials_gbps_hi", "all_trials_gbps_min"}

// WriteCSV writes results.csv from results.jsonl: a row per kernel record,
// with the copy bandwidth measured by the same toolchain in the same run.
func WriteCSV(dir string) error {
	recs, err := ReadJSONL(dir)
	if err != nil && !os.IsNotExist(err) {
		return err
	}
	return writeCSV(dir, recs)
}

func writeCSV(dir string, recs []Record) error {
	copyBW := map[string]float64{}
	for _, r := range recs {
		if r.IsRoofline() {
			copyBW[r.Toolchain] = r.GBps
		}
	}
	var kernels []Record
	for _, r := range recs {
		if r.Kind == KindKernel {
			kernels = append(kernels, r)
		}
	}
	pooled := Measurements(kernels, "")
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
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
		all := make([]string, 4)
		if m := pooled[r.Key()]; m.Stats != nil && m.Bytes > 0 {
			all = []string{num(m.Bytes / m.Stats.Median / 1e9), num(m.Bytes / m.Stats.Hi / 1e9), num(m.Bytes / m.Stats.Lo / 1e9), ""}
			if b := m.Records[0].BytesMin; b > 0 {
				all[3] = num(b / m.Stats.Median / 1e9)
			}
		}
		w.Write(append([]string{r.Cell, r.Kernel, r.Variant, r.Strategy, r.Toolchain,
			strconv.FormatInt(r.Size, 10), strconv.Itoa(r.Reps),
			num(r.MedianS), num(r.MinS), num(r.GBps), num(r.GFlops), cb,
			strconv.FormatBool(r.Verified), maxErr, r.Error,
			strconv.Itoa(r.Unit().Trial), num(r.GBpsMin)}, all...))
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	return fsutil.WriteFile(filepath.Join(dir, CSVFile), buf.Bytes(), 0o644)
}
