package matrix

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	version "github.com/hashicorp/go-version"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/loopnest"
	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/spec"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

func TestVariantIDs(t *testing.T) {
	caps, err := toolchain.LoadTable("../../variants/capabilities.yaml")
	require.NoError(t, err)
	ss, err := Load("../../variants/strategies.yaml", caps)
	require.NoError(t, err)
	// The papers' variants, named strategy then suffixes, in file order
	// (a strategy added to the file adds variants, and changes none of these).
	want := []string{"serial", "omp-host", "kk-omp-a", "kk-omp-a-wo-num-teams", "kk-omp-b", "kk-omp-b-wo-num-teams",
		"omp-raw", "omp-lambda", "omp-class", "kk-cuda-3lvl", "kk-cuda-2lvl", "kk-ompx", "kk-ompx-shfl", "kk-ompx-opt",
		"kk-ompx-warp", "direct-ompx", "direct-ompx-warp",
		"omp-region", "omp-region-map", "raja-omp-block", "raja-omp-teams", "raja-omp-split", "raja-omp-async", "raja-omp-map",
		"raja-raw-block", "raja-raw-teams", "raja-raw-split", "raja-raw-async", "raja-host-seq", "raja-host-omp", "raja-cuda",
		"kk-cuda-l1-3lvl", "kk-cuda-l1-2lvl", "kk-omp-l1-a", "kk-omp-l1-b"}
	var ids []string
	for _, v := range Variants(ss) {
		if slices.Contains(want, v.ID) {
			ids = append(ids, v.ID)
		}
	}
	assert.Equal(t, want, ids)
	for _, v := range Variants(ss) {
		switch v.ID {
		case "kk-cuda-2lvl":
			assert.Equal(t, int64(1), v.Tunables["vector_size"])
		case "kk-omp-b-wo-num-teams":
			assert.Equal(t, [][2]string{{"PMKK_OMP_FORM_B", "1"}, {"PMKK_OMP_NUM_TEAMS", "0"}}, v.Defines)
		case "kk-ompx-opt":
			assert.Equal(t, []string{"ompx_bare", "ompx_dyn_cgroup_mem", "ompx_shfl_down_sync"}, v.Requires)
			assert.Empty(t, v.ModelDefaults, "Fig. 19 keeps the grid bound")
		case "kk-ompx", "kk-ompx-shfl":
			assert.Equal(t, map[string]string{"max_teams": "occupancy"}, v.ModelDefaults, "Fig. 12's league loop")
		}
	}
}

func TestBadStrategies(t *testing.T) {
	caps, err := toolchain.LoadTable("../../variants/capabilities.yaml")
	require.NoError(t, err)
	f := filepath.Join(t.TempDir(), "s.yaml")
	require.NoError(t, os.WriteFile(f, []byte(`strategies:
  - name: x
    backend: serial
    device: fpga
    requires: [warp_drive]
    knobs:
      - name: k
        values:
          - {value: a, suffix: -a}
          - {value: b, suffix: -a}
  - name: y
    device: host
`), 0o644))
	ss, err := Load(f, caps)
	require.Error(t, err)
	assert.EqualError(t, CheckDevices(ss, []string{"cuda", "host"}), f+`:4:13: unknown device "fpga" (known: cuda, host)`)
	assert.Equal(t, f+`:5:16: unknown capability "warp_drive" (see variants/capabilities.yaml)
`+f+`:10:32: suffix "-a" repeated in knob k: variant IDs would collide
`+f+`:11:5: strategy needs field "backend"`, err.Error())
}

func TestBadModelDefaults(t *testing.T) {
	caps, err := toolchain.LoadTable("../../variants/capabilities.yaml")
	require.NoError(t, err)
	f := filepath.Join(t.TempDir(), "s.yaml")
	require.NoError(t, os.WriteFile(f, []byte(`strategies:
  - name: x
    backend: serial
    device: host
    model_defaults: {max_teams: occupancyy}
    knobs:
      - name: k
        values:
          - {value: a, suffix: -a, model_defaults: {team_size: occupancy}}
          - {value: b, suffix: -b, model_defaults: [occupancy]}
          - {value: c, suffix: -c, model_defaults: {max_active_teams: occupancy}}
`), 0o644))
	_, err = Load(f, caps)
	require.Error(t, err)
	assert.Equal(t, f+`:5:33: unknown kind of model default "occupancyy"; did you mean "occupancy"? (known: occupancy)
`+f+`:9:53: a model default of kind occupancy gives max_teams or max_active_teams, not "team_size"
`+f+`:10:52: model_defaults must be a mapping`, err.Error())
	// A knob value's default joins the strategy's.
	ss, err := Load("../../variants/strategies.yaml", caps)
	require.NoError(t, err)
	for _, v := range Variants(ss) {
		for p, k := range v.ModelDefaults {
			assert.Contains(t, machine.DefaultKinds[k].Params, p, v.ID)
		}
	}
}

