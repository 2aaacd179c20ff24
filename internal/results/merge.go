package results

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"sort"

	"github.com/portmatrix/portmatrix/internal/fsutil"
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
	var merged Run
	var recs []Record
	anyDirty, anyBuildDirty := false, false
	rows := map[string]BuildRow{}
	tcs := map[string]Toolchain{}
	for i, dir := range dirs {
		pr, err := ReadRun(dir)
		switch {
		case os.IsNotExist(err):
			// A run stopped before its end has records but no run.json: its
			// records count; what it knows of itself is on its records.
			pr = Run{ID: filepath.Base(dir)}
		case err != nil:
			return err
		}
		batch := Batch{ID: pr.ID, Commit: pr.Commit, Dirty: pr.Dirty, BuildCommit: pr.BuildCommit, BuildDirty: pr.BuildDirty,
			Interrupted: os.IsNotExist(err) || pr.Finished == ""}
		if batch.ID == "" {
			batch.ID = filepath.Base(dir)
		}
		if i == 0 {
			merged = pr
			merged.Cells = Cells{}
		}
		if pr.Vocabulary != nil {
			merged.Vocabulary = pr.Vocabulary
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
		// The newest batch's commit stands for the folder; batches name each
		// one's, and the folder is dirty when any batch was.
		if pr.Commit != "" {
			merged.Commit, merged.BuildCommit = pr.Commit, pr.BuildCommit
		}
		anyDirty = anyDirty || pr.Dirty
		anyBuildDirty = anyBuildDirty || pr.BuildDirty
		merged.Batches = append(merged.Batches, batch)
		merged.GPUs = AppendNew(merged.GPUs, pr.GPUs...)
		if os.IsNotExist(err) {
			merged.MergedFrom = append(merged.MergedFrom, batch.ID+" (interrupted: no run.json)")
		} else {
			merged.MergedFrom = append(merged.MergedFrom, batch.ID)
		}
		batchRecs, err := ReadJSONL(dir)
		if err != nil {
			return err
		}
		recs = append(recs, stampBatch(batchRecs, batch, pr)...)
		builds, err := ReadBuildCSV(dir)
		if err != nil {
			return err
		}
		for _, r := range builds {
			rows[r.Cell] = r
		}
		if err := CopyTree(filepath.Join(dir, LogsDir), filepath.Join(out, LogsDir)); err != nil {
			return err
		}
	}
	merged.ID = filepath.Base(out)
	merged.Dirty, merged.BuildDirty = anyDirty, anyBuildDirty
	merged.Toolchains = nil
	for _, id := range sortedKeys(tcs) {
		merged.Toolchains = append(merged.Toolchains, tcs[id])
	}
	recs = latestOnly(recs)
	if err := WriteRecords(out, recs); err != nil {
		return err
	}
	var list []BuildRow
	for _, id := range sortedKeys(rows) {
		list = append(list, rows[id])
		merged.Cells.AddBuild(rows[id].Status)
	}
	if err := WriteBuildCSV(out, list); err != nil {
		return err
	}
	if err := writeCSV(out, recs); err != nil {
		return err
	}
	merged.Cells.CountRuns(recs)
	return WriteRun(out, merged)
}

// CopyTree copies the folder src into dst; a missing src copies nothing.
func CopyTree(src, dst string) error {
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
		return CopyFile(path, filepath.Join(dst, rel))
	})
}

// stampBatch gives every record of a batch the provenance the batch's
// run.json knows and the record lacks (folders written before the run stage
// annotated records): batch and run id, commit, dirty flag, toolchain version
// and, on a host of one GPU, its UUID. A merged folder so keeps provenance
// record by record.
func stampBatch(recs []Record, b Batch, pr Run) []Record {
	versions := map[string]string{}
	for _, t := range pr.Toolchains {
		versions[t.ID] = t.Version
	}
	out := make([]Record, 0, len(recs))
	for _, r := range recs {
		if r.BatchID == "" {
			r.BatchID = b.ID
		}
		if r.RunID == "" {
			r.RunID = b.ID
		}
		if r.Commit == "" {
			r.Commit, r.Dirty = b.Commit, b.Dirty
		}
		if r.ToolchainVersion == "" {
			r.ToolchainVersion = versions[r.Toolchain]
		}
		if r.GPUUUID == "" && len(pr.GPUs) == 1 && r.Target != "" && r.Target != "host" {
			r.GPUUUID = pr.GPUs[0].UUID
		}
		out = append(out, r)
	}
	return out
}

// latestOnly keeps, for each (cell, size, trial), the kernel record of the
// last folder that measured it, and for each toolchain its last record of
// each stream op: a later batch re-measures after a fix.
func latestOnly(recs []Record) []Record {
	keys := make([]string, len(recs))
	last := map[string]int{}
	for i, r := range recs {
		switch r.Kind {
		case KindKernel:
			keys[i] = r.Unit().String() // each trial is kept
		case KindCopy:
			keys[i] = "copy@" + r.Toolchain
		case KindStream:
			keys[i] = "stream@" + r.Op + "@" + r.Toolchain
		default:
			continue
		}
		last[keys[i]] = i
	}
	var out []Record
	for i, r := range recs {
		if keys[i] != "" && last[keys[i]] != i {
			continue
		}
		out = append(out, r)
	}
	return out
}

// CopyFile copies src to dst, making dst's folder.
func CopyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	return fsutil.WriteFile(dst, b, 0o644)
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
