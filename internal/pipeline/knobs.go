package pipeline

import (
	"flag"
	"fmt"
	"github.com/portmatrix/portmatrix/internal/run"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// Config selects what a stage works on. Empty filters select everything.
type Config struct {
	Root           string   // repository root
	Kernels        []string // kernel names
	Variants       []string // variant IDs or strategy names
	Toolchains     []string // toolchain IDs
	ToolchainsFile string   // instead of toolchains.yaml
	SizeSet        string   // ci, default or gpu
	Sizes          Sizes    // explicit sizes, overriding the set
	Reps           int
	RepSeconds     float64 // bound on a measurement's timed calls (harness --rep-seconds); 0: none
	Warmup         int
	WarmupSet      bool   // Warmup was given (0 is a valid count)
	RepSecondsSet  bool   // RepSeconds was given (0 turns the bound off)
	Trials         int    // independent processes per (cell, size); 0: 3 with a GPU, else 1
	Resume         bool   // continue the run in Out instead of refusing it
	Jobs           int    // parallel builds
	Out            string // results folder (run, report, merge)
	BuildDir       string
	Timeout        int    // seconds per program run
	GPU            string // "1": run GPU cells, "0": do not, "": when a GPU is found
	CopyBytes      int64
	FlushL2        string  // the harness's --flush-l2: auto, on or off
	Threads        int     // OpenMP threads of host programs; 0: OMP_NUM_THREADS, Slurm's allocation or the affinity mask
	Bind           string  // OMP_PROC_BIND of host programs (run.BindModes); "": run.DefaultBind
	Threshold      float64 // compare: relative slow-down flagged as a regression
	Commit         string  // recorded instead of git's answer
	Scheduler      string  // run elsewhere: slurm or gpus (internal/cluster)
	Cluster        string  // cluster file (cluster.example.yaml)
	Work           string  // run only these work items: a JSON file, a queue folder, or plan:<file>
	Self           string  // this program, for the workers a scheduler starts ("" under mage)
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

// Knob is one setting, read from the environment (mage) or a flag (CLI).
type Knob struct {
	Env, Flag string
	Example   string // shown in the knob list
	Doc       string
	Set       func(c *Config, v string) error
}

// boolFlags are the knobs whose flag takes no value (-gpu means -gpu=true).
var boolFlags = map[string]bool{"gpu": true, "resume": true}

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

func list(v string) []string {
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

func str(dst func(*Config) *string) func(*Config, string) error {
	return func(c *Config, v string) error { *dst(c) = v; return nil }
}

// Knobs is every setting, in the order of the help text.
var Knobs = []Knob{
	{"PM_ROOT", "root", ".", "repository root (templates/, variants/, toolchains.yaml)", str(func(c *Config) *string { return &c.Root })},
	{"PM_KERNELS", "kernels", "axpby,dot", "kernels (default: all)", func(c *Config, v string) error { c.Kernels = list(v); return nil }},
	{"PM_VARIANTS", "variants", "kk-omp-b,omp-raw", "variant IDs or strategy names (default: all)", func(c *Config, v string) error { c.Variants = list(v); return nil }},
	{"PM_TOOLCHAINS", "toolchains", "gcc-host", "toolchain IDs (default: every one found)", func(c *Config, v string) error { c.Toolchains = list(v); return nil }},
	{"PM_TOOLCHAINS_FILE", "toolchains-file", "f.yaml", "toolchain file instead of toolchains.yaml", str(func(c *Config) *string { return &c.ToolchainsFile })},
	{"PM_SIZE_SET", "size-set", "ci|default|gpu", "size set (default: ci, minutes on 2 cores)", str(func(c *Config) *string { return &c.SizeSet })},
	{"PM_SIZES", "sizes", "1000,1e5 or axpby=1e8;spmv=150,200", "explicit sizes overriding the set: for every kernel, or per kernel (name=sizes)", func(c *Config, v string) (err error) {
		c.Sizes, err = ParseSizes(v)
		return err
	}},
	{"PM_REPS", "reps", "5", "timed repetitions per size", positive(func(c *Config) *int { return &c.Reps })},
	{"PM_REP_SECONDS", "rep-seconds", "2", "seconds of timed calls that bound the reps of a slow measurement, which keeps at least 3 (0: no bound; default 2)", func(c *Config, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || math.IsInf(f, 0) || math.IsNaN(f) {
			return fmt.Errorf("%q: want a non-negative number of seconds", v)
		}
		c.RepSeconds, c.RepSecondsSet = f, true
		return nil
	}},
	{"PM_WARMUP", "warmup", "1", "warm-up runs per size (0 allowed)", func(c *Config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return fmt.Errorf("%q: want a non-negative integer", v)
		}
		c.Warmup, c.WarmupSet = n, true
		return nil
	}},
	{"PM_TRIALS", "trials", "3", "independent trials (separate processes, interleaved across cells) per (cell, size) (default: 3 when GPU cells run, else 1)", positive(func(c *Config) *int { return &c.Trials })},
	{"PM_RESUME", "resume", "1", "continue the unfinished run in PM_OUT: what finished is kept, the rest runs (an existing folder is refused otherwise)", func(c *Config, v string) error {
		b, err := boolValue(v)
		c.Resume = b
		return err
	}},
	{"PM_JOBS", "jobs", "2", "parallel builds", positive(func(c *Config) *int { return &c.Jobs })},
	{"PM_BUILD_DIR", "build-dir", "build", "build folder", str(func(c *Config) *string { return &c.BuildDir })},
	{"PM_OUT", "out", "results/my-run", "results folder: written by run and merge, read by report (default: the newest)", str(func(c *Config) *string { return &c.Out })},
	{"PM_TIMEOUT", "timeout", "300", "seconds one program may run", positive(func(c *Config) *int { return &c.Timeout })},
	{"PM_GPU", "gpu", "1", "1: run GPU cells, 0: do not (default: when nvidia-smi or rocm-smi lists a GPU)", func(c *Config, v string) error {
		b, err := boolValue(v)
		c.GPU = map[bool]string{true: "1", false: "0"}[b]
		if err != nil {
			c.GPU = ""
		}
		return err
	}},
	{"PM_COMMIT", "commit", "0123abc", "the source commit to record when the tree has no .git (a GPU host)", str(func(c *Config) *string { return &c.Commit })},
	{"PM_COPY_BYTES", "copy-bytes", "1073741824", "bytes of the device copy measured per program (default: 1 GiB on a GPU, 64 MiB on the host)", func(c *Config, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 1 {
			return fmt.Errorf("%q: want a positive integer", v)
		}
		c.CopyBytes = n
		return nil
	}},
	{"PM_SCHEDULER", "scheduler", "slurm|gpus", "run stage: slurm (one job array) or gpus (a worker per GPU of this node); docs/cluster.md", str(func(c *Config) *string { return &c.Scheduler })},
	{"PM_CLUSTER", "cluster", "cluster.yaml", "cluster file of the slurm scheduler (copy cluster.example.yaml)", str(func(c *Config) *string { return &c.Cluster })},
	{"PM_WORK", "work", "items.json", "run only these work items: a JSON file of {cell, size}, a queue folder, or plan:<file> to list them", str(func(c *Config) *string { return &c.Work })},
	{"PM_FLUSH_L2", "flush-l2", "auto|on|off", "flush the L2 between runs (auto: always on a GPU; on the host when the working set fits)", func(c *Config, v string) error {
		if err := run.CheckFlush(v); err != nil {
			return err
		}
		c.FlushL2 = v
		return nil
	}},
	{"PM_THREADS", "threads", "4", "OpenMP threads of host programs (default: an exported OMP_NUM_THREADS, else SLURM_CPUS_PER_TASK, else the CPUs the run may use); docs/cpu.md", positive(func(c *Config) *int { return &c.Threads })},
	{"PM_BIND", "bind", "close|spread|false", "OMP_PROC_BIND of host programs, with OMP_PLACES=cores unless false (default: close); docs/cpu.md", func(c *Config, v string) error {
		if err := run.CheckBind(v); err != nil {
			return err
		}
		c.Bind = v
		return nil
	}},
	{"PM_THRESHOLD", "threshold", "0.10", "compare: a slow-down beyond this fraction is a regression", func(c *Config, v string) error {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f >= 1 {
			return fmt.Errorf("%q: want a fraction in [0, 1)", v)
		}
		c.Threshold = f
		return nil
	}},
}

// KnobHelp is the knob list, one per line, as the magefile's All target and
// the CLI's usage show it.
func KnobHelp() string {
	var b strings.Builder
	for _, k := range Knobs {
		fmt.Fprintf(&b, "%s=%s\n    %s (-%s)\n", k.Env, k.Example, k.Doc, k.Flag)
	}
	return b.String()
}

// internalEnv are PM_ variables that are not knobs: set by the schedulers
// for their workers, read by the harness, by tests (CI exports some around
// go test) or by scripts/.
var internalEnv = map[string]bool{"PM_WORKER": true, "PM_GPU_UUID": true, "PM_DEVICE_NAME": true,
	"PM_SLURM_TEST": true, "PM_E2E": true, "PM_GPUS": true, "PM_RUN_LIMIT": true,
	"PM_REQUIRE_TOOLCHAINS": true, "PM_PROBE_OUT": true, "PM_HOST_DATA": true, "PM_SEEDS_DIR": true,
	"PM_DEBIAN_MIRROR": true, "PM_LLVM22_SUITES": true, "PM_HOST_BUILD": true, "PM_XZ": true}

// FromEnv reads every knob from the environment (the magefile's way). A PM_
// variable that is no knob is an error, with the closest knob's name.
func FromEnv() (Config, error) {
	return fromEnv(os.Environ())
}

func fromEnv(environ []string) (Config, error) {
	var cfg Config
	var errs []string
	env := map[string]string{}
	var names []string
	for _, k := range Knobs {
		names = append(names, k.Env)
	}
	for _, kv := range environ {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
		if strings.HasPrefix(k, "PM_") && !internalEnv[k] && !slices.Contains(names, k) {
			errs = append(errs, fmt.Sprintf("%s: unknown knob%s (go run mage.go -h all lists them)", k, diag.DidYouMean(k, names)))
		}
	}
	for _, k := range Knobs {
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
	for _, k := range Knobs {
		names = append(names, k.Flag)
	}
	return fmt.Errorf("unknown flag -%s%s", name, diag.DidYouMean(name, names))
}

// Flags registers every knob as a flag of fs (the CLI's way).
func Flags(fs *flag.FlagSet, cfg *Config) {
	for _, k := range Knobs {
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
func (f *knobFlag) IsBoolFlag() bool   { return boolFlags[f.k.Flag] }

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
		c.BuildDir = filepath.Join(c.Root, "build")
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

// picks applies the kernel, variant (ID or strategy) and toolchain filters.
func (c *Config) picks(kernel, variant, strategy, toolchain string) bool {
	pass := func(filter []string, names ...string) bool {
		if len(filter) == 0 {
			return true
		}
		return slices.ContainsFunc(names, func(n string) bool { return slices.Contains(filter, n) })
	}
	return pass(c.Kernels, kernel) && pass(c.Variants, variant, strategy) && pass(c.Toolchains, toolchain)
}
