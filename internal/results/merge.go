package results

import (
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/portmatrix/portmatrix/internal/fsutil"
)

// MergeOptions say what a merge takes from its folders: the kernel records
// (and the build rows and logs) of these kernels and toolchains only, so that
// one suite can be taken out of a folder that ran several. Empty: all.
type MergeOptions struct {
	Kernels    []string
	Variants   []string
	Toolchains []string
}

// variantOf is a record's variant, from its cell ID (kernel.variant.toolchain)
// where the record does not name it.
func variantOf(variant, cell string) string {
	if variant != "" {
		return variant
	}
	if parts := strings.Split(cell, "."); len(parts) == 3 {
		return parts[1]
	}
	return ""
}

// takes reports whether the options select a kernel's variant measured by a
// toolchain.
func (o MergeOptions) takes(kernel, variant, toolchain string) bool {
	return (len(o.Kernels) == 0 || slices.Contains(o.Kernels, kernel)) &&
		(len(o.Variants) == 0 || slices.Contains(o.Variants, variant)) &&
		(len(o.Toolchains) == 0 || slices.Contains(o.Toolchains, toolchain))
}

// Merge joins results folders of one machine (a GPU host runs the matrix in
// several batches) into out: every record, every build row (later folders win
// for a cell), every log, and one run.json naming its sources.
func Merge(out string, dirs []string) error { return MergeWith(out, dirs, MergeOptions{}) }

