package run

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/portmatrix/portmatrix/internal/machine"
)

// nvidia-smi's fields are enough to tell another GPU: the name, the memory
// and the compute capability as an arch.
func TestNvidiaSMIFieldsCheckTheModel(t *testing.T) {
	o, err := parseSMI("NVIDIA H100 80GB HBM3, 81559, 9.0\nNVIDIA H200, 143771, 9.0\n")
	if err != nil || o != (machine.Observed{Name: "NVIDIA H100 80GB HBM3", MemoryBytes: 81559 << 20, Arch: "sm_90"}) {
		t.Fatalf("%+v, %v", o, err)
	}
	set, err := machine.Load(filepath.Join("..", "..", machine.Dir))
	if err != nil {
		t.Fatal(err)
	}
	h100, _ := set.Get("h100-sxm5-80gb")
	h200, _ := set.Get("h200-sxm-141gb")
	query := func(o machine.Observed) DeviceQuery {
		return func(context.Context) (machine.Observed, string, error) { return o, "nvidia-smi", nil }
	}
	if note, err := CheckDevice(context.Background(), h100, query(o)); err != nil || !strings.Contains(note, "matches") {
		t.Errorf("an H100 against its model: %q, %v", note, err)
	}
	_, err = CheckDevice(context.Background(), h200, query(o))
	if err == nil || !strings.Contains(err.Error(), "h200-sxm-141gb.yaml:8:") || !strings.Contains(err.Error(), ": memory_bytes: model 151397597184, device reports 85520809984") {
		t.Errorf("an H100 against the H200's model: %v", err)
	}
	// A device that cannot be asked is not checked, and the note says why.
	note, err := CheckDevice(context.Background(), h200, func(context.Context) (machine.Observed, string, error) {
		return machine.Observed{}, "nvidia-smi", errors.New("nvidia-smi: not found")
	})
	if err != nil || !strings.Contains(note, "not checked (nvidia-smi: not found)") {
		t.Errorf("%q, %v", note, err)
	}
	if _, err := parseSMI("\n"); err == nil {
		t.Error("an empty answer parsed")
	}
}
