package book

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// A fixture index of three platforms, one folder each, kernel k at size
// 100, strategy s1 (variant v1) and s2 (variant w). Times in seconds, every
// repetition alike (exact medians):
//
//	          gpu-a (tA)   gpu-b (tA, tB)         cpu (th)
//	v1        1.0          4.0 (tA), 2.0 (tB)     1.0
//	w         2.0          2.0 (tA)               4.0
//
// On gpu-b v1 takes its best toolchain, tB: 2.0. Application efficiency,
// best time on the platform over the strategy's: gpu-a v1 1, w 0.5; gpu-b
// v1 1, w 1; cpu v1 1, w 0.25. PP over the three: s1 1; s2 3/(2+1+4) = 3/7.
// gpu-a's folder also holds host code (tH), left out: the GPU host's CPU
// is not the index's cpu platform. AMD gfx90a only compiles.
func TestPortabilityOverTheIndexPlatforms(t *testing.T) {
	root := t.TempDir()
	res := filepath.Join(root, "results")
	folder := func(name string, tcs []results.Toolchain, recs ...results.Record) {
		dir := filepath.Join(res, name)
		require.NoError(t, os.MkdirAll(dir, 0o755))
		run, err := json.Marshal(results.Run{ID: name, Toolchains: tcs, Host: results.Host{CPU: "Fixture CPU"}})
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(dir, results.RunFile), run, 0o644))
		var lines []string
		for _, r := range recs {
			b, err := json.Marshal(r)
			require.NoError(t, err)
			lines = append(lines, string(b))
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, results.JSONLFile), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	}
	rec := func(variant, strategy, tc, device string, s float64) results.Record {
		return results.Record{Kind: "kernel", Cell: "k." + variant + "." + tc, Kernel: "k", Variant: variant, Strategy: strategy,
			Toolchain: tc, Device: device, Size: 100, TimesS: []float64{s, s, s}, MedianS: s, Bytes: 1e9, BytesMin: 1e9, Verified: true}
	}
	gpuTC := func(ids ...string) []results.Toolchain {
		var out []results.Toolchain
		for _, id := range ids {
			out = append(out, results.Toolchain{ID: id, Family: "llvm", Target: "sm_90"})
		}
		return out
	}
	folder("run-a", append(gpuTC("tA"), results.Toolchain{ID: "tH", Family: "gcc", Target: "host"}),
		rec("v1", "s1", "tA", "GPU A", 1), rec("w", "s2", "tA", "GPU A", 2), rec("v1", "s1", "tH", "host", 0.5))
	folder("run-b", gpuTC("tA", "tB"),
		rec("v1", "s1", "tA", "GPU B", 4), rec("v1", "s1", "tB", "GPU B", 2), rec("w", "s2", "tA", "GPU B", 2))
	folder("run-c", []results.Toolchain{{ID: "th", Family: "gcc", Target: "host"}},
		rec("v1", "s1", "th", "host", 1), rec("w", "s2", "th", "host", 4))
	index := `papers: [{id: "002", title: P}]
suites: [{id: matrix, title: M}]
platforms:
  - {id: gpu-a, title: GPU A}
  - {id: gpu-b, title: GPU B}
  - {id: cpu, title: Fixture CPU}
current:
  - {suite: matrix, platform: gpu-a, folder: run-a}
  - {suite: matrix, platform: gpu-b, folder: run-b}
  - {suite: matrix, platform: cpu, folder: run-c}
`
	require.NoError(t, os.WriteFile(filepath.Join(res, IndexFile), []byte(index), 0o644))
	ix, err := LoadIndex(res)
	require.NoError(t, err)
	out := t.TempDir()
	amd := []*toolchain.Toolchain{{ID: "hip-gfx90a", Target: "gfx90a"}, {ID: "tA", Target: "sm_90"}}
	v, err := newPPView(ix, res, out, portabilityOptions{Toolchains: amd})
	require.NoError(t, err)

	assert.Equal(t, "H = the index's measured platforms (3): gpu-a, gpu-b, cpu", v.Set)
	assert.Contains(t, v.Excluded, "AMD gfx90a")
	assert.Contains(t, v.Excluded, "every strategy's PP is 0")
	require.Len(t, v.Platforms, 4)
	assert.Equal(t, ppPlatform{ID: "AMD gfx90a", Title: "gfx90a", Status: toolchain.NoAMDGPU + " with hip-gfx90a"}, v.Platforms[3])
	assert.Equal(t, "run-b", v.Platforms[1].Folders)

	require.Len(t, v.Kernels, 1)
	k := v.Kernels[0]
	assert.Equal(t, []string{"gpu-a", "gpu-b", "cpu"}, k.Columns)
	require.Len(t, k.Rows, 2)
	assert.Equal(t, "s1", k.Rows[0].Strategy)
	assert.Equal(t, "1.00 [1.00, 1.00]", k.Rows[0].PP)
	assert.Equal(t, []string{"1.00 (v1)", "1.00 (v1)", "1.00 (v1)"}, k.Rows[0].On)
	assert.Equal(t, "s2", k.Rows[1].Strategy)
	assert.Equal(t, "0.43 [0.43, 0.43]", k.Rows[1].PP, "3/7")
	assert.Equal(t, []string{"0.50 (w)", "1.00 (w)", "0.25 (w)"}, k.Rows[1].On)
	assert.Equal(t, "3/3", k.Rows[1].RunsOn)
	require.NotNil(t, k.Cascade)

	// The P3 export over the index's platforms: the library's pp() of s2's rows is 3/7.
	csv, err := os.ReadFile(filepath.Join(out, P3StrategyFile))
	require.NoError(t, err)
	assert.Contains(t, string(csv), "problem,platform,application,fom,app eff,arch eff")
	assert.Equal(t, 3, strings.Count(string(csv), ",s2,w,"), "one row per platform of H")
	for _, row := range []string{"k@100,gpu-a,s2,2,0.5,", "k@100,gpu-b,s2,2,1,", "k@100,cpu,s2,4,0.25,"} {
		assert.Contains(t, string(csv), row)
	}
	// each folder got its own analysis
	for _, f := range []string{"run-a", "run-b", "run-c"} {
		assert.FileExists(t, filepath.Join(res, f, "p3.csv"))
	}
}
