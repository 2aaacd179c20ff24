package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The shipped ablation is its base re-read: the same loops, arguments,
// sizes and reference, with its own name, doc and promote.
func TestShippedVariationIsItsBase(t *testing.T) {
	ks, err := LoadDir("../../templates/kernels")
	require.NoError(t, err)
	by := ByName(ks)
	v, base := by["hommexx_laplace_simple_mapped_noinputs"], by["hommexx_laplace_simple_mapped"]
	require.NotNil(t, v)
	require.NotNil(t, base)
	require.NotNil(t, v.Variation)
	assert.Equal(t, base.Name, v.Variation.Of)
	assert.Equal(t, []string{"temporaries", "outputs"}, v.Loops.Promote)
	assert.Nil(t, base.Loops.Promote, "the base's promote is untouched")
	assert.NotSame(t, base.Loops, v.Loops, "a loop nest of its own, which the mapper may change apart")
	assert.Equal(t, base.Args, v.Args)
	assert.Equal(t, base.Size, v.Size)
	assert.Equal(t, base.Reference, v.Reference)
	assert.Equal(t, base.Family, v.Family)
	assert.NotEqual(t, base.Doc, v.Doc)
	assert.Equal(t, "hommexx_laplace_simple_mapped_noinputs.yaml", filepath.Base(v.File))
}

// writeKernels writes name -> source into a fresh folder.
func writeKernels(t *testing.T, files map[string]string) string {
	dir := t.TempDir()
	for name, src := range files {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(src), 0o644))
	}
	return dir
}

func TestBadVariations(t *testing.T) {
	shipped, err := os.ReadFile("../../templates/kernels/hommexx_laplace_simple_mapped.yaml")
	require.NoError(t, err)
	pattern, err := os.ReadFile("../../templates/kernels/axpby.yaml")
	require.NoError(t, err)
	cases := []struct {
		name, src, want string
	}{
		{"unknown base", "kernel: v\nvariation_of: hommexx_laplace_simple_mappd\n",
			`v.yaml:2:15: kernel "v" is a variation of unknown kernel "hommexx_laplace_simple_mappd"; did you mean "hommexx_laplace_simple_mapped"?`},
		{"chain", "kernel: v\nvariation_of: w\n",
			`v.yaml:2:15: kernel "v" is a variation of "w", itself a variation of "hommexx_laplace_simple_mapped": name "hommexx_laplace_simple_mapped"`},
		{"promote without loops", "kernel: v\nvariation_of: axpby\npromote: [outputs]\n",
			`v.yaml:3:1: promote: changes how a kernel written as loops is mapped; "axpby" has no loops`},
		{"unknown kind", "kernel: v\nvariation_of: hommexx_laplace_simple_mapped\npromote: [inputs, registers]\n",
			`v.yaml:3:19: unknown promote kind "registers" (known: temporaries, outputs, inputs)`},
		{"field it may not change", "kernel: v\nvariation_of: hommexx_laplace_simple_mapped\nflops: 1\n",
			`v.yaml:3:1: unknown field "flops" in kernel variation`},
		{"file name", "kernel: x\nvariation_of: hommexx_laplace_simple_mapped\n",
			`v.yaml:1:9: kernel "x" must be described in x.yaml`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := writeKernels(t, map[string]string{
				"hommexx_laplace_simple_mapped": string(shipped), "axpby": string(pattern),
				"w": "kernel: w\nvariation_of: hommexx_laplace_simple_mapped\n", "v": c.src,
			})
			_, err := LoadDir(dir)
			require.Error(t, err)
			var got []string
			for _, line := range strings.Split(err.Error(), "\n") {
				if strings.HasPrefix(line, filepath.Join(dir, "v.yaml")) {
					got = append(got, strings.TrimPrefix(line, dir+string(filepath.Separator)))
				}
			}
			require.Len(t, got, 1, err.Error())
			assert.True(t, strings.HasPrefix(got[0], c.want), "got %s\nwant %s", got[0], c.want)
		})
	}
}
