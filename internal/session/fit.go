package session

import (
	"fmt"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/host"
	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// FitItem is one cell the run stage would run, at its sizes.
type FitItem struct {
	Cell, Kernel, Target string
	Sizes                []int64
	From                 string // where the sizes come from: "PM_SIZES", "size set ci"
}

// Room is the memory a run has: the host's (/proc/meminfo) and a GPU's
// (0: unknown, or no GPU cell runs), with where each figure comes from.
type Room struct {
	Host       host.MemInfo
	HostFrom   string
	Device     int64
	DeviceFrom string
}

// RoomHere is this machine's: /proc/meminfo, and the GPU's memory as
// nvidia-smi or rocm-smi report it, else its machine model's.
func RoomHere(mach host.Info, model *machine.Model) Room {
	var r Room
	if m, err := host.ReadMemInfo(host.MemInfoFile); err == nil {
		r.Host, r.HostFrom = m, host.MemInfoFile
	}
	switch {
	case len(mach.GPUs) > 0 && mach.GPUs[0].MemoryMiB > 0:
		r.Device, r.DeviceFrom = int64(mach.GPUs[0].MemoryMiB)<<20, mach.GPUs[0].Name+" as the driver reports it"
	case model != nil && model.GPU.MemoryBytes > 0:
		r.Device, r.DeviceFrom = model.GPU.MemoryBytes, model.File
	}
	return r
}

// CheckFit refuses, before anything runs, every (kernel, size) whose
// arrays a program cannot hold on this machine (spec.Footprint.Memory):
// more than the host has available, or than the GPU has. A kernel without a
// footprint (a build folder from before they were recorded) is not checked.
func CheckFit(items []FitItem, footprints map[string]spec.Footprint, room Room) error {
	type key struct {
		kernel string
		size   int64
		gpu    bool
	}
	cells := map[key][]string{}
	from := map[key]string{}
	var keys []key
	for _, it := range items {
		if _, ok := footprints[it.Kernel]; !ok {
			continue
		}
		for _, s := range it.Sizes {
			k := key{it.Kernel, s, it.Target != "host"}
			if _, ok := cells[k]; !ok {
				keys = append(keys, k)
				from[k] = it.From
			}
			cells[k] = append(cells[k], it.Cell)
		}
	}
	var errs []string
	for _, k := range keys {
		m, err := footprints[k.kernel].Memory(k.size, k.gpu)
		where := fmt.Sprintf("kernel %s at size %d (%s; %s)", k.kernel, k.size, from[k], fitCells(cells[k]))
		switch {
		case err != nil:
			errs = append(errs, fmt.Sprintf("%s: its arrays cannot be sized: %v", where, err))
		case room.Host.Total > 0 && m.Host > float64(room.Host.Available):
			errs = append(errs, fmt.Sprintf("%s: needs %s of host memory (%s of arrays, held %.1f times: data, reference, initial copies), this host has %s available of %s (%s)",
				where, Bytes(m.Host), Bytes(m.Data), m.Host/m.Data, Bytes(float64(room.Host.Available)), Bytes(float64(room.Host.Total)), room.HostFrom))
		case k.gpu && room.Device > 0 && m.Device > float64(room.Device):
			errs = append(errs, fmt.Sprintf("%s: needs %s of GPU memory (%s of arrays, held %.1f times: the arrays, initial and reference copies), the GPU has %s (%s)",
				where, Bytes(m.Device), Bytes(m.Data), m.Device/m.Data, Bytes(float64(room.Device)), room.DeviceFrom))
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%d sizes do not fit this machine; nothing was run (choose smaller sizes: PM_SIZES, PM_SIZE_SET):\n  %s", len(errs), strings.Join(errs, "\n  "))
	}
	return nil
}

// fitCells names the cells of a size that does not fit, the first three of a long list.
func fitCells(cells []string) string {
	slices.Sort(cells)
	cells = slices.Compact(cells)
	if len(cells) > 3 {
		return fmt.Sprintf("%s and %d more cells", strings.Join(cells[:3], ", "), len(cells)-3)
	}
	return strings.Join(cells, ", ")
}

// Bytes prints a byte count in binary units (KiB ... EiB).
func Bytes(b float64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for b >= 1024 && i < len(units)-1 {
		b /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%.0f B", b)
	}
	return fmt.Sprintf("%.1f %s", b, units[i])
}
