package tune

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/spec"
)

func shippedTarget(t *testing.T, kernel, variant string, size int64) Target {
	t.Helper()
	spaces, kernels, strategies := project(t)
	byName := spec.ByName(kernels)
	for _, v := range matrix.Variants(strategies) {
		if v.ID == variant {
			tg, err := spaces.Target(&matrix.Cell{ID: kernel + "." + variant + ".tc", Kernel: byName[kernel], Variant: v}, byName, size, "b")
			require.NoError(t, err)
			return tg
		}
	}
	t.Fatalf("no variant %s", variant)
	return Target{}
}

// TestLaunchTunables: a launch parameter a layer reads is in the space of
// the cells whose kernels launch its pattern, at the strategy's default,
// held where a knob value makes it unread.
func TestLaunchTunables(t *testing.T) {
	spmv := shippedTarget(t, "spmv", "kk-ompx", 150)
	assert.Equal(t, int64(2147483647), spmv.Space.Default["max_teams"])
	assert.Greater(t, len(spmv.Space.Values["max_teams"]), 1)
	cg := shippedTarget(t, "cgsolve", "direct-ompx", 150)
	assert.Contains(t, cg.Space.Names, "max_teams", "a composite launches the teams of the SPMV it uses")
	axpby := shippedTarget(t, "axpby", "kk-ompx", 1000)
	assert.NotContains(t, axpby.Space.Names, "max_teams", "AXPBY launches no team")

	b := shippedTarget(t, "spmv", "kk-omp-b", 150)
	assert.Equal(t, int64(65536), b.Space.Default["max_active_teams"])
	wo := shippedTarget(t, "spmv", "kk-omp-b-wo-num-teams", 150)
	assert.Equal(t, []int64{65536}, wo.Space.Values["max_active_teams"])
	assert.Equal(t, "num_teams=off", wo.Space.Fixed["max_active_teams"])
	cuda := shippedTarget(t, "spmv", "kk-cuda-3lvl", 150)
	assert.NotContains(t, cuda.Space.Names, "max_teams")
	assert.NotContains(t, cuda.Space.Names, "range_block", "SPMV launches no range")
	dot := shippedTarget(t, "dot", "kk-cuda-2lvl", 1000)
	assert.Equal(t, []string{"range_block", "range_unroll"}, dot.Space.Names)
	cgc := shippedTarget(t, "cgsolve", "kk-cuda-3lvl", 150)
	assert.Contains(t, cgc.Space.Names, "range_block", "CG-Solve's AXPBY and DOT launch ranges")
}

// TestRangeReduceTunables: DOT's range reduction searches the launch of
// every OpenMP form (docs/analysis/dot.md), the as-published launch (0: the
// layer's wave, no clause) first, within the tuning budget of 16; AXPBY's
// range_for keeps only range_block.
func TestRangeReduceTunables(t *testing.T) {
	o := Options{Strategy: Random, Machine: MachineOf(1024, 32, 48<<10), MaxEvals: 16}
	for _, c := range []struct {
		variant string
		names   []string
		configs int
	}{
		{"kk-cuda-3lvl", []string{"range_block", "range_unroll"}, 12},
		{"kk-ompx-shfl", []string{"range_block", "range_teams", "range_unroll"}, 16},
		{"direct-ompx", []string{"range_teams"}, 6},
		{"kk-omp-a", []string{"range_num_teams", "range_thread_limit"}, 13},
		{"omp-raw", []string{"range_num_teams", "range_thread_limit"}, 13},
		{"omp-lambda", []string{"range_num_teams", "range_thread_limit"}, 13},
		{"omp-class", []string{"range_num_teams", "range_thread_limit"}, 13},
	} {
		tg := shippedTarget(t, "dot", c.variant, 100000000)
		assert.Equal(t, c.names, tg.Space.Names, c.variant)
		for _, name := range c.names {
			if name != "range_block" {
				assert.Equal(t, map[bool]int64{true: 1}[name == "range_unroll"], tg.Space.Default[name], "%s: %s as published", c.variant, name)
			}
		}
		cr, plan, err := o.Plan(tg)
		require.NoError(t, err, c.variant)
		assert.Len(t, plan, c.configs, c.variant)
		require.NotEmpty(t, plan)
		assert.Equal(t, tg.Space.Default, plan[0], "%s: the default first", c.variant)
		for _, cfg := range plan {
			if n, ok := cfg["range_num_teams"]; ok {
				assert.Equal(t, n == 0, cfg["range_thread_limit"] == 0, "%s: both clauses or neither: %s", c.variant, cfg)
			}
		}
		if c.names[0] == "range_num_teams" {
			assert.Equal(t, 7, sumOf(cr.Infeasible), "%s: one clause alone is ruled out", c.variant)
		}
	}
	for _, v := range []string{"kk-ompx", "omp-raw", "kk-omp-b"} {
		axpby := shippedTarget(t, "axpby", v, 100000000)
		for _, name := range []string{"range_teams", "range_num_teams", "range_thread_limit"} {
			assert.NotContains(t, axpby.Space.Names, name, "%s: AXPBY's range_for reads no %s", v, name)
		}
	}
	cg := shippedTarget(t, "cgsolve", "omp-raw", 150)
	assert.Contains(t, cg.Space.Names, "range_num_teams", "CG-Solve's dot products are range reductions")
}

