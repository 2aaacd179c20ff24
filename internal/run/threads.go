package run

import (
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
)

// Threads is how host programs run their OpenMP threads: the count, the
// proc-bind policy and the places, and where the count came from.
type Threads struct {
	N      int
	Bind   string // OMP_PROC_BIND
	Places string // OMP_PLACES; "" leaves it unset
	From   string // the knob, OMP_NUM_THREADS, SLURM_CPUS_PER_TASK or affinity
}

// DefaultBind pins each thread to one core, next to each other inside the
// process's CPU set: a thread that migrates, or two threads on the two
// hardware threads of one core, make timings that drift between reps.
const DefaultBind = "close"

// BindModes are the values of the PM_BIND knob (OMP_PROC_BIND's).
var BindModes = []string{"close", "spread", "primary", "true", "false"}

// CheckBind validates a PM_BIND value ("" is DefaultBind).
func CheckBind(s string) error {
	if s == "" || slices.Contains(BindModes, s) {
		return nil
	}
	return fmt.Errorf("PM_BIND=%q: want one of %s", s, strings.Join(BindModes, ", "))
}

// HostThreads chooses the threads of host programs: the knob (n > 0), else
// Slurm's allocation (SLURM_CPUS_PER_TASK, at most the CPUs of the affinity
// mask), else an OMP_NUM_THREADS the user exported, else the CPUs this
// process may run on (its affinity mask, which a Slurm cgroup or taskset
// narrows). The allocation comes before OMP_NUM_THREADS because sbatch
// hands the submitting shell's environment to the job. Binding is the bind
// knob (DefaultBind when ""), places cores; "false" binds nothing.
func HostThreads(n int, bind string, getenv func(string) string, affinity func() int) Threads {
	t := Threads{N: n, Bind: bind, Places: "cores", From: "PM_THREADS"}
	if t.Bind == "" {
		t.Bind = DefaultBind
	}
	if t.Bind == "false" {
		t.Places = ""
	}
	if t.N > 0 {
		return t
	}
	cpus := max(affinity(), 1)
	if k := count(getenv("SLURM_CPUS_PER_TASK")); k > 0 {
		t.N, t.From = min(k, cpus), "SLURM_CPUS_PER_TASK"
		return t
	}
	if k := count(getenv("OMP_NUM_THREADS")); k > 0 {
		t.N, t.From = k, "OMP_NUM_THREADS"
		return t
	}
	t.N, t.From = cpus, "affinity"
	return t
}

// count reads a thread count; OMP_NUM_THREADS may be a list (one per
// nesting level), whose first counts. 0: none.
func count(s string) int {
	first, _, _ := strings.Cut(s, ",")
	k, err := strconv.Atoi(strings.TrimSpace(first))
	if err != nil || k < 1 {
		return 0
	}
	return k
}

// Affinity is the number of CPUs this process may run on (Go reads the
// affinity mask, sched_getaffinity, at start-up).
func Affinity() int { return runtime.NumCPU() }

// Env is the environment a host program gets.
func (t Threads) Env() []string {
	if t.N <= 0 {
		return nil
	}
	env := []string{"OMP_NUM_THREADS=" + strconv.Itoa(t.N), "OMP_PROC_BIND=" + t.Bind}
	if t.Places != "" {
		env = append(env, "OMP_PLACES="+t.Places)
	}
	return env
}
