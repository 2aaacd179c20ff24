package tune

import (
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/spec"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// project loads the shipped kernels, strategies and search spaces.
func project(t *testing.T) (*Spaces, []*spec.Kernel, []*matrix.Strategy) {
	t.Helper()
	root := filepath.Join("..", "..")
	kernels, err := spec.LoadDir(filepath.Join(root, "templates", "kernels"))
	require.NoError(t, err)
	caps, err := toolchain.LoadTable(filepath.Join(root, "variants", "capabilities.yaml"))
	require.NoError(t, err)
	strategies, err := matrix.Load(filepath.Join(root, "variants", "strategies.yaml"), caps)
	require.NoError(t, err)
	spaces, err := Load(filepath.Join(root, File))
	require.NoError(t, err)
	return spaces, kernels, strategies
}

func TestShippedSpacesCheck(t *testing.T) {
	spaces, kernels, strategies := project(t)
	require.NoError(t, spaces.Check(kernels, strategies))
	byName := spec.ByName(kernels)
	variants := map[string]*matrix.Variant{}
	for _, v := range matrix.Variants(strategies) {
		variants[v.ID] = v
	}

	// KK-CUDA 3 levels searches all three; 2 levels holds vector_size at 1.
	spmv := byName["spmv"]
	three, err := spaces.Cell(spmv, nil, variants["kk-cuda-3lvl"], 100)
	require.NoError(t, err)
	assert.Equal(t, []string{"rows_per_team", "team_size", "vector_size"}, three.Names)
	assert.Equal(t, Config{"rows_per_team": 16, "team_size": 16, "vector_size": 8}, three.Default)
	assert.Equal(t, spaces.Tunables["vector_size"].Space, three.Values["vector_size"])
	two, err := spaces.Cell(spmv, nil, variants["kk-cuda-2lvl"], 100)
	require.NoError(t, err)
	assert.Equal(t, []int64{1}, two.Values["vector_size"])
	assert.Equal(t, "levels=2", two.Fixed["vector_size"])
	assert.Equal(t, three.Len()/len(three.Values["vector_size"]), two.Len())

	// The kernel's constraint and the machine's both cut configurations.
	h100 := Machine{"max_threads_per_block": 1024, "warp_size": 32, "shared_mem_per_block": 48 << 10}
	for _, c := range []struct {
		cfg Config
		ok  bool
		why string
	}{
		{Config{"rows_per_team": 16, "team_size": 16, "vector_size": 8}, true, ""},
		{Config{"rows_per_team": 256, "team_size": 256, "vector_size": 8}, false, "team_size * vector_size <= max_threads_per_block"},
		{Config{"rows_per_team": 8, "team_size": 16, "vector_size": 8}, false, "rows_per_team >= team_size"},
	} {
		ok, why, err := three.Feasible(c.cfg, h100)
		require.NoError(t, err)
		assert.Equal(t, c.ok, ok, c.cfg.String())
		assert.Equal(t, c.why, why, c.cfg.String())
	}
	// Without a machine model only the kernel's own constraint is checked.
	ok, _, err := three.Feasible(Config{"rows_per_team": 256, "team_size": 256, "vector_size": 8}, nil)
	require.NoError(t, err)
	assert.True(t, ok)
	assert.Len(t, three.Unchecked(nil), 3)

	// The stencil's tile in team-shared memory: (tile+2)^2 doubles.
	st, err := spaces.Cell(byName["stencil_tiled"], nil, variants["kk-cuda-3lvl"], 1000)
	require.NoError(t, err)
	assert.Equal(t, "scratch level: chosen when the program is rendered", st.Fixed["scratch_level"])
	assert.Equal(t, "team_size=16,tile=16,vector_size=8", st.Flag(st.Default))
	small := Machine{"max_threads_per_block": 1024, "warp_size": 32, "shared_mem_per_block": 8 * 18 * 18}
	ok, _, err = st.Feasible(Config{"tile": 16, "team_size": 16, "vector_size": 8, "scratch_level": 0}, small)
	require.NoError(t, err)
	assert.True(t, ok)
	ok, why, err := st.Feasible(Config{"tile": 20, "team_size": 16, "vector_size": 8, "scratch_level": 0}, small)
	require.NoError(t, err)
	assert.False(t, ok)
	assert.Equal(t, "scratch_bytes <= shared_mem_per_block", why)

	// A composite searches the tunables of the kernels it uses, under their constraints.
	cg, err := spaces.Cell(byName["cgsolve"], []*spec.Kernel{byName["axpby"], byName["dot"], spmv}, variants["kk-cuda-3lvl"], 30)
	require.NoError(t, err)
	assert.Equal(t, append([]string{"range_block", "range_unroll"}, three.Names...), cg.Names, "and the range launches of its AXPBY and DOT")
	ok, _, err = cg.Feasible(Config{"rows_per_team": 8, "team_size": 16, "vector_size": 8}, h100)
	require.NoError(t, err)
	assert.False(t, ok)

	target, err := spaces.Target(&matrix.Cell{ID: "cgsolve.kk-cuda-3lvl.nvcc", Kernel: byName["cgsolve"], Variant: variants["kk-cuda-3lvl"]}, byName, 30, "b")
	require.NoError(t, err)
	assert.Equal(t, cg.Names, target.Space.Names)
	assert.Equal(t, cg.Constraints, target.Space.Constraints)

	// The host holds team and vector sizes.
	host, err := spaces.Cell(spmv, nil, variants["omp-host"], 100)
	require.NoError(t, err)
	assert.Equal(t, []int64{1}, host.Values["team_size"])
	assert.Equal(t, len(spaces.Tunables["rows_per_team"].Space), host.Len())
}

func TestConfigRoundTrip(t *testing.T) {
	c := Config{"vector_size": 8, "team_size": 16, "rows_per_team": 1}
	assert.Equal(t, "rows_per_team=1,team_size=16,vector_size=8", c.String())
	back, err := ParseConfig(c.String())
	require.NoError(t, err)
	assert.Equal(t, c, back)
	for _, bad := range []string{"a", "a=x", "=1", "a=1,a=2"} {
		_, err := ParseConfig(bad)
		assert.Error(t, err, bad)
	}
	empty, err := ParseConfig("")
	require.NoError(t, err)
	assert.Empty(t, empty)
}

// TestBadSpaces: every mistake in the file is reported at its position, all at once.
func TestBadSpaces(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tuning.yaml")
	require.NoError(t, os.WriteFile(file, []byte(`machine: {warp_size: lanes}
tunables:
  a: {min: 1, space: {pow2: [0, 8]}}
  b: {min: 1, max: 4, space: [1, 2, 8]}
  c: {min: 2, space: {range: [4, 2]}}
  d: {space: [1]}
  e: {min: 1, space: {range: [1, 9], step: 0}}
  f: {min: 1, space: [1, 1]}
  g: {min: 1, block: true, space: [1]}
constraints:
  - a * b <= warp_sise
  - a * b
  - a & b == 0
strategies:
  s: {space: {zz: [1], a: [0]}}
`), 0o644))
	_, err := Load(file)
	require.Error(t, err)
	require.NoError(t, diag.CheckPositioned(err, file))
	msg := strings.ReplaceAll(err.Error(), file, "F")
	for _, want := range []string{
		"F:3:29: a: pow2 bounds must be >= 1",
		"F:4:30: b: space value 8: must be <= 4, not 8",
		"F:5:30: c: range is [lo, hi] with lo <= hi",
		`F:6:6: tunable d needs field "min"`,
		"F:7:44: e: step must be >= 1",
		"F:8:22: f: value 1 repeated in the space",
		"F:9:22: g: block needs patterns",
		`F:11:5: constraint "a * b <= warp_sise": unknown name "warp_sise"; did you mean "warp_size"?`,
		`F:12:5: constraint "a * b": a condition is a comparison`,
		`F:13:5: constraint "a & b == 0"`,
		`F:15:15: space of undeclared tunable "zz"`,
		"F:15:27: a: space value 0: must be >= 1, not 0",
	} {
		assert.Contains(t, msg, want)
	}
}

// TestZeroTunable: a kernel's rows_per_team of 0 is an error at its value,
// naming the tunable, before any program is generated.
func TestZeroTunable(t *testing.T) {
	spaces, kernels, strategies := project(t)
	for _, k := range kernels {
		for i, tu := range k.Tunables {
			if k.Name == "spmv" && tu.Name == "rows_per_team" {
				k.Tunables[i].Value = 0
			}
		}
	}
	strategies[0].Tunables = map[string]int64{"vector_size": 4096, "tiles": 4}
	strategies[0].TuneAt = map[string]diag.Pos{"vector_size": {File: "S", Line: 1, Col: 2}, "tiles": {File: "S", Line: 3, Col: 4}}
	err := spaces.Check(kernels, strategies)
	require.Error(t, err)
	msg := err.Error()
	assert.Regexp(t, `templates/kernels/spmv.yaml:\d+:\d+: rows_per_team: must be >= 1, not 0 \(bounds at .*tuning.yaml:\d+:\d+\)`, msg)
	assert.Contains(t, msg, "S:1:2: vector_size: must be <= 1024, not 4096")
	assert.Contains(t, msg, `S:3:4: tunable tiles has no search space: declare it in ../../variants/tuning.yaml; did you mean "tile"?`)
}

func TestHugeSpaces(t *testing.T) {
	_, err := Parse("F", []byte("tunables:\n  a: {min: 1, space: {pow2: [1, 9223372036854775807]}}\n  b: {min: 0, space: {range: [0, 9223372036854775807]}}\n"))
	require.Error(t, err)
	assert.Equal(t, "F:3:30: b: the range holds more than 4096 values", err.Error(), "pow2 stops at 2^62")
}

func TestRangeAtTheEdge(t *testing.T) {
	s, err := Parse("F", []byte("tunables:\n  a: {min: 0, space: {range: [9223372036854775800, 9223372036854775807], step: 5}}\n"))
	require.NoError(t, err)
	assert.Equal(t, []int64{9223372036854775800, 9223372036854775805}, s.Tunables["a"].Space)
}

// TestSNAP's scratch sizes read sizeof(snap::CKD) and S.t.twojmax:
// tuning.yaml's scratch_consts make them arithmetic, so a team that cannot
// launch at level 0 is pruned with the reason, in the kernel and in the
// step that uses it (its largest launch, not the sum of its launches).
func TestSnapScratchIsChecked(t *testing.T) {
	spaces, kernels, strategies := project(t)
	byName := spec.ByName(kernels)
	variants := map[string]*matrix.Variant{}
	for _, v := range matrix.Variants(strategies) {
		variants[v.ID] = v
	}
	models, err := machine.Load(filepath.Join("..", "..", "machines"))
	require.NoError(t, err)
	h100model, err := models.Get("h100-sxm5-80gb")
	require.NoError(t, err)
	g := h100model.GPU
	h100 := MachineOf(g.MaxThreadsPerBlock, g.WarpSize, g.SharedMemoryPerBlockOptin)
	k := byName["snap_duarray"]
	teamBytes := func(team int64) int64 { // the program's expression, its terms put in by hand
		c := spaces.Kernels["snap_duarray"].ScratchConsts
		return 8*team*(c["sizeof(snap::CKD)"]/8) + 8*16*team*(c["S.t.twojmax"]+1)*(c["S.t.twojmax"]+1)
	}
	step, err := spaces.Cell(byName["snap_step"], []*spec.Kernel{byName["snap_ui"], byName["snap_yi"], k, byName["snap_deidrj"]}, variants["kk-cuda-2lvl"], 10)
	require.NoError(t, err)
	for _, v := range []string{"kk-cuda-2lvl", "kk-omp-a", "direct-ompx", "omp-raw"} {
		cell, err := spaces.Cell(k, nil, variants[v], 10)
		require.NoError(t, err)
		assert.Empty(t, cell.Unchecked(h100), v)
		for _, cs := range []*CellSpace{cell, step} {
			for _, team := range cell.Values["snap_team"] {
				cfg := maps.Clone(cs.Default)
				cfg["snap_team"], cfg["scratch_level"] = team, 0
				ok, why, err := cs.Feasible(cfg, h100)
				require.NoError(t, err)
				fits := teamBytes(team) <= g.SharedMemoryPerBlockOptin
				assert.Equal(t, fits, ok, "%s %s", v, cfg)
				if !fits {
					assert.Equal(t, "scratch_bytes <= shared_mem_per_block", why)
				}
				cfg["scratch_level"] = 1 // global memory: no limit
				ok, _, err = cs.Feasible(cfg, h100)
				require.NoError(t, err)
				assert.True(t, ok, "%s %s", v, cfg)
			}
		}
	}
	assert.False(t, teamBytes(32) <= g.SharedMemoryPerBlockOptin, "the measured failures: 32 pairs a team")
	assert.True(t, teamBytes(16) <= g.SharedMemoryPerBlockOptin, "16 pairs a team ran and verified")
}

// A space holds only what the program reads at run time: kk-omp's layer
// launches on the host CPU as Kokkos' host backend does, so a host cell's
// space has none of its target clauses (every configuration of them once
// failed: "range_num_teams is no run-time tunable of this program"), while
// omp-raw's host fallback keeps its clauses; a vendor form (a library call)
// reads none of the kernel's tunables.
func TestSpacesHoldWhatTheProgramReads(t *testing.T) {
	spaces, kernels, strategies := project(t)
	byName := spec.ByName(kernels)
	variants := map[string]*matrix.Variant{}
	for _, v := range matrix.Variants(strategies) {
		variants[v.ID] = v
	}
	gpu, err := spaces.CellOn(byName["dot"], nil, variants["kk-omp-b"], 1000, false)
	require.NoError(t, err)
	assert.Equal(t, []string{"range_num_teams", "range_thread_limit"}, gpu.Names)
	host, err := spaces.CellOn(byName["dot"], nil, variants["kk-omp-b"], 1000, true)
	require.NoError(t, err)
	assert.Empty(t, host.Names)
	assert.Equal(t, 1, host.Len())
	spmv, err := spaces.CellOn(byName["spmv"], nil, variants["kk-omp-a"], 100, true)
	require.NoError(t, err)
	assert.Equal(t, []string{"rows_per_team", "team_size", "vector_size"}, spmv.Names, "the kernel's own tunables stay")
	raw, err := spaces.CellOn(byName["dot"], nil, variants["omp-raw"], 1000, true)
	require.NoError(t, err)
	assert.Equal(t, []string{"range_num_teams", "range_thread_limit"}, raw.Names)
	cublas, err := spaces.CellOn(byName["gemm_team"], nil, variants["cublas"], 1001, false)
	require.NoError(t, err)
	assert.Empty(t, cublas.Names)
}
