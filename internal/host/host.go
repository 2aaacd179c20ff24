// Package host probes the machine once: the git state of the source tree,
// the CPU, and the GPUs that nvidia-smi or rocm-smi list.
package host

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/portmatrix/portmatrix/internal/results"
)

// Machine describes the computer that ran the cells (run.json "host"); the
// results folder's format owns it.
type Machine = results.Host

// MiB is a memory size; it reads a number or a quoted number.
type MiB = results.MiB

// GPU is one device of the host.
type GPU = results.GPU

// Git is the state of the source tree.
type Git struct {
	Commit string
	Dirty  bool
}

// Info is everything the probe found.
type Info struct {
	Machine Machine
	GPUs    []GPU
	Git     Git
}

// Runner runs a command and returns its standard output (exec in
// production, a table in tests).
type Runner func(ctx context.Context, name string, args ...string) ([]byte, error)

// Exec runs the command for real, with a timeout.
func Exec(ctx context.Context, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, name, args...).Output()
}

// Probe asks the machine. root is the source tree whose git state it asks;
// a non-empty commit stands for it (a tree copied without .git).
func Probe(ctx context.Context, root, commit string, run Runner) Info {
	hn, _ := os.Hostname()
	info := Info{Machine: Machine{Hostname: hn, OS: runtime.GOOS, Arch: runtime.GOARCH, CPU: cpuModel(), Cores: runtime.NumCPU()}}
	info.Git = Git{Commit: commit}
	if commit == "" {
		info.Git = gitState(ctx, root, run)
	}
	info.GPUs = append(nvidia(ctx, run), amd(ctx, run)...)
	return info
}

// GPUName is the first GPU's name ("" when none).
func (i Info) GPUName() string {
	if len(i.GPUs) > 0 {
		return i.GPUs[0].Name
	}
	return ""
}

// GPUUUID is the first GPU's UUID ("" when none).
func (i Info) GPUUUID() string {
	if len(i.GPUs) > 0 {
		return i.GPUs[0].UUID
	}
	return ""
}

func gitState(ctx context.Context, root string, run Runner) Git {
	out, err := run(ctx, "git", "-C", root, "rev-parse", "HEAD")
	if err != nil {
		return Git{}
	}
	st, _ := run(ctx, "git", "-C", root, "status", "--porcelain", "--untracked-files=no")
	return Git{Commit: strings.TrimSpace(string(out)), Dirty: len(strings.TrimSpace(string(st))) > 0}
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "model name") {
			if i := strings.Index(line, ":"); i >= 0 {
				return strings.TrimSpace(line[i+1:])
			}
		}
	}
	return ""
}

// nvidia lists nvidia-smi's GPUs (QuerySMI) as the run's host record.
func nvidia(ctx context.Context, run Runner) []GPU {
	rows, _ := QuerySMI(ctx, run, "") // a line it cannot read is left out
	var list []GPU
	for _, g := range rows {
		list = append(list, GPU{Name: g.Name, Driver: g.Driver, MemoryMiB: g.MemoryMiB, UUID: g.UUID, Vendor: "nvidia"})
	}
	return list
}

// amd parses rocm-smi's JSON output, when rocm-smi is installed.
func amd(ctx context.Context, run Runner) []GPU {
	out, err := run(ctx, "rocm-smi", "--showproductname", "--showuniqueid", "--showmeminfo", "vram", "--showdriverversion", "--json")
	if err != nil {
		return nil
	}
	var cards map[string]map[string]string
	if json.Unmarshal(out, &cards) != nil {
		return nil
	}
	driver := ""
	if sys, ok := cards["system"]; ok {
		driver = sys["Driver version"]
	}
	var list []GPU
	for i := 0; ; i++ {
		c, ok := cards["card"+strconv.Itoa(i)]
		if !ok {
			break
		}
		name := c["Card series"]
		if name == "" {
			name = c["Card SKU"]
		}
		total, _ := strconv.ParseInt(c["VRAM Total Memory (B)"], 10, 64)
		list = append(list, GPU{Name: name, Driver: driver, MemoryMiB: MiB(total >> 20), UUID: c["Unique ID"], Vendor: "amd"})
	}
	return list
}
