package failures

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/portmatrix/portmatrix/internal/book"
	"github.com/portmatrix/portmatrix/internal/layout"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

const repoRoot = "../.."

func TestLoadReportsEveryProblemWithItsPosition(t *testing.T) {
	file := filepath.Join(t.TempDir(), "failures.yaml")
	src := `failures:
  - id: a
    stage: link
    kernel: "["
    variant: "*"
    toolchain: "*"
    error: "("
    cause: c
    resolution: gate
    repro: r
  - id: a
    stage: run
    kernel: "*"
    variant: "*"
    toolchain: "*"
    error: x
    cause: c
    resolution: fixed
    fix: not-a-commit
    repro: r
  - id: b
    stage: run
    kernel: "*"
    variant: "*"
    toolchain: "*"
    error: x
    resolution: maybe
    repro: r
`
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(file)
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{
		`:3:12: stage "link" is not one of build, run, tune`,
		`:4:13: bad kernel pattern`,
		`:7:12: bad error pattern`,
		`:2:5: resolution gate needs a gate field`,
		`:11:9: explanation "a" is listed twice`,
		`:19:10: fix "not-a-commit" is not a commit id`,
		`:21:5: explained failure needs field "cause"`,
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// A folder written through the results package's writers: one build
// failure and one wrong measurement, of which only the first is explained.
func TestCollectGroupsFailuresWithTheirExplanations(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "20260101-000000-gpu")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	run := results.Run{ID: "x", Toolchains: []results.Toolchain{{ID: "gcc12-nvptx", Family: "gcc", Version: "12.2.0", Target: "sm_80"}}}
	if err := results.WriteRun(dir, run); err != nil {
		t.Fatal(err)
	}
	rows := []results.BuildRow{
		{Cell: "axpby.omp-lambda.gcc12-nvptx", Kernel: "axpby", Variant: "omp-lambda", Toolchain: "gcc12-nvptx", Status: results.StatusFailed, Reason: "a.cpp:30:11: internal compiler error: in gimplify_adjust_omp_clauses, at gimplify.cc:11708"},
		{Cell: "dot.omp-lambda.gcc12-nvptx", Kernel: "dot", Variant: "omp-lambda", Toolchain: "gcc12-nvptx", Status: results.StatusFailed, Reason: "b.cpp:27:11: internal compiler error: in gimplify_adjust_omp_clauses, at gimplify.cc:11708"},
		{Cell: "axpby.omp-raw.gcc12-nvptx", Kernel: "axpby", Variant: "omp-raw", Toolchain: "gcc12-nvptx", Status: results.StatusBuilt},
	}
	if err := results.WriteBuildCSV(dir, rows); err != nil {
		t.Fatal(err)
	}
	recs := []results.Record{
		{Kind: results.KindKernel, Cell: "axpby.omp-raw.gcc12-nvptx", Kernel: "axpby", Variant: "omp-raw", Toolchain: "gcc12-nvptx", Verified: true},
		{Kind: results.KindKernel, Cell: "eos.raja-omp-map.gcc12-nvptx", Kernel: "eos", Variant: "raja-omp-map", Toolchain: "gcc12-nvptx"},
		{Kind: results.KindCopy, Cell: "axpby.omp-raw.gcc12-nvptx", Kernel: "axpby", Variant: "omp-raw", Toolchain: "gcc12-nvptx"},
	}
	if err := results.WriteRecords(dir, recs); err != nil {
		t.Fatal(err)
	}
	fs, err := Collect(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(fs) != 3 {
		t.Fatalf("collected %d failures, want 2 builds and 1 run (a copy record is no verification): %+v", len(fs), fs)
	}
	ex := []Explanation{{ID: "ice", Stage: StageBuild, Kernel: "*", Variant: "omp-lambda", Toolchain: "gcc12-*",
		Error: regexp.MustCompile("internal compiler error: in gimplify_adjust_omp_clauses")}}
	gs := Groups(fs, ex)
	if len(gs) != 2 {
		t.Fatalf("%d groups, want 2: %v", len(gs), gs)
	}
	if gs[0].By != nil || gs[0].Stage != StageRun || gs[0].Signature != "not verified" {
		t.Errorf("first group %v, want the unexplained wrong result first", gs[0])
	}
	if g := gs[1]; g.By == nil || g.Count != 2 || strings.Join(g.Kernels, ",") != "axpby,dot" {
		t.Errorf("second group %v, want both ICEs under one explanation (line numbers blanked)", g)
	}
}

func TestGateMustKeepTheCellOffNow(t *testing.T) {
	tb, err := toolchain.LoadTable(filepath.Join(repoRoot, layout.Capabilities))
	if err != nil {
		t.Fatal(err)
	}
	f := Failure{Folder: "x", Kernel: "eos", Variant: "raja-omp-map", Toolchain: "t",
		Tool: results.Toolchain{ID: "t", Family: "llvm", Version: "19.1.7", Target: "sm_90"}}
	e := &Explanation{ID: "e", Gate: "omp_map_lambda"}
	if err := CheckGate(tb, e, f); err == nil || !strings.Contains(err.Error(), "is on for t") {
		t.Errorf("a gate clang 19 passes was accepted: %v", err)
	}
	f.Tool = results.Toolchain{ID: "t", Family: "gcc", Version: "12.2.0", Target: "sm_80"}
	if err := CheckGate(tb, e, f); err != nil {
		t.Errorf("GCC 12 with NVPTX offload lacks omp_map_lambda, yet: %v", err)
	}
	e.Gate = "no_such_capability"
	if err := CheckGate(tb, e, f); err == nil {
		t.Error("an unknown capability was accepted as a gate")
	}
}

// Every failure of every current folder named in results/index.yaml has an
// explanation in results/failures.yaml.
func TestCurrentFoldersHaveNoUnexplainedFailure(t *testing.T) {
	ex := loadRepo(t)
	root := book.Root(repoRoot)
	ix, err := book.LoadIndex(root)
	if err != nil {
		t.Fatal(err)
	}
	var dirs []string
	for _, e := range ix.Current {
		dirs = results.AppendNew(dirs, filepath.Join(root, e.Folder))
	}
	checkFolders(t, ex, dirs)
}

// The folders that left the tree (results/ARCHIVE.md names the commit that
// holds them whole) are held to the same list, where git has that commit.
func TestArchivedFoldersHaveNoUnexplainedFailure(t *testing.T) {
	if testing.Short() {
		t.Skip("reads git history")
	}
	ex := loadRepo(t)
	md, err := os.ReadFile(filepath.Join(repoRoot, "results", "ARCHIVE.md"))
	if err != nil {
		t.Skip(err)
	}
	commit := regexp.MustCompile("whole in commit ([0-9a-f]{7,40})").FindSubmatch(md)
	if commit == nil {
		t.Skip("results/ARCHIVE.md names no commit")
	}
	var names []string
	for _, m := range regexp.MustCompile(`(?m)^\| ([0-9]{8}-[0-9]{6}-[^ |]+) \|`).FindAllSubmatch(md, -1) {
		names = append(names, "results/"+string(m[1]))
	}
	has := exec.Command("git", "cat-file", "-e", string(commit[1])+"^{commit}")
	has.Dir = repoRoot
	if err := has.Run(); err != nil {
		t.Skipf("git lacks commit %s (a shallow clone?): %v", commit[1], err)
	}
	tmp := t.TempDir()
	archive := exec.Command("git", append([]string{"archive", "--format=tar", string(commit[1])}, names...)...)
	archive.Dir = repoRoot
	var stderr strings.Builder
	archive.Stderr = &stderr
	tar, err := archive.Output()
	if err != nil {
		t.Fatalf("results/ARCHIVE.md names a folder that commit %s lacks: %v\n%s", commit[1], err, stderr.String())
	}
	untar := exec.Command("tar", "-x", "-C", tmp)
	untar.Stdin = strings.NewReader(string(tar))
	if out, err := untar.CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
	var dirs []string
	for _, n := range names {
		dirs = append(dirs, filepath.Join(tmp, n))
	}
	checkFolders(t, ex, dirs)
}

func loadRepo(t *testing.T) []Explanation {
	t.Helper()
	ex, err := Load(filepath.Join(repoRoot, File))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ex {
		if err := CheckRepro(repoRoot, e); err != nil {
			t.Error(err)
		}
	}
	return ex
}

func checkFolders(t *testing.T, ex []Explanation, dirs []string) {
	t.Helper()
	tb, err := toolchain.LoadTable(filepath.Join(repoRoot, layout.Capabilities))
	if err != nil {
		t.Fatal(err)
	}
	var all []Failure
	gated := map[string]bool{} // entry and toolchain checked: one message each
	for _, dir := range dirs {
		fs, err := Collect(dir)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, f := range fs {
			if e := Explain(ex, f); e != nil && e.Resolution == Gated && !gated[e.ID+" "+f.Toolchain] {
				gated[e.ID+" "+f.Toolchain] = true
				if err := CheckGate(tb, e, f); err != nil {
					t.Error(err)
				}
			}
		}
		all = append(all, fs...)
	}
	for _, g := range Groups(all, ex) {
		if g.By == nil {
			t.Errorf("no explanation in %s: %s", File, g)
		} else {
			t.Log(g)
		}
	}
}
