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
// an OMP_NUM_THREADS the user exported, else Slurm's allocation
// (SLURM_CPUS_PER_TASK), else the CPUs this process may run on (its
// affinity mask, which a Slurm cgroup or taskset narrows). Binding is the
// bind knob (DefaultBind when ""), places cores; "false" binds nothing.
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
	for _, v := range []string{"OMP_NUM_THREADS", "SLURM_CPUS_PER_TASK"} {
		// OMP_NUM_THREADS may be a list (nested levels): the first counts.
		first, _, _ := strings.Cut(getenv(v), ",")
		if k, err := strconv.Atoi(strings.TrimSpace(first)); err == nil && k > 0 {
			t.N, t.From = k, v
			return t
		}
	}
	t.N, t.From = max(affinity(), 1), "affinity"
	return t
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
