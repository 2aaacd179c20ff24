package results

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"reflect"
	"strings"
)

// Record kinds.
const (
	KindKernel = "kernel" // one (cell, size) measurement, or its error
	KindCopy   = "copy"   // a device-to-device copy bandwidth (older folders)
	KindStream = "stream" // a STREAM-like bandwidth measurement; Op says which
)

// Stream operations of KindStream records.
const (
	OpCopy  = "copy"
	OpTriad = "triad"
	OpDot   = "dot"
)

// Section is the share of one kernel inside a composite kernel (CG-Solve).
type Section struct {
	Calls   int     `json:"calls"`
	Seconds float64 `json:"seconds"`
	Bytes   float64 `json:"bytes"`
}

// Record is one line of results.jsonl: what the harness printed plus what the
// run stage knows of the cell and its provenance. Fields it does not know are
// kept in Extra and written back unchanged.
type Record struct {
	Kind      string `json:"kind"`
	Op        string `json:"op,omitempty"`
	Cell      string `json:"cell,omitempty"`
	Kernel    string `json:"kernel,omitempty"`
	Variant   string `json:"variant,omitempty"`
	Strategy  string `json:"strategy,omitempty"`
	Toolchain string `json:"toolchain,omitempty"`
	Target    string `json:"target,omitempty"`
	Device    string `json:"device,omitempty"`
	// Code that ran on the host (host programs, the OpenMP target fallback):
	// its OpenMP threads (1 without OpenMP), their proc-bind policy ("none"
	// without OpenMP), OMP_PLACES as set, and the CPUs the process could
	// run on (threads > cpus: oversubscribed). Absent for GPU code.
	Threads int    `json:"threads,omitempty"`
	Bind    string `json:"bind,omitempty"`
	Places  string `json:"places,omitempty"`
	CPUs    int    `json:"cpus,omitempty"`

	Size     int64     `json:"size,omitempty"`
	Reps     int       `json:"reps,omitempty"`
	Warmup   int       `json:"warmup,omitempty"`
	Seed     int64     `json:"seed,omitempty"`
	Trial    int       `json:"trial,omitempty"`
	TimesS   []float64 `json:"times_s,omitempty"`
	MedianS  float64   `json:"median_s,omitempty"`
	MinS     float64   `json:"min_s,omitempty"`
	Bytes    float64   `json:"bytes,omitempty"`
	BytesMin float64   `json:"bytes_min,omitempty"`
	Flops    float64   `json:"flops,omitempty"`
	GBps     float64   `json:"gbps,omitempty"`
	GBpsMin  float64   `json:"gbps_min,omitempty"`
	GFlops   float64   `json:"gflops,omitempty"`
	// The clock of times_s (ClockHost, ClockCUDAEvent; absent in older
	// folders: TimedBy infers it) and, in CUDA-dialect records, the CUDA
	// events' intervals of the same reps, the clock older folders used.
	Clock        string    `json:"clock,omitempty"`
	EventTimesS  []float64 `json:"event_times_s,omitempty"`
	EventMedianS float64   `json:"event_median_s,omitempty"`
	EventMinS    float64   `json:"event_min_s,omitempty"`
	// CudaSched is how the host waited for an NVIDIA GPU where the harness
	// chose it (--cuda-sched): "auto", the CUDA primary context activated
	// with CU_CTX_SCHED_AUTO before an OpenMP offload runtime started (the
	// scheduling CUDA runtime programs get); absent: the runtime's own
	// choice (LLVM's offload runtime: CU_CTX_SCHED_BLOCKING_SYNC). Two
	// records of two are two measurements (sameCode).
	CudaSched string `json:"cuda_sched,omitempty"`
	// FlushBy is how the L2 flush before each run evicted, where it ran
	// (flush_l2): "read", a pass reading the flush buffer (a GPU's flush
	// since 2026-11-29), which leaves no dirty line; "write" (absent in
	// older records), a pass writing it, whose dirty lines the timed call
	// wrote back (the host's flush). Two flushes are two measurements
	// (sameCode; Flush).
	FlushBy string `json:"flush_by,omitempty"`
	// A stream record's method ("babelstream": arrays of ArrayBytes each,
	// four times the caches or more, the best of reps runs, GBpsBest its
	// bandwidth; absent in older folders: the median of a few runs after
	// an L2 flush).
	Method     string             `json:"method,omitempty"`
	ArrayBytes int64              `json:"array_bytes,omitempty"`
	GBpsBest   float64            `json:"gbps_best,omitempty"`
	Verified   bool               `json:"verified"`
	MaxRelErr  *float64           `json:"max_rel_err,omitempty"`
	Tolerance  float64            `json:"tolerance,omitempty"`
	Sections   map[string]Section `json:"sections,omitempty"`
	Error      string             `json:"error,omitempty"`
	// The tunables' values of a tuning evaluation (harness --config); absent
	// in a run's records, which measure the generated values.
	Config map[string]int64 `json:"config,omitempty"`
	// The launch defaults the machine model gave (harness --defaults): the
	// papers' launch "as published", not a tuning evaluation; absent where
	// the program ran with its generated values.
	Defaults map[string]int64 `json:"defaults,omitempty"`
	// Tuned: the measurement of a run at the cell's tuned best (run -tuned,
	// PM_TUNED): Config is the best configuration of the tuning folder for
	// this cell, size and device model, measured beside the as-published
	// record of the same cell, size and trial.
	TunedBest bool `json:"tuned,omitempty"`

	// Where the program's time went (harness): data and reference before the
	// first run, all runs with their checks, the checks alone; and (run stage)
	// seconds from the program's start to this record, runtime start-up included.
	SetupS   float64 `json:"setup_s,omitempty"`
	MeasureS float64 `json:"measure_s,omitempty"`
	CheckS   float64 `json:"check_s,omitempty"`
	ElapsedS float64 `json:"elapsed_s,omitempty"`
	// Of SetupS, the float64 reference: computed, or loaded from what another
	// program of the run computed from the same inputs (ReferenceCached).
	ReferenceS      float64 `json:"reference_s,omitempty"`
	ReferenceCached bool    `json:"reference_cached,omitempty"`
	// Of SetupS, the copies of data to the device.
	UploadS float64 `json:"upload_s,omitempty"`

	RunID            string `json:"run_id,omitempty"`
	BatchID          string `json:"batch_id,omitempty"`
	Commit           string `json:"commit,omitempty"`
	Dirty            bool   `json:"dirty,omitempty"`
	BuildKey         string `json:"build_key,omitempty"`
	DeviceHash       string `json:"device_hash,omitempty"` // build.DeviceHash of the binary's device code
	ToolchainVersion string `json:"toolchain_version,omitempty"`
	GPUUUID          string `json:"gpu_uuid,omitempty"`
	// The trial number its batch gave it, where a merge numbered it anew
	// (pooled with another batch's trials of the same code): with BatchID
	// it names the record, so a merge done again finds it.
	BatchTrial int `json:"batch_trial,omitempty"`

	// Where a scheduled run measured it (internal/cluster).
	Shard       string `json:"shard,omitempty"`
	Node        string `json:"node,omitempty"`
	SlurmJobID  string `json:"slurm_job_id,omitempty"`
	SlurmTaskID string `json:"slurm_task_id,omitempty"`
	Worker      string `json:"worker,omitempty"`

	// The clock Load inferred from run.json for a record without one
	// (TimedBy); never written.
	inferredClock string

	Extra  map[string]json.RawMessage `json:"-"` // fields of newer writers, kept as read
	Source string                     `json:"-"` // "file:line" where it was read
}

