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
	Kernel []Record   // kind "kernel", file order
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

// Load reads run.json, results.jsonl and, when present, build.csv of a
// results folder. results.csv is a view of results.jsonl for spreadsheets and
// is not read: results.jsonl is the one source of measurements (the run
// stage writes an error record for a crash).
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
	family := map[string]string{}
	for _, t := range f.Run.Toolchains {
		family[t.ID] = t.Family
	}
	for _, r := range recs {
		if r.Clock == "" {
			r.inferredClock = InferClock(family[r.Toolchain], r.Toolchain)
		}
		f.add(r)
	}
	if f.Builds, err = ReadBuildCSV(dir); err != nil {
		return nil, err
	}
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
