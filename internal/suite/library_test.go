package suite

import (
	"testing"

	mx "github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/spec"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// The quick and wide samples leave out the cells built against an installed
// library; the full suite keeps them.
func TestSamplesLeaveOutLibraryCells(t *testing.T) {
	tc := &toolchain.Toolchain{ID: "gcc-host", Target: "host"}
	k := &spec.Kernel{Name: "axpby", Family: Measured}
	ours := &mx.Strategy{Name: "kk-omp"}
	lib := &mx.Strategy{Name: "kokkos-openmp", Library: &mx.LibraryRef{Name: "kokkos", Backend: "openmp"}}
	cell := func(s *mx.Strategy) *mx.Cell {
		v := &mx.Variant{ID: s.Name, Strategy: s}
		return &mx.Cell{ID: "axpby." + s.Name + ".gcc-host", Kernel: k, Variant: v, Toolchain: tc, On: true, Runnable: true}
	}
	cells := []*mx.Cell{cell(ours), cell(lib)}
	for _, name := range []string{Quick, Wide} {
		got := Cells(cells, name, nil, "ci", nil)
		if len(got) != 1 || got[0].Variant.Strategy != ours {
			t.Errorf("%s: %d cells, want only the kk-omp one", name, len(got))
		}
	}
	if got := Cells(cells, "", nil, "ci", nil); len(got) != 2 {
		t.Errorf("full: %d cells, want both", len(got))
	}
}
