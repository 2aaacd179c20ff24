package render_test

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// cgsolve_resident keeps its scalars on the device: no reduction in its loop
// returns to the host. Under each GPU strategy that renders it, its DOTs are
// range_reduce_into launches that store into s, and only the final dot
// copies a sum back; omp-lambda and omp-class, which cannot keep a sum on the
// device, do not render it.
func TestResidentCGSolveKeepsItsScalarsOnTheDevice(t *testing.T) {
	p := load(t)
	files, err := p.Render()
	require.NoError(t, err)
	into := map[string]*regexp.Regexp{
		"omp-raw":      regexp.MustCompile(`double\* const pm_into = s \+ \(slot\);`),
		"direct-ompx":  regexp.MustCompile(`double\* const pm_into = s \+ \(slot\);`),
		"kk-omp-b":     regexp.MustCompile(`pmkk::device_result\(s \+ \(slot\)\)`),
		"kk-ompx-opt":  regexp.MustCompile(`pmkk::device_result\(s \+ \(slot\)\)`),
		"kk-cuda-3lvl": regexp.MustCompile(`pmkk::device_result\(s \+ \(slot\)\)`),
		"serial":       regexp.MustCompile(`s\[slot\] = sum;`),
		"omp-host":     regexp.MustCompile(`s\[slot\] = sum;`),
	}
	for variant, re := range into {
		ext := ".cpp"
		if strings.HasPrefix(variant, "kk-cuda") {
			ext = ".cu"
		}
		src, ok := files["generated/cgsolve_resident/"+variant+ext]
		require.True(t, ok, "cgsolve_resident under %s", variant)
		assert.Regexp(t, re, string(src), "%s: dot_into stores its sum on the device", variant)
		assert.Contains(t, string(src), "dot_into(n, Ap, p, s, 0);", variant)
	}
	for _, v := range []string{"omp-lambda", "omp-class"} {
		_, ok := files["generated/cgsolve_resident/"+v+".cpp"]
		assert.False(t, ok, "%s lowers no range_reduce_into", v)
	}
}

// The -async strategies launch what stays on the device with nowait on one
// stream (PM_OMP_NOWAIT) and order a reduction the host reads after it
// (PM_OMP_ORDERED); their synchronous twins render neither, so those
// programs are as before.
func TestAsyncStrategiesLaunchWithNowait(t *testing.T) {
	p := load(t)
	files, err := p.Render()
	require.NoError(t, err)
	for _, c := range []struct{ async, sync string }{{"omp-raw-async", "omp-raw"}, {"direct-ompx-async", "direct-ompx"}} {
		src := string(files["generated/cgsolve_resident/"+c.async+".cpp"])
		require.NotEmpty(t, src, c.async)
		for _, line := range strings.Split(src, "\n") {
			if strings.Contains(line, "#pragma omp target") {
				assert.Regexp(t, `(PM_OMP_NOWAIT|PM_OMP_ORDERED)$`, strings.TrimSpace(line), "%s: every launch is on the stream", c.async)
			}
			if strings.Contains(line, "reduction(+") && strings.Contains(line, "#pragma omp target") {
				assert.True(t, strings.HasSuffix(line, "PM_OMP_ORDERED"), "%s: a reduction the host reads waits: %s", c.async, line)
			}
		}
		assert.Contains(t, src, "PM_OMP_NOWAIT", c.async)
		for _, clause := range []string{"PM_OMP_NOWAIT", "PM_OMP_ORDERED"} {
			assert.NotContains(t, string(files["generated/cgsolve_resident/"+c.sync+".cpp"]), clause, c.sync)
		}
	}
	for _, v := range p.Variants {
		if strings.HasSuffix(v.ID, "-async") && !strings.HasPrefix(v.ID, "raja") && !strings.HasPrefix(v.ID, "rajalib") {
			assert.NotContains(t, v.Strategy.Kernels, "snap_ui", "%s: its launches are ordered only where every hook carries the stream", v.ID)
			assert.Contains(t, v.Strategy.Kernels, "cgsolve_resident", v.ID)
		}
	}
}
