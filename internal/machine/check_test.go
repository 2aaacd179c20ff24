package machine

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// device reads what deviceprops printed on a real device (testdata).
func device(t *testing.T, file string) Observed {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	list, err := ParseDeviceJSON(data)
	if err != nil || len(list) != 1 {
		t.Fatalf("%s: %d devices, %v", file, len(list), err)
	}
	return list[0]
}

// The shipped models match the devices they were checked on.
func TestCheckRealDevices(t *testing.T) {
	s := loadShipped(t)
	for file, name := range map[string]string{"device-h100-80gb-hbm3.json": "h100-sxm5-80gb", "device-h200.json": "h200-sxm-141gb"} {
		o := device(t, file)
		m, ok := s.ByReported(o.Name)
		if !ok || m.Name != name {
			t.Fatalf("%s: the device's name %q finds %v, want %s", file, o.Name, m, name)
		}
		if err := Check(m, o); err != nil {
			t.Errorf("%s: %v", file, err)
		}
	}
}

// A wrong model fails, naming each field that differs.
func TestCheckWrongModel(t *testing.T) {
	s := loadShipped(t)
	h100, _ := s.Get("h100-sxm5-80gb")
	h200, _ := s.Get("h200-sxm-141gb")

	// An H200 checked against the H100's model: another name, 10 MiB more
	// L2, 141 GB of memory where the model has 80.
	err := Check(h100, device(t, "device-h200.json"))
	var mm *MismatchError
	if !errors.As(err, &mm) || !slices.Equal(mm.Fields, []string{"name", "l2_bytes", "memory_bytes"}) {
		t.Fatalf("H200 against the H100 model: %v", err)
	}

	// A device with fewer SMs (an H100 PCIe has 114) against the H200's
	// model: exactly the message the harness shows.
	o := device(t, "device-h200.json")
	o.SMCount = 114
	err = Check(h200, o)
	if err == nil || err.Error() != "machine h200-sxm-141gb: sm_count: model 132, device reports 114" {
		t.Errorf("got %v", err)
	}
	// Positioned at the value in the model (line 30, column 21: "132"); the name at its reports:.
	if !errors.As(err, &mm) {
		t.Fatalf("%v is not a *MismatchError", err)
	}
	want := filepath.Join(repoMachines, "h200-sxm-141gb.yaml") + ":30:21: sm_count: model 132, device reports 114 (GPU 0, checked against machine h200-sxm-141gb)"
	if got := mm.Positioned("GPU 0").Error(); got != want {
		t.Errorf("positioned:\n got %s\nwant %s", got, want)
	}
	o.SMCount, o.Name = 132, "NVIDIA H100 80GB HBM3"
	if errors.As(Check(h200, o), &mm) && !strings.Contains(mm.Positioned("GPU 0").Error(), "h200-sxm-141gb.yaml:8:") {
		t.Errorf("the name's mismatch is not at the model's reports: %v", mm.Positioned("GPU 0"))
	}

	// Dimensions and a CPU model.
	o = device(t, "device-h100-80gb-hbm3.json")
	o.MaxBlockDims[2] = 32
	if err := Check(h100, o); err == nil || err.Error() != "machine h100-sxm5-80gb: max_block_dims: model [1024, 1024, 64], device reports [1024, 1024, 32]" {
		t.Errorf("got %v", err)
	}
	cpu, _ := s.Get("x86-64-generic")
	if err := Check(cpu, o); err == nil {
		t.Error("a CPU model checked a GPU without error")
	}
	if err := CheckAll(h200, []Observed{device(t, "device-h200.json"), device(t, "device-h100-80gb-hbm3.json")}); err == nil {
		t.Error("CheckAll of an H200 and an H100 against the H200's model: no error")
	}
}

func TestParseDeviceJSON(t *testing.T) {
	one, err := ParseDeviceJSON([]byte(`{"name": "NVIDIA H200", "sm_count": 132}`))
	if err != nil || len(one) != 1 || one[0].SMCount != 132 {
		t.Errorf("one object: %+v, %v", one, err)
	}
	for _, bad := range []string{``, `[{"sm_count": 132}]`, `[{"name": "x", "sm_count": "many"}]`} {
		if got, err := ParseDeviceJSON([]byte(bad)); err == nil {
			t.Errorf("ParseDeviceJSON(%q) = %+v, want an error", bad, got)
		}
	}
}
