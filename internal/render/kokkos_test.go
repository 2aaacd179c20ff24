package render_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// kokkosCounterparts pairs each variant built against the Kokkos library
// with the variant of our layers it is compared with (docs/kokkos.md);
// sameTunables: whether the two read the same tunables with the same values
// (kokkos-openmp runs a team as one thread: its team sizes are 1).
var kokkosCounterparts = []struct {
	variant, ours string
	sameTunables  bool
}{
	{"kokkos-cuda-3lvl", "kk-cuda-3lvl", true},
	{"kokkos-cuda-2lvl", "kk-cuda-2lvl", true},
	{"kokkos-cuda-l1-3lvl", "kk-cuda-l1-3lvl", true},
	{"kokkos-cuda-l1-2lvl", "kk-cuda-l1-2lvl", true},
	{"kokkos-omptarget", "kk-omp-b", true},
	{"kokkos-omptarget-l1", "kk-omp-l1-b", true},
	{"kokkos-openmp", "kk-omp-b", false},
}

// Every strategy built against the Kokkos library renders every kernel its
// counterpart of our layers renders, from the same user code: the programs
// differ only in their header comment, the device and layer they include, the knob
// defines of our layer and, where the strategy says so, the tunables'
// values. Every pmkk name they use is one kk/kokkos.hpp maps to Kokkos.
func TestKokkosStrategiesRenderTheirCounterpartsKernels(t *testing.T) {
	p := load(t)
	files, err := p.Render()
	require.NoError(t, err)
	byVariant := map[string]map[string]string{} // variant -> kernel -> source
	for path, src := range files {
		kernel := filepath.Base(filepath.Dir(path))
		v := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		if byVariant[v] == nil {
			byVariant[v] = map[string]string{}
		}
		byVariant[v][kernel] = string(src)
	}

	var libraryVariants []string
	for _, v := range p.Variants {
		if l := v.Strategy.Library; l != nil && l.Name == "kokkos" {
			libraryVariants = append(libraryVariants, v.ID)
			assert.Equal(t, "kk/kokkos.hpp", v.Strategy.Layer, "%s: the Kokkos library's layer", v.ID)
		}
	}
	var paired []string
	for _, c := range kokkosCounterparts {
		paired = append(paired, c.variant)
	}
	sort.Strings(libraryVariants)
	sort.Strings(paired)
	assert.Equal(t, paired, libraryVariants, "every variant with library kokkos has a counterpart here, and only those")

	layer, err := os.ReadFile(filepath.Join(root, "harness", "kk", "kokkos.hpp"))
	require.NoError(t, err)
	mapped := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^(?:using (?:Kokkos::)?(\w+)|KOKKOS_INLINE_FUNCTION \S+ (\w+)\(|class (\w+) \{)`).FindAllStringSubmatch(string(layer), -1) {
		for _, name := range m[1:] {
			if name != "" {
				mapped[name] = true
			}
		}
	}
	require.Contains(t, mapped, "TeamPolicy", "kk/kokkos.hpp's names are read from its using lines")
	pmkkName := regexp.MustCompile(`pmkk::(\w+)`)

	families := map[string]bool{}
	for _, c := range kokkosCounterparts {
		ours, lib := byVariant[c.ours], byVariant[c.variant]
		require.NotEmpty(t, ours, "%s renders nothing", c.ours)
		assert.Equal(t, sortedKeys(ours), sortedKeys(lib), "%s renders the kernels %s renders", c.variant, c.ours)
		for kernel, src := range lib {
			assert.Contains(t, src, `#include "kk/kokkos.hpp"`, "%s/%s", kernel, c.variant)
			assert.Contains(t, src, "pmkk::ScopeGuard pmkk_scope(argc, argv);", "%s/%s: Kokkos is initialised in main", kernel, c.variant)
			for _, m := range pmkkName.FindAllStringSubmatch(src, -1) {
				assert.True(t, mapped[m[1]], "%s/%s uses pmkk::%s, which kk/kokkos.hpp does not map", kernel, c.variant, m[1])
			}
			if o, ok := ours[kernel]; ok {
				if a, b := userCode(o, c.sameTunables), userCode(src, c.sameTunables); a != b {
					t.Errorf("%s/%s: not the user code of %s: %s", kernel, c.variant, c.ours, firstDifference(a, b))
				}
			}
			families[kernelFamily(kernel)] = true
		}
	}
	for _, f := range []string{"axpby", "dot", "spmv", "cgsolve", "snap", "stencil", "hommexx", "mapped"} {
		assert.True(t, families[f], "no kokkos-* program of the %s kernels", f)
	}
	// The restricted strategies claim kernels that exist and render them.
	for _, s := range p.Strategies {
		if s.Library == nil || s.Library.Name != "kokkos" {
			continue
		}
		for _, v := range p.Variants {
			if v.Strategy != s {
				continue
			}
			for _, k := range s.Kernels {
				assert.Contains(t, byVariant[v.ID], k, "%s claims %s", v.ID, k)
			}
		}
	}
}

// userCode drops what may differ between a program of our layer and the
// same program against the library: the header comment, the knob defines,
// the layer's include and, unless the tunables are the same, their values.
func userCode(src string, sameTunables bool) string {
	var keep []string
	for _, line := range strings.Split(src, "\n") {
		trim := strings.TrimSpace(line)
		switch {
		case strings.HasPrefix(trim, "//"), strings.HasPrefix(trim, "#define "), strings.HasPrefix(trim, `#include "kk/`),
			strings.HasPrefix(trim, `#include "pm/device_`):
		case !sameTunables && strings.Contains(trim, "pm::tune("):
		default:
			keep = append(keep, line)
		}
	}
	return strings.Join(keep, "\n")
}

func firstDifference(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := 0; i < len(al) && i < len(bl); i++ {
		if al[i] != bl[i] {
			return "line " + strconv.Itoa(i+1) + ": " + strconv.Quote(al[i]) + " against " + strconv.Quote(bl[i])
		}
	}
	return "one is longer"
}

func kernelFamily(kernel string) string {
	switch {
	case strings.HasSuffix(kernel, "_mapped"), strings.Contains(kernel, "_mapped_"):
		return "mapped"
	case strings.HasPrefix(kernel, "snap_"):
		return "snap"
	case strings.HasPrefix(kernel, "stencil"):
		return "stencil"
	case strings.HasPrefix(kernel, "hommexx_"):
		return "hommexx"
	}
	return kernel
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
