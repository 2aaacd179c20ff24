package reporttest

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/portmatrix/portmatrix/internal/results"
)

// A synthetic run: realistic records whose bandwidths follow a simple model
// (a fraction of the device's copy bandwidth, saturating with size), tuned so
// that most claims hold, one does not, and some cannot be measured.

const H100 = "NVIDIA H100 80GB HBM3"

var GPUToolchains = []results.Toolchain{
	{ID: "gcc-host", Family: "gcc", Version: "12.2.0", Command: "g++", Target: "host"},
	{ID: "clang19-host", Family: "llvm", Version: "19.1.7", Command: "clang++-19", Target: "host"},
	{ID: "clang19-sm90", Family: "llvm", Version: "19.1.7", Command: "clang++-19", Target: "sm_90"},
	{ID: "clang16-sm90", Family: "llvm", Version: "16.0.6", Command: "clang++-16", Target: "sm_90"},
	{ID: "gcc12-nvptx", Family: "gcc", Version: "12.2.0", Command: "g++-12", Target: "nvptx"},
	{ID: "nvcc-sm90", Family: "nvcc", Version: "11.8.89", Command: "nvcc", Target: "sm_90"},
}

var CPUToolchains = []results.Toolchain{
	{ID: "gcc-host", Family: "gcc", Version: "12.2.0", Command: "g++", Target: "host"},
	{ID: "clang19-host", Family: "llvm", Version: "19.1.7", Command: "clang++-19", Target: "host"},
}

// efficiency is the fraction of copy bandwidth a variant reaches on large
// sizes, per kernel; missing entries are not built.
var gpuEfficiency = map[string]map[string]float64{
	"kk-cuda-3lvl":          {"axpby": 0.95, "dot": 0.92, "spmv": 0.70, "cgsolve": 0.66},
	"kk-cuda-2lvl":          {"spmv": 0.50, "cgsolve": 0.50},
	"kk-omp-b":              {"axpby": 0.80, "dot": 0.45, "spmv": 0.40, "cgsolve": 0.20},
	"kk-omp-a":              {"spmv": 0.37},
	"kk-omp-b-wo-num-teams": {"spmv": 0.49},
	"kk-omp-a-wo-num-teams": {"spmv": 0.30},
	"omp-raw":               {"axpby": 0.90, "dot": 0.50, "spmv": 0.50, "cgsolve": 0.45},
	"omp-lambda":            {"axpby": 0.70, "dot": 0.48},
	"omp-class":             {"axpby": 0.55, "dot": 0.40},
	"kk-ompx":               {"spmv": 0.60},
	"kk-ompx-shfl":          {"spmv": 0.64},
	"kk-ompx-opt":           {"spmv": 0.68},
	"direct-ompx":           {"spmv": 0.72},
	// 003's policies on three LCALS kernels: one target region, RAJA's
	// one block, many blocks (SPMD and split) and async
	"omp-region":     {"pressure_calc_alt": 0.60, "energy_calc_alt": 0.60, "vol3d_calc": 0.50},
	"raja-omp-teams": {"pressure_calc_alt": 0.50, "energy_calc_alt": 0.45, "vol3d_calc": 0.55},
	"raja-omp-block": {"pressure_calc_alt": 0.10, "energy_calc_alt": 0.10, "vol3d_calc": 0.05},
	"raja-omp-split": {"pressure_calc_alt": 0.45, "energy_calc_alt": 0.40, "vol3d_calc": 0.50},
	"raja-omp-async": {"pressure_calc_alt": 0.55, "energy_calc_alt": 0.50, "vol3d_calc": 0.55},
}

var cpuEfficiency = map[string]map[string]float64{
	"serial":   {"axpby": 0.45, "dot": 0.50, "spmv": 0.30, "cgsolve": 0.30},
	"omp-host": {"axpby": 0.85, "dot": 0.90, "spmv": 0.55, "cgsolve": 0.50},
	"kk-omp-b": {"axpby": 0.80, "dot": 0.80, "spmv": 0.50, "cgsolve": 0.45},
	"omp-raw":  {"axpby": 0.84, "dot": 0.88, "spmv": 0.52},
}

var kernelSizes = map[string][]int64{
	"axpby": {1 << 16, 1 << 20, 1 << 24}, "dot": {1 << 16, 1 << 20, 1 << 24},
	"spmv": {16, 32, 64}, "cgsolve": {16, 32, 64},
	"pressure_calc_alt": {171, 44217, 4421700}, "energy_calc_alt": {171, 44217, 4421700}, "vol3d_calc": {4, 28, 128},
}

var kernelOrder = []string{"axpby", "dot", "spmv", "cgsolve", "pressure_calc_alt", "energy_calc_alt", "vol3d_calc"}

