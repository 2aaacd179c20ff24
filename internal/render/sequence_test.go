package render_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each strategy lowers an LCALS sequence as the paper's figure writes it.
func TestSequenceLowering(t *testing.T) {
	files, err := load(t).Render()
	require.NoError(t, err)
	src := func(path string) string {
		s, ok := files["generated/"+path]
		require.True(t, ok, path)
		return string(s)
	}
	count := strings.Count
	// Pure OpenMP (003 Fig. 3): one target region; the base kernel shares one
	// parallel region (for nowait), the _ALT kernel has a parallel for per loop.
	p := src("pressure_calc/omp-region.cpp")
	assert.Equal(t, 1, count(p, "#pragma omp target "), p)
	assert.Equal(t, 2, count(p, "#pragma omp for schedule(static) nowait"), p)
	p = src("energy_calc_alt/omp-region.cpp")
	assert.Equal(t, 1, count(p, "#pragma omp target "), p)
	assert.Equal(t, 6, count(p, "#pragma omp parallel for\n"), p)
	// Fig. 3 as printed: map clauses on the region.
	assert.Contains(t, src("pressure_calc/omp-region-map.cpp"),
		"#pragma omp target map(to : compression[0:n], e_old[0:n], vnewc[0:n]) map(from : bvc[0:n], p_new[0:n])")
	// RAJA (Fig. 8): a forall per loop, completed after the sequence.
	p = src("energy_calc_alt/raja-omp-teams.cpp")
	assert.Equal(t, 6, count(p, "praja::forall<exec_policy>("), p)
	assert.Equal(t, 1, count(p, "praja::synchronize<sync_policy>();"), p)
	assert.Contains(t, p, "#define PRAJA_POLICY praja::omp_target_teams_exec")
	// Data mapped once per kernel (Fig. 5): enter before the first loop, exit after the last.
	p = src("pressure_calc/raja-omp-map.cpp")
	enter, exit := strings.Index(p, "#pragma omp target enter data"), strings.Index(p, "#pragma omp target exit data")
	first, last := strings.Index(p, "praja::forall<"), strings.LastIndex(p, "praja::forall<")
	assert.True(t, enter >= 0 && enter < first && last < exit, p)
	assert.Contains(t, p, "#define PM_HOST_DATA 1")
	// Raw async (Fig. 10): every loop nowait on one stream, one taskwait after.
	p = src("pressure_calc_alt/raja-raw-async.cpp")
	assert.Equal(t, 2, count(p, "nowait depend(inout : pm_stream)"), p)
	assert.Equal(t, 1, count(p, "#pragma omp taskwait"), p)
	assert.NotContains(t, p, "praja::")
	// The split form: target teams, then distribute, then parallel for.
	p = src("fir/raja-raw-split.cpp")
	assert.Regexp(t, `#pragma omp target teams is_device_ptr\(in, out\)\n\s*#pragma omp distribute\n`, p)
	// An index set (Fig. 5): RAJA builds one and traverses it; pure OpenMP loops over the segments.
	assert.Contains(t, src("del_dot_vec_2d/raja-omp-async.cpp"), "praja::forall<praja::ExecPolicy<praja::seq_segit, exec_policy>>(segments, ")
	assert.Contains(t, src("del_dot_vec_2d/omp-region.cpp"), "for (int64_t s = 0; s < rows; ++s) {")
	// Fig. 5's real_zones form: one loop over the list, which main fills by its formula.
	p = src("del_dot_vec_2d_zones/raja-omp-teams.cpp")
	assert.Equal(t, 1, count(p, "praja::forall<exec_policy>("), p)
	assert.Contains(t, p, "real_zones_data.fill_with([&](int64_t k) { return 2 + k % rows + (2 + k / rows) * jp; });")
	// PIC_2D's scatter: an atomic under every LCALS backend.
	assert.Contains(t, src("pic_2d/raja-omp-teams.cpp"), "praja::atomicAdd<praja::auto_atomic>(&(h[j2 * 64 + i2]), 1.0);")
	assert.Regexp(t, `#pragma omp atomic update\n\s*h\[j2 \* 64 \+ i2\] \+= 1\.0;`, src("pic_2d/omp-region.cpp"))
	assert.Regexp(t, `#pragma omp atomic update\n\s*h\[j2 \* 64 \+ i2\] \+= 1\.0;`, src("pic_2d/raja-raw-teams.cpp"))
	// A sequence that ends in a reduction returns it after the region.
	p = src("trap_int/omp-region.cpp")
	assert.Contains(t, p, "#pragma omp target map(tofrom : sumx)")
	assert.Contains(t, p, "#pragma omp parallel for reduction(+ : sumx)")
	// Strategies that do not lower sequences are off for LCALS kernels.
	_, ok := files["generated/pressure_calc/omp-raw.cpp"]
	assert.False(t, ok)
}