// MergeWith is Merge of what opt selects (from one folder too: a suite
// taken out of a run of several). out may be one of dirs: a later
// partial run merged into the current folder. Each part (a folder, or each
// part of a merged folder) keeps its provenance in run.json's batches: its
// folder, commits, size set and trials, the kernels, compilers with versions
// and GPUs of its records, and the templates in which it differs from the
// folder. It refuses parts measured on different GPU models, or on the host
// of different CPU models: a folder is one platform's.
func MergeWith(out string, dirs []string, opt MergeOptions) error {
	var uniq []string // a folder named twice is one part
	for _, d := range dirs {
		uniq = AppendNew(uniq, filepath.Clean(d))
	}
	dirs = uniq
	filtered := len(opt.Kernels) > 0 || len(opt.Variants) > 0 || len(opt.Toolchains) > 0
	if len(dirs) < 2 && !(filtered && len(dirs) == 1) {
		return fmt.Errorf("merge needs at least two results folders, or one and the kernels, variants or toolchains to take from it")
	}
	var merged Run
	var recs []Record
	anyDirty, anyBuildDirty := false, false
	rows := map[string]BuildRow{}
	tcs := map[string]Toolchain{}
	runs := map[string]Run{} // batch id -> the run.json of its folder
	type source struct {
		dir  string
		logs []string // files under logs/ the options select
	}
	var sources []source
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
		noRun := os.IsNotExist(err)
		batch := Batch{ID: pr.ID, Folder: filepath.Base(dir), Commit: pr.Commit, Dirty: pr.Dirty, BuildCommit: pr.BuildCommit, BuildDirty: pr.BuildDirty,
			Interrupted: noRun || pr.Finished == "" || pr.State == StateInterrupted, Sizes: pr.Sizes, Trials: pr.Trials, Resumed: pr.Resumed}
		if batch.ID == "" {
			batch.ID = filepath.Base(dir)
		}
		if i == 0 {
			merged = pr
			merged.Cells, merged.Batches, merged.MergedFrom, merged.MergeNotes = Cells{}, nil, nil, nil
		}
		// A merged part's notes stay: what it dropped is gone from its records.
		merged.MergeNotes = AppendNew(merged.MergeNotes, pr.MergeNotes...)
		merged.Vocabulary = Union(merged.Vocabulary, pr.Vocabulary)
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
			// A part whose machine lacked the toolchain keeps the one found
			// where it ran: the failures' gates read its version.
			if found, ok := tcs[t.ID]; ok && t.Version == "" && found.Version != "" {
				continue
			}
			tcs[t.ID] = t
		}
		// The newest batch's commit and templates stand for the folder;
		// batches name each one's, and the folder is dirty when any batch was.
		if pr.Commit != "" {
			merged.Commit, merged.BuildCommit, merged.Templates = pr.Commit, pr.BuildCommit, pr.Templates
		}
		anyDirty = anyDirty || pr.Dirty
		anyBuildDirty = anyBuildDirty || pr.BuildDirty
		// A merged folder's parts stay parts: its batches are taken over
		// (their records name them), each with the folder they now come from.
		parts := []Batch{batch}
		if len(pr.Batches) > 0 {
			parts = nil
			// A collected campaign's batches name its shards' folders; merged
			// elsewhere, they come from the campaign's folder.
			_, err := os.Stat(filepath.Join(dir, CampaignFile))
			campaign := err == nil && filepath.Clean(dir) != filepath.Clean(out)
			for _, b := range pr.Batches {
				if b.Folder == "" || campaign {
					b.Folder = filepath.Base(dir)
				}
				if b.Sizes == "" && b.Trials == 0 {
					b.Sizes, b.Trials = pr.Sizes, pr.Trials
				}
				parts = append(parts, b)
			}
		}
		renamed := map[string]string{} // batch ids of this folder taken by another folder's batch
		for _, b := range parts {
			b.Templates = overlay(pr.Templates, b.Templates) // made a difference from the folder's below
			// Two campaigns' workers share names (gpu0-1): a batch of another
			// folder or commit keeps its id, this one is named with the
			// folder it comes from.
			if slices.ContainsFunc(merged.Batches, func(o Batch) bool {
				return o.ID == b.ID && (o.Folder != b.Folder || o.Commit != b.Commit)
			}) {
				renamed[b.ID] = filepath.Base(dir) + "/" + b.ID
				b.ID = renamed[b.ID]
			}
			// A run merged again (into the folder that holds it) is one part.
			merged.Batches = slices.DeleteFunc(merged.Batches, func(o Batch) bool { return o.ID == b.ID })
			merged.Batches = append(merged.Batches, b)
			runs[b.ID] = pr
		}
		if id, ok := renamed[batch.ID]; ok {
			batch.ID = id
		}
		merged.GPUs = AppendNew(merged.GPUs, pr.GPUs...)
		switch {
		case noRun:
			merged.MergedFrom = AppendNew(merged.MergedFrom, batch.ID+" (interrupted: no run.json)")
		case len(pr.Batches) > 0:
			merged.MergedFrom = AppendNew(merged.MergedFrom, pr.MergedFrom...)
		default:
			merged.MergedFrom = AppendNew(merged.MergedFrom, batch.ID)
		}
		batchRecs, err := ReadJSONL(dir)
		if err != nil {
			return err
		}
		for i := range batchRecs {
			if id, ok := renamed[batchRecs[i].BatchID]; ok {
				batchRecs[i].BatchID = id
			}
		}
		recs = append(recs, stampBatch(selectRecords(batchRecs, opt), batch, pr)...)
		builds, err := ReadBuildCSV(dir)
		if err != nil {
			return err
		}
		for _, r := range builds {
			if opt.takes(r.Kernel, variantOf(r.Variant, r.Cell), r.Toolchain) {
				rows[r.Cell] = r
			}
		}
		logs, err := selectLogs(dir, opt)
		if err != nil {
			return err
		}
		sources = append(sources, source{dir, logs})
	}
	recs, notes := latestOnly(recs)
	merged.MergeNotes = AppendNew(merged.MergeNotes, notes...)
	if err := onePlatform(recs, runs); err != nil {
		return err
	}
	// A cell's log of several parts is theirs in order, as a resumed run
	// appends to it; read all before writing, as out may be a source.
	logs := map[string][]byte{}
	for _, s := range sources {
		for _, rel := range s.logs {
			b, err := os.ReadFile(filepath.Join(s.dir, rel))
			if err != nil {
				return err
			}
			if !bytes.Contains(logs[rel], b) {
				logs[rel] = append(logs[rel], b...)
			}
		}
	}
	for _, rel := range sortedKeys(logs) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(out, rel)), 0o755); err != nil {
			return err
		}
		if err := fsutil.WriteFile(filepath.Join(out, rel), logs[rel], 0o644); err != nil {
			return err
		}
	}
	merged.ID = filepath.Base(out)
	merged.Dirty, merged.BuildDirty = anyDirty, anyBuildDirty
	merged.State, merged.PID, merged.Resumed = StateFinished, 0, nil
	merged.Toolchains = nil
	for _, id := range sortedKeys(tcs) {
		merged.Toolchains = append(merged.Toolchains, tcs[id])
	}
	describeBatches(merged.Batches, recs, merged.Templates)
	merged.Sizes, merged.Trials = "", 0
	for _, b := range merged.Batches {
		if b.Sizes != "" && !slices.Contains(strings.Split(merged.Sizes, ", "), b.Sizes) {
			merged.Sizes = strings.TrimPrefix(merged.Sizes+", "+b.Sizes, ", ")
		}
		merged.Trials = max(merged.Trials, b.Trials)
	}
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

