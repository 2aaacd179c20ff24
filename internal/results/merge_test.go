package results

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func writeBatch(t *testing.T, dir, runJSON string, lines ...string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "logs", "run"), 0o755))
	if runJSON != "" {
		require.NoError(t, os.WriteFile(filepath.Join(dir, "run.json"), []byte(runJSON), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "results.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "logs", "run", filepath.Base(dir)+".log"), []byte("log"), 0o644))
	require.NoError(t, WriteBuildCSV(dir, []BuildRow{{Cell: "k.v.tc", Kernel: "k", Variant: "v", Toolchain: "tc", Status: "built"}}))
}

// A later batch's measurement of a (cell, size) replaces an earlier one, and
// a batch stopped before writing run.json still counts, named as interrupted.
func TestMergeKeepsTheLatestMeasurement(t *testing.T) {
	root := t.TempDir()
	a, b, c := filepath.Join(root, "a"), filepath.Join(root, "b"), filepath.Join(root, "c")
	writeBatch(t, a, `{"id":"a","started":"2026-01-01T00:00:00Z","finished":"2026-01-01T01:00:00Z","commit":"aaa",
		"gpus":[{"name":"G","driver":"1","memory_mib":"80"}],"toolchains":[{"id":"tc","family":"llvm","version":"19","path":"/cc"}]}`,
		`{"kind":"kernel","cell":"k.v.tc","size":1,"verified":false,"error":"wrong"}`,
		`{"kind":"kernel","cell":"k.v.tc","toolchain":"tc","size":2,"verified":true,"gbps":2}`,
		`{"kind":"copy","toolchain":"tc","gbps":99999}`)
	writeBatch(t, b, "",
		`{"kind":"kernel","cell":"k.v.tc","size":1,"verified":true,"gbps":1,"commit":"bbb","dirty":true}`)
	writeBatch(t, c, `{"id":"c","started":"2026-01-01T02:00:00Z","finished":"2026-01-01T03:00:00Z","commit":"ccc","dirty":true,"build_dirty":true,"gpus":[{"name":"G","driver":"1","memory_mib":80,"uuid":"GPU-1"}]}`,
		`{"kind":"copy","toolchain":"tc","gbps":3000,"target":"sm_90"}`,
		`{"kind":"kernel","cell":"k.v.tc","size":2,"trial":2,"verified":true,"gbps":2.1,"target":"sm_90"}`)
	out := filepath.Join(root, "merged")
	require.NoError(t, Merge(out, []string{a, b, c}))

	recs, err := ReadJSONL(out)
	require.NoError(t, err)
	require.Len(t, recs, 4, "trial 2 of size 2 is a measurement of its own (a record without trial is trial 1)")
	assert.Equal(t, 2.0, float64(recs[0].Size))
	assert.True(t, recs[1].Verified)
	assert.Equal(t, 3000.0, recs[2].GBps)

	// Provenance record by record: each batch's, where the record had none.
	assert.Equal(t, []string{"a", "a", "aaa", "19"}, []string{recs[0].BatchID, recs[0].RunID, recs[0].Commit, recs[0].ToolchainVersion})
	assert.False(t, recs[0].Dirty)
	assert.Equal(t, []string{"b", "bbb"}, []string{recs[1].BatchID, recs[1].Commit})
	assert.True(t, recs[1].Dirty, "the record's own dirty flag stays")
	assert.Equal(t, []string{"c", "ccc", "GPU-1"}, []string{recs[3].BatchID, recs[3].Commit, recs[3].GPUUUID})
	assert.True(t, recs[3].Dirty)
	assert.Equal(t, 2, recs[3].Trial)

	b2, err := os.ReadFile(filepath.Join(out, "run.json"))
	require.NoError(t, err)
	js := string(b2)
	assert.Contains(t, js, `"commit": "ccc"`)
	assert.Contains(t, js, `"started": "2026-01-01T00:00:00Z"`)
	assert.Contains(t, js, `"finished": "2026-01-01T03:00:00Z"`)
	assert.Contains(t, js, `"b (interrupted: no run.json)"`)
	assert.Contains(t, js, `"command": "/cc"`)
	assert.Contains(t, js, `"verified": 1`)
	run, err := ReadRun(out)
	require.NoError(t, err)
	assert.True(t, run.Dirty, "batch c ran from a dirty tree")
	assert.Equal(t, []Batch{
		{ID: "a", Folder: "a", Commit: "aaa", Toolchains: []string{"tc 19"}, Records: 1},
		{ID: "b", Folder: "b", Interrupted: true, Records: 1},
		{ID: "c", Folder: "c", Commit: "ccc", Dirty: true, BuildDirty: true, GPUs: []string{"GPU-1"}, Records: 1}}, run.Batches)
	assert.True(t, run.BuildDirty, "batch c's binaries came from a dirty tree")
	for _, f := range []string{"results.csv", "build.csv", "logs/run/a.log", "logs/run/c.log"} {
		assert.FileExists(t, filepath.Join(out, f))
	}
	assert.Error(t, Merge(out, []string{a}))

	// A later part from a machine without tc keeps the version a found.
	d := filepath.Join(root, "d")
	writeBatch(t, d, `{"id":"d","commit":"ddd","toolchains":[{"id":"tc","family":"llvm","missing":"cc not found on PATH"}]}`,
		`{"kind":"kernel","cell":"k.v.other","size":1,"verified":true,"gbps":1}`)
	require.NoError(t, Merge(out, []string{out, d}))
	run, err = ReadRun(out)
	require.NoError(t, err)
	require.Len(t, run.Toolchains, 1)
	assert.Equal(t, "19", run.Toolchains[0].Version)
}

// writeRun writes a folder of records under dir with its build rows and logs,
// one per cell the records name.
func writeRun(t *testing.T, dir, runJSON string, lines ...string) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, RunFile), []byte(runJSON), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, JSONLFile), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	recs, err := ReadJSONL(dir)
	require.NoError(t, err)
	var rows []BuildRow
	for _, r := range recs {
		if r.Kind == KindKernel && (len(rows) == 0 || rows[len(rows)-1].Cell != r.Cell) {
			rows = append(rows, BuildRow{Cell: r.Cell, Kernel: r.Kernel, Variant: r.Variant, Toolchain: r.Toolchain, Status: StatusBuilt})
			require.NoError(t, os.MkdirAll(filepath.Join(dir, LogsDir, "run"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(dir, RunLog(r.Cell)), []byte(dir), 0o644))
		}
	}
	require.NoError(t, WriteBuildCSV(dir, rows))
}

