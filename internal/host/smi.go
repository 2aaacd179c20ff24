package host

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// SMI is one GPU as nvidia-smi lists it: the one query every part of
// portmatrix asks (the host record, the gpus scheduler's devices, the device
// check against the machine model).
type SMI struct {
	Index      string // nvidia-smi's index, as CUDA_VISIBLE_DEVICES, PM_GPUS and -i name it
	UUID       string
	Name       string
	Driver     string
	MemoryMiB  MiB
	ComputeCap string // "9.0"; "" where the driver predates compute_cap
}

// smiFields is what QuerySMI asks, name last: the one free-text field, so a
// comma in a name stays in the name. Drivers before compute_cap (R510)
// refuse the whole query; QuerySMI then asks smiFields without it.
var smiFields = []string{"index", "uuid", "driver_version", "memory.total", "compute_cap", "name"}

// QuerySMI lists the GPUs nvidia-smi sees; only, when not empty, asks for
// one (-i: an index or a UUID; nvidia-smi ignores CUDA_VISIBLE_DEVICES). It
// returns the rows it could read and an error for each line it could not,
// or the error of every query when nvidia-smi does not answer.
func QuerySMI(ctx context.Context, run Runner, only string) ([]SMI, error) {
	var errs []error
	for _, fields := range [][]string{smiFields, without(smiFields, "compute_cap")} {
		args := []string{"--query-gpu=" + strings.Join(fields, ","), "--format=csv,noheader,nounits"}
		if only != "" {
			args = append(args, "-i", only)
		}
		out, err := run(ctx, "nvidia-smi", args...)
		if err != nil {
			errs = append(errs, fmt.Errorf("nvidia-smi %s: %v", strings.Join(args, " "), err))
			continue
		}
		return parseSMI(string(out), fields)
	}
	return nil, errors.Join(errs...)
}

// Arch is the compute capability as an NVPTX arch ("9.0" -> "sm_90"), ""
// when unknown.
func (g SMI) Arch() string {
	major, minor, ok := strings.Cut(g.ComputeCap, ".")
	if !ok || major == "" || minor == "" {
		return ""
	}
	return "sm_" + major + minor
}

// parseSMI reads nvidia-smi's CSV (no header, no units), one GPU a line in
// the order of fields, the last of which is the name.
func parseSMI(out string, fields []string) ([]SMI, error) {
	var list []SMI
	var errs []error
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.SplitN(line, ",", len(fields))
		if len(f) < len(fields) {
			errs = append(errs, fmt.Errorf("nvidia-smi: cannot read %q as %s", line, strings.Join(fields, ",")))
			continue
		}
		var g SMI
		for i, name := range fields {
			v := strings.TrimSpace(f[i])
			switch name {
			case "index":
				g.Index = v
			case "uuid":
				g.UUID = v
			case "driver_version":
				g.Driver = v
			case "memory.total":
				mib, _ := strconv.ParseInt(v, 10, 64) // "[N/A]" where the driver does not know
				g.MemoryMiB = MiB(mib)
			case "compute_cap":
				g.ComputeCap = v
			case "name":
				g.Name = v
			}
		}
		if g.Name == "" {
			errs = append(errs, fmt.Errorf("nvidia-smi: cannot read %q as %s: no name", line, strings.Join(fields, ",")))
			continue
		}
		list = append(list, g)
	}
	return list, errors.Join(errs...)
}

func without(list []string, drop string) []string {
	var keep []string
	for _, s := range list {
		if s != drop {
			keep = append(keep, s)
		}
	}
	return keep
}
