package results

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// Folder is everything read back from a results folder.
type Folder struct {
	Dir    string
	Run    Run
	Kernel []Record   // kind "kernel", file order; rows only in results.csv appended
	Copy   []Record   // copy bandwidths: kind "copy", and kind "stream" of op "copy"
	Stream []Record   // kind "stream", every op
	Builds []BuildRow // nil when build.csv is absent
	Other  int        // records of other kinds, ignored
}

// ReadRun reads dir/run.json.
func ReadRun(dir string) (Run, error) {
	var r Run
	path := filepath.Join(dir, RunFile)
	data, err := os.ReadFile(path)
	if err != nil {
		return r, err
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// WriteRun writes dir/run.json.
func WriteRun(dir string, r Run) error { return WriteJSON(dir, RunFile, r) }

// Load reads run.json, results.jsonl and, when present, build.csv and
// results.csv of a results folder. Rows of results.csv that results.jsonl
// lacks (a run that crashed before printing) are added as kernel records.
func Load(dir string) (*Folder, error) {
	f := &Folder{Dir: dir}
	var err error
	if f.Run, err = ReadRun(dir); err != nil {
		return nil, err
	}
	recs, err := ReadJSONL(dir)
	if err != nil {
		return nil, err
	}
	for _, r := range recs {
		f.add(r)
	}
	if f.Builds, err = ReadBuildCSV(dir); err != nil {
		return nil, err
	}
	rows, err := ReadResultsCSV(dir)
	if err != nil {
		return nil, err
	}
	f.addMissing(rows)
	return f, nil
}

func (f *Folder) add(r Record) {
	switch r.Kind {
	case KindKernel, "":
		r.Kind = KindKernel
		f.Kernel = append(f.Kernel, r)
		return
	case KindStream:
		f.Stream = append(f.Stream, r)
	case KindCopy:
	default:
		f.Other++
		return
	}
	if r.IsRoofline() {
		f.Copy = append(f.Copy, r)
	}
}

// addMissing appends the results.csv rows whose (cell, size) has no record.
func (f *Folder) addMissing(rows []Record) {
	have := map[CellSize]bool{}
	for _, r := range f.Kernel {
		have[r.Key()] = true
	}
	for _, r := range rows {
		if !have[r.Key()] {
			f.Kernel = append(f.Kernel, r)
		}
	}
}
