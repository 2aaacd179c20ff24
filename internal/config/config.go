// Package config is the configuration every stage reads: Config, and the
// table of PM_ names (the knobs a user sets, as environment variables or
// flags, and the names that are no knob).
package config

import (
	"flag"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/layout"
	"github.com/portmatrix/portmatrix/internal/run"
	"github.com/portmatrix/portmatrix/internal/suite"
)

// Config selects what a stage works on. Empty filters select everything.
type Config struct {
	Root           string   // repository root
	Kernels        []string // kernel names
	Variants       []string // variant IDs or strategy names
	Toolchains     []string // toolchain IDs
	ToolchainsFile string   // instead of toolchains.yaml
	SizeSet        string   // ci, default or gpu
	Suite          string   // quick, wide or full (internal/suite); "": quick unless the selection is named
	Sizes          Sizes    // explicit sizes, overriding the set
	Reps           int
	RepSeconds     float64 // bound on a measurement's timed calls (harness --rep-seconds); 0: none
	Warmup         int
	WarmupSet      bool   // Warmup was given (0 is a valid count)
	RepSecondsSet  bool   // RepSeconds was given (0 turns the bound off)
	Trials         int    // independent processes per (cell, size); 0: 3 with a GPU, else 1
	Resume         bool   // continue the run in Out instead of refusing it
	ResumeBatch    bool   // PM_RESUME=batch: a resumption asking for another selection adds a batch to the run in Out
	DeviceOnly     bool   // build only the device code of cells never run here (toolchain device_only)
	Jobs           int    // parallel builds
	Out            string // results folder (run, report, merge)
	BuildDir       string
	Timeout        int    // seconds per program run
	GPU            string // "1": run GPU cells, "0": do not, "": when a GPU is found
	CopyBytes      int64
	FlushL2        string   // the harness's --flush-l2: auto, on or off
	Threads        int      // OpenMP threads of host programs; 0: SLURM_CPUS_PER_TASK, OMP_NUM_THREADS or the affinity mask
	Bind           string   // OMP_PROC_BIND of host programs (run.BindModes); "": run.DefaultBind
	Threshold      float64  // compare: relative slow-down flagged as a regression
	TuneStrategy   string   // tune: exhaustive, random, pruned, guided or auto ("")
	TuneEvals      int      // tune: configurations per (cell, size), the default and cached ones included; 0: all
	TuneSeconds    int      // tune: wall seconds of new evaluations; 0: no bound
	TuneShard      string   // tune: "k/n", this worker tunes every n-th target from the k-th (a scheduler sets it)
	TuneHold       string   // tune: "name=value,...", tunables held wherever a cell has them (a claim's premises)
	TuneTargets    string   // tune: a tuning folder; only the (cell, size) targets its tuning.jsonl holds are tuned
	Tuned          string   // run: a tuning folder; each cell is measured again at its tuned best
	Commit         string   // recorded instead of git's answer
	Scheduler      string   // run elsewhere: slurm or gpus (internal/cluster)
	GPUs           []string // the gpus scheduler's GPUs (indices or UUIDs); nil: all
	Cluster        string   // cluster file (cluster.example.yaml)
	Work           string   // run only these work items: a JSON file, a queue folder, or plan:<file>
	Self           string   // this program, for the workers a scheduler starts ("" under mage)
	Deps           string   // libraries: the folder of the libraries' source releases (docs/libraries.md)
	Libraries      []string // libraries: the installs to do, name[/backend[/toolchain]] (default: every one whose toolchain is found)
	Args           []string
	Log            io.Writer
}

// Sizes are explicit sizes by kernel; the key "" applies to every kernel.
type Sizes map[string][]int64

// For returns the sizes of kernel, or nil when none are set.
func (s Sizes) For(kernel string) []int64 {
	if v, ok := s[kernel]; ok {
		return v
	}
	return s[""]
}

// String is s as ParseSizes reads it: the sizes of every kernel first, then
// each kernel's, by name.
func (s Sizes) String() string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(s)) {
		var nums []string
		for _, n := range s[k] {
			nums = append(nums, strconv.FormatInt(n, 10))
		}
		p := strings.Join(nums, ",")
		if k != "" {
			p = k + "=" + p
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, ";")
}