func kernelRec(cell, commit, build string, size, trial int, tc string) string {
	parts := strings.Split(cell, ".")
	return fmt.Sprintf(`{"kind":"kernel","cell":%q,"kernel":%q,"variant":%q,"toolchain":%q,"size":%d,"trial":%d,"verified":true,"median_s":0.001,"gbps":1,"device":"NVIDIA H200","target":"sm_90","commit":%q,"build_key":%q,"toolchain_version":%q}`,
		cell, parts[0], parts[1], parts[2], size, trial, commit, build, tc)
}

const h200 = `"gpus":[{"name":"NVIDIA H200","uuid":"GPU-%s"}],"toolchains":[{"id":"clang19-sm90","family":"llvm","version":"19.1.7"},{"id":"clang16-sm90","family":"llvm","version":"16.0.6"}]`

// One suite is taken out of a folder that ran two (kernels and toolchains
// filtered, bandwidth records of the toolchains taken), each part keeps its
// provenance, and a later partial run merges into the merged folder itself,
// whose parts stay parts.
func TestMergeTakesOneSuiteAndKeepsEachPart(t *testing.T) {
	root := t.TempDir()
	mixed, other, later := filepath.Join(root, "mixed"), filepath.Join(root, "other"), filepath.Join(root, "later")
	writeRun(t, mixed, `{"id":"mixed","commit":"c1","finished":"x","sizes":"ci","trials":3,"templates":{"templates/kernels/snap_ui.yaml":"old","templates/kernels/lcals_a.yaml":"l0"},`+fmt.Sprintf(h200, "A")+`}`,
		kernelRec("snap_ui.omp-raw.clang16-sm90", "c1", "b1", 8, 1, "16.0.6"),
		kernelRec("lcals_a.raja-omp.clang16-sm90", "c1", "b2", 8, 1, "16.0.6"),
		kernelRec("lcals_a.raja-omp.clang19-sm90", "c1", "b3", 8, 1, "19.1.7"),
		`{"kind":"stream","op":"triad","toolchain":"clang16-sm90","gbps":4000,"device":"NVIDIA H200"}`,
		`{"kind":"stream","op":"triad","toolchain":"clang19-sm90","gbps":4100,"device":"NVIDIA H200"}`)
	writeRun(t, other, `{"id":"other","commit":"c2","finished":"x","sizes":"gpu","trials":1,"templates":{"templates/kernels/snap_ui.yaml":"new","templates/kernels/lcals_a.yaml":"l"},`+fmt.Sprintf(h200, "B")+`}`,
		kernelRec("snap_ui.omp-raw.clang19-sm90", "c2", "b4", 8, 1, "19.1.7"))
	suite := filepath.Join(root, "nvidia-h200-testsnap")
	require.NoError(t, MergeWith(suite, []string{mixed, other}, MergeOptions{Kernels: []string{"snap_ui"}}))

	recs, err := ReadJSONL(suite)
	require.NoError(t, err)
	var got []string
	for _, r := range recs {
		got = append(got, r.Kind+" "+r.Cell+r.Op+" "+r.Toolchain)
	}
	assert.Equal(t, []string{"kernel snap_ui.omp-raw.clang16-sm90 clang16-sm90", "stream triad clang16-sm90",
		"kernel snap_ui.omp-raw.clang19-sm90 clang19-sm90"}, got, "the other suite's records and the stream of a toolchain not taken from that folder stay behind")
	rows, err := ReadBuildCSV(suite)
	require.NoError(t, err)
	require.Len(t, rows, 2)
	assert.FileExists(t, filepath.Join(suite, RunLog("snap_ui.omp-raw.clang16-sm90")))
	assert.NoFileExists(t, filepath.Join(suite, RunLog("lcals_a.raja-omp.clang16-sm90")))
	run, err := ReadRun(suite)
	require.NoError(t, err)
	require.Len(t, run.Batches, 2)
	assert.Equal(t, Batch{ID: "mixed", Folder: "mixed", Commit: "c1", Sizes: "ci", Trials: 3, Kernels: []string{"snap_ui"},
		Toolchains: []string{"clang16-sm90 16.0.6"}, GPUs: []string{"GPU-A"}, Records: 1, Templates: map[string]string{"templates/kernels/snap_ui.yaml": "old"}}, run.Batches[0],
		"the templates in which the part differs from the folder (the newest part's), of kernel descriptions only those of its kernels")
	assert.Equal(t, []string{"clang19-sm90 19.1.7"}, run.Batches[1].Toolchains)
	assert.Equal(t, "c2", run.Commit)
	assert.Equal(t, "new", run.Templates["templates/kernels/snap_ui.yaml"])
	assert.Equal(t, "ci, gpu", run.Sizes)
	assert.Equal(t, 3, run.Trials)
	assert.Equal(t, StateFinished, run.State)

	// A later partial run, into the current folder: its parts stay parts,
	// and the later measurement of a (cell, size), of another build, wins.
	writeRun(t, later, `{"id":"later","commit":"c3","finished":"x","sizes":"ci","trials":3,"templates":{"templates/kernels/snap_ui.yaml":"new","templates/kernels/lcals_a.yaml":"l"},`+fmt.Sprintf(h200, "C")+`}`,
		kernelRec("snap_ui.omp-raw.clang19-sm90", "c3", "b5", 8, 1, "19.1.7"),
		kernelRec("snap_ui.omp-raw.clang19-sm90", "c3", "b5", 8, 2, "19.1.7"))
	require.NoError(t, MergeWith(suite, []string{suite, later}, MergeOptions{Kernels: []string{"snap_ui"}}))
	run, err = ReadRun(suite)
	require.NoError(t, err)
	var parts []string
	for _, b := range run.Batches {
		parts = append(parts, fmt.Sprintf("%s from %s: %d", b.ID, b.Folder, b.Records))
	}
	assert.Equal(t, []string{"mixed from mixed: 1", "other from other: 0", "later from later: 2"}, parts)
	require.NoError(t, MergeWith(suite, []string{suite, later}, MergeOptions{Kernels: []string{"snap_ui"}}))
	again, err := ReadRun(suite)
	require.NoError(t, err)
	assert.Equal(t, run.Batches, again.Batches, "a run merged again into the folder that holds it stays one part")
	assert.Equal(t, "nvidia-h200-testsnap", run.ID)
	assert.Equal(t, []string{"mixed", "other", "later"}, run.MergedFrom)
	assert.Equal(t, map[string]string{"templates/kernels/snap_ui.yaml": "old"}, run.Batches[0].Templates, "a part's templates survive a second merge")
	log, err := os.ReadFile(filepath.Join(suite, RunLog("snap_ui.omp-raw.clang19-sm90")))
	require.NoError(t, err)
	assert.Equal(t, other+later, string(log), "a cell's log of two parts is both, in order, once")
}

