package results

import (
	"fmt"
	"slices"
	"strings"
)

// The clocks a measurement's times come from (a record's "clock";
// docs/results-format.md). ClockHost is the host's clock from the launch to
// the completion the host sees, one device synchronisation before the
// interval and one inside it at the end: every GPU measurement since records
// name their clock, CUDA and OpenMP alike, and every host measurement.
// ClockCUDAEvent is the interval of two CUDA (or HIP) events around the
// call: the CUDA-dialect cells of older folders, and the event_times_s that
// CUDA records keep beside times_s.
const (
	ClockHost      = "host"
	ClockCUDAEvent = "cuda-event"
)

// TimedBy is the clock of the record's times_s: its "clock" field, else the
// clock the folder's loader inferred from run.json (Load), else InferClock
// from its toolchain id alone.
func (r Record) TimedBy() string {
	switch {
	case r.Clock != "":
		return r.Clock
	case r.inferredClock != "":
		return r.inferredClock
	}
	return InferClock("", r.Toolchain)
}

// InferClock is the clock of a record written before records named theirs:
// CUDA events for the CUDA dialect (pm/device_cuda.hpp's event timer, which
// nvcc and, through pm/gpu_runtime.hpp, hipcc build: compiler family nvcc or
// rocm; no other family builds that dialect), the host's clock for the rest
// (OpenMP target regions timed with omp_get_wtime after a taskwait, host
// programs with the steady clock). family is the toolchain's as run.json
// lists it; where it is not known, the toolchain id's prefix (nvcc, hip)
// stands for it, as the report reads a family from an id.
func InferClock(family, toolchain string) string {
	if family == "" {
		switch {
		case strings.HasPrefix(toolchain, "nvcc"):
			family = "nvcc"
		case strings.HasPrefix(toolchain, "hip"), strings.HasPrefix(toolchain, "rocm"):
			family = "rocm"
		}
	}
	if family == "nvcc" || family == "rocm" {
		return ClockCUDAEvent
	}
	return ClockHost
}

// ClockOf is the clock of a measurement's records (its trials): their one
// clock, or "mixed (a, b)" where trials were timed with different clocks.
func ClockOf(recs []Record) string {
	var clocks []string
	for _, r := range recs {
		if c := r.TimedBy(); !slices.Contains(clocks, c) {
			clocks = append(clocks, c)
		}
	}
	switch len(clocks) {
	case 0:
		return ""
	case 1:
		return clocks[0]
	}
	slices.Sort(clocks)
	return "mixed (" + strings.Join(clocks, ", ") + ")"
}

// ClocksDiffer is the one rule of every ratio of two measurements (claims,
// tables, figures, portability, compare): times of one clock only are
// compared. It returns "" when measurements of clocks a and b compare, else
// why not: "clocks differ: cuda-event against host" (a, the numerator's,
// first), or that a side's trials mix clocks.
func ClocksDiffer(a, b string) string {
	switch {
	case strings.HasPrefix(a, "mixed"):
		return "clocks differ: " + a + " within one measurement"
	case strings.HasPrefix(b, "mixed"):
		return "clocks differ: " + b + " within one measurement"
	case a != b:
		return fmt.Sprintf("clocks differ: %s against %s", a, b)
	}
	return ""
}
