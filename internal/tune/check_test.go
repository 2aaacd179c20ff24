package tune

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/spec"
)

var update = flag.Bool("update", false, "write testdata/truth-synthetic from an exhaustive tuning of the synthetic space")

// truthDir is a ground truth of synthetic: every feasible configuration
// measured by an exhaustive tuning on an "NVIDIA H200" (the fake's costs).
const truthDir = "testdata/truth-synthetic"

// syntheticTree is the source tree of synthetic: kernel k, variant s.
func syntheticTree(t *testing.T) Tree {
	k := &spec.Kernel{Name: "k", Tunables: []spec.Tunable{{Name: "a", Value: 16}, {Name: "b", Value: 8}}}
	v := &matrix.Variant{ID: "s", Strategy: &matrix.Strategy{Name: "s"}, Tunables: map[string]int64{}}
	return Tree{Kernels: map[string]*spec.Kernel{"k": k}, Variants: map[string]*matrix.Variant{"s": v}, Spaces: syntheticSpaces(t)}
}

func TestTruthTestdataIsAnExhaustiveTuning(t *testing.T) {
	dir := t.TempDir()
	f := newFake(t)
	_, err := run(t, dir, f, Options{Strategy: Exhaustive, DeviceName: "NVIDIA H200"})
	require.NoError(t, err)
	got, err := os.ReadFile(filepath.Join(dir, CacheFile))
	require.NoError(t, err)
	if *update {
		require.NoError(t, os.MkdirAll(truthDir, 0o755))
		require.NoError(t, os.WriteFile(filepath.Join(truthDir, CacheFile), got, 0o644))
	}
	want, err := os.ReadFile(filepath.Join(truthDir, CacheFile))
	require.NoError(t, err)
	assert.Equal(t, string(want), string(got), "go test ./internal/tune -run TestTruthTestdata -update writes it")
}

func TestReplayAgainstTheTruth(t *testing.T) {
	models, err := machine.Load("../../machines")
	require.NoError(t, err)
	truths, err := TruthSource{Tree: syntheticTree(t), Models: models}.Truths(truthDir)
	require.NoError(t, err)
	require.Len(t, truths, 1)
	tr := truths[0]
	assert.Equal(t, feasible, tr.Feasible, "the H200's 1024 threads a block: the constraint is checked")
	assert.Empty(t, tr.Missing, "the whole space")
	assert.Equal(t, "a=8,b=4", tr.Optimum.Config.String())

	budgets := Budgets(feasible)
	assert.Equal(t, []int{1, 2, 4, 8, 16, 32, feasible}, budgets)
	curves, err := Replay(tr, ReplayStrategies, budgets, 30)
	require.NoError(t, err)
	by := map[Strategy]Curve{}
	for _, c := range curves {
		by[c.Strategy] = c
	}
	last := len(budgets) - 1
	// The default (a=16, b=8) costs 3, the optimum 1: every search starts at a third.
	for _, st := range ReplayStrategies {
		assert.InDelta(t, 1.0/3, by[st].Points[0].Median, 1e-9, "%s measures the default first", st)
	}
	ex := by[Exhaustive]
	assert.Equal(t, 1.0, ex.Points[last].Median, "exhaustive reaches the optimum at the space's size")
	assert.Less(t, ex.Points[4].Median, 1.0, "not at 16: a=8,b=4 is the 21st in enumeration order")
	rnd := by[Random]
	for i := 1; i < len(budgets); i++ {
		assert.GreaterOrEqual(t, rnd.Points[i].Median, rnd.Points[i-1].Median, "random's curve is monotone")
		assert.GreaterOrEqual(t, rnd.Points[i].Lo, rnd.Points[i-1].Lo)
	}
	assert.Equal(t, 1.0, rnd.Points[last].Lo, "every seed at the whole space")
	assert.Less(t, rnd.Points[2].Lo, 1.0, "a few draws miss the optimum for some seed")
	// A bowl: the climb from the default finds its floor within two rounds.
	g := by[Guided]
	assert.Equal(t, 1.0, g.Points[4].Lo, "guided at 16 evaluations, every seed")
	assert.Equal(t, 1.0, g.Points[4].AtOptimum)

	var md, csv bytes.Buffer
	require.NoError(t, WriteCheck(&md, truths, [][]Curve{curves}))
	assert.Contains(t, md.String(), "k.s.tc size 100: 41 configurations measured of 41 feasible")
	require.NoError(t, CheckCSV(&csv, truths, [][]Curve{curves}))
	lines := strings.Split(strings.TrimSpace(csv.String()), "\n")
	assert.Len(t, lines, 1+len(ReplayStrategies)*len(budgets))
	assert.Contains(t, lines, "k.s.tc,100,GPU-0000,41,41,1,exhaustive,41,1,1.0000,1.0000,1.0000,1.000,41.0,3.0,0")
	// ReadCheck reads back what CheckCSV wrote (the book draws from it).
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, CheckFile), csv.Bytes(), 0o644))
	rows, err := ReadCheck(dir)
	require.NoError(t, err)
	require.Len(t, rows, len(lines)-1)
	want := CheckRow{Cell: "k.s.tc", Size: 100, Device: "GPU-0000", Feasible: 41, Admitted: 41, OptimumS: 1, Strategy: Exhaustive,
		Point: Point{Budget: 41, Seeds: 1, Median: 1, Lo: 1, Hi: 1, AtOptimum: 1, Evaluations: 41, Rounds: 3}}
	assert.Equal(t, want, rows[len(budgets)-1])
	require.NoError(t, os.WriteFile(filepath.Join(dir, CheckFile), []byte("cell,size\n"), 0o644))
	_, err = ReadCheck(dir)
	assert.ErrorContains(t, err, "tuning-check.csv:1: not the header")
}