// The trials of one (cell, size) are pooled, so they come from one build: a
// later part's build replaces the earlier's trials, and run.json says so.
func TestMergeKeepsOneBuildPerMeasurement(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	writeRun(t, a, `{"id":"a","finished":"x",`+fmt.Sprintf(h200, "A")+`}`,
		kernelRec("spmv.kk.clang19-sm90", "c1", "old", 8, 1, "19.1.7"),
		kernelRec("spmv.kk.clang19-sm90", "c1", "old", 8, 2, "19.1.7"),
		kernelRec("spmv.kk.clang19-sm90", "c1", "old", 16, 2, "19.1.7"))
	writeRun(t, b, `{"id":"b","finished":"x",`+fmt.Sprintf(h200, "B")+`}`,
		kernelRec("spmv.kk.clang19-sm90", "c2", "new", 8, 1, "19.1.7"),
		kernelRec("spmv.kk.clang19-sm90", "c2", "old", 16, 1, "19.1.7"))
	out := filepath.Join(root, "out")
	require.NoError(t, Merge(out, []string{a, b}))
	assert.Equal(t, []string{"16#2 a", "8#1 b", "16#1 b"}, trials(t, out), "size 8's trials of a were another build; size 16's trials share one")
	run, err := ReadRun(out)
	require.NoError(t, err)
	assert.Equal(t, []string{
		"spmv.kk.clang19-sm90 size 8: trial 1 of batch a dropped: another code than trial 1 of batch b",
		"spmv.kk.clang19-sm90 size 8: trial 2 of batch a dropped: another code than trial 1 of batch b"}, run.MergeNotes)
}