// overlay is a batch's templates: its folder's, with the batch's differences
// from them ("" where it had none).
func overlay(folder, diff map[string]string) map[string]string {
	out := maps.Clone(folder)
	for k, v := range diff {
		if out == nil {
			out = map[string]string{}
		}
		if v == "" {
			delete(out, k)
		} else {
			out[k] = v
		}
	}
	return out
}

// selectRecords keeps the kernel records opt selects and the bandwidth
// records (stream, copy) of the toolchains those were measured with.
func selectRecords(recs []Record, opt MergeOptions) []Record {
	if len(opt.Kernels) == 0 && len(opt.Variants) == 0 && len(opt.Toolchains) == 0 {
		return recs
	}
	measured := map[string]bool{}
	for _, r := range recs {
		if r.Kind == KindKernel && opt.takes(r.Kernel, variantOf(r.Variant, r.Cell), r.Toolchain) {
			measured[r.Toolchain] = true
		}
	}
	var out []Record
	for _, r := range recs {
		if r.Kind == KindKernel && opt.takes(r.Kernel, variantOf(r.Variant, r.Cell), r.Toolchain) || r.Kind != KindKernel && measured[r.Toolchain] {
			out = append(out, r)
		}
	}
	return out
}

// selectLogs lists the files under dir's logs/ (relative to dir) of the cells
// opt selects; a log not named by a cell (kernel.variant.toolchain) is kept.
func selectLogs(dir string, opt MergeOptions) ([]string, error) {
	var out []string
	err := filepath.WalkDir(filepath.Join(dir, LogsDir), func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		parts := strings.Split(strings.TrimSuffix(d.Name(), ".log"), ".")
		if len(parts) == 3 && !opt.takes(parts[0], parts[1], parts[2]) {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		out = append(out, rel)
		return err
	})
	return out, err
}

// onePlatform refuses records of different GPU models, and host records of
// parts whose hosts had different CPU models: pooled trials or figures of
// two platforms would mean neither.
func onePlatform(recs []Record, runs map[string]Run) error {
	gpus, cpus := map[string][]string{}, map[string][]string{}
	for _, r := range recs {
		switch {
		case r.Device == "" || r.Kind != KindKernel:
		case r.Device == "host":
			if cpu := runs[r.BatchID].Host.CPU; cpu != "" {
				cpus[cpu] = AppendNew(cpus[cpu], r.BatchID)
			}
		default:
			gpus[r.Device] = AppendNew(gpus[r.Device], r.BatchID)
		}
	}
	for what, m := range map[string]map[string][]string{"GPU models": gpus, "host CPU models": cpus} {
		if len(m) > 1 {
			var say []string
			for _, k := range sortedKeys(m) {
				say = append(say, fmt.Sprintf("%s (%s)", k, strings.Join(m[k], ", ")))
			}
			return fmt.Errorf("merge: the parts measured on different %s: %s; a results folder holds one platform's (index each platform's folder of its own)", what, strings.Join(say, "; "))
		}
	}
	return nil
}

