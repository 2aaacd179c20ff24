package machine

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// Observed is what a running device reports of itself: the JSON of
// harness/devicequery/deviceprops.cu, one object per device, under the
// models' field names. A zero field was not reported and is not compared.
type Observed struct {
	Name  string `json:"name"` // cudaDeviceProp.name, the nvidia-smi name
	Arch  string `json:"arch"` // sm_90
	Index int    `json:"index"`

	SMCount                      int64    `json:"sm_count"`
	WarpSize                     int64    `json:"warp_size"`
	MaxThreadsPerBlock           int64    `json:"max_threads_per_block"`
	MaxBlockDims                 [3]int64 `json:"max_block_dims"`
	MaxGridDims                  [3]int64 `json:"max_grid_dims"`
	MaxThreadsPerSM              int64    `json:"max_threads_per_sm"`
	MaxBlocksPerSM               int64    `json:"max_blocks_per_sm"`
	RegistersPerSM               int64    `json:"registers_per_sm"`
	RegistersPerBlock            int64    `json:"registers_per_block"`
	SharedMemoryPerSMBytes       int64    `json:"shared_memory_per_sm_bytes"`
	SharedMemoryPerBlockBytes    int64    `json:"shared_memory_per_block_bytes"`
	SharedMemoryPerBlockOptin    int64    `json:"shared_memory_per_block_optin_bytes"`
	SharedMemoryReservedPerBlock int64    `json:"shared_memory_reserved_per_block_bytes"`
	L2Bytes                      int64    `json:"l2_bytes"`
	MemoryBytes                  int64    `json:"memory_bytes"` // usable memory: a little below the datasheet's
	ClockMHz                     int64    `json:"clock_mhz"`    // informational, not compared

	CUDADriver  int64 `json:"cuda_driver,omitempty"`
	CUDARuntime int64 `json:"cuda_runtime,omitempty"`
}

// ParseDeviceJSON reads the device query's output: a list of devices (or
// one object).
func ParseDeviceJSON(data []byte) ([]Observed, error) {
	trimmed := strings.TrimSpace(string(data))
	if strings.HasPrefix(trimmed, "{") {
		var o Observed
		if err := json.Unmarshal(data, &o); err != nil {
			return nil, fmt.Errorf("device query: %w", err)
		}
		return []Observed{o}, nil
	}
	var list []Observed
	if err := json.Unmarshal(data, &list); err != nil {
		return nil, fmt.Errorf("device query: %w", err)
	}
	for i, o := range list {
		if o.Name == "" {
			return nil, fmt.Errorf("device query: device %d has no name", i)
		}
	}
	return list, nil
}

// MemoryTolerance: a device reports somewhat less memory than its datasheet
// (the driver's and ECC's share: 79.2 of 80 GiB on an H100 80GB HBM3, 139.8
// of 141 on an H200); less than this fraction of the model's is a mismatch.
const MemoryTolerance = 0.95

// observedFields pairs the model's fields with what a device reports.
var observedFields = []struct {
	name string
	get  func(o *Observed) []int64
}{
	{"sm_count", func(o *Observed) []int64 { return []int64{o.SMCount} }},
	{"warp_size", func(o *Observed) []int64 { return []int64{o.WarpSize} }},
	{"max_threads_per_block", func(o *Observed) []int64 { return []int64{o.MaxThreadsPerBlock} }},
	{"max_block_dims", func(o *Observed) []int64 { return o.MaxBlockDims[:] }},
	{"max_grid_dims", func(o *Observed) []int64 { return o.MaxGridDims[:] }},
	{"max_threads_per_sm", func(o *Observed) []int64 { return []int64{o.MaxThreadsPerSM} }},
	{"max_blocks_per_sm", func(o *Observed) []int64 { return []int64{o.MaxBlocksPerSM} }},
	{"registers_per_sm", func(o *Observed) []int64 { return []int64{o.RegistersPerSM} }},
	{"registers_per_block", func(o *Observed) []int64 { return []int64{o.RegistersPerBlock} }},
	{"shared_memory_per_sm_bytes", func(o *Observed) []int64 { return []int64{o.SharedMemoryPerSMBytes} }},
	{"shared_memory_per_block_bytes", func(o *Observed) []int64 { return []int64{o.SharedMemoryPerBlockBytes} }},
	{"shared_memory_per_block_optin_bytes", func(o *Observed) []int64 { return []int64{o.SharedMemoryPerBlockOptin} }},
	{"shared_memory_reserved_per_block_bytes", func(o *Observed) []int64 { return []int64{o.SharedMemoryReservedPerBlock} }},
	{"l2_bytes", func(o *Observed) []int64 { return []int64{o.L2Bytes} }},
	{"memory_bytes", func(o *Observed) []int64 { return []int64{o.MemoryBytes} }},
}