// trials lists a folder's kernel records as "size#trial batch", with
// "+tuned" for a tuned one and "(was N)" for one a merge numbered anew.
func trials(t *testing.T, dir string) []string {
	t.Helper()
	recs, err := ReadJSONL(dir)
	require.NoError(t, err)
	var got []string
	for _, r := range recs {
		if r.Kind != KindKernel {
			continue
		}
		s := fmt.Sprintf("%d#%d %s", r.Size, r.Unit().Trial, r.BatchID)
		if r.TunedBest {
			s = strings.Replace(s, " ", "+tuned ", 1) // after the trial
		}
		if r.BatchTrial > 0 {
			s += fmt.Sprintf(" (was %d)", r.BatchTrial)
		}
		got = append(got, s)
	}
	return got
}

// gpuRec is a record of a GPU cell with its device code's hash; a tuned
// record is the measurement at the tuned best.
func gpuRec(cell, commit, build, hash string, size, trial int, tuned bool) string {
	r := strings.Replace(kernelRec(cell, commit, build, size, trial, "19.1.7"), `"kind"`, fmt.Sprintf(`"device_hash":%q,"kind"`, hash), 1)
	if tuned {
		r = strings.Replace(r, `"kind"`, `"tuned":true,"kind"`, 1)
	}
	return r
}

