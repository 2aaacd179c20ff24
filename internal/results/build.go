package results

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/fsutil"
)

// BuildRow is one row of build.csv.
type BuildRow struct {
	Cell, Kernel, Variant, Toolchain string
	Status, Reason                   string
	Seconds                          float64
	Log                              string // relative to the results folder
	DeviceHash                       string // build.DeviceHash; empty in older folders
}

// Failed reports whether the row's cell failed to build (build.Failed).
func (r BuildRow) Failed() bool { return r.Status == StatusFailed }

// Skipped reports whether the row's cell was not built, for the reason the
// row gives (build.Skipped: off, or not for this toolchain).
func (r BuildRow) Skipped() bool { return r.Status == StatusSkipped }

// BuildHeader is the column list of build.csv.
var BuildHeader = []string{"cell", "kernel", "variant", "toolchain", "status", "reason", "seconds", "log", "device_hash"}

// WriteBuildCSV writes build.csv, rows sorted by cell.
func WriteBuildCSV(dir string, rows []BuildRow) error {
	b, err := buildLines(rows, true)
	if err != nil {
		return err
	}
	return fsutil.WriteFile(filepath.Join(dir, BuildFile), b, 0o644)
}

// AppendBuildCSV adds to build.csv of dir the rows of cells it has no row
// of (sorted by cell, after those it has), and returns them: a resumed run's
// build.csv keeps every row it had, byte for byte. Without a build.csv it is
// WriteBuildCSV.
func AppendBuildCSV(dir string, rows []BuildRow) ([]BuildRow, error) {
	have, err := ReadBuildCSV(dir)
	if err != nil {
		return nil, err
	}
	if _, serr := os.Stat(filepath.Join(dir, BuildFile)); errors.Is(serr, fs.ErrNotExist) {
		return rows, WriteBuildCSV(dir, rows)
	}
	seen := map[string]bool{}
	for _, r := range have {
		seen[r.Cell] = true
	}
	var add []BuildRow
	for _, r := range rows {
		if !seen[r.Cell] {
			add = append(add, r)
		}
	}
	if len(add) == 0 {
		return nil, nil
	}
	b, err := buildLines(add, false)
	if err != nil {
		return nil, err
	}
	file := filepath.Join(dir, BuildFile)
	old, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	if len(old) > 0 && old[len(old)-1] != '\n' {
		old = append(old, '\n')
	}
	return add, fsutil.WriteFile(file, append(old, b...), 0o644)
}

// buildLines is rows as lines of build.csv, sorted by cell, under the header
// when header: the one encoding of a row.
func buildLines(rows []BuildRow, header bool) ([]byte, error) {
	rows = append([]BuildRow(nil), rows...)
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].Cell < rows[j].Cell })
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	if header {
		w.Write(BuildHeader)
	}
	for _, r := range rows {
		w.Write([]string{r.Cell, r.Kernel, r.Variant, r.Toolchain, r.Status, r.Reason,
			strconv.FormatFloat(r.Seconds, 'f', 2, 64), r.Log, r.DeviceHash})
	}
	w.Flush()
	return buf.Bytes(), w.Error()
}

// ReadBuildCSV reads build.csv of dir; nil rows and no error when it is absent.
func ReadBuildCSV(dir string) ([]BuildRow, error) {
	t, err := readCSV(filepath.Join(dir, BuildFile))
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
			DeviceHash: t.str(row, "device_hash"),
		})
	}
	return out, t.errs.Err()
}

// csvTable is a CSV file with a header row, read by column name.
type csvTable struct {
	path string
	cols map[string]int
	rows [][]string
	errs diag.List
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
		t.errs.Add(diag.Pos{File: t.path, Line: n + 2}, "column %s: %q is not a number", col, s)
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
		t.errs.Add(diag.Pos{File: t.path, Line: n + 2}, "column %s: %q is not true or false", col, s)
	}
	return v
}