// describeBatches fills in what each batch contributed to the merged records:
// kernels, compilers with versions and GPUs of its records, how many kernel
// records, and its templates where they differ from the folder's (of the
// kernel descriptions, those of its kernels).
func describeBatches(batches []Batch, recs []Record, folder map[string]string) {
	type seen struct {
		kernels, tcs, gpus map[string]bool
		n                  int
	}
	by := map[string]*seen{}
	for _, r := range recs {
		s := by[r.BatchID]
		if s == nil {
			s = &seen{map[string]bool{}, map[string]bool{}, map[string]bool{}, 0}
			by[r.BatchID] = s
		}
		if r.GPUUUID != "" {
			s.gpus[r.GPUUUID] = true
		}
		if r.Kind != KindKernel {
			continue
		}
		s.n++
		if r.Kernel != "" {
			s.kernels[r.Kernel] = true
		}
		if r.Toolchain != "" {
			s.tcs[strings.TrimSpace(r.Toolchain+" "+r.ToolchainVersion)] = true
		}
	}
	for i := range batches {
		b := &batches[i]
		b.Kernels, b.Toolchains, b.GPUs, b.Records = nil, nil, nil, 0
		if s := by[b.ID]; s != nil {
			b.Kernels, b.Toolchains, b.GPUs, b.Records = sortedKeys(s.kernels), sortedKeys(s.tcs), sortedKeys(s.gpus), s.n
		}
		// Of kernel descriptions, only those of the kernels it contributed.
		other := func(path string) bool {
			k, ok := strings.CutPrefix(path, "templates/kernels/")
			return ok && !slices.Contains(b.Kernels, strings.TrimSuffix(k, ".yaml"))
		}
		diff := map[string]string{}
		for k, v := range b.Templates {
			if folder[k] != v && !other(k) {
				diff[k] = v
			}
		}
		for k := range folder {
			if _, ok := b.Templates[k]; !ok && len(b.Templates) > 0 && !other(k) {
				diff[k] = ""
			}
		}
		b.Templates = nil
		if len(diff) > 0 {
			b.Templates = diff
		}
	}
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

// latestOnly keeps, for each toolchain, its last record of each stream op,
// and of the kernel records those that may be pooled as the trials of one
// measurement. A record is named by (batch, cell, size, trial, tuned): one
// seen twice (a folder merged again into itself) is one, the last. A
// record's code is the device code it ran on a GPU (device_hash: the
// harness's host code may differ), else its build (build_key; host cells,
// whose harness and kernel are one binary), at one launch (the machine
// model's defaults, the tuned configuration). For each (cell, size, tuned),
// the records of the code of its last record are kept, others dropped: a
// later part re-measures after a fix; and a tuned measurement stays only
// beside kept as-published trials of its code. Records of that code from several
// batches are pooled as more trials: a batch whose trials collide with an
// earlier batch's is numbered after them, in part order then record order
// (batch_trial keeps its own number); a failed trial of a batch before the
// last is dropped (the later one re-measured after a fix). A record whose
// code is not known (older folders) replaces the earlier record of its
// (cell, size, trial).
// Each drop and renumbering is said in notes.
func latestOnly(recs []Record) (kept []Record, notes []string) {
	keys := make([]string, len(recs))
	last := map[string]int{}
	for i, r := range recs {
		switch r.Kind {
		case KindKernel:
			keys[i] = recordID(r)
		case KindCopy:
			keys[i] = "copy@" + r.Toolchain
		case KindStream:
			keys[i] = "stream@" + r.Op + "@" + r.Toolchain
		default:
			continue
		}
		last[keys[i]] = i
	}
	// The kernel records named once, by (cell, size, tuned) in part order.
	groups := map[string][]int{}
	var order []string
	for i, r := range recs {
		if r.Kind != KindKernel || last[keys[i]] != i {
			continue
		}
		m := measurement(r)
		if groups[m] == nil {
			order = append(order, m)
		}
		groups[m] = append(groups[m], i)
	}
	drop := map[int]bool{}
	for _, m := range order {
		notes = append(notes, pool(recs, groups[m], drop)...)
	}
	notes = append(notes, tunedBeside(recs, groups, drop)...)
	for i, r := range recs {
		if keys[i] != "" && last[keys[i]] != i || drop[i] {
			continue
		}
		kept = append(kept, r)
	}
	return kept, notes
}

// pool numbers the records idx (of one (cell, size, tuned), in part order)
// as trials of one code, the last record's: it marks in drop those of
// another code, failed ones of the code a later batch measured again, and
// those a later record of unknown code replaces, renumbers
// in recs a batch's records that collide with an earlier batch's, and says
// each drop and renumbering.
func pool(recs []Record, idx []int, drop map[int]bool) (notes []string) {
	lastRec := recs[idx[len(idx)-1]]
	var batches []string
	of := map[string][]int{} // batch id -> its records of the group
	for _, i := range idx {
		r := recs[i]
		if same, known := sameCode(r, lastRec); known && !same {
			drop[i] = true
			what := "code"
			switch {
			case r.TimedBy() != lastRec.TimedBy():
				what = "clock"
			case r.CudaSched != lastRec.CudaSched:
				what = "wait for the GPU (cuda_sched)"
			case r.Flush() != lastRec.Flush():
				what = "flush of the L2 (flush_by)"
			case !sameLaunch(r, lastRec):
				what = "launch"
			}
			notes = append(notes, fmt.Sprintf("%s: trial %d of batch %s dropped: another %s than trial %d of batch %s",
				measurementName(r), batchTrial(r), r.BatchID, what, batchTrial(lastRec), lastRec.BatchID))
			continue
		}
		if of[r.BatchID] == nil {
			batches = append(batches, r.BatchID)
		}
		of[r.BatchID] = append(of[r.BatchID], i)
	}
	poolable := func(i int) bool { same, known := sameCode(recs[i], lastRec); return same && known }
	// A failed trial of a batch that a later batch measured again with the
	// same code goes: the later batch re-measured after a fix of the
	// harness, and a failed trial pooled would leave the measurement unusable.
	for _, b := range batches[:len(batches)-1] {
		of[b] = slices.DeleteFunc(of[b], func(i int) bool {
			if recs[i].Usable() || !poolable(i) {
				return false
			}
			drop[i] = true
			notes = append(notes, fmt.Sprintf("%s: trial %d of batch %s dropped: it failed, and batch %s measured the same code again",
				measurementName(recs[i]), batchTrial(recs[i]), b, lastRec.BatchID))
			return true
		})
	}
	slot := map[int]int{} // trial -> the record that holds it
	for _, b := range batches {
		collides, pooled := false, true
		for _, i := range of[b] {
			if h, ok := slot[batchTrial(recs[i])]; ok {
				collides = true
				pooled = pooled && poolable(i) && poolable(h)
			}
		}
		if !collides || !pooled {
			for _, i := range of[b] {
				t := batchTrial(recs[i])
				if h, ok := slot[t]; ok {
					drop[h] = true // a record of unknown code: the later wins
				}
				if recs[i].BatchTrial > 0 { // numbered anew by an earlier merge
					recs[i].Trial, recs[i].BatchTrial = t, 0
				}
				slot[t] = i
			}
			continue
		}
		held := heldTrials(recs, slot)
		next := slices.Max(slices.Collect(maps.Keys(slot)))
		for _, i := range of[b] {
			next++
			t := batchTrial(recs[i])
			recs[i].Trial, recs[i].BatchTrial = next, t
			slot[next] = i
			notes = append(notes, fmt.Sprintf("%s: trial %d of batch %s numbered %d: the same code as %s",
				measurementName(recs[i]), t, b, next, held))
		}
	}
	return notes
}

// tunedBeside drops the measurements at a tuned best (records marked tuned)
// whose code is not the code of the as-published measurement of their
// (cell, size) that the merge keeps: a tuned configuration is shown beside
// the launch it improves on, of one binary. It marks them in drop and says
// each.
func tunedBeside(recs []Record, groups map[string][]int, drop map[int]bool) (notes []string) {
	for _, idx := range groups {
		tuned := recs[idx[len(idx)-1]]
		if !tuned.TunedBest {
			continue
		}
		u := tuned.Unit()
		u.Trial, u.Tuned = 0, false
		pub := groups[u.String()]
		if len(pub) == 0 {
			continue
		}
		published := recs[pub[len(pub)-1]]
		if same, known := sameBuild(tuned, published); !known || same {
			continue
		}
		for _, i := range idx {
			if drop[i] {
				continue
			}
			drop[i] = true
			notes = append(notes, fmt.Sprintf("%s: trial %d of batch %s dropped: tuned on another code than trial %d of batch %s as published",
				measurementName(recs[i]), recs[i].Unit().Trial, recs[i].BatchID, published.Unit().Trial, published.BatchID))
		}
	}
	slices.Sort(notes)
	return notes
}

// sameCode reports whether two kernel records ran the same code at the same
// launch, timed with the same clock, and whether that is known (sameBuild).
// Two launches (the machine model's defaults, a tuned configuration) are two
// measurements, whatever the code, and so are two clocks (a harness that
// timed CUDA with events, and one that times it with the host's clock):
// trials of two clocks never pool, nor of two ways the host waited for the
// GPU (Record.CudaSched), nor of two flushes of the L2 (Record.Flush).
func sameCode(a, b Record) (same, known bool) {
	if !sameLaunch(a, b) || a.TimedBy() != b.TimedBy() || a.CudaSched != b.CudaSched || a.Flush() != b.Flush() {
		return false, true
	}
	return sameBuild(a, b)
}

// sameBuild reports whether two kernel records ran the same code, and
// whether that is known: on a GPU their device hashes, else (host cells,
// records without a device hash) their build keys, and neither of records
// of two device models.
func sameBuild(a, b Record) (same, known bool) {
	switch {
	case a.Device != b.Device:
		return false, a.Device != "" && b.Device != ""
	case a.Target != "host" && b.Target != "host" && a.DeviceHash != "" && b.DeviceHash != "":
		return a.DeviceHash == b.DeviceHash, true
	case a.BuildKey != "" && b.BuildKey != "":
		return a.BuildKey == b.BuildKey, true
	}
	return false, false
}

// sameLaunch reports whether two records ran at the same run-time
// parameters: the machine model's defaults and the tuned configuration
// (both absent: the generated values).
func sameLaunch(a, b Record) bool {
	return maps.Equal(a.Defaults, b.Defaults) && maps.Equal(a.Config, b.Config)
}

// heldTrials says which trials of which batches slot holds: "trials 1-2 of
// batch a, trial 3 of batch b".
func heldTrials(recs []Record, slot map[int]int) string {
	var batches []string
	by := map[string][]int{}
	for _, t := range slices.Sorted(maps.Keys(slot)) {
		b := recs[slot[t]].BatchID
		if by[b] == nil {
			batches = append(batches, b)
		}
		by[b] = append(by[b], t)
	}
	var say []string
	for _, b := range batches {
		ts := by[b]
		var runs []string
		for k := 0; k < len(ts); {
			e := k
			for e+1 < len(ts) && ts[e+1] == ts[e]+1 {
				e++
			}
			if e == k {
				runs = append(runs, fmt.Sprint(ts[k]))
			} else {
				runs = append(runs, fmt.Sprintf("%d-%d", ts[k], ts[e]))
			}
			k = e + 1
		}
		word := "trials"
		if len(ts) == 1 {
			word = "trial"
		}
		say = append(say, fmt.Sprintf("%s %s of batch %s", word, strings.Join(runs, ", "), b))
	}
	return strings.Join(say, ", ")
}

// batchTrial is the trial number a record's batch gave it.
func batchTrial(r Record) int {
	if r.BatchTrial > 0 {
		return r.BatchTrial
	}
	return r.Unit().Trial
}

// recordID names a kernel record across merges: its batch and its batch's
// (cell, size, trial, tuned); a record of unknown code (neither device hash
// nor build key) by its (cell, size, trial, tuned) alone, so that a later
// batch's replaces it.
func recordID(r Record) string {
	u := r.Unit()
	u.Trial = batchTrial(r)
	if r.DeviceHash == "" && r.BuildKey == "" {
		return u.String()
	}
	return r.BatchID + "/" + u.String()
}

// measurement keys a record's (cell, size, tuned): the trials of one figure.
func measurement(r Record) string {
	u := r.Unit()
	u.Trial = 0
	return u.String()
}

// measurementName is a record's (cell, size, tuned) in a note.
func measurementName(r Record) string {
	if r.TunedBest {
		return fmt.Sprintf("%s size %d tuned", r.Cell, r.Size)
	}
	return fmt.Sprintf("%s size %d", r.Cell, r.Size)
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