// MismatchError lists every field where the device and its model differ.
type MismatchError struct {
	Model  string
	Fields []string   // field names, in table order
	Lines  []string   // "sm_count: model 132, device reports 114"
	Pos    []diag.Pos // where the model writes each field (its file alone where unknown)
}

func (e *MismatchError) Error() string {
	return "machine " + e.Model + ": " + strings.Join(e.Lines, "; ")
}

// Positioned is the mismatch as errors at the model's lines, one per field
// (machines/h200-sxm-141gb.yaml:30:3: sm_count: model 132, device reports
// 114), sorted: what a run that checks its device reports.
func (e *MismatchError) Positioned(device string) error {
	var l diag.List
	for i, line := range e.Lines {
		l.Add(e.Pos[i], "%s (%s, checked against machine %s)", line, device, e.Model)
	}
	return l.Err()
}

// Check compares a running device with its model and returns a
// *MismatchError naming each field that differs ("machine h200: sm_count:
// model 132, device reports 114"), or nil. Fields the device does not report
// (zero) or the model leaves out are not compared; memory may be up to
// MemoryTolerance below the model's; a clock is never compared. The arch
// and the reported name are checked too.
func Check(m *Model, o Observed) error {
	e := &MismatchError{Model: m.Name}
	add := func(field, format string, args ...any) {
		e.Fields = append(e.Fields, field)
		e.Lines = append(e.Lines, field+": "+fmt.Sprintf(format, args...))
		pos := diag.Pos{File: m.File}
		switch {
		case field == "name" && len(m.reportPos) > 0:
			pos = m.reportPos[0]
		case field == "arch" && m.archPos.Line > 0:
			pos = m.archPos
		case m.Values[field].Pos.Line > 0:
			pos = m.Values[field].Pos
		}
		e.Pos = append(e.Pos, pos)
	}
	if m.Kind != KindGPU {
		return fmt.Errorf("machine %s: a %s model cannot check a GPU", m.Name, m.Kind)
	}
	if o.Name != "" && len(m.Reports) > 0 && !m.reports(o.Name) {
		add("name", "model reports %s, device reports %q", quoteAll(m.Reports), o.Name)
	}
	if o.Arch != "" && o.Arch != m.Arch {
		add("arch", "model %s, device reports %s", m.Arch, o.Arch)
	}
	for _, f := range observedFields {
		v, ok := m.Values[f.name]
		got := f.get(&o)
		if !ok || allZero(got) {
			continue
		}
		want := v.Ints
		if f.name == "memory_bytes" {
			if got[0] > want[0] || float64(got[0]) < MemoryTolerance*float64(want[0]) {
				add(f.name, "model %d, device reports %d (more than the model, or under %.0f%% of it)", want[0], got[0], 100*MemoryTolerance)
			}
			continue
		}
		if !equal(want, got) {
			add(f.name, "model %s, device reports %s", ints(want), ints(got))
		}
	}
	if len(e.Lines) == 0 {
		return nil
	}
	return e
}

// CheckAll is Check over every device of a query against one model; errors
// are joined, each naming its device index.
func CheckAll(m *Model, devices []Observed) error {
	var errs []error
	for _, o := range devices {
		if err := Check(m, o); err != nil {
			errs = append(errs, fmt.Errorf("device %d (%s): %w", o.Index, o.Name, err))
		}
	}
	return errors.Join(errs...)
}

func (m *Model) reports(name string) bool {
	for _, r := range m.Reports {
		if normalName(r) == normalName(name) {
			return true
		}
	}
	return false
}

func quoteAll(list []string) string {
	q := make([]string, len(list))
	for i, s := range list {
		q[i] = fmt.Sprintf("%q", s)
	}
	return strings.Join(q, " or ")
}

func allZero(v []int64) bool {
	for _, x := range v {
		if x != 0 {
			return false
		}
	}
	return true
}

func equal(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func ints(v []int64) string {
	if len(v) == 1 {
		return fmt.Sprint(v[0])
	}
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = fmt.Sprint(x)
	}
	return "[" + strings.Join(s, ", ") + "]"
}

// DeviceQuerySource is the device query's source, relative to the
// repository root: nvcc -O2 -o build/deviceprops harness/devicequery/deviceprops.cu
// builds it with any CUDA >= 11; its output is ParseDeviceJSON's input.
const DeviceQuerySource = "harness/devicequery/deviceprops.cu"
