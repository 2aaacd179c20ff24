package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// A description with a problem is refused with its problems, and so are a
// composite using it and a variation of it; the others load. LoadDir, the
// strict reader, fails with the same positioned problems.
func TestLoadRefusesOnlyTheBrokenKernels(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"axpby", "dot", "spmv", "cgsolve", "atx_mapped", "atx_mapped_nopromote"} {
		b, err := os.ReadFile(filepath.Join("../../templates/kernels", name+".yaml"))
		if os.IsNotExist(err) {
			continue
		}
		require.NoError(t, err)
		if name == "axpby" {
			b = []byte(strings.Replace(string(b), "intent: inout", "intent: both", 1))
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, name+".yaml"), b, 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "atx_variant.yaml"), []byte("kernel: atx_variant\nvariation_of: atx_mapped\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "axpby_again.yaml"), []byte("kernel: axpby_again\nvariation_of: axpby\n"), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "spmv_copy.yaml"), []byte("kernel: spmv_copy\nvariation_of: spmv\npromote: [inputs]\n"), 0o644))
	ks, refused, err := Load(dir)
	require.NoError(t, err)
	var names []string
	for _, k := range ks {
		names = append(names, k.Name)
	}
	assert.ElementsMatch(t, []string{"dot", "spmv", "atx_mapped", "atx_variant"}, names)
	assert.Equal(t, []string{"axpby", "axpby_again", "cgsolve", "spmv_copy"}, refused.Names())
	msg := refused.Error()
	assert.Contains(t, msg, filepath.Join(dir, "axpby.yaml")+`:11:77: unknown intent "both"`)
	assert.Contains(t, msg, filepath.Join(dir, "cgsolve.yaml")+`:4:1: kernel "cgsolve" uses kernel "axpby", whose description is refused (`+filepath.Join(dir, "axpby.yaml")+")")
	assert.Contains(t, msg, filepath.Join(dir, "axpby_again.yaml")+`:2:15: kernel "axpby_again" is a variation of "axpby", whose description is refused (`)
	assert.Contains(t, msg, filepath.Join(dir, "spmv_copy.yaml")+`:3:1: promote: changes how a kernel written as loops is mapped; "spmv" has no loops`)
	assert.Len(t, refused.Of([]string{"dot"}), 0)
	assert.Len(t, refused.Of(nil), 4)
	_, err = LoadDir(dir)
	assert.EqualError(t, err, msg)

	// A later check's problem in a kernel's file refuses that kernel (and
	// its users); one in another file is left to the caller.
	var later diag.List
	later.Add(diag.Pos{File: filepath.Join(dir, "spmv.yaml"), Line: 7, Col: 72}, "size set")
	later.Add(diag.Pos{File: "variants/tuning.yaml", Line: 3}, "elsewhere")
	ks, err = refused.Take(ks, later.Err())
	assert.EqualError(t, err, "variants/tuning.yaml:3: elsewhere")
	assert.Equal(t, []string{"axpby", "axpby_again", "cgsolve", "spmv", "spmv_copy"}, refused.Names())
	assert.Len(t, ks, 3)
}
