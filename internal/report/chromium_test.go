package report

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/report/internal/reporttest"
	"github.com/portmatrix/portmatrix/internal/results"
)

// TestReportInChromium loads report.html in headless Chromium and checks
// what a browser shows. Set REPORT_SCREENSHOT=path.png to keep a screenshot.
func TestReportInChromium(t *testing.T) {
	chromium, err := exec.LookPath("chromium")
	if err != nil {
		t.Skip("chromium is not on PATH")
	}
	dir, _, _ := generate(t, reporttest.GPURun())
	url := "file://" + filepath.Join(dir, results.ReportFile)
	profile := t.TempDir()
	run := func(args ...string) string {
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--user-data-dir=" + profile}
		cmd := exec.CommandContext(ctx, chromium, append(append(base, args...), url)...)
		var stdout strings.Builder
		cmd.Stdout = &stdout
		require.NoError(t, cmd.Run())
		return stdout.String()
	}

	dom := run("--dump-dom")
	for _, want := range []string{`<table id="claims">`, `<table id="cells">`, `<td class="status">failed to build</td>`,
		`id="fig-fig3-spmv"`, `id="fig-fig18-spmv-ompx"`, "measured: runtime copy"} {
		assert.Contains(t, dom, want)
	}
	// Every figure the report file holds is in the rendered page.
	page, err := os.ReadFile(filepath.Join(dir, results.ReportFile))
	require.NoError(t, err)
	figures := strings.Count(string(page), "<figure ")
	assert.GreaterOrEqual(t, figures, 12)
	assert.Equal(t, figures, strings.Count(dom, "<figure "))
	assert.GreaterOrEqual(t, strings.Count(dom, "<svg"), figures)

	shot := filepath.Join(t.TempDir(), "report.png")
	run("--screenshot="+shot, "--window-size=1400,3000", "--hide-scrollbars")
	data, err := os.ReadFile(shot)
	require.NoError(t, err)
	assert.Greater(t, len(data), 50_000, "a page with figures, not a blank one")
	assert.Equal(t, "\x89PNG", string(data[:4]))
	if keep := os.Getenv("REPORT_SCREENSHOT"); keep != "" {
		require.NoError(t, os.WriteFile(keep, data, 0o644))
	}
}