// Trials of the same device code run at two commits (only the harness's host
// code changed, so the build keys differ) are pooled: the later batch's
// colliding trials are numbered after the earlier's, with a note each; a
// (cell, size) whose device code changed keeps only the later code's trials,
// and a failed trial the later batch measured again with the same code goes.
// Merging the result again, alone or with its last part, changes nothing.
func TestMergePoolsTrialsOfTheSameCode(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	const cell, other, failed = "spmv.kk.clang19-sm90", "dot.kk.clang19-sm90", "axpby.kk.clang19-sm90"
	writeRun(t, a, `{"id":"a","commit":"c1","finished":"x",`+fmt.Sprintf(h200, "A")+`}`,
		gpuRec(cell, "c1", "k1", "h", 8, 1, false),
		gpuRec(cell, "c1", "k1", "h", 8, 1, true),
		gpuRec(other, "c1", "k3", "d1", 8, 1, false),
		strings.Replace(gpuRec(failed, "c1", "k5", "x", 8, 1, false), `"verified":true`, `"verified":false,"error":"harness"`, 1))
	writeRun(t, b, `{"id":"b","commit":"c2","finished":"x",`+fmt.Sprintf(h200, "A")+`}`,
		gpuRec(cell, "c2", "k2", "h", 8, 1, false),
		gpuRec(cell, "c2", "k2", "h", 8, 2, false),
		gpuRec(other, "c2", "k4", "d2", 8, 1, false),
		gpuRec(other, "c2", "k4", "d2", 8, 2, false),
		gpuRec(failed, "c2", "k6", "x", 8, 1, false))
	out := filepath.Join(root, "out")
	require.NoError(t, Merge(out, []string{a, b}))
	want := []string{"8#1 a", "8#1+tuned a", "8#2 b (was 1)", "8#3 b (was 2)", "8#1 b", "8#2 b", "8#1 b"}
	assert.Equal(t, want, trials(t, out), "the tuned trial of a stays; dot's trial of a ran another device code; axpby's failed in a")
	run, err := ReadRun(out)
	require.NoError(t, err)
	notes := []string{
		"dot.kk.clang19-sm90 size 8: trial 1 of batch a dropped: another code than trial 2 of batch b",
		"axpby.kk.clang19-sm90 size 8: trial 1 of batch a dropped: it failed, and batch b measured the same code again",
		"spmv.kk.clang19-sm90 size 8: trial 1 of batch b numbered 2: the same code as trial 1 of batch a",
		"spmv.kk.clang19-sm90 size 8: trial 2 of batch b numbered 3: the same code as trial 1 of batch a"}
	assert.ElementsMatch(t, notes, run.MergeNotes)
	jsonl, err := os.ReadFile(filepath.Join(out, JSONLFile))
	require.NoError(t, err)

	for _, parts := range [][]string{{out}, {out, b}, {out, a, b}} {
		require.NoError(t, MergeWith(out, parts, MergeOptions{Kernels: []string{"spmv", "dot", "axpby"}}))
		again, err := os.ReadFile(filepath.Join(out, JSONLFile))
		require.NoError(t, err)
		assert.Equal(t, string(jsonl), string(again), "merged again with %d parts: the same records", len(parts))
		run, err := ReadRun(out)
		require.NoError(t, err)
		assert.ElementsMatch(t, notes, run.MergeNotes)
	}
}

