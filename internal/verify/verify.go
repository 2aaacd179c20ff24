// Package verify checks what a finished build and run must show (CI's
// checks, in Go rather than in a script that re-reads the files): every cell
// that is on was compiled or failed with a known failure, and a finished run
// measured and verified every cell it was to run. It counts by target, so a
// new GPU architecture gets its own line without a change here.
package verify

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/results"
)

// Cell is a cell the selection turns on.
type Cell struct {
	ID     string
	Target string // the toolchain's: host, sm_90, ...
}

// Count is what one target's cells came to.
type Count struct {
	On, Compiled int
	DeviceOnly   int      // of Compiled, only the device code (PM_DEVICE_ONLY)
	Known        []string // failed with a known failure (variants/known-failures.yaml)
}

// compiled says how many compiled, and of them how many only their device code.
func (n Count) compiled() string {
	if n.DeviceOnly == 0 {
		return fmt.Sprintf("%d compiled", n.Compiled)
	}
	return fmt.Sprintf("%d compiled (%d of them device code only)", n.Compiled, n.DeviceOnly)
}

// Summary is what Build and Run found; Problems empty means it passed.
type Summary struct {
	Targets  map[string]*Count
	Expected int // cells the run was to measure
	Measured int // of those, cells with a kernel record
	Records  int // kernel records (measurements)
	Verified int // of those, verified
	State    string
	Problems []string
}

func (s *Summary) problem(format string, args ...any) {
	s.Problems = append(s.Problems, fmt.Sprintf(format, args...))
}

// Build checks every on cell against the manifest: compiled, or failed with
// a known failure; missing from the manifest, skipped or failed otherwise is
// a problem.
func (s *Summary) Build(cells []Cell, m *build.Manifest, known []build.Known) {
	if s.Targets == nil {
		s.Targets = map[string]*Count{}
	}
	byID := map[string]build.Entry{}
	for _, e := range m.Cells {
		byID[e.ID] = e
	}
	for _, c := range cells {
		n := s.Targets[c.Target]
		if n == nil {
			n = &Count{}
			s.Targets[c.Target] = n
		}
		n.On++
		e, ok := byID[c.ID]
		switch {
		case !ok:
			s.problem("%s: on, not in the build manifest (not built)", c.ID)
		case e.Status == build.Built || e.Status == build.Cached:
			n.Compiled++
			if e.DeviceOnly {
				n.DeviceOnly++
			}
		case e.Status == build.Failed && build.Match(known, e.ID, e.Reason) != nil:
			n.Known = append(n.Known, e.ID)
		default:
			s.problem("%s: on, %s: %s", c.ID, e.Status, e.Reason)
		}
	}
	if len(cells) == 0 {
		s.problem("no cell is on (doctor says why)")
	}
}

// Run checks the results folder dir: the run finished, every kernel record
// verified, and every expected cell measured.
func (s *Summary) Run(dir string, expected []string) {
	s.Expected = len(expected)
	run, err := results.ReadRun(dir)
	if err != nil {
		s.problem("%v", err)
		return
	}
	s.State = run.Status()
	if s.State != results.StateFinished {
		s.problem("%s: run %s, not finished", dir, s.State)
	}
	recs, err := results.ReadJSONL(dir)
	if err != nil {
		s.problem("%v", err)
		return
	}
	measured := map[string]bool{}
	for _, r := range recs {
		if r.Kind != results.KindKernel {
			continue
		}
		s.Records++
		measured[r.Cell] = true
		if r.Verified {
			s.Verified++
		} else {
			s.problem("%s size %d: not verified: %s", r.Cell, r.Size, r.Error)
		}
	}
	for _, id := range expected {
		if measured[id] {
			s.Measured++
		} else {
			s.problem("%s: built, not measured", id)
		}
	}
	if len(expected) == 0 {
		s.problem("%s: no cell to measure", dir)
	}
}

// Print writes the counts, a line per target (host first), then the problems.
func (s *Summary) Print(w io.Writer) {
	targets := slices.SortedFunc(maps.Keys(s.Targets), func(a, b string) int {
		if (a == "host") != (b == "host") {
			if a == "host" {
				return -1
			}
			return 1
		}
		return strings.Compare(a, b)
	})
	gpu := Count{}
	for _, t := range targets {
		n := s.Targets[t]
		fmt.Fprintf(w, "verify: %s cells: %d on, %s, %d known failures%s\n", t, n.On, n.compiled(), len(n.Known), list(n.Known))
		if t != "host" {
			gpu.On, gpu.Compiled, gpu.DeviceOnly, gpu.Known = gpu.On+n.On, gpu.Compiled+n.Compiled, gpu.DeviceOnly+n.DeviceOnly, append(gpu.Known, n.Known...)
		}
	}
	if len(targets) > 0 {
		fmt.Fprintf(w, "verify: GPU cells: %d on, %s, %d known failures\n", gpu.On, gpu.compiled(), len(gpu.Known))
	}
	if s.State != "" {
		fmt.Fprintf(w, "verify: run %s: %d of %d cells measured; %d measurements, %d verified\n", s.State, s.Measured, s.Expected, s.Records, s.Verified)
	}
	for _, p := range s.Problems {
		fmt.Fprintf(w, "  FAILED %s\n", p)
	}
}

// Err is nil when there is no problem.
func (s *Summary) Err() error {
	if len(s.Problems) == 0 {
		return nil
	}
	return fmt.Errorf("verify: %d problems", len(s.Problems))
}

func list(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return ": " + strings.Join(ids, ", ")
}