// RunSpec describes one synthetic results folder.
type RunSpec struct {
	ID         string
	Host       string
	Toolchains []results.Toolchain
	GPUs       []results.GPU
	Eff        map[string]map[string]float64
	CopyGBps   map[string]float64 // per toolchain
	Device     map[string]string
	Scale      map[string]float64 // per cell: multiplies GB/s (for Compare)
	Drop       []string           // cells left out
	BuildFail  map[string]string  // cell -> reason
	Skip       map[string]string  // cell -> reason
	Unverified map[string]int64   // cell -> size that fails verification
	Crashed    map[string]string  // cell -> error record at its first size
	NoBuildCSV bool
	// OlderClocks writes records without "clock", as harnesses before it
	// did: the loader then gives CUDA cells CUDA events (results.InferClock).
	OlderClocks bool
}

// clock is the "clock" of the run's records: the host clock the harness
// writes, or none for an older harness.
func (s RunSpec) clock() string {
	if s.OlderClocks {
		return ""
	}
	return results.ClockHost
}

func GPURun() RunSpec {
	s := RunSpec{
		ID: "20260101-120000-gpu1", Host: "gpu1", Toolchains: GPUToolchains,
		GPUs: []results.GPU{{Name: H100, Driver: "580.159.04", MemoryMiB: 81559}},
		Eff:  gpuEfficiency,
		CopyGBps: map[string]float64{"clang19-sm90": 2950, "clang16-sm90": 2940,
			"gcc12-nvptx": 2960, "nvcc-sm90": 2955, "gcc-host": 21, "clang19-host": 20.5},
		Device: map[string]string{"gcc-host": "Intel(R) Xeon(R) Platinum 8480+", "clang19-host": "Intel(R) Xeon(R) Platinum 8480+"},
		BuildFail: map[string]string{
			"spmv.kk-omp-a.gcc12-nvptx": "ptxas fatal: Unresolved extern function 'omp_get_team_num'",
		},
		Skip: map[string]string{
			"spmv.kk-ompx.clang16-sm90":      "ompx_bare needs llvm >= 18",
			"spmv.kk-ompx-shfl.clang16-sm90": "ompx_bare needs llvm >= 18",
			"spmv.kk-ompx-opt.clang16-sm90":  "ompx_bare needs llvm >= 18",
			"spmv.direct-ompx.clang16-sm90":  "ompx_bare needs llvm >= 18",
			"spmv.kk-ompx.gcc12-nvptx":       "ompx_bare needs llvm >= 18",
			"spmv.kk-ompx-shfl.gcc12-nvptx":  "ompx_bare needs llvm >= 18",
			"spmv.kk-ompx-opt.gcc12-nvptx":   "ompx_bare needs llvm >= 18",
			"spmv.direct-ompx.gcc12-nvptx":   "ompx_bare needs llvm >= 18",
		},
		Unverified: map[string]int64{"dot.omp-class.gcc12-nvptx": 1 << 24},
		Crashed:    map[string]string{"axpby.omp-class.clang16-sm90": "timeout after 60s"},
	}
	return s
}

func CPURun() RunSpec {
	return RunSpec{
		ID: "20260101-090000-laptop", Host: "laptop", Toolchains: CPUToolchains, Eff: cpuEfficiency,
		CopyGBps: map[string]float64{"gcc-host": 21, "clang19-host": 20.5},
		Device:   map[string]string{"gcc-host": "AMD EPYC 7B13", "clang19-host": "AMD EPYC 7B13"},
	}
}

// applies says whether a variant is built by a toolchain in the model.
func applies(variant string, tc results.Toolchain) bool {
	cuda := strings.HasPrefix(variant, "kk-cuda")
	offload := strings.HasPrefix(variant, "raja-omp") || variant == "omp-region"
	switch {
	case offload:
		return tc.Family != "nvcc" && tc.Target != "host"
	case tc.Family == "nvcc":
		return cuda
	case cuda:
		return false
	case tc.Target == "host":
		return true
	}
	return variant != "serial" && variant != "omp-host"
}

// efficiency of a variant on a toolchain: LLVM 16 and GCC offload are slower.
func efficiency(base float64, tc results.Toolchain) float64 {
	switch tc.ID {
	case "clang16-sm90":
		return base * 0.9
	case "gcc12-nvptx":
		return base * 0.05
	case "clang19-host":
		return base * 0.97
	}
	return base
}

// WriteRun writes the results folder of s into dir.
func WriteRun(t *testing.T, dir string, s RunSpec) {
	t.Helper()
	var jsonl []string
	var builds, csvRows []string
	add := func(r results.Record) {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		jsonl = append(jsonl, string(b))
	}
	for _, tc := range s.Toolchains {
		add(results.Record{Kind: "copy", Cell: "copy." + tc.ID, Toolchain: tc.ID, Device: s.deviceOf(tc.ID), Clock: s.clock(),
			Bytes: 5.3e8, MedianS: 5.3e8 / s.CopyGBps[tc.ID] / 1e9, GBps: s.CopyGBps[tc.ID]})
	}
	for _, kernel := range kernelOrder {
		for _, variant := range Vocab(nil).VariantNames() {
			for _, tc := range s.Toolchains {
				base, ok := s.Eff[variant][kernel]
				if !ok || !applies(variant, tc) {
					continue
				}
				cell := kernel + "." + variant + "." + tc.ID
				if slices.Contains(s.Drop, cell) {
					continue
				}
				status, reason := "built", ""
				if r, ok := s.BuildFail[cell]; ok {
					status, reason = "failed", r
				} else if r, ok := s.Skip[cell]; ok {
					status, reason = "skipped", r
				}
				builds = append(builds, fmt.Sprintf("%s,%s,%s,%s,%s,%q,%.1f,logs/build/%s.log", cell, kernel, variant, tc.ID, status, reason, 12.5, cell))
				if status != "built" {
					continue
				}
				if msg, ok := s.Crashed[cell]; ok {
					add(results.Record{Kind: "kernel", Cell: cell, Kernel: kernel, Variant: variant, Strategy: strategyOf(variant),
						Toolchain: tc.ID, Size: kernelSizes[kernel][0], Error: msg})
					continue
				}
				for _, size := range kernelSizes[kernel] {
					add(s.record(cell, kernel, variant, tc, size, efficiency(base, tc)))
				}
			}
		}
	}
	s.writeFiles(t, dir, jsonl, builds, csvRows)
}