type plainRecord Record

var knownFields = func() map[string]bool {
	m := map[string]bool{}
	t := reflect.TypeOf(plainRecord{})
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			m[name] = true
		}
	}
	return m
}()

// UnmarshalJSON reads the known fields and keeps the others in Extra.
func (r *Record) UnmarshalJSON(b []byte) error {
	var p plainRecord
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return err
	}
	for k, v := range all {
		if !knownFields[k] {
			if p.Extra == nil {
				p.Extra = map[string]json.RawMessage{}
			}
			p.Extra[k] = v
		}
	}
	*r = Record(p)
	return nil
}

// MarshalJSON writes the known fields and Extra, keys sorted. "verified" is
// written for kernel records only.
func (r Record) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(plainRecord(r))
	if err != nil {
		return nil, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(b, &all); err != nil {
		return nil, err
	}
	if r.Kind != KindKernel && !r.Verified {
		delete(all, "verified")
	}
	for k, v := range r.Extra {
		if !knownFields[k] {
			all[k] = v
		}
	}
	return json.Marshal(all)
}

// Usable reports whether a kernel record is a verified measurement with a
// time (and a finite bandwidth: 0 for a kernel that moves no bytes).
func (r Record) Usable() bool {
	return r.Verified && r.Error == "" && r.MedianS > 0 && r.GBps >= 0 && !math.IsInf(r.GBps, 0)
}

// Tuned reports whether a record measured a tuning configuration rather
// than the launch as published (the generated values or the machine
// model's defaults): a non-empty config, or "tuned": true.
func (r Record) Tuned() bool {
	if len(r.Config) > 0 {
		return true
	}
	return r.TunedBest
}

// RelErr is the verification error (0 when the record has none).
func (r Record) RelErr() float64 {
	if r.MaxRelErr == nil {
		return 0
	}
	return *r.MaxRelErr
}

// IsRoofline reports whether a record is a copy bandwidth measurement of a
// toolchain (old "copy" records, and "stream" records of op "copy").
func (r Record) IsRoofline() bool {
	return r.Kind == KindCopy || r.Kind == KindStream && r.Op == OpCopy
}

// CellSize keys a kernel record by what it measured.
type CellSize struct {
	Cell string
	Size int64
}

// Key returns the record's (cell, size).
func (r Record) Key() CellSize { return CellSize{r.Cell, r.Size} }

// Unit is what a run measures once: a cell at one size in one trial
// (trials are numbered from 1; a record without one is trial 1).
type Unit struct {
	Cell  string `json:"cell"`
	Size  int64  `json:"size"`
	Trial int    `json:"trial"`
	Tuned bool   `json:"tuned,omitempty"` // the measurement at the tuned best, beside the as-published one
}

func (u Unit) String() string {
	if u.Tuned {
		return fmt.Sprintf("%s@%d#%d+tuned", u.Cell, u.Size, u.Trial)
	}
	return fmt.Sprintf("%s@%d#%d", u.Cell, u.Size, u.Trial)
}

// Unit returns the record's (cell, size, trial).
func (r Record) Unit() Unit {
	t := r.Trial
	if t < 1 {
		t = 1
	}
	return Unit{r.Cell, r.Size, t, r.TunedBest}
}

// Finished is the units a results folder holds a kernel record of (a
// measurement or its error): what a resumed run, and a re-submitted
// scheduled run, does not measure again. A folder without results.jsonl
// has finished nothing.
func Finished(dir string) (map[Unit]bool, error) {
	recs, err := ReadJSONL(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return map[Unit]bool{}, nil
	}
	if err != nil {
		return nil, err
	}
	return FinishedOf(recs), nil
}

// FinishedOf is the units recs hold a kernel record of.
func FinishedOf(recs []Record) map[Unit]bool {
	out := map[Unit]bool{}
	for _, r := range recs {
		if r.Kind == KindKernel {
			out[r.Unit()] = true
		}
	}
	return out
}
