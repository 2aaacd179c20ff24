package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/portmatrix/portmatrix/internal/machine"
)

// DeviceQueryProgram is the device query's binary in the build folder
// (harness/devicequery/deviceprops.cu, machine.DeviceQuerySource):
// nvcc -O2 -o build/deviceprops harness/devicequery/deviceprops.cu.
const DeviceQueryProgram = "deviceprops"

// DeviceQuery reports the properties of the GPU this process runs on, and
// how it asked ("deviceprops", "nvidia-smi").
type DeviceQuery func(ctx context.Context) (machine.Observed, string, error)

// QueryDevice asks the GPU the harness will run on (the first that
// CUDA_VISIBLE_DEVICES names, else GPU 0): the device query in the build
// folder when it was built (every field a model has), else nvidia-smi's
// name, memory and compute capability (enough to catch another GPU, not
// another SM count).
func QueryDevice(buildDir string) DeviceQuery {
	return func(ctx context.Context) (machine.Observed, string, error) {
		ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		prog := filepath.Join(buildDir, DeviceQueryProgram)
		if _, err := os.Stat(prog); err != nil {
			return nvidiaSMI(ctx)
		}
		o, err := deviceProps(ctx, prog)
		if err == nil {
			return o, DeviceQueryProgram, nil
		}
		// A query that does not run here (a runtime too new for the driver):
		// nvidia-smi's fields, and the reason beside them.
		o, how, serr := nvidiaSMI(ctx)
		return o, how + " (" + err.Error() + ")", serr
	}
}

// deviceProps runs the device query; it sees the visible devices only, so
// the first is the harness's.
func deviceProps(ctx context.Context, prog string) (machine.Observed, error) {
	out, err := exec.CommandContext(ctx, prog).Output()
	if err != nil {
		return machine.Observed{}, fmt.Errorf("%s: %v", prog, err)
	}
	list, err := machine.ParseDeviceJSON(out)
	if err != nil {
		return machine.Observed{}, fmt.Errorf("%s: %v", prog, err)
	}
	if len(list) == 0 {
		return machine.Observed{}, fmt.Errorf("%s: no device", prog)
	}
	return list[0], nil
}

// nvidiaSMI reads the visible GPU's name, memory and compute capability
// (drivers before compute_cap answer the rest).
func nvidiaSMI(ctx context.Context) (machine.Observed, string, error) {
	var sel []string
	if v, _, _ := strings.Cut(os.Getenv("CUDA_VISIBLE_DEVICES"), ","); v != "" {
		sel = []string{"-i", v} // nvidia-smi ignores CUDA_VISIBLE_DEVICES
	}
	var errs []error
	for _, fields := range []string{"name,memory.total,compute_cap", "name,memory.total"} {
		args := append([]string{"--query-gpu=" + fields, "--format=csv,noheader,nounits"}, sel...)
		out, err := exec.CommandContext(ctx, "nvidia-smi", args...).Output()
		if err != nil {
			errs = append(errs, fmt.Errorf("nvidia-smi %s: %v", strings.Join(args, " "), err))
			continue
		}
		o, err := parseSMI(string(out))
		return o, "nvidia-smi", err
	}
	return machine.Observed{}, "nvidia-smi", errors.Join(errs...)
}

// parseSMI reads the first line of name, memory.total (MiB)[, compute_cap].
func parseSMI(out string) (machine.Observed, error) {
	line, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	f := strings.Split(line, ",")
	if len(f) < 2 || strings.TrimSpace(f[0]) == "" {
		return machine.Observed{}, fmt.Errorf("nvidia-smi: cannot read %q", line)
	}
	o := machine.Observed{Name: strings.TrimSpace(f[0])}
	if mib, err := strconv.ParseInt(strings.TrimSpace(f[1]), 10, 64); err == nil {
		o.MemoryBytes = mib << 20
	}
	if len(f) > 2 {
		if major, minor, ok := strings.Cut(strings.TrimSpace(f[2]), "."); ok {
			o.Arch = "sm_" + major + minor // 9.0 -> sm_90
		}
	}
	return o, nil
}

// CheckDevice checks the GPU this process runs on against m, the model the
// run's launch defaults and the tuner's constraints come from: nil and a
// line for the log when they agree; on a mismatch an error per field at the
// model's line (machine.MismatchError.Positioned). A device that cannot be
// asked is not checked (the line says why), so a GPU without nvidia-smi or
// the device query still runs.
func CheckDevice(ctx context.Context, m *machine.Model, q DeviceQuery) (string, error) {
	o, how, err := q(ctx)
	if err != nil {
		return fmt.Sprintf("machine %s: the device was not checked (%v)", m.Name, err), nil
	}
	err = machine.Check(m, o)
	var mm *machine.MismatchError
	if errors.As(err, &mm) {
		return "", mm.Positioned(fmt.Sprintf("the device %q as %s reports it", o.Name, how))
	}
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("machine %s: the device %q matches it (%s)", m.Name, o.Name, how), nil
}
