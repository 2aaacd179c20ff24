// Package testenv holds the switches of the test suite. `go test ./...`
// runs every package's fast tests in minutes on two cores; the long
// end-to-end suites (the whole bad-input corpus, the planted variants, the
// GPU and AMD compile samples, the pipelines that build and run many
// programs) run when PM_LONG_TESTS=1, as CI sets it.
package testenv

import (
	"os"
	"testing"
)

// LongVar is the switch of the long end-to-end tests.
const LongVar = "PM_LONG_TESTS"

// LongEnabled says whether the long end-to-end tests run: PM_LONG_TESTS=1.
func LongEnabled() bool { return os.Getenv(LongVar) == "1" }

// Long skips t, a long end-to-end test (more than about 20 s on two cores),
// unless PM_LONG_TESTS=1; the message names the switch.
func Long(t testing.TB) {
	t.Helper()
	if !LongEnabled() {
		t.Skip("long end-to-end test: " + LongVar + "=1 runs it")
	}
}
