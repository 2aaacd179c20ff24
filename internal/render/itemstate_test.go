package render_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// A work item's state across a team's barriers (spec.ItemState: the staged
// multiply's micro-tiles) is rendered in the form the strategy takes: in
// registers, declared once in the team body, where item_registers says a
// work item is one hardware thread (no pm_acc view, map_step's register
// value 32), in team scratch elsewhere (pm_acc, map_step 16). generated/
// is the renderer's output (TestGeneratedIsCurrent), so its gemm_mapped
// programs show the choice of every variant.
func TestItemStateForms(t *testing.T) {
	caps, err := toolchain.LoadTable(filepath.Join(root, "variants/capabilities.yaml"))
	require.NoError(t, err)
	ss, err := matrix.Load(filepath.Join(root, "variants/strategies.yaml"), caps)
	require.NoError(t, err)
	regs := map[string]bool{}
	for _, s := range ss {
		regs[s.Name] = s.ItemRegisters
	}
	for name, want := range map[string]bool{"kk-cuda": true, "kokkos-cuda": true, "kk-ompx": true, "direct-ompx": true,
		"kk-omp": false, "omp-raw": false, "kokkos-omptarget": false, "serial": false, "omp-host": false, "kokkos-openmp": false, "mapcheck": false} {
		assert.Equal(t, want, regs[name], "item_registers of %s", name)
	}
	files, err := filepath.Glob(filepath.Join(root, "generated/gemm_mapped/*"))
	require.NoError(t, err)
	n := map[bool]int{}
	for _, v := range matrix.Variants(ss) {
		var src []byte
		for _, f := range files {
			if strings.TrimSuffix(filepath.Base(f), filepath.Ext(f)) == v.ID {
				src, err = os.ReadFile(f)
				require.NoError(t, err)
			}
		}
		if src == nil {
			continue // the variant does not apply to the kernel
		}
		s, r := string(src), v.Strategy.ItemRegisters
		n[r]++
		if r {
			assert.Contains(t, s, "double pm_c[8][4];  // a work item's micro-tile, in its registers", v.ID)
			assert.NotContains(t, s, "pm_acc", v.ID)
			assert.Contains(t, s, "const int64_t map_step = 64;", v.ID)
			// its own block, 64 x 128, on the GPU (an OpenMP target program's
			// host fallback takes the CPU model's)
			assert.Regexp(t, `pm::tune\("map_vector_size", (pm::device::is_gpu\(\) \? )?32\b`, s, v.ID)
		} else {
			assert.NotContains(t, s, "in its registers from the first step", v.ID)
			assert.Contains(t, s, "pm_c[pm_r][pm_s] = pm_acc[", v.ID)
			assert.Contains(t, s, "const int64_t map_step = 16;", v.ID)
		}
	}
	assert.Equal(t, map[bool]int{true: 10, false: 12}, n, "gemm_mapped's programs in registers and in team scratch")
}
