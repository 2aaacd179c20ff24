package spec

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/diag"
)

const vendorKernel = "kernel: k\nsize: {name: n, ci: [3], default: [3], gpu: [3]}\nargs: []\n" +
	"pattern: {code: \"\"}\nreference: \"\"\nbytes: \"0\"\nflops: \"0\"\ntolerance: eps\n"

// A vendor form is host C++ by library; each library once, a name, with code.
func TestVendorForms(t *testing.T) {
	var errs diag.List
	k := Parse("k.yaml", []byte(vendorKernel+"vendor:\n  cublas: |\n    PM_CUBLAS(cublasDgemm(h));\n"), &errs)
	require.NoError(t, errs.Err())
	require.NotNil(t, k.VendorForm("cublas"))
	assert.Equal(t, "PM_CUBLAS(cublasDgemm(h));\n", k.VendorForm("cublas").Code)
	assert.Equal(t, diag.Pos{File: "k.yaml", Line: 10, Col: 3}, k.VendorForm("cublas").Pos)
	assert.Nil(t, k.VendorForm("rocblas"))

	errs = nil
	Parse("k.yaml", []byte(vendorKernel+"vendor:\n  cu-blas: x\n  cublas: \"\"\n"), &errs)
	assert.EqualError(t, errs.Err(), `k.yaml:10:3: vendor library "cu-blas" is not a name (a strategy's vendor:, such as cublas)`+"\n"+
		`k.yaml:11:11: vendor form "cublas" needs host C++ calling the library over the kernel's arguments`)

	errs = nil
	Parse("k.yaml", []byte(vendorKernel+"vendor: [cublas]\n"), &errs)
	assert.EqualError(t, errs.Err(), `k.yaml:9:9: vendor must be a mapping`)
}

// The shipped hand-written forms of the benchmark set each have a cuBLAS form.
func TestShippedVendorForms(t *testing.T) {
	ks, err := LoadDir("../../templates/kernels")
	require.NoError(t, err)
	byName := ByName(ks)
	for k, call := range map[string]string{"gemm_team": "cublasDgemm", "transpose_team": "cublasDgeam", "trmv_team": "cublasDtrmv"} {
		require.Contains(t, byName, k)
		require.NotNil(t, byName[k].VendorForm("cublas"), k)
		assert.Contains(t, byName[k].VendorForm("cublas").Code, call, k)
	}
}