// ParseSizes reads "1000,2000" (every kernel) or "axpby=1e8,spmv=150,200"
// (a name= starts a kernel's list; later plain numbers extend it; ";" also
// separates). Numbers are positive integers, 1e8 notation allowed.
func ParseSizes(s string) (Sizes, error) {
	out := Sizes{}
	cur := ""
	for _, tok := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ';' }) {
		tok = strings.TrimSpace(tok)
		if k, v, ok := strings.Cut(tok, "="); ok {
			cur, tok = strings.TrimSpace(k), strings.TrimSpace(v)
			if cur == "" {
				return nil, fmt.Errorf("sizes: %q names no kernel", k+"="+v)
			}
		}
		f, err := strconv.ParseFloat(tok, 64)
		if err != nil || f < 1 || f != float64(int64(f)) {
			return nil, fmt.Errorf("sizes: %q is not a positive integer", tok)
		}
		out[cur] = append(out[cur], int64(f))
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

// Kind says who reads a PM_ name.
type Kind string

// The kinds of PM_ names.
const (
	KindKnob      Kind = "knob"               // a setting: environment (mage) or flag (CLI), parsed into Config
	KindScheduler Kind = "scheduler-internal" // set by a scheduler for its workers, or read by it from the environment
	KindHarness   Kind = "harness"            // read by the C++ harness from the environment
	KindMacro     Kind = "macro"              // a preprocessor name of the harness and templates (a trailing _ names a prefix)
	KindScript    Kind = "script"             // read by a script of scripts/
	KindTest      Kind = "test"               // read by a Go test (CI sets some)
	KindBuild     Kind = "build"              // read by internal/build from the environment
)

// Knob is one PM_ name: a setting, read from the environment (mage) or a
// flag (CLI), or a name of another kind that is no setting.
type Knob struct {
	Env, Flag string
	Kind      Kind   // "" is KindKnob
	Example   string // shown in the knob list
	Doc       string
	// Switch: an on/off knob whose flag takes no value (-gpu means -gpu=true).
	Switch bool
	Set    func(c *Config, v string) error
	// Value is the flag value that gives c's setting ("" when unset): what
	// a scheduler passes its workers.
	Value func(c *Config) string
	// Scheduler marks a knob the scheduler sets per worker, or that the
	// workers must not inherit: it is not passed on.
	Scheduler bool
}

// IsKnob reports whether k is a setting (has a flag and a parser).
func (k Knob) IsKnob() bool { return k.Kind == "" || k.Kind == KindKnob }

// boolValue reads 0/1/true/false, nothing else.
func boolValue(v string) (bool, error) {
	switch v {
	case "1", "true":
		return true, nil
	case "0", "false":
		return false, nil
	}
	return false, fmt.Errorf("%q: want 0, 1, true or false", v)
}

// List splits a comma-separated value, dropping empty entries.
func List(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func positive(dst func(*Config) *int) func(*Config, string) error {
	return func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			return fmt.Errorf("%q: want a positive integer", v)
		}
		*dst(c) = n
		return nil
	}
}

// boolean sets an on/off knob from 0/1/true/false (boolValue).
func boolean(dst func(*Config) *bool) func(*Config, string) error {
	return func(c *Config, v string) error {
		b, err := boolValue(v)
		*dst(c) = b
		return err
	}
}

// boolText is an on/off knob as its environment variable takes it: "1", or
// "" when off.
func boolText(dst func(*Config) *bool) func(*Config) string {
	return func(c *Config) string { return map[bool]string{true: "1"}[*dst(c)] }
}

func str(dst func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error { *dst(c) = v; return nil }
}

func strValue(dst func(*Config) *string) func(*Config) string {
	return func(c *Config) string { return *dst(c) }
}

func intValue(dst func(*Config) *int) func(*Config) string {
	return func(c *Config) string {
		if *dst(c) == 0 {
			return ""
		}
		return strconv.Itoa(*dst(c))
	}
}

func listValue(dst func(*Config) []string) func(*Config) string {
	return func(c *Config) string { return strings.Join(dst(c), ",") }
}

