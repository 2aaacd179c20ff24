package render_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/render"
)

// Whether a strategy names a layer header is the backend's knowledge
// (backend.yaml "layer"), checked here and nowhere else.
func TestCheckStrategies(t *testing.T) {
	e, err := render.Load("../../templates")
	require.NoError(t, err)
	assert.NoError(t, e.CheckStrategies([]*matrix.Strategy{
		{Name: "kk-x", Backend: "kokkos", Layer: "harness/kk/ompx.hpp"}, {Name: "raw", Backend: "omp-raw"}}))
	err = e.CheckStrategies([]*matrix.Strategy{
		{Name: "kk-x", Backend: "kokkos"}, {Name: "raw", Backend: "omp-raw", Layer: "x.hpp"}, {Name: "n", Backend: "nope"}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "strategy kk-x: the kokkos backend needs a layer header")
	assert.Contains(t, err.Error(), "strategy raw: the omp-raw backend takes no layer header")
	assert.Contains(t, err.Error(), `strategy n: no backend "nope"`)
}