func (s RunSpec) deviceOf(tc string) string {
	if d, ok := s.Device[tc]; ok {
		return d
	}
	return H100
}

// record models one measurement: bandwidth saturates with the bytes moved.
func (s RunSpec) record(cell, kernel, variant string, tc results.Toolchain, size int64, eff float64) results.Record {
	bytes := float64(size) * 24
	if kernel == "spmv" || kernel == "cgsolve" {
		rows := math.Pow(float64(size+1), 3)
		bytes = rows*8 + rows*27*24 + rows*8
	}
	lcals := strings.Contains(kernel, "_calc")
	if kernel == "vol3d_calc" {
		bytes = math.Pow(float64(size+3), 3) * 8 * 4
	}
	sat := bytes / (bytes + 4e6)
	gbps := s.CopyGBps[tc.ID] * eff * sat
	if f, ok := s.Scale[cell]; ok {
		gbps *= f
	}
	if !lcals { // LCALS's small sizes move too few bytes for 0.1 GB/s steps
		gbps = math.Round(gbps*10) / 10
	}
	med := bytes / gbps / 1e9
	r := results.Record{Kind: "kernel", Cell: cell, Kernel: kernel, Variant: variant, Strategy: strategyOf(variant),
		Toolchain: tc.ID, Size: size, Reps: 5, TimesS: []float64{med * 0.99, med * 0.995, med, med * 1.005, med * 1.01}, MedianS: med, MinS: med * 0.99,
		Bytes: bytes, Flops: bytes / 12, GBps: gbps, GFlops: gbps / 12, Verified: true, Clock: s.clock(),
		MaxRelErr: Ptr(1e-15), Tolerance: 1e-12}
	if s.Unverified[cell] == size {
		r.Verified, r.MaxRelErr = false, Ptr(0.5)
	}
	return r
}

func strategyOf(variant string) string {
	for _, p := range []string{"kk-cuda", "kk-ompx", "kk-omp", "direct-ompx", "omp"} {
		if strings.HasPrefix(variant, p) {
			return p
		}
	}
	return variant
}

func (s RunSpec) writeFiles(t *testing.T, dir string, jsonl, builds, csvRows []string) {
	t.Helper()
	run := results.Run{ID: s.ID, Started: "2026-01-01T12:00:00Z", Finished: "2026-01-01T12:20:00Z",
		Commit: "0123456789abcdef0123456789abcdef01234567",
		Host: results.Host{Hostname: s.Host, OS: "linux", Arch: "amd64",
			CPU: "Intel(R) Xeon(R) Platinum 8480+", Cores: 16},
		GPUs: s.GPUs, Toolchains: s.Toolchains, Sizes: "ci", Reps: 5,
		Cells:      results.Cells{Total: len(builds), Built: len(builds), Ran: len(builds), Verified: len(builds)},
		Vocabulary: Vocab(t)}
	runJSON, err := json.MarshalIndent(run, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		results.RunFile:   string(runJSON),
		results.JSONLFile: strings.Join(jsonl, "\n") + "\n",
		results.CSVFile:   "cell,kernel,variant,strategy,toolchain,size,reps,median_s,min_s,gbps,gflops,copy_gbps,verified,max_rel_err,error\n" + strings.Join(csvRows, "\n"),
	}
	if !s.NoBuildCSV {
		files[results.BuildFile] = "cell,kernel,variant,toolchain,status,reason,seconds,log\n" + strings.Join(builds, "\n") + "\n"
	}
	for name, content := range files {
		WriteFile(t, filepath.Join(dir, name), content)
	}
	WriteFile(t, filepath.Join(dir, "logs", "build", "spmv.kk-omp-a.gcc12-nvptx.log"), "ptxas fatal\n")
	WriteFile(t, filepath.Join(dir, "logs", "run", "dot.omp-class.gcc12-nvptx.log"), "verification failed\n")
}

func WriteFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// NewRun writes s into a fresh temporary folder.
func NewRun(t *testing.T, s RunSpec) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), s.ID)
	WriteRun(t, dir, s)
	return dir
}

func Ptr(v float64) *float64 { return &v }
