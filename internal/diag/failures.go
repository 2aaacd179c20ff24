package diag

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Failure is one thing the user asked for that did not happen.
type Failure struct {
	Stage, What, Why string
}

// Failures collects what did not happen; as an error it is the one-screen
// summary printed when a stage exits non-zero, after everything is written.
type Failures []Failure

// Add records a failure.
func (f *Failures) Add(stage, what, why string) { *f = append(*f, Failure{stage, what, why}) }

// Err is nil when nothing failed.
func (f Failures) Err() error {
	if len(f) == 0 {
		return nil
	}
	return f
}

// maxSummary is how many failures the summary lists before counting the rest.
const maxSummary = 20

func (f Failures) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d failures:", len(f))
	for i, x := range f {
		if i == maxSummary {
			fmt.Fprintf(&b, "\n  ... and %d more (build/manifest.json, results.jsonl)", len(f)-maxSummary)
			break
		}
		why := x.Why
		if j := strings.IndexByte(why, '\n'); j >= 0 {
			why = why[:j]
		}
		if len(why) > 160 {
			cut := 160
			for cut > 0 && !utf8.RuneStart(why[cut]) {
				cut-- // not inside a character
			}
			why = why[:cut] + "..."
		}
		fmt.Fprintf(&b, "\n  %s: %s: %s", x.Stage, x.What, why)
	}
	return b.String()
}

// Join appends the failures of errs into one Failures when they all are,
// else returns the first error that is not.
func Join(errs ...error) error {
	var all Failures
	for _, err := range errs {
		switch e := err.(type) {
		case nil:
		case Failures:
			all = append(all, e...)
		default:
			return err
		}
	}
	return all.Err()
}