// The repository's kernels keep the size-set rule with its strategies'
// tunables, as the project load checks it.
func TestRepositoryKeepsTheSizeRule(t *testing.T) {
	caps, err := toolchain.LoadTable("../../variants/capabilities.yaml")
	require.NoError(t, err)
	ss, err := Load("../../variants/strategies.yaml", caps)
	require.NoError(t, err)
	ks, err := spec.LoadDir("../../templates/kernels")
	require.NoError(t, err)
	assert.Contains(t, TunableValues(ss), int64(32), "kk-omp's team_size")
	_, err = spec.CheckSizes(ks, TunableValues(ss))
	assert.NoError(t, err)
}

// A cell for an AMD target is on where its toolchain qualifies but never
// runnable, even where a GPU is present; a capability measured on NVIDIA
// only keeps its AMD cells off, saying which targets have the row.
func TestAMDCellsNeverRun(t *testing.T) {
	caps, err := toolchain.LoadTable("../../variants/capabilities.yaml")
	require.NoError(t, err)
	ss, err := Load("../../variants/strategies.yaml", caps)
	require.NoError(t, err)
	amd := &toolchain.Toolchain{ID: "clang19-gfx90a", Family: "llvm", Target: "gfx90a", Devices: []string{"omptarget"},
		Version: version.Must(version.NewVersion("19.1.7"))}
	nv := &toolchain.Toolchain{ID: "clang19-sm90", Family: "llvm", Target: "sm_90", Devices: []string{"omptarget"},
		Version: version.Must(version.NewVersion("19.1.7")), CUDA: version.Must(version.NewVersion("11.8"))}
	toolchain.Derive(amd, caps)
	toolchain.Derive(nv, caps)
	k := &spec.Kernel{Name: "pressure_calc"}
	cells := Expand([]*spec.Kernel{k}, Variants(ss), []*toolchain.Toolchain{amd, nv}, caps,
		func(*spec.Kernel, *Variant) string { return "" }, true, nil)
	byID := map[string]*Cell{}
	for _, c := range cells {
		byID[c.ID] = c
	}
	teams := byID["pressure_calc.raja-omp-teams.clang19-gfx90a"]
	assert.True(t, teams.On, teams.Reason)
	assert.False(t, teams.Runnable)
	assert.True(t, byID["pressure_calc.raja-omp-teams.clang19-sm90"].Runnable)
	mapped := byID["pressure_calc.raja-omp-map.clang19-gfx90a"]
	assert.False(t, mapped.On)
	assert.Equal(t, "missing omp_map_lambda (host, nvidia targets only; clang19-gfx90a is gfx90a)", mapped.Reason)
}

// A strategy's library is read with its position; a library without a
// backend is an error at the mapping.
func TestStrategyLibrary(t *testing.T) {
	caps, err := toolchain.LoadTable("../../variants/capabilities.yaml")
	require.NoError(t, err)
	f := filepath.Join(t.TempDir(), "s.yaml")
	require.NoError(t, os.WriteFile(f, []byte(`strategies:
  - name: x
    backend: kokkos
    device: cuda
    library: {name: kokkos, backend: cuda}
  - name: y
    backend: kokkos
    device: cuda
    library: {name: kokkos}
`), 0o644))
	ss, err := Load(f, caps)
	require.EqualError(t, err, f+`:9:14: library needs field "backend"`)
	require.Len(t, ss, 2)
	require.NotNil(t, ss[0].Library)
	assert.Equal(t, "kokkos", ss[0].Library.Name)
	assert.Equal(t, "cuda", ss[0].Library.Backend)
	assert.Equal(t, 5, ss[0].Library.Pos.Line)
	assert.Nil(t, ss[1].Library)
}

// loops_only limits a strategy to the kernels written as loop nests: the
// mapcheck strategy's cells exist for the mapper's kernels only, and a
// value other than true or false is an error at its position.
func TestLoopsOnly(t *testing.T) {
	caps, err := toolchain.LoadTable("../../variants/capabilities.yaml")
	require.NoError(t, err)
	f := filepath.Join(t.TempDir(), "s.yaml")
	require.NoError(t, os.WriteFile(f, []byte(`strategies:
  - name: check
    backend: mapcheck
    device: host
    loops_only: true
  - name: plain
    backend: serial
    device: host
  - name: bad
    backend: serial
    device: host
    loops_only: maybe
`), 0o644))
	ss, err := Load(f, caps)
	require.EqualError(t, err, f+`:12:17: loops_only must be true or false, not "maybe"`)
	vs := Variants(ss[:2])
	none := func(string, []string) []string { return nil }
	mapped := &spec.Kernel{Name: "atx_mapped", Loops: &loopnest.Program{}}
	plain := &spec.Kernel{Name: "axpby"}
	assert.Equal(t, "", Applies(mapped, vs[0], nil, none))
	assert.Equal(t, "check checks the mapper's schedules: it applies to kernels written as loop nests (loops:) only", Applies(plain, vs[0], nil, none))
	assert.Equal(t, "", Applies(plain, vs[1], nil, none))
	assert.Equal(t, "", Applies(mapped, vs[1], nil, none))

	// The repository's mapcheck strategy is so limited.
	ss, err = Load("../../variants/strategies.yaml", caps)
	require.NoError(t, err)
	i := slices.IndexFunc(ss, func(s *Strategy) bool { return s.Name == "mapcheck" })
	require.GreaterOrEqual(t, i, 0)
	assert.True(t, ss[i].LoopsOnly)
	assert.Equal(t, "mapcheck", ss[i].Backend)
}

