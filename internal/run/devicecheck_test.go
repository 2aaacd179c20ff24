package run

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/portmatrix/portmatrix/internal/host"
	"github.com/portmatrix/portmatrix/internal/host/smitest"
	"github.com/portmatrix/portmatrix/internal/machine"
)

// nvidia-smi's fields are enough to tell another GPU: the name, the memory
// and the compute capability as an arch.
func TestNvidiaSMIFieldsCheckTheModel(t *testing.T) {
	t.Setenv("CUDA_VISIBLE_DEVICES", "")
	smi := func(answer string) host.Runner {
		return func(_ context.Context, name string, args ...string) ([]byte, error) {
			if name != "nvidia-smi" || slices.Contains(args, "-i") {
				return nil, errors.New("unexpected " + name + " " + strings.Join(args, " "))
			}
			return []byte(answer), nil
		}
	}
	ctx := context.Background()
	o, how, err := nvidiaSMI(ctx, smi("0, GPU-aaaa, 580.159.04, 81559, 9.0, NVIDIA H100 80GB HBM3\n1, GPU-bbbb, 580.159.04, 143771, 9.0, NVIDIA H200\n"))
	if err != nil || how != "nvidia-smi" || o != (machine.Observed{Name: "NVIDIA H100 80GB HBM3", MemoryBytes: 81559 << 20, Arch: "sm_90"}) {
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
	if _, _, err := nvidiaSMI(ctx, smi("\n")); err == nil || !strings.Contains(err.Error(), "lists no GPU") {
		t.Errorf("an empty answer: %v", err)
	}
}

// QueryDevice runs build/deviceprops when it is there, and nvidia-smi
// (the first device CUDA_VISIBLE_DEVICES names; without compute_cap on an
// old driver) when it is not or fails.
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
	gpus := []host.SMI{
		{Index: "1", UUID: "GPU-bbbb", Name: "NVIDIA H100 80GB HBM3", Driver: "580.159.04", MemoryMiB: 81559, ComputeCap: "9.0"},
		{Index: "3", UUID: "GPU-dddd", Name: "NVIDIA H200", Driver: "580.159.04", MemoryMiB: 143771, ComputeCap: "9.0"},
	}
	smitest.Install(t, shims, false, gpus...)
	t.Setenv("PATH", shims+string(os.PathListSeparator)+os.Getenv("PATH"))
	t.Setenv("CUDA_VISIBLE_DEVICES", "3,1")
	ctx := context.Background()

	o, how, err := QueryDevice(bd)(ctx)
	want := machine.Observed{Name: "NVIDIA H200", MemoryBytes: 143771 << 20, Arch: "sm_90"} // GPU 3, not 1
	if err != nil || how != "nvidia-smi" || o != want {
		t.Errorf("no deviceprops: %+v by %s, %v", o, how, err)
	}
	smitest.Install(t, shims, true, gpus...)
	want.Arch = "" // an old driver: no compute_cap
	if o, how, err = QueryDevice(bd)(ctx); err != nil || how != "nvidia-smi" || o != want {
		t.Errorf("no deviceprops, an old driver: %+v by %s, %v", o, how, err)
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
