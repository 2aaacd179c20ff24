package tune

import (
	"bufio"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/matrix"
)

// TestRegisterLimitTuning replays a pruned H200 tuning of HOMMEXX's
// laplace_simple kernels (testdata/h200-hommexx-tuning: its tuning.jsonl
// and the kernels the build read, tuning-kernels.json). 31 evaluations of
// the clang 22 kernel-mode cells failed: cuLaunchKernel refused blocks of
// 512 and 1024 threads of the league-loop team kernel ("too many resources
// requested for launch": 130 registers x 512 threads is over the 65536 of a
// block). The model now rules out every one of them and none that verified.
func TestRegisterLimitTuning(t *testing.T) {
	r := replayTuning(t, filepath.Join("testdata", "h200-hommexx-tuning"), "h200-sxm-141gb", "")
	assert.Equal(t, r.failed, r.out, "failed evaluations ruled out")
	// The residency heuristic drops small blocks that ran; never the fastest.
	for cell, ms := range r.idle {
		for _, m := range ms {
			assert.Greater(t, m, r.best[cell], "%s: a block ruled out as idle is the fastest", cell)
		}
	}
}

// The H100 tuning folder of results/ holds the same failures of HOMMEXX's
// kernel-mode cells (and plain OpenMP's 1024-thread teams of the same
// kernels, which the runtime shrank, and which verified).
// One failure is a range launch (the outer-loop form's range_block 1024 of
// 96 registers): a block tunable's (block: true), ruled out all the same.
func TestRegisterLimitTuningH100(t *testing.T) {
	r := replayTuning(t, filepath.Join("..", "..", "results", "nvidia-h100-tuning"), "h100-sxm5-80gb", "hommexx_laplace_simple")
	assert.Equal(t, r.failed, r.out, "failed evaluations ruled out")
	assert.Equal(t, []string{"hommexx_laplace_simple_outer.kk-ompx-opt.clang22-sm90 range_block=1024"}, r.rangeLaunch)
}

type replay struct {
	failed, out, verified, admitted int
	rangeLaunch                     []string             // failed launches of cells without team blocks (ruled out too)
	best                            map[string]float64   // fastest admitted verified median, by cell
	idle                            map[string][]float64 // medians of the verified ruled out as leaving the SM idle
}

// replayTuning judges every evaluation of dir's tuning of the cells whose
// ID starts with prefix by the occupancy model of the machine model.
func replayTuning(t *testing.T, dir, model, prefix string) replay {
	tree, err := LoadTree(filepath.Join("..", ".."))
	require.NoError(t, err)
	kernels, err := ReadKernels(dir)
	require.NoError(t, err)
	set, err := machine.Load(filepath.Join("..", "..", machine.Dir))
	require.NoError(t, err)
	gpu, err := set.Get(model)
	require.NoError(t, err)

	f, err := os.Open(filepath.Join(dir, "tuning.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	r := replay{best: map[string]float64{}, idle: map[string][]float64{}}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e Entry
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e))
		if !strings.HasPrefix(e.Cell, prefix) {
			continue
		}
		kernel, variant, _ := strings.Cut(e.Cell, ".")
		variant, _, _ = strings.Cut(variant, ".")
		k, v := tree.Kernels[kernel], tree.Variants[variant]
		require.NotNil(t, k, e.Cell)
		require.NotNil(t, v, e.Cell)
		tg, err := tree.Spaces.Target(&matrix.Cell{ID: e.Cell, Kernel: k, Variant: v}, tree.Kernels, e.Size, e.BuildKey)
		require.NoError(t, err)
		cfg, err := ParseConfig(e.Config)
		require.NoError(t, err)
		full := maps.Clone(tg.Space.Default)
		maps.Copy(full, cfg)
		rs := kernels[e.BuildKey]
		require.NotEmpty(t, rs, e.Cell)
		why := Occupancy{Model: gpu, Resources: map[string][]machine.Resources{e.Cell: rs}}.Admits(tg, full)
		if e.Verified {
			r.verified++
			switch {
			case why == nil:
				r.admitted++
				if b, ok := r.best[e.Cell]; !ok || e.MedianS < b {
					r.best[e.Cell] = e.MedianS
				}
			case strings.Contains(why.Error(), "resident"):
				r.idle[e.Cell] = append(r.idle[e.Cell], e.MedianS)
			default:
				t.Errorf("%s %s verified, ruled out: %v", e.Cell, e.Config, why)
			}
			continue
		}
		if !strings.Contains(e.Error, "offloading is mandatory") {
			continue // not a launch failure (max_teams sent to a program that does not read it)
		}
		r.failed++
		if blocks, _ := tg.Space.Blocks(full); len(blocks) == 0 {
			r.rangeLaunch = append(r.rangeLaunch, e.Cell+" "+e.Config)
		}
		if assert.ErrorContains(t, why, "does not launch", "%s %s failed", e.Cell, e.Config) {
			r.out++
		}
	}
	require.NoError(t, sc.Err())
	require.NotZero(t, r.failed, "the tuning's failed launches")
	idle := 0
	for _, ms := range r.idle {
		idle += len(ms)
	}
	assert.Equal(t, r.verified, r.admitted+idle, "verified evaluations admitted or left out as idle")
	t.Logf("%d failed launches, %d ruled out (%d range launches); %d verified, %d admitted, %d ruled out as idle", r.failed, r.out, len(r.rangeLaunch), r.verified, r.admitted, idle)
	return r
}