func sumOf(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// TestLaunchDefaultsAreTheHarnessConstants: the strategies' defaults of the
// launch tunables are the values the harness's layers fall back to, so the
// tuner's "default" configuration is the launch the programs make.
func TestLaunchDefaultsAreTheHarnessConstants(t *testing.T) {
	constant := func(file, name string) int64 {
		data, err := os.ReadFile(filepath.Join("..", "..", "harness", file))
		require.NoError(t, err)
		m := regexp.MustCompile(`constexpr int64_t ` + name + ` = (\d+);`).FindSubmatch(data)
		require.NotNil(t, m, "%s in %s", name, file)
		v, err := strconv.ParseInt(string(m[1]), 10, 64)
		require.NoError(t, err)
		return v
	}
	assert.Equal(t, constant("kk/omptarget.hpp", "kMaxActiveTeams"), shippedTarget(t, "spmv", "kk-omp-a", 150).Space.Default["max_active_teams"])
	block := regexp.MustCompile(`constexpr int kRangeBlock = (\d+);`)
	for layer, variant := range map[string]string{"cuda.hpp": "kk-cuda-3lvl", "ompx.hpp": "kk-ompx-opt"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "harness", "kk", layer))
		require.NoError(t, err)
		m := block.FindSubmatch(data)
		require.NotNil(t, m, layer)
		assert.Equal(t, string(m[1]), strconv.FormatInt(shippedTarget(t, "dot", variant, 1000).Space.Default["range_block"], 10), layer)
	}
	// The range reductions' tunables fall back to 0, the as-published launch.
	for file, names := range map[string][]string{
		"kk/ompx.hpp": {"range_teams"}, "pm/tune.hpp": {"range_num_teams", "range_thread_limit"},
	} {
		data, err := os.ReadFile(filepath.Join("..", "..", "harness", file))
		require.NoError(t, err)
		for _, name := range names {
			assert.Regexp(t, `tune\("`+name+`", 0\)`, string(data), file)
			assert.Equal(t, int64(0), shippedTarget(t, "dot", map[string]string{"range_teams": "kk-ompx", "range_num_teams": "omp-raw", "range_thread_limit": "kk-omp-b"}[name], 1000).Space.Default[name], name)
		}
	}
	ompx, err := os.ReadFile(filepath.Join("..", "..", "harness", "kk", "ompx.hpp"))
	require.NoError(t, err)
	assert.Contains(t, string(ompx), `pm::tune("range_unroll", 1)`)
	assert.Equal(t, int64(1), shippedTarget(t, "dot", "kk-ompx-warp", 1000).Space.Default["range_unroll"])
	grid := constant("pm/ompx_grid.hpp", "kMaxGridX")
	for _, v := range []string{"kk-ompx", "kk-ompx-opt", "direct-ompx", "direct-ompx-warp"} {
		assert.Equal(t, grid, shippedTarget(t, "spmv", v, 150).Space.Default["max_teams"], v)
	}
}

func h100(t *testing.T) *machine.Model {
	t.Helper()
	set, err := machine.Load(filepath.Join("..", "..", machine.Dir))
	require.NoError(t, err)
	m, err := set.Get("h100-sxm5-80gb")
	require.NoError(t, err)
	return m
}