func floatValue(f float64, set bool) string {
	if f == 0 && !set {
		return ""
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// Names of the environment that the engine itself sets or reads beside the
// knobs (rows of Knobs).
const (
	EnvWorker     = "PM_WORKER"
	EnvGPUUUID    = "PM_GPU_UUID"
	EnvGPUs       = "PM_GPUS"
	EnvDeviceName = "PM_DEVICE_NAME"
)

// Knobs is every setting, in the order of the help text.
var Knobs = []Knob{
	{Env: "PM_ROOT", Flag: "root", Example: ".", Doc: "repository root (templates/, variants/, toolchains.yaml)",
		Set:   str(func(c *Config) *string { return &c.Root }),
		Value: strValue(func(c *Config) *string { return &c.Root })},
	{Env: "PM_KERNELS", Flag: "kernels", Example: "axpby,dot", Doc: "kernels (default: all)",
		Set:   func(c *Config, v string) error { c.Kernels = List(v); return nil },
		Value: listValue(func(c *Config) []string { return c.Kernels })},
	{Env: "PM_VARIANTS", Flag: "variants", Example: "kk-omp-b,omp-raw", Doc: "variant IDs or strategy names (default: all)",
		Set:   func(c *Config, v string) error { c.Variants = List(v); return nil },
		Value: listValue(func(c *Config) []string { return c.Variants })},
	{Env: "PM_TOOLCHAINS", Flag: "toolchains", Example: "gcc-host", Doc: "toolchain IDs (default: every one found)",
		Set:   func(c *Config, v string) error { c.Toolchains = List(v); return nil },
		Value: listValue(func(c *Config) []string { return c.Toolchains })},
	{Env: "PM_TOOLCHAINS_FILE", Flag: "toolchains-file", Example: "f.yaml", Doc: "toolchain file instead of toolchains.yaml",
		Set:   str(func(c *Config) *string { return &c.ToolchainsFile }),
		Value: strValue(func(c *Config) *string { return &c.ToolchainsFile })},
	{Env: "PM_SUITE", Flag: "suite", Example: "quick|wide|full", Doc: "quick: paper 002's kernels under every host variant at two sizes of the default set, and a sample covering every other strategy and kernel family with each toolchain, each at its smallest size, no known failure; wide: also every kernel once, every variant, and every strategy with each family; full: every selected cell (default: quick, full when PM_KERNELS, PM_VARIANTS, PM_SIZES or a size set other than ci is given)",
		Set:   func(c *Config, v string) error { c.Suite = v; return suite.Check(v) },
		Value: strValue(func(c *Config) *string { return &c.Suite })},
	{Env: "PM_SIZE_SET", Flag: "size-set", Example: "ci|default|gpu", Doc: "size set (default: ci, minutes on 2 cores)",
		Set:   str(func(c *Config) *string { return &c.SizeSet }),
		Value: strValue(func(c *Config) *string { return &c.SizeSet })},
	{Env: "PM_SIZES", Flag: "sizes", Example: "1000,1e5 or axpby=1e8;spmv=150,200", Doc: "explicit sizes overriding the set: for every kernel, or per kernel (name=sizes)",
		Set: func(c *Config, v string) (err error) {
			c.Sizes, err = ParseSizes(v)
			return err
		},
		Value: func(c *Config) string { return c.Sizes.String() }},
	{Env: "PM_REPS", Flag: "reps", Example: "5", Doc: "timed repetitions per size",
		Set:   positive(func(c *Config) *int { return &c.Reps }),
		Value: intValue(func(c *Config) *int { return &c.Reps })},
	{Env: "PM_REP_SECONDS", Flag: "rep-seconds", Example: "2", Doc: "seconds of timed calls that bound the reps of a slow measurement, which keeps at least 3 (0: no bound; default 2)",
		Set: func(c *Config, v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
				return fmt.Errorf("%q: want a non-negative number of seconds", v)
			}
			c.RepSeconds, c.RepSecondsSet = f, true
			return nil
		},
		Value: func(c *Config) string { return floatValue(c.RepSeconds, c.RepSecondsSet) }},
	{Env: "PM_WARMUP", Flag: "warmup", Example: "1", Doc: "warm-up runs per size (0 allowed)",
		Set: func(c *Config, v string) error {
			n, err := strconv.Atoi(v)
			if err != nil || n < 0 {
				return fmt.Errorf("%q: want a non-negative integer", v)
			}
			c.Warmup, c.WarmupSet = n, true
			return nil
		},
		Value: func(c *Config) string {
			if c.Warmup == 0 && !c.WarmupSet {
				return ""
			}
			return strconv.Itoa(c.Warmup)
		}},
	{Env: "PM_TRIALS", Flag: "trials", Example: "3", Doc: "independent trials (separate processes, interleaved across cells) per (cell, size) (default: 3 when GPU cells run, else 1)",
		Set:   positive(func(c *Config) *int { return &c.Trials }),
		Value: intValue(func(c *Config) *int { return &c.Trials })},
	{Env: "PM_RESUME", Flag: "resume", Switch: true, Example: "1|batch", Doc: "1: continue the unfinished run in PM_OUT with the selection and settings it records (what finished is kept, the rest runs; another selection is refused, naming the differences); batch: measure another selection into PM_OUT as a new batch with its own provenance (an existing folder is refused otherwise)",
		Set: func(c *Config, v string) error {
			if v == "batch" {
				c.Resume, c.ResumeBatch = true, true
				return nil
			}
			b, err := boolValue(v)
			if err != nil {
				return fmt.Errorf("%q: want 0, 1, true, false or batch", v)
			}
			c.Resume, c.ResumeBatch = b, false
			return nil
		},
		Value: func(c *Config) string {
			if c.ResumeBatch {
				return "batch"
			}
			return boolText(func(c *Config) *bool { return &c.Resume })(c)
		},
		Scheduler: true},
	{Env: "PM_DEVICE_ONLY", Flag: "device-only", Switch: true, Example: "1", Doc: "build only the device code of the cells whose toolchain declares device_only flags (AMD, never run here): CI's check of every such cell; a cell that runs here is built whole",
		Set:   boolean(func(c *Config) *bool { return &c.DeviceOnly }),
		Value: boolText(func(c *Config) *bool { return &c.DeviceOnly })},
	{Env: "PM_JOBS", Flag: "jobs", Example: "2", Doc: "parallel builds",
		Set:   positive(func(c *Config) *int { return &c.Jobs }),
		Value: intValue(func(c *Config) *int { return &c.Jobs })},
	{Env: "PM_BUILD_DIR", Flag: "build-dir", Example: "build", Doc: "build folder",
		Set:   str(func(c *Config) *string { return &c.BuildDir }),
		Value: strValue(func(c *Config) *string { return &c.BuildDir })},
	{Env: "PM_OUT", Flag: "out", Example: "results/my-run", Doc: "results folder: written by run and merge, read by report (default: the newest)",
		Set:       str(func(c *Config) *string { return &c.Out }),
		Value:     strValue(func(c *Config) *string { return &c.Out }),
		Scheduler: true},
	{Env: "PM_TIMEOUT", Flag: "timeout", Example: "300", Doc: "seconds one program may run",
		Set:   positive(func(c *Config) *int { return &c.Timeout }),
		Value: intValue(func(c *Config) *int { return &c.Timeout })},
	{Env: "PM_GPU", Flag: "gpu", Switch: true, Example: "1", Doc: "1: run GPU cells, 0: do not (default: when nvidia-smi or rocm-smi lists a GPU)",
		Set: func(c *Config, v string) error {
			b, err := boolValue(v)
			c.GPU = map[bool]string{true: "1", false: "0"}[b]
			if err != nil {
				c.GPU = ""
			}
			return err
		},
		Value:     strValue(func(c *Config) *string { return &c.GPU }),
		Scheduler: true},
	{Env: "PM_COMMIT", Flag: "commit", Example: "0123abc", Doc: "the source commit to record when the tree has no .git (a GPU host)",
		Set:   str(func(c *Config) *string { return &c.Commit }),
		Value: strValue(func(c *Config) *string { return &c.Commit })},
	{Env: "PM_COPY_BYTES", Flag: "copy-bytes", Example: "1073741824", Doc: "bytes of the STREAM arrays asked of the first program of each toolchain, two arrays' worth (default: 1 GiB on a GPU, 64 MiB on the host; the harness raises each array to 4x the caches, on a GPU to 2^25 doubles)",
		Set: func(c *Config, v string) error {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 1 {
				return fmt.Errorf("%q: want a positive integer", v)
			}
			c.CopyBytes = n
			return nil
		},
		Value: func(c *Config) string {
			if c.CopyBytes == 0 {
				return ""
			}
			return strconv.FormatInt(c.CopyBytes, 10)
		}},
	{Env: "PM_SCHEDULER", Flag: "scheduler", Example: "slurm|gpus", Doc: "run stage: slurm (one job array) or gpus (a worker per GPU of this node); docs/cluster.md",
		Set:       str(func(c *Config) *string { return &c.Scheduler }),
		Value:     strValue(func(c *Config) *string { return &c.Scheduler }),
		Scheduler: true},
	{Env: "PM_CLUSTER", Flag: "cluster", Example: "cluster.yaml", Doc: "cluster file of the slurm scheduler (copy cluster.example.yaml)",
		Set:       str(func(c *Config) *string { return &c.Cluster }),
		Value:     strValue(func(c *Config) *string { return &c.Cluster }),
		Scheduler: true},
	{Env: "PM_WORK", Flag: "work", Example: "items.json", Doc: "run only these work items: a JSON file of {cell, size}, a queue folder, or plan:<file> to list them",
		Set:       str(func(c *Config) *string { return &c.Work }),
		Value:     strValue(func(c *Config) *string { return &c.Work }),
		Scheduler: true},
	{Env: "PM_FLUSH_L2", Flag: "flush-l2", Example: "auto|on|off", Doc: "flush the L2 between runs (auto: always on a GPU; on the host when the working set fits)",
		Set: func(c *Config, v string) error {
			if err := run.CheckFlush(v); err != nil {
				return err
			}
			c.FlushL2 = v
			return nil
		},
		Value: strValue(func(c *Config) *string { return &c.FlushL2 })},
	{Env: "PM_THREADS", Flag: "threads", Example: "4", Doc: "OpenMP threads of host programs (default: SLURM_CPUS_PER_TASK, else an exported OMP_NUM_THREADS, else the CPUs the run may use); docs/cpu.md",
		Set:   positive(func(c *Config) *int { return &c.Threads }),
		Value: intValue(func(c *Config) *int { return &c.Threads })},
	{Env: "PM_BIND", Flag: "bind", Example: "close|spread|false", Doc: "OMP_PROC_BIND of host programs, with OMP_PLACES=cores unless false (default: close); docs/cpu.md",
		Set: func(c *Config, v string) error {
			if err := run.CheckBind(v); err != nil {
				return err
			}
			c.Bind = v
			return nil
		},
		Value: strValue(func(c *Config) *string { return &c.Bind })},
	{Env: "PM_THRESHOLD", Flag: "threshold", Example: "0.10", Doc: "compare: a slow-down beyond this fraction is a regression",
		Set: func(c *Config, v string) error {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil || f < 0 || f >= 1 {
				return fmt.Errorf("%q: want a fraction in [0, 1)", v)
			}
			c.Threshold = f
			return nil
		},
		Value: func(c *Config) string { return floatValue(c.Threshold, false) }},
	{Env: "PM_DEPS", Flag: "deps", Example: "../shared/deps", Doc: "libraries: the folder holding the libraries' source releases that variants/libraries.yaml names (docs/libraries.md)",
		Set:   str(func(c *Config) *string { return &c.Deps }),
		Value: strValue(func(c *Config) *string { return &c.Deps })},
	{Env: "PM_LIBRARIES", Flag: "libraries", Example: "kokkos/openmp/gcc-host,raja", Doc: "libraries: the installs to do, name[/backend[/toolchain]], each part a pattern (default: every install whose toolchain is found)",
		Set:   func(c *Config, v string) error { c.Libraries = List(v); return nil },
		Value: listValue(func(c *Config) []string { return c.Libraries })},
	{Env: "PM_TUNE", Flag: "tune", Example: "auto|exhaustive|random|pruned|guided", Doc: "tune: the search (auto: exhaustive for small spaces, else tune.BeyondBudget within PM_TUNE_EVALS; guided: a climb over neighbours from the default)",
		Set: func(c *Config, v string) error {
			if !slices.Contains([]string{"auto", "exhaustive", "random", "pruned", "guided"}, v) {
				return fmt.Errorf("%q: want auto, exhaustive, random, pruned or guided", v)
			}
			c.TuneStrategy = v
			return nil
		},
		Value: strValue(func(c *Config) *string { return &c.TuneStrategy })},
	{Env: "PM_TUNE_EVALS", Flag: "tune-evals", Example: "64", Doc: "tune: configurations per (cell, size), the default and cached ones included (default: all)",
		Set:   positive(func(c *Config) *int { return &c.TuneEvals }),
		Value: intValue(func(c *Config) *int { return &c.TuneEvals })},
	{Env: "PM_TUNE_SECONDS", Flag: "tune-seconds", Example: "600", Doc: "tune: wall seconds of new evaluations; a cut tuning resumes from its cache (default: no bound)",
		Set:   positive(func(c *Config) *int { return &c.TuneSeconds }),
		Value: intValue(func(c *Config) *int { return &c.TuneSeconds })},
	{Env: "PM_TUNE_SHARD", Flag: "tune-shard", Example: "0/2", Doc: "tune: worker k of n tunes every n-th (cell, size) from the k-th (the gpus and slurm schedulers set it)",
		Set: func(c *Config, v string) error {
			if _, _, err := ParseShard(v); err != nil {
				return err
			}
			c.TuneShard = v
			return nil
		},
		Value: strValue(func(c *Config) *string { return &c.TuneShard }), Scheduler: true},
	{Env: "PM_TUNE_HOLD", Flag: "tune-hold", Example: "snap_vector=1", Doc: "tune: tunables held at these values wherever a cell has them, as a claim's premises hold them (claims.yaml premises:); the rest of the space is ruled out",
		Set: func(c *Config, v string) error {
			for _, kv := range strings.Split(v, ",") {
				name, val, ok := strings.Cut(kv, "=")
				if _, err := strconv.ParseInt(val, 10, 64); !ok || name == "" || err != nil {
					return fmt.Errorf("%q: want name=integer pairs separated by commas", v)
				}
			}
			c.TuneHold = v
			return nil
		},
		Value: strValue(func(c *Config) *string { return &c.TuneHold })},
	{Env: "PM_TUNE_TARGETS", Flag: "tune-targets", Example: "results/nvidia-h100-tuning", Doc: "tune: a tuning folder; of the selection, only the (cell, size) targets its tuning.jsonl holds are tuned (the same matrix on another GPU; the dry run's matrix)",
		Set:   func(c *Config, v string) error { c.TuneTargets = v; return nil },
		Value: strValue(func(c *Config) *string { return &c.TuneTargets })},
	{Env: "PM_TUNED", Flag: "tuned", Example: "results/my-tuning", Doc: "run: a tuning folder (its tuning.jsonl); every cell it tuned on this device model is measured again at its best, records marked tuned, beside the as-published ones",
		Set:   func(c *Config, v string) error { c.Tuned = v; return nil },
		Value: strValue(func(c *Config) *string { return &c.Tuned })},
	{Env: EnvGPUs, Flag: "gpus", Example: "0,1", Doc: "the GPUs (nvidia-smi indices or UUIDs, comma-separated) the gpus scheduler uses (default: all)",
		Set: func(c *Config, v string) error {
			c.GPUs = nil
			for _, g := range strings.Split(v, ",") {
				if g = strings.TrimSpace(g); g == "" {
					return fmt.Errorf("%q: want GPU indices or UUIDs separated by commas", v)
				}
				c.GPUs = append(c.GPUs, g)
			}
			return nil
		},
		Value: func(c *Config) string { return strings.Join(c.GPUs, ",") }, Scheduler: true},
	// Names that are no knob: FromEnv leaves them alone.
	{Env: EnvWorker, Kind: KindScheduler, Doc: "the GPU scheduler's name of a worker (gpu0, ...), recorded in shard.json"},
	{Env: EnvGPUUUID, Kind: KindScheduler, Doc: "the GPU scheduler's UUID of a worker's GPU, recorded on its records"},
	{Env: EnvDeviceName, Kind: KindHarness, Doc: "the GPU's name (nvidia-smi) the harness records, so that every toolchain's records group by device"},
	{Env: "PM_SNAP_DUMP", Kind: KindHarness, Doc: "a LAMMPS dump (dump custom) the TestSNAP programs measure instead of their bcc W lattice, at every size; docs/inputs.md"},
	{Env: "PM_SNAP_POTENTIAL", Kind: KindHarness, Doc: "the SNAP potential of PM_SNAP_DUMP and snapcheck: <prefix>.snapparam and <prefix>.snapcoeff (default: the dump's path less its extension)"},
	{Env: "PM_SNAP_TIMESTEP", Kind: KindHarness, Doc: "the timestep of a dump with several that PM_SNAP_DUMP and snapcheck use (default: the first)"},
	{Env: "PM_MATRIX", Kind: KindHarness, Doc: "a Matrix Market file SPMV and CG-Solve measure instead of the miniFE matrix, at every size (CG-Solve: symmetric, positive diagonal); docs/inputs.md"},
	{Env: "PM_FULL_EXIT", Kind: KindHarness, Doc: "1: the harness leaves through the runtime's full exit (its quick exit skips teardown)"},
	{Env: "PM_HOST_DATA", Kind: KindMacro, Doc: "1: arrays live on the host and the kernel maps them (harness/pm/device_omptarget.hpp)"},
	{Env: "PM_OMP_ASYNC", Kind: KindMacro, Doc: "1 (the -async strategies): OpenMP launches whose results stay on the device go with nowait on one stream (harness/pm/device_omptarget.hpp)"},
	{Env: "PM_OMP_NOWAIT", Kind: KindMacro, Doc: "the clauses of such an asynchronous launch (nowait, the stream's depend), empty without PM_OMP_ASYNC"},
	{Env: "PM_OMP_ORDERED", Kind: KindMacro, Doc: "the stream's depend alone, on a launch whose result the host reads, empty without PM_OMP_ASYNC"},
	{Env: "PM_CUBLAS", Kind: KindMacro, Doc: "PM_CUBLAS(call): a cuBLAS call of a kernel's vendor form, the program failing with the call named on any status but success (harness/pm/cublas.hpp)"},
	{Env: "PM_MAPCHECK_ORDER", Kind: KindMacro, Doc: "0 (mapcheck-rev), 1 (mapcheck-shuf) or 2 (mapcheck-both): the order harness/pm/mapcheck.hpp gives every loop the mapper calls parallel, reversed, a seeded shuffle, or the two by turns a call of the kernel each"},
	{Env: "PM_HAS_", Kind: KindMacro, Doc: "PM_HAS_<CAPABILITY>: a toolchain capability, passed by the build (-D)"},
	{Env: "PM_HD", Kind: KindMacro, Doc: "host-and-device function qualifier of harness/snap"},
	{Env: "PM_WARP_SIZE", Kind: KindMacro, Doc: "lanes of a warp or wavefront (32 NVIDIA, 64 AMD gfx90a), set per toolchain (harness/pm/warp.hpp)"},
	{Env: "PM_WARP_MASK_T", Kind: KindMacro, Doc: "the integer type of a lane mask (uint64_t for a 64-lane wavefront; harness/pm/warp.hpp)"},
	{Env: "PM_GPU_DEVICE_CODE", Kind: KindMacro, Doc: "true in the device pass of CUDA or HIP code (harness/pm/gpu_runtime.hpp)"},
	{Env: "PM_OMPX_", Kind: KindMacro, Doc: "the direct-ompx knobs and grid bounds (templates/backends/direct-ompx, harness/pm/ompx_grid.hpp)"},
	{Env: "PM_RUN_LIMIT", Kind: KindScript, Doc: "scripts/gpu-run.sh: seconds the run may take (default 500)"},
	{Env: "PM_RESUME_FROM", Kind: KindScript, Doc: "scripts/gpu-run.sh: the results tarball of a cut run to resume"},
	{Env: "PM_HOST_BUILD", Kind: KindScript, Doc: "scripts/gpu-run.sh: the toolchain built on the GPU host (default nvcc-sm90; empty: none)"},
	{Env: "PM_BUNDLE", Kind: KindScript, Doc: "scripts/tune-matrix.sh: the bundle to unpack first (gpu-bundle.sh; unset: a checkout with its CLI and build/)"},
	{Env: "PM_CLI", Kind: KindScript, Doc: "scripts/tune-matrix.sh: the portmatrix CLI to run (default bin/portmatrix)"},
	{Env: "PM_ID", Kind: KindScript, Doc: "scripts/tune-matrix.sh: the name of its folders, results/<id>-tune and -run (again: resume)"},
	{Env: "PM_MATRIX_SIZES", Kind: KindScript, Doc: "scripts/tune-matrix.sh: the sizes (default axpby=1e8;dot=1e8;spmv=150,200;cgsolve=150; TestSNAP 10; HOMMEXX 100001)"},
	{Env: "PM_RESULTS", Kind: KindScript, Doc: "scripts/tune-matrix.sh: the folder its tuning and run folders are made in (default results)"},
	{Env: "PM_TUNE_SCHEDULER", Kind: KindScript, Doc: "scripts/tune-matrix.sh: the scheduler of its tune and run (default gpus; empty: this process)"},
	{Env: "PM_XZ", Kind: KindScript, Doc: "scripts/gpu-bundle.sh: xz options for the libraries"},
	{Env: "PM_DEBIAN_MIRROR", Kind: KindScript, Doc: "scripts/install-llvm22.sh: the Debian mirror"},
	{Env: "PM_LLVM22_SUITES", Kind: KindScript, Doc: "scripts/install-llvm22.sh: deb-src suites tried in order"},
	{Env: "PM_LONG_TESTS", Kind: KindTest, Doc: "1: the long end-to-end tests run (internal/testenv; CI sets it)"},
	{Env: "PM_BUILD_CACHE", Kind: KindBuild, Doc: "a folder of built programs shared between build folders and checkouts (internal/build, like ccache): the same inputs anywhere are compiled once; unset, nothing is shared (CI sets it)"},
	{Env: "PM_PROBE_OUT", Kind: KindTest, Doc: "internal/toolchain's probe test writes its probes here"},
	{Env: "PM_REQUIRE_TOOLCHAINS", Kind: KindTest, Doc: "toolchains a test must find (CI names every offload toolchain)"},
	{Env: "PM_SEEDS_DIR", Kind: KindTest, Doc: "the folder of the papers' seed texts (internal/report's spec test)"},
	{Env: "PM_SLURM_TEST", Kind: KindTest, Doc: "1: internal/cluster's Slurm test runs (a Slurm cluster is up)"},
	{Env: "PM_E2E", Kind: KindTest, Doc: "reserved for end-to-end test runs (CI)"},
	{Env: "PM_MUTANT", Kind: KindTest, Doc: "the mutant a planted-bug test program runs"},
}

// settings are the rows of Knobs that are settings.
func settings() []Knob {
	var out []Knob
	for _, k := range Knobs {
		if k.IsKnob() {
			out = append(out, k)
		}
	}
	return out
}

// Lookup returns the row of a PM_ name (a row whose name ends in "_" covers
// every name it starts), or nil.
func Lookup(name string) *Knob {
	for i, k := range Knobs {
		if k.Env == name || strings.HasSuffix(k.Env, "_") && strings.HasPrefix(name, k.Env) {
			return &Knobs[i]
		}
	}
	return nil
}

// WorkerArgs are the flags that give a worker c's settings: every knob that
// is set and that the scheduler does not set per worker.
func (c *Config) WorkerArgs() []string {
	var args []string
	for _, k := range settings() {
		if v := k.Value(c); v != "" && !k.Scheduler {
			args = append(args, "-"+k.Flag+"="+v)
		}
	}
	return args
}

// KnobHelp is the knob list, one per line, as the magefile's All target and
// the CLI's usage show it.
func KnobHelp() string {
	var b strings.Builder
	for _, k := range settings() {
		fmt.Fprintf(&b, "%s=%s\n    %s (-%s)\n", k.Env, k.Example, k.Doc, k.Flag)
	}
	return b.String()
}

// FromEnv reads every knob from the environment (the magefile's way). A PM_
// variable that is no knob is an error, with the closest knob's name.
func FromEnv() (Config, error) {
	return FromEnviron(os.Environ())
}

// FromEnviron is FromEnv over environ ("NAME=value" entries).
func FromEnviron(environ []string) (Config, error) {
	var cfg Config
	var errs []string
	env := map[string]string{}
	var names []string
	for _, k := range settings() {
		names = append(names, k.Env)
	}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
		if strings.HasPrefix(k, "PM_") && Lookup(k) == nil {
			errs = append(errs, fmt.Sprintf("%s: unknown knob%s (go run mage.go -h all lists them)", k, diag.DidYouMean(k, names)))
		}
	}
	for _, k := range settings() {
		if v := strings.TrimSpace(env[k.Env]); v != "" {
			if err := k.Set(&cfg, v); err != nil {
				errs = append(errs, k.Env+": "+err.Error())
			}
		}
	}
	slices.Sort(errs)
	if len(errs) > 0 {
		return cfg, fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return cfg, nil
}

// FlagError adds the closest flag's name to an unknown-flag error of the
// flag package.
func FlagError(err error) error {
	msg := err.Error()
	name, ok := strings.CutPrefix(msg, "flag provided but not defined: -")
	if !ok {
		return err
	}
	var names []string
	for _, k := range settings() {
		names = append(names, k.Flag)
	}
	return fmt.Errorf("unknown flag -%s%s", name, diag.DidYouMean(name, names))
}

// Flags registers every knob as a flag of fs (the CLI's way).
func Flags(fs *flag.FlagSet, cfg *Config) {
	for _, k := range settings() {
		fs.Var(&knobFlag{k, cfg}, k.Flag, k.Doc+" (env "+k.Env+", e.g. "+k.Example+")")
	}
}

// knobFlag is a knob as a flag.Value.
type knobFlag struct {
	k   Knob
	cfg *Config
}

func (f *knobFlag) String() string     { return "" }
func (f *knobFlag) Set(v string) error { return f.k.Set(f.cfg, v) }
func (f *knobFlag) IsBoolFlag() bool   { return f.k.Switch }

// DefaultRepSeconds bounds the timed calls of one measurement: a CG-Solve
// built by GCC spends seconds per solve, where 3 reps say as much as 5.
const DefaultRepSeconds = 2.0

// Defaults fills unset fields.
func (c *Config) Defaults() {
	if c.Root == "" {
		c.Root = "."
	}
	if c.SizeSet == "" {
		c.SizeSet = "ci"
	}
	if c.Reps == 0 {
		c.Reps = 5
	}
	if c.Warmup == 0 && !c.WarmupSet {
		c.Warmup = 1
	}
	if !c.RepSecondsSet {
		c.RepSeconds = DefaultRepSeconds
	}
	if c.Jobs == 0 {
		c.Jobs = 2
	}
	if c.BuildDir == "" {
		c.BuildDir = layout.Path(c.Root, layout.BuildDir)
	}
	if c.Timeout == 0 {
		c.Timeout = 300
	}
	if c.Threshold == 0 {
		c.Threshold = 0.10
	}
	if c.Log == nil {
		c.Log = os.Stdout
	}
}

// Picks applies the kernel, variant (ID or strategy) and toolchain filters.
func (c *Config) Picks(kernel, variant, strategy, toolchain string) bool {
	pass := func(filter []string, names ...string) bool {
		if len(filter) == 0 {
			return true
		}
		return slices.ContainsFunc(names, func(n string) bool { return slices.Contains(filter, n) })
	}
	return pass(c.Kernels, kernel) && pass(c.Variants, variant, strategy) && pass(c.Toolchains, toolchain)
}

// KnobOf names the knob that selects what.
func KnobOf(what string) string {
	switch what {
	case "kernel":
		return "PM_KERNELS"
	case "variant":
		return "PM_VARIANTS"
	case "toolchain":
		return "PM_TOOLCHAINS"
	case "kernel (in sizes)":
		return "PM_SIZES"
	}
	return what
}

// CheckSelection rejects names of the filters and the size set that the
// project does not know, listing what it knows.
func (c *Config) CheckSelection(kernels, variants, toolchains, sizeSets []string) error {
	ks, vs, ts := kernels, variants, toolchains
	var errs []string
	check := func(what string, asked []string, known []string) {
		for _, a := range asked {
			if !slices.Contains(known, a) {
				errs = append(errs, fmt.Sprintf("%s: unknown %s %q%s (known: %s)", KnobOf(what), what, a, diag.DidYouMean(a, known), strings.Join(known, ", ")))
			}
		}
	}
	check("kernel", c.Kernels, ks)
	check("variant", c.Variants, vs)
	check("toolchain", c.Toolchains, ts)
	if !slices.Contains(sizeSets, c.SizeSet) {
		errs = append(errs, fmt.Sprintf("PM_SIZE_SET: unknown size set %q%s (known: %s)", c.SizeSet, diag.DidYouMean(c.SizeSet, sizeSets), strings.Join(sizeSets, ", ")))
	}
	if len(errs) > 0 {
		return fmt.Errorf("%s", strings.Join(errs, "\n"))
	}
	return nil
}

// Sample names the suite that samples the selection, or "" when every
// selected cell runs. PM_SUITE=quick or wide samples whatever the filters
// select; unset, the suite is quick unless the selection is named
// (PM_KERNELS, PM_VARIANTS, PM_SIZES, a size set other than the default ci):
// then every selected cell runs, as asked. PM_TOOLCHAINS says what this
// machine builds and narrows the sample only. A scheduler's worker runs the
// work items it is given.
func (c *Config) Sample() string {
	if c.Work != "" && !strings.HasPrefix(c.Work, "plan:") {
		return ""
	}
	switch c.Suite {
	case suite.Quick, suite.Wide:
		return c.Suite
	case suite.Full:
		return ""
	}
	if len(c.Kernels) == 0 && len(c.Variants) == 0 && len(c.Sizes) == 0 && (c.SizeSet == "" || c.SizeSet == "ci") {
		return suite.Quick
	}
	return ""
}

// ParseShard reads PM_TUNE_SHARD's "k/n" (0 <= k < n).
func ParseShard(v string) (k, n int, err error) {
	a, b, ok := strings.Cut(v, "/")
	k, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || k < 0 || k >= n {
		return 0, 0, fmt.Errorf("%q: want k/n with 0 <= k < n", v)
	}
	return k, n, nil
}
