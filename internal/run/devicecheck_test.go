package run

import (
	"context"
	"errors"
	"os"
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

// QueryDevice runs build/deviceprops when it is there, and nvidia-smi
// (the first device CUDA_VISIBLE_DEVICES names) when it is not or fails.
func TestQueryDevice(t *testing.T) {
	bd, shims := t.TempDir(), t.TempDir()
	h200, err := filepath.Abs(filepath.Join("..", "machine", "testdata", "device-h200.json"))
	if err != nil {
		t.Fatal(err)
	}
	write := func(file, text string) {
		if err := os.WriteFile(file, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(shims, "nvidia-smi"), "#!/bin/sh\necho \"$*\" >"+filepath.Join(shims, "args")+"\necho 'NVIDIA H200, 143771, 9.0'\n")
	t.Setenv("PATH", shims+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("CUDA_VISIBLE_DEVICES", "3,1")
	ctx := context.Background()

	o, how, err := QueryDevice(bd)(ctx)
	if err != nil || how != "nvidia-smi" || o.Arch != "sm_90" || o.SMCount != 0 {
		t.Errorf("no deviceprops: %+v by %s, %v", o, how, err)
	}
	if args, _ := os.ReadFile(filepath.Join(shims, "args")); !strings.HasSuffix(strings.TrimSpace(string(args)), "-i 3") {
		t.Errorf("nvidia-smi %s: not the visible device", args)
	}
	write(filepath.Join(bd, DeviceQueryProgram), "#!/bin/sh\ncat "+h200+"\n")
	if o, how, err = QueryDevice(bd)(ctx); err != nil || how != DeviceQueryProgram || o.SMCount != 132 {
		t.Errorf("deviceprops: %+v by %s, %v", o, how, err)
	}
	write(filepath.Join(bd, DeviceQueryProgram), "#!/bin/sh\necho 'no CUDA-capable device' >&2; exit 1\n")
	if o, how, err = QueryDevice(bd)(ctx); err != nil || !strings.HasPrefix(how, "nvidia-smi (") || o.Name != "NVIDIA H200" {
		t.Errorf("deviceprops failing: %+v by %s, %v", o, how, err)
	}
}
