package portability

import (
	"fmt"
	"strings"
)

// Platform statuses.
const (
	Measured        = "measured"          // kernel records of this platform exist
	CompilesNotRun  = "compiles, not run" // cells built, none run (no such device here)
	hostDeviceLabel = "host"
)

// Platform is a device and the toolchain whose binaries ran on it.
type Platform struct {
	Device    string // GPU name ("NVIDIA H200"), the host CPU's model, or the toolchain's target when nothing ran
	Toolchain string // toolchain id ("clang19-sm90")
	Status    string // Measured or CompilesNotRun
	Reason    string // why it did not run, for CompilesNotRun
	// Label names a platform that groups (device, toolchain) pairs
	// (Regroup): an index's platform, where each application takes its best
	// toolchain.
	Label string
}

// Name is the platform's name in every table, CSV and figure: the one place
// a (device, toolchain) pair is named; a group's Label.
func (p Platform) Name() string {
	if p.Label != "" {
		return p.Label
	}
	return PlatformName(p.Device, p.Toolchain)
}

// PlatformName names the platform of device and toolchain.
func PlatformName(device, toolchain string) string { return toolchain + " on " + device }

// deviceOf is the device a record ran on: its GPU name, or the host CPU's
// model for host code (the harness prints "host").
func deviceOf(recordDevice, target, hostCPU string) string {
	if recordDevice == "" || recordDevice == hostDeviceLabel || target == hostDeviceLabel {
		if hostCPU == "" {
			return "host CPU"
		}
		return hostCPU
	}
	return recordDevice
}

// Problem is a kernel at one size.
type Problem struct {
	Kernel string
	Size   int64
}

// String names the problem in tables and the P3 CSV ("axpby@100000000").
func (p Problem) String() string { return fmt.Sprintf("%s@%d", p.Kernel, p.Size) }

// Less orders problems by kernel, then size.
func (p Problem) Less(q Problem) bool {
	if p.Kernel != q.Kernel {
		return p.Kernel < q.Kernel
	}
	return p.Size < q.Size
}

// PlatformSet is the set H that PP is taken over, with a name shown beside
// every PP value.
type PlatformSet struct {
	Name      string
	Platforms []string  // platform names
	Excluded  []Exclude // platforms of the results left out, with why
}

// Exclude is a platform left out of a set and the reason.
type Exclude struct{ Platform, Reason string }

// String is "name: p1, p2".
func (h PlatformSet) String() string {
	return fmt.Sprintf("%s (%d platforms: %s)", h.Name, len(h.Platforms), strings.Join(h.Platforms, ", "))
}

// DefaultSet is every measured platform of in; platforms that only compile
// are excluded with their status (including them makes every PP 0).
func DefaultSet(in Input) PlatformSet {
	h := PlatformSet{Name: "measured platforms"}
	for _, p := range in.Platforms {
		if p.Status == Measured {
			h.Platforms = append(h.Platforms, p.Name())
			continue
		}
		h.Excluded = append(h.Excluded, Exclude{p.Name(), p.Status})
	}
	return h
}