// TestOccupancyModel: the pruned search's model of an H100 rules out what
// cannot launch, what leaves an SM mostly idle, and launch bounds that
// launch the same league as another value; it admits the rest.
func TestOccupancyModel(t *testing.T) {
	tg := shippedTarget(t, "spmv", "kk-ompx", 150)
	// 151^3 = 3442951 rows; 16 rows a team: 215185 teams.
	regs := func(n int) Occupancy {
		return Occupancy{Model: h100(t), Resources: map[string][]machine.Resources{tg.Cell: {{Kernel: "pmkk_ompx_impl_launch_team", Registers: n}}}}
	}
	cfg := func(rows, team, vector, maxTeams int64) Config {
		return Config{"rows_per_team": rows, "team_size": team, "vector_size": vector, "max_teams": maxTeams}
	}
	for _, c := range []struct {
		m    Occupancy
		cfg  Config
		want string
	}{
		// 40 registers: 16 x 8 threads, 12 blocks of 4 warps an SM (1536 of 2048 threads).
		{regs(40), cfg(16, 16, 8, 1056), ""},
		{regs(40), cfg(16, 16, 8, 2147483647), ""},
		// 16-thread teams: 32 blocks an SM, 512 threads, a quarter: in.
		{regs(40), cfg(16, 16, 1, 1056), ""},
		// 8-thread teams: 256 threads an SM.
		{regs(40), cfg(16, 8, 1, 1056), "fewer than 25% of an SM's threads resident"},
		// 128 registers x 1024 threads is twice the registers of a block.
		{regs(128), cfg(256, 128, 8, 1056), "a block of 1024 threads does not launch (128 registers x 1024 threads need"},
		// 256 rows a team: 13449 teams; 65536 launches the same league as the default's bound.
		{regs(40), cfg(256, 32, 8, 65536), "max_teams at or above the league: the launch of max_teams=2147483647"},
		{regs(40), cfg(256, 32, 8, 8448), ""},
	} {
		err := c.m.Admits(tg, c.cfg)
		if c.want == "" {
			assert.NoError(t, err, c.cfg.String())
		} else {
			assert.ErrorContains(t, err, c.want, c.cfg.String())
		}
	}
	// No model of the device, or a CPU's: nothing but the bounds rule is applied.
	assert.NoError(t, Occupancy{}.Admits(tg, cfg(16, 8, 1, 1056)))

	// The pruned plan of the shipped space: nothing it keeps is ruled out.
	// (Beyond the budget pruned takes BeyondBudget: guided plans its first
	// round, the default and its neighbours.)
	o := Options{Strategy: Pruned, Model: regs(40), Machine: MachineOf(1024, 32, 48<<10), MaxEvals: 24}
	cr, plan, err := o.Plan(tg)
	require.NoError(t, err)
	assert.NotEmpty(t, plan)
	assert.LessOrEqual(t, len(plan), 24)
	assert.Empty(t, cr.DefaultOut, "the default is measured")
	assert.Equal(t, tg.Space.Default.String(), plan[0].String())
	assert.NotEmpty(t, cr.Pruned)
	for _, c := range plan {
		assert.NoError(t, regs(40).Admits(tg, c))
	}
}

// TestShard: n workers' shards hold every target once, each worker a share
// of every kernel's, the same on every call.
func TestShard(t *testing.T) {
	var targets []Target
	for _, k := range []string{"spmv", "axpby", "cgsolve"} {
		for _, v := range []string{"x", "y", "z"} {
			targets = append(targets, Target{Cell: k + "." + v + ".tc", Size: 1})
		}
	}
	seen := map[string]int{}
	for k := range 2 {
		got := Shard(targets, k, 2)
		assert.Equal(t, got, Shard(targets, k, 2))
		kernels := map[string]bool{}
		for _, tg := range got {
			seen[tg.Cell]++
			kernels[kernelOf(tg)] = true
		}
		assert.Len(t, kernels, 3, "worker %d", k)
	}
	assert.Len(t, seen, len(targets))
	for c, n := range seen {
		assert.Equal(t, 1, n, c)
	}
}