// item_registers says a strategy keeps a work item's state in registers
// across team barriers (spec.ItemState); it is false unless written, and a
// value other than true or false is an error at its position.
func TestItemRegisters(t *testing.T) {
	caps, err := toolchain.LoadTable("../../variants/capabilities.yaml")
	require.NoError(t, err)
	f := filepath.Join(t.TempDir(), "s.yaml")
	require.NoError(t, os.WriteFile(f, []byte(`strategies:
  - name: threads
    backend: kokkos
    device: cuda
    item_registers: true
  - name: plain
    backend: serial
    device: host
  - name: bad
    backend: serial
    device: host
    item_registers: often
`), 0o644))
	ss, err := Load(f, caps)
	require.EqualError(t, err, f+`:12:21: item_registers must be true or false, not "often"`)
	assert.True(t, ss[0].ItemRegisters)
	assert.False(t, ss[1].ItemRegisters)
}

// A vendor strategy applies to the kernels that declare its library's form
// only, whatever patterns the backend lowers; a form no strategy calls is an
// error at its line.
func TestVendorStrategy(t *testing.T) {
	caps, err := toolchain.LoadTable("../../variants/capabilities.yaml")
	require.NoError(t, err)
	ss, err := Load("../../variants/strategies.yaml", caps)
	require.NoError(t, err)
	i := slices.IndexFunc(ss, func(s *Strategy) bool { return s.Name == "cublas" })
	require.GreaterOrEqual(t, i, 0)
	assert.Equal(t, "cublas", ss[i].Vendor)
	assert.Contains(t, ss[i].Requires, "cublas")
	v := Variants(ss[i : i+1])[0]
	lowersNothing := func(_ string, kinds []string) []string { return kinds }
	gemm := &spec.Kernel{Name: "gemm_team", Vendor: []spec.VendorForm{{Library: "cublas", Code: "x"}}}
	axpby := &spec.Kernel{Name: "axpby"}
	assert.Equal(t, "", Applies(gemm, v, nil, lowersNothing))
	assert.Equal(t, "cublas calls the vendor library cublas: it applies only to kernels that declare a cublas form (vendor:)", Applies(axpby, v, nil, lowersNothing))

	odd := &spec.Kernel{Name: "k", Vendor: []spec.VendorForm{{Library: "cublass", Code: "x", Pos: diag.Pos{File: "k.yaml", Line: 9, Col: 3}}}}
	assert.EqualError(t, CheckVendors(ss, []*spec.Kernel{gemm, odd}),
		`k.yaml:9:3: kernel "k": vendor form "cublass": no strategy calls it (a strategy's vendor:; known: cublas); did you mean "cublas"?`)
}

// host_ignores names launch tunables of the strategy's own; another name is
// an error at its position, listing the strategy's tunables.
func TestHostIgnores(t *testing.T) {
	caps, err := toolchain.LoadTable("../../variants/capabilities.yaml")
	require.NoError(t, err)
	f := filepath.Join(t.TempDir(), "s.yaml")
	require.NoError(t, os.WriteFile(f, []byte(`strategies:
  - name: teams
    backend: kokkos
    device: omptarget
    tunables: {team_size: 32, range_num_teams: 0}
    host_ignores: [range_num_teams, range_thread_limit]
`), 0o644))
	ss, err := Load(f, caps)
	require.EqualError(t, err, f+`:6:37: strategy teams: host_ignores names range_thread_limit, which is not one of its tunables (range_num_teams, team_size)`)
	assert.Equal(t, []string{"range_num_teams", "range_thread_limit"}, ss[0].HostIgnores)
	ss, err = Load("../../variants/strategies.yaml", caps)
	require.NoError(t, err)
	i := slices.IndexFunc(ss, func(s *Strategy) bool { return s.Name == "kk-omp" })
	require.GreaterOrEqual(t, i, 0)
	assert.Contains(t, ss[i].HostIgnores, "range_num_teams")
}
