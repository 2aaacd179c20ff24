package run

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/portmatrix/portmatrix/internal/host"
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
			return nvidiaSMI(ctx, host.Exec)
		}
		o, err := deviceProps(ctx, prog)
		if err == nil {
			return o, DeviceQueryProgram, nil
		}
		// A query that does not run here (a runtime too new for the driver):
		// nvidia-smi's fields, and the reason beside them.
		o, how, serr := nvidiaSMI(ctx, host.Exec)
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
// (host.QuerySMI; drivers before compute_cap answer the rest).
func nvidiaSMI(ctx context.Context, smi host.Runner) (machine.Observed, string, error) {
	only, _, _ := strings.Cut(os.Getenv("CUDA_VISIBLE_DEVICES"), ",") // nvidia-smi ignores CUDA_VISIBLE_DEVICES
	list, err := host.QuerySMI(ctx, smi, only)
	if len(list) == 0 {
		if err == nil {
			err = errors.New("nvidia-smi lists no GPU")
		}
		return machine.Observed{}, "nvidia-smi", err
	}
	g := list[0]
	return machine.Observed{Name: g.Name, MemoryBytes: int64(g.MemoryMiB) << 20, Arch: g.Arch()}, "nvidia-smi", nil
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