// The same device code at another launch (the machine model's default
// changed between the batches) is another measurement: the later launch's
// trials stay, the earlier's go with a note.
func TestMergeKeepsOneLaunch(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	const cell = "spmv.kk.clang19-sm90"
	launch := func(rec, teams string) string {
		return strings.Replace(rec, `"kind"`, `"defaults":{"max_teams":`+teams+`},"kind"`, 1)
	}
	writeRun(t, a, `{"id":"a","commit":"c1","finished":"x",`+fmt.Sprintf(h200, "A")+`}`,
		launch(gpuRec(cell, "c1", "k1", "h", 8, 1, false), "1584"),
		launch(gpuRec(cell, "c1", "k1", "h", 8, 2, false), "1584"))
	writeRun(t, b, `{"id":"b","commit":"c2","finished":"x",`+fmt.Sprintf(h200, "A")+`}`,
		launch(gpuRec(cell, "c2", "k2", "h", 8, 1, false), "792"))
	out := filepath.Join(root, "out")
	require.NoError(t, Merge(out, []string{a, b}))
	assert.Equal(t, []string{"8#1 b"}, trials(t, out))
	run, err := ReadRun(out)
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{
		"spmv.kk.clang19-sm90 size 8: trial 1 of batch a dropped: another launch than trial 1 of batch b",
		"spmv.kk.clang19-sm90 size 8: trial 2 of batch a dropped: another launch than trial 1 of batch b"}, run.MergeNotes)
}

// A folder holds one platform's measurements: parts of two GPU models are
// refused, and nothing is written.
func TestMergeRefusesTwoPlatforms(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	writeRun(t, a, `{"id":"a","finished":"x",`+fmt.Sprintf(h200, "A")+`}`, kernelRec("dot.kk.clang19-sm90", "c1", "k", 8, 1, "19.1.7"))
	writeRun(t, b, `{"id":"b","finished":"x"}`,
		strings.Replace(kernelRec("dot.kk.clang19-sm90", "c1", "k", 16, 1, "19.1.7"), "NVIDIA H200", "NVIDIA H100 80GB HBM3", 1))
	out := filepath.Join(root, "out")
	err := Merge(out, []string{a, b})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "different GPU models: NVIDIA H100 80GB HBM3 (b); NVIDIA H200 (a)")
	assert.NoDirExists(t, out)
	require.NoError(t, MergeWith(out, []string{a, b}, MergeOptions{Kernels: []string{"axpby"}}), "nothing of b is taken")

	// One suite out of one run: a folder named twice is one part.
	one := filepath.Join(root, "one")
	require.NoError(t, MergeWith(one, []string{a, a + "/"}, MergeOptions{Kernels: []string{"dot"}}))
	run, err := ReadRun(one)
	require.NoError(t, err)
	require.Len(t, run.Batches, 1)
	assert.Equal(t, 1, run.Batches[0].Records)
	assert.Error(t, Merge(one, []string{a, a}), "an unfiltered merge of one folder is a copy")
}

