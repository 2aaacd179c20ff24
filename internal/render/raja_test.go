package render_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// The rajalib strategies are the raja strategies' programs against RAJA
// itself: each renders every kernel it names, and each program is its praja
// counterpart's code with RAJA's layer header and policies (docs/raja.md).
func TestRajaLibraryStrategies(t *testing.T) {
	p := load(t)
	files, err := p.Render()
	require.NoError(t, err)
	// Each RAJA backend, and the praja variant whose code its programs share.
	counterpart := map[string]string{
		"rajalib-omp": "raja-omp-teams", "rajalib-omp-nt": "raja-omp-teams",
		"rajalib-host-omp": "raja-host-omp",
		"rajalib-cuda":     "raja-cuda", "rajalib-cuda-async": "raja-cuda",
	}
	backends := map[string]string{"rajalib-omp": "omptarget", "rajalib-host": "openmp", "rajalib-cuda": "cuda"}
	seen := map[string]bool{}
	kernels := map[string]*spec.Kernel{}
	for _, k := range p.Kernels {
		kernels[k.Name] = k
	}
	for _, v := range p.Variants {
		s := v.Strategy
		if !strings.HasPrefix(s.Name, "rajalib-") {
			continue
		}
		seen[v.ID] = true
		require.NotNil(t, s.Library, s.Name)
		assert.Equal(t, "raja", s.Library.Name, s.Name)
		assert.Equal(t, backends[s.Name], s.Library.Backend, s.Name)
		assert.Equal(t, "raja/library.hpp", s.Layer, s.Name)
		twin := counterpart[v.ID]
		require.NotEmpty(t, twin, "%s: no praja counterpart in the test", v.ID)
		var tv *matrix.Variant
		for _, o := range p.Variants {
			if o.ID == twin {
				tv = o
			}
		}
		require.NotNil(t, tv, twin)
		// The same kernels as the praja strategy, every one rendered.
		assert.Equal(t, tv.Strategy.Kernels, s.Kernels, s.Name)
		require.NotEmpty(t, s.Kernels, s.Name)
		for _, name := range s.Kernels {
			k := kernels[name]
			require.NotNil(t, k, "%s names kernel %s", s.Name, name)
			src, ok := files[matrix.SourcePath(k, v)]
			require.True(t, ok, "%s: %s not rendered", v.ID, matrix.SourcePath(k, v))
			code := string(src)
			assert.Contains(t, code, "#include \"raja/library.hpp\"\n", matrix.SourcePath(k, v))
			assert.Regexp(t, `(?m)^#define PRAJA_POLICY RAJA::\S+$`, code)
			assert.Regexp(t, `(?m)^#define PRAJA_SYNC_POLICY RAJA::(omp|cuda)_synchronize$`, code)
			// Past the layer's include, the program is the praja one.
			tsrc, ok := files[matrix.SourcePath(k, tv)]
			require.True(t, ok, matrix.SourcePath(k, tv))
			assert.Equal(t, body(string(tsrc)), body(code), "%s and %s differ past the layer header", matrix.SourcePath(k, v), matrix.SourcePath(k, tv))
		}
	}
	for id := range counterpart {
		assert.True(t, seen[id], "no variant %s", id)
	}
}

// body is a generated program from its using-declaration of the policy on.
func body(src string) string {
	i := strings.Index(src, "using exec_policy = PRAJA_POLICY;")
	if i < 0 {
		return ""
	}
	return src[i:]
}
