package wording

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The repository's tracked text files speak of the product only: each line
// the pattern finds fails the test at its file:line.
func TestRepositorySpeaksOfTheProductOnly(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed: the tracked files cannot be listed")
	}
	if err := exec.Command("git", "-C", "../..", "rev-parse", "--is-inside-work-tree").Run(); err != nil {
		t.Skip("not a git checkout: the tracked files cannot be listed")
	}
	found, err := Scan("../..")
	require.NoError(t, err)
	for _, f := range found {
		t.Error(f)
	}
}

// unmark removes the "·" that keeps this file's own examples from matching
// the pattern when the repository is scanned.
func unmark(s string) string { return strings.ReplaceAll(s, "·", "") }

func TestPatternFindsHowTheProjectWasMade(t *testing.T) {
	for _, s := range []string{
		"## 2026-11-25 (ses·sion 11), the first H100 platform",
		"with the ses·sion-6 harness",
		"The ses·sions' account of the GPU runs",
		"what a ses·sion learned",
		"not measured end to end this ses·sion.",
		"We asked for an H100; the ses·sion was given an H200",
		"Dev·ice time: 1795 s of 1800.",
		"(dev·ice-time is rationed)",
		"from the dev·ice timer's start",
		"the le·nt machine was replaced",
		"A Le·nt GPU host's CPU cores",
		"Iss·ue 22's bar: the tuned best",
		"Performance bars (iss·ue 3)",
		"see iss·ue #12",
		"built before the iss·ue-8 harness",
		"against the 15 the iss·ue asks for",
		"measured on the iss·ue's bars",
		"(nvidia-h100-x2; ca·lls 1 to 4: GPU-2dcbe5fe",
		"ca·ll 5: GPU-ca39971a",
		"before the ca·ll's limit",
		"interrupted by a ca·ll's time limit",
	} {
		s = unmark(s)
		assert.NotEmpty(t, Pattern.FindString(s), "not found in %q", s)
	}
}

func TestPatternLeavesTheProductsWordsAlone(t *testing.T) {
	for _, s := range []string{
		"internal/session's TestGPURunResumesFromItsTarball runs the script",
		"the session opens a folder once for run and tune",
		"session.Run and session.Tune build run.Options",
		"sm_100 and later (issue 148703, PR 149534)",
		"the searchable issues hold none",
		"5 reps (3 where a call takes over 2 s)",
		"1.6-3.2 s per solve, 5 calls per program",
		"CG-Solve calls SPMV 21 times, AXPBY 62 and DOT 41",
		"an excellent, silent, relentless timer on the device",
		"no AMD GPU is available, so these cells never run",
	} {
		s = unmark(s)
		assert.Empty(t, Pattern.FindString(s), "found in %q", s)
	}
}

func TestScanTextPositionsEachLine(t *testing.T) {
	text := unmark("# Results history\n\nclean line\nran in ses·sion 9\n\nDev·ice time: 5 s\n")
	got := ScanText("docs/book/history.md", []byte(text))
	require.Len(t, got, 2)
	assert.Equal(t, "docs/book/history.md", got[0].File)
	assert.Equal(t, 4, got[0].Line)
	assert.Equal(t, 6, got[1].Line)
	assert.Contains(t, got[0].String(), "docs/book/history.md:4: ")
	assert.Contains(t, got[1].String(), "docs/book/history.md:6: ")
	assert.Empty(t, ScanText("img.png", []byte(unmark("\x89PNG\x00 ses·sion 9"))), "binary files are not text")
}

func TestExcludedIsGeneratedCodeAndThePatternOnly(t *testing.T) {
	assert.True(t, excluded("generated/axpby/omp-raw.cpp"))
	assert.True(t, excluded("internal/wording/wording.go"))
	assert.False(t, excluded("internal/wording/wording_test.go"))
	assert.False(t, excluded("generatedx/a.md"))
	assert.False(t, excluded("docs/book/history.md"))
}