func TestReplayOfACutTruth(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join(truthDir, CacheFile))
	require.NoError(t, err)
	lines := strings.SplitAfter(string(data), "\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, CacheFile), []byte(strings.Join(lines[:20], "")), 0o644))
	models, err := machine.Load("../../machines")
	require.NoError(t, err)
	truths, err := TruthSource{Tree: syntheticTree(t), Models: models}.Truths(dir)
	require.NoError(t, err)
	assert.Len(t, truths[0].Missing, feasible-20)
	curves, err := Replay(truths[0], []Strategy{Exhaustive}, []int{feasible}, 1)
	require.NoError(t, err)
	assert.Equal(t, feasible-20, curves[0].Points[0].Unknown, "what the truth lacks is counted, not guessed")
	var md bytes.Buffer
	require.NoError(t, WriteCheck(&md, truths, [][]Curve{curves}))
	assert.Contains(t, md.String(), "not a whole truth: 21 feasible configurations not measured")
}

// TestDefaultSearchOnTheGroundTruth replays the matrix tuning's search
// (pruned within DefaultEvals, guided beyond it) against the committed
// H200 ground truth: on every cell its median over the seeds reaches 0.97
// of the true optimum (docs/tuning.md, "Which search beyond the budget").
func TestDefaultSearchOnTheGroundTruth(t *testing.T) {
	tree, err := LoadTree("../..")
	require.NoError(t, err)
	models, err := machine.Load("../../machines")
	require.NoError(t, err)
	truths, err := TruthSource{Tree: tree, Models: models}.Truths("../../" + TruthFolder)
	require.NoError(t, err)
	require.Len(t, truths, 9)
	for _, tr := range truths {
		// The space replayed is the one the tuner searched: an exhaustive
		// tuning measured all of it (the generated default, outside the
		// values searched, is measured beside them and widens nothing).
		assert.Empty(t, tr.Missing, "%s: a whole truth", tr.Target.Cell)
		assert.GreaterOrEqual(t, len(tr.Measured), tr.Feasible, tr.Target.Cell)
		curves, err := Replay(tr, []Strategy{Pruned}, []int{DefaultEvals}, 10)
		require.NoError(t, err)
		p := curves[0].Points[0]
		assert.GreaterOrEqual(t, p.Median, 0.97, "%s size %d", tr.Target.Cell, tr.Target.Size)
		assert.LessOrEqual(t, p.Rounds, 2.0, "%s: two processes at most", tr.Target.Cell)
	}
}