// Two campaigns of the gpus scheduler name their workers' batches alike
// (gpu0-1): merged into one folder, the later one's batches are named with
// its folder, its records follow them, and the earlier keep theirs.
func TestMergeKeepsTwoCampaignsBatchesApart(t *testing.T) {
	root := t.TempDir()
	first, second := filepath.Join(root, "first"), filepath.Join(root, "second")
	campaign := func(commit, gpu string) string {
		return `{"id":"x","commit":"` + commit + `","finished":"x","sizes":"ci","trials":1,` + fmt.Sprintf(h200, gpu) +
			`,"merged_from":["gpu0-1"],"batches":[{"id":"gpu0-1","folder":"gpu0-1","commit":"` + commit + `","records":1}]}`
	}
	rec := func(cell, commit string) string {
		return strings.Replace(kernelRec(cell, commit, commit, 8, 1, "19.1.7"), `{"kind"`, `{"batch_id":"gpu0-1","kind"`, 1)
	}
	writeRun(t, first, campaign("c1", "A"), rec("spmv.omp-raw.clang19-sm90", "c1"))
	writeRun(t, second, campaign("c2", "A"), rec("dot.omp-raw.clang19-sm90", "c2"))
	for _, dir := range []string{first, second} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, CampaignFile), []byte("{}\n"), 0o644))
	}
	out := filepath.Join(root, "nvidia-h200-matrix")
	require.NoError(t, MergeWith(out, []string{first, second}, MergeOptions{}))
	require.NoError(t, MergeWith(out, []string{out, second}, MergeOptions{}), "merged again: still two parts")
	run, err := ReadRun(out)
	require.NoError(t, err)
	var parts []string
	for _, b := range run.Batches {
		parts = append(parts, b.ID+" from "+b.Folder+" at "+b.Commit)
	}
	assert.Equal(t, []string{"gpu0-1 from first at c1", "second/gpu0-1 from second at c2"}, parts)
	recs, err := ReadJSONL(out)
	require.NoError(t, err)
	got := map[string]string{}
	for _, r := range recs {
		got[r.Cell] = r.BatchID
	}
	assert.Equal(t, map[string]string{"spmv.omp-raw.clang19-sm90": "gpu0-1", "dot.omp-raw.clang19-sm90": "second/gpu0-1"}, got)
}

// A measurement at the tuned best stands beside the as-published one of the
// same code: when a later part measured the cell as published on another
// code, the earlier tuned trials go with a note, and a tuned measurement of
// the kept code stays.
func TestMergeKeepsTunedBesideItsCode(t *testing.T) {
	root := t.TempDir()
	a, b := filepath.Join(root, "a"), filepath.Join(root, "b")
	const cell, other = "spmv.kk.clang19-sm90", "dot.kk.clang19-sm90"
	writeRun(t, a, `{"id":"a","commit":"c1","finished":"x",`+fmt.Sprintf(h200, "A")+`}`,
		gpuRec(cell, "c1", "k1", "h1", 8, 1, false),
		gpuRec(cell, "c1", "k1", "h1", 8, 1, true),
		gpuRec(other, "c1", "k3", "d1", 8, 1, false),
		gpuRec(other, "c1", "k3", "d1", 8, 1, true))
	writeRun(t, b, `{"id":"b","commit":"c2","finished":"x",`+fmt.Sprintf(h200, "A")+`}`,
		gpuRec(cell, "c2", "k2", "h2", 8, 1, false),
		gpuRec(other, "c2", "k4", "d1", 8, 1, false))
	out := filepath.Join(root, "out")
	require.NoError(t, Merge(out, []string{a, b}))
	assert.Equal(t, []string{"8#1 a", "8#1+tuned a", "8#1 b", "8#2 b (was 1)"}, trials(t, out))
	run, err := ReadRun(out)
	require.NoError(t, err)
	assert.Contains(t, run.MergeNotes, "spmv.kk.clang19-sm90 size 8 tuned: trial 1 of batch a dropped: tuned on another code than trial 1 of batch b as published")
}

// PM_VARIANTS narrows a merge as PM_KERNELS does: a library's cells of a run
// go to the libraries folder, the layer's to the matrix.
func TestMergeTakesTheSelectedVariants(t *testing.T) {
	root := t.TempDir()
	a := filepath.Join(root, "a")
	writeRun(t, a, `{"id":"a","finished":"x",`+fmt.Sprintf(h200, "A")+`}`,
		kernelRec("dot.kk.clang19-sm90", "c1", "k", 8, 1, "19.1.7"),
		kernelRec("dot.lib.clang19-sm90", "c1", "k", 8, 1, "19.1.7"))
	out := filepath.Join(root, "out")
	require.NoError(t, MergeWith(out, []string{a}, MergeOptions{Variants: []string{"lib"}}))
	recs, err := ReadJSONL(out)
	require.NoError(t, err)
	var cells []string
	for _, r := range recs {
		if r.Kind == KindKernel {
			cells = append(cells, r.Cell)
		}
	}
	assert.Equal(t, []string{"dot.lib.clang19-sm90"}, cells)
}
