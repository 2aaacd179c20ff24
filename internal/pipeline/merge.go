package pipeline

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/results"
)

// Merge joins results folders of one machine (a GPU host runs the matrix in
// several batches) into out: every record, every build row (later folders win
// for a cell), every log, and one run.json naming its sources.
func Merge(out string, dirs []string) error {
	if len(dirs) < 2 {
		return fmt.Errorf("merge needs at least two results folders")
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	var merged Provenance
	var jsonl []byte
	rows := map[string]results.BuildRow{}
	tcs := map[string]build.ToolchainInfo{}
	gpuSeen := map[string]bool{}
	for i, dir := range dirs {
		var pr Provenance
		b, err := os.ReadFile(filepath.Join(dir, "run.json"))
		switch {
		case os.IsNotExist(err):
			// A run stopped before its end has records but no run.json: its
			// records count, its provenance is that of the other folders.
			pr = Provenance{ID: filepath.Base(dir) + " (interrupted: no run.json)"}
		case err != nil:
			return err
		default:
			if err := json.Unmarshal(b, &pr); err != nil {
				return fmt.Errorf("%s: %w", filepath.Join(dir, "run.json"), err)
			}
		}
		if i == 0 {
			merged = pr
			merged.Cells = map[string]int{}
		}
		if pr.Started != "" && (merged.Started == "" || pr.Started < merged.Started) {
			merged.Started = pr.Started
		}
		if pr.Finished > merged.Finished {
			merged.Finished = pr.Finished
		}
		for _, t := range pr.Toolchains {
			if t.Command == "" {
				t.Command = t.Path
			}
			tcs[t.ID] = t
		}
		// The newest batch's commit stands for the folder; merged_from names all.
		if pr.Commit != "" {
			merged.Commit, merged.Dirty, merged.BuildCommit = pr.Commit, pr.Dirty, pr.BuildCommit
		}
		for _, g := range pr.GPUs {
			if !gpuSeen[g.Name+g.Driver] {
				gpuSeen[g.Name+g.Driver] = true
				if i > 0 {
					merged.GPUs = append(merged.GPUs, g)
				}
			}
		}
		merged.MergedFrom = append(merged.MergedFrom, pr.ID)
		recs, err := os.ReadFile(filepath.Join(dir, "results.jsonl"))
		if err != nil {
			return err
		}
		jsonl = append(jsonl, recs...)
		if err := readBuildCSV(filepath.Join(dir, "build.csv"), rows); err != nil && !os.IsNotExist(err) {
			return err
		}
		if err := copyTree(filepath.Join(dir, "logs"), filepath.Join(out, "logs")); err != nil {
			return err
		}
	}
	merged.ID = filepath.Base(out)
	merged.Toolchains = nil
	for _, id := range SortedKeys(tcs) {
		merged.Toolchains = append(merged.Toolchains, tcs[id])
	}
	if err := os.WriteFile(filepath.Join(out, "results.jsonl"), latestOnly(jsonl), 0o644); err != nil {
		return err
	}
	var list []results.BuildRow
	for _, id := range SortedKeys(rows) {
		list = append(list, rows[id])
		merged.Cells["total"]++
		merged.Cells[rows[id].Status]++
	}
	if err := results.WriteBuildCSV(out, list); err != nil {
		return err
	}
	if err := results.WriteCSV(out); err != nil {
		return err
	}
	recs, err := results.ReadJSONL(out)
	if err != nil {
		return err
	}
	countRuns(merged.Cells, recs)
	return results.WriteJSON(out, "run.json", merged)
}

func readBuildCSV(file string, rows map[string]results.BuildRow) error {
	f, err := os.Open(file)
	if err != nil {
		return err
	}
	defer f.Close()
	all, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return fmt.Errorf("%s: %w", file, err)
	}
	for _, r := range all[1:] {
		if len(r) < 8 {
			return fmt.Errorf("%s: short row %v", file, r)
		}
		var secs float64
		fmt.Sscan(r[6], &secs)
		rows[r[0]] = results.BuildRow{Cell: r[0], Kernel: r[1], Variant: r[2], Toolchain: r[3], Status: r[4],
			Reason: r[5], Seconds: secs, Log: r[7]}
	}
	return nil
}

func copyTree(src, dst string) error {
	return filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(src, path)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		copyFile(path, filepath.Join(dst, rel))
		return nil
	})
}

// latestOnly keeps, for each (cell, size), the kernel record of the last
// folder that measured it, and for each toolchain its last copy record: a
// later batch re-measures after a fix.
func latestOnly(jsonl []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(jsonl), []byte("\n"))
	last := map[string]int{}
	keys := make([]string, len(lines))
	for i, l := range lines {
		var r results.Record
		if json.Unmarshal(l, &r) != nil {
			continue
		}
		switch r.Str("kind") {
		case "kernel":
			keys[i] = fmt.Sprintf("%s@%d", r.Str("cell"), int64(r.Num("size")))
		case "copy":
			keys[i] = "copy@" + r.Str("toolchain")
		default:
			continue
		}
		last[keys[i]] = i
	}
	var out []byte
	for i, l := range lines {
		if keys[i] != "" && last[keys[i]] != i {
			continue
		}
		out = append(append(out, l...), '\n')
	}
	return out
}
