package pipeline

import (
	"fmt"
	"testing"

	"github.com/portmatrix/portmatrix/internal/mapping"
	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/spec"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

func TestZZTmpRule(t *testing.T) {
	ks, err := mapping.LoadKernels("../..")
	if err != nil {
		t.Fatal(err)
	}
	caps, _ := toolchain.LoadTable("../../variants/capabilities.yaml")
	ss, _ := matrix.Load("../../variants/strategies.yaml", caps)
	fmt.Println(matrix.TunableValues(ss))
	notes, err := spec.CheckSizes(ks, matrix.TunableValues(ss))
	fmt.Println(notes.Err())
	fmt.Println("ERR", err)
}
