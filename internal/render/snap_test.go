package render_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSnapLowering: a snap argument becomes a pm::SnapSystem in main and a
// snap::System parameter, a stage init fills its array, a sequential for is a
// plain loop around the team-level nodes of its body in every backend, and an
// atomic_add with if is guarded.
func TestSnapLowering(t *testing.T) {
	p := load(t)
	files, err := p.Render()
	require.NoError(t, err)
	for _, variant := range []string{"serial.cpp", "omp-raw.cpp", "kk-cuda-3lvl.cu", "kk-ompx.cpp", "direct-ompx.cpp"} {
		src := string(files[filepath.Join("generated", "snap_ui", variant)])
		require.NotEmpty(t, src, variant)
		assert.Contains(t, src, `#include "snap/pm_snap.hpp"`, variant)
		assert.Contains(t, src, `pm::SnapSystem S_data("S", pm::snap_input(size));`, variant)
		assert.Contains(t, src, "void snap_ui_kernel(const snap::System S, double* ulisttot)", variant)
		assert.Contains(t, src, `ulisttot_data.fill_values(S_data.stage("utot_init"));`, variant)
		assert.Contains(t, src, "ref::snap_ui(S_data.ref(), ulisttot_data.ref())", variant)
		loop := strings.Index(src, "for (int64_t j = 0; j < S.t.twojmax + 1; ++j) {")
		require.GreaterOrEqual(t, loop, 0, variant)
		assert.Contains(t, src[loop:], "if (live && o.jjm >= 0) {", variant)
	}
	yi := string(files[filepath.Join("generated", "snap_yi", "serial.cpp")])
	assert.Contains(t, yi, `ulisttot_data.fill_values(S_data.stage("ulisttot"));`)
	_, err = os.Stat(filepath.Join(root, "harness", "snap", "pm_snap.hpp"))
	assert.NoError(t, err)
}

// TestCompositeOwnReference: a composite that gives a reference (snap_step:
// one step stands for all) has it as its ref:: body, and its driver only in
// dev::; a composite without one (cgsolve) runs its driver in both.
func TestCompositeOwnReference(t *testing.T) {
	p := load(t)
	files, err := p.Render()
	require.NoError(t, err)
	src := string(files[filepath.Join("generated", "snap_step", "serial.cpp")])
	ref, dev, ok := strings.Cut(src, "namespace dev {")
	require.True(t, ok)
	assert.Contains(t, ref, "snap::serial::accumulate_forces(S, dedr, force);")
	assert.NotContains(t, ref, "pm::device::copy")
	assert.Contains(t, dev, "pm::device::copy(ulisttot, utot0, utot_bytes);")
	assert.Contains(t, dev, "snap_deidrj(S, dulist, ylist, dedr, force);")
	cg := string(files[filepath.Join("generated", "cgsolve", "serial.cpp")])
	ref, dev, ok = strings.Cut(cg, "namespace dev {")
	require.True(t, ok)
	assert.Contains(t, ref, "spmv(A, p, Ap);")
	assert.Contains(t, dev, "spmv(A, p, Ap);")
}
