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
// and the kernels the build read, tuning-kernels.json). 34 evaluations of
// the clang 22 kernel-mode cells failed: cuLaunchKernel refused blocks of
// 512 and 1024 threads of the league-loop team kernel ("too many resources
// requested for launch": 130 registers x 512 threads is over the 65536 of a
// block). The model now rules out every one of them and none that verified.
func TestRegisterLimitTuning(t *testing.T) {
	dir := filepath.Join("testdata", "h200-hommexx-tuning")
	tree, err := LoadTree(filepath.Join("..", ".."))
	require.NoError(t, err)
	kernels, err := ReadKernels(dir)
	require.NoError(t, err)
	set, err := machine.Load(filepath.Join("..", "..", machine.Dir))
	require.NoError(t, err)
	h200, err := set.Get("h200-sxm-141gb")
	require.NoError(t, err)

	f, err := os.Open(filepath.Join(dir, "tuning.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	var failed, out, verified, admitted, idle int
	best := map[string]float64{}          // fastest admitted verified median, by cell
	idleMedians := map[string][]float64{} // verified but ruled out as leaving the SM idle
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e Entry
		require.NoError(t, json.Unmarshal(sc.Bytes(), &e))
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
		why := Occupancy{Model: h200, Resources: map[string][]machine.Resources{e.Cell: rs}}.Admits(tg, full)
		if e.Verified {
			verified++
			switch {
			case why == nil:
				admitted++
				if b, ok := best[e.Cell]; !ok || e.MedianS < b {
					best[e.Cell] = e.MedianS
				}
			case strings.Contains(why.Error(), "resident"):
				idle++
				idleMedians[e.Cell] = append(idleMedians[e.Cell], e.MedianS)
			default:
				t.Errorf("%s %s verified, ruled out: %v", e.Cell, e.Config, why)
			}
			continue
		}
		failed++
		require.Contains(t, e.Error, "offloading is mandatory", "the run's failures are launch failures")
		if assert.ErrorContains(t, why, "does not launch", "%s %s failed", e.Cell, e.Config) {
			out++
		}
	}
	require.NoError(t, sc.Err())
	require.NotZero(t, failed, "the run's failed evaluations")
	assert.Equal(t, failed, out, "failed evaluations ruled out")
	assert.Equal(t, verified, admitted+idle, "verified evaluations admitted or left out as idle")
	// The residency heuristic drops small blocks that ran; never the fastest.
	for cell, ms := range idleMedians {
		for _, m := range ms {
			assert.Greater(t, m, best[cell], "%s: a block ruled out as idle is the fastest", cell)
		}
	}
	t.Logf("%d failed evaluations, %d ruled out; %d verified, %d admitted, %d ruled out as idle (none the fastest of its cell)", failed, out, verified, admitted, idle)
}
