package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The summary that ends all: kernel by variant, GB/s at the largest size
// measured, its fraction of the run's best STREAM bandwidth on that
// toolchain, verified; other kernels a line each.
func TestSummarize(t *testing.T) {
	dir := t.TempDir()
	run := `{"id":"r","host":{"cpu":"Test CPU"},"toolchains":[{"id":"gcc-host","command":"g++","version":"12.2.0","target":"host"}],` +
		`"vocabulary":{"kernels":[],"strategies":[{"name":"serial","variants":["serial"]},{"name":"omp-host","variants":["omp-host"]}],"families":[],"devices":[]}}`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "run.json"), []byte(run), 0o644))
	lines := []string{
		// axpby serial: 20 GB/s at the larger size, 10 at the smaller
		`{"kind":"kernel","cell":"axpby.serial.gcc-host","kernel":"axpby","variant":"serial","toolchain":"gcc-host","size":2000,"bytes":2e7,"times_s":[0.001,0.001,0.001],"median_s":0.001,"gbps":20,"verified":true}`,
		`{"kind":"kernel","cell":"axpby.serial.gcc-host","kernel":"axpby","variant":"serial","toolchain":"gcc-host","size":1000,"bytes":1e7,"times_s":[0.001,0.001,0.001],"median_s":0.001,"gbps":10,"verified":true}`,
		`{"kind":"kernel","cell":"axpby.omp-host.gcc-host","kernel":"axpby","variant":"omp-host","toolchain":"gcc-host","size":2000,"bytes":2e7,"times_s":[0.0005,0.0005,0.0005],"median_s":0.0005,"gbps":40,"verified":true}`,
		// dot omp-host did not verify
		`{"kind":"kernel","cell":"dot.omp-host.gcc-host","kernel":"dot","variant":"omp-host","toolchain":"gcc-host","size":2000,"bytes":2e7,"times_s":[0.001],"median_s":0.001,"gbps":20,"verified":false}`,
		`{"kind":"kernel","cell":"fir.serial.gcc-host","kernel":"fir","variant":"serial","toolchain":"gcc-host","size":100,"bytes":4e6,"times_s":[0.001],"median_s":0.001,"gbps":4,"verified":true}`,
		// a tuning evaluation is not the run's measurement
		`{"kind":"kernel","cell":"axpby.serial.gcc-host","kernel":"axpby","variant":"serial","toolchain":"gcc-host","size":4000,"bytes":8e7,"times_s":[0.001],"median_s":0.001,"gbps":80,"verified":true,"config":{"x":1}}`,
		`{"kind":"stream","op":"copy","cell":"axpby.serial.gcc-host","toolchain":"gcc-host","threads":2,"bytes":1e8,"median_s":0.0025,"gbps":40,"verified":true}`,
		`{"kind":"stream","op":"triad","cell":"axpby.serial.gcc-host","toolchain":"gcc-host","threads":2,"bytes":1e8,"median_s":0.003,"gbps":33.3,"verified":true}`,
	}
	require.NoError(t, os.WriteFile(filepath.Join(dir, "results.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644))
	var out bytes.Buffer
	require.NoError(t, Summarize(dir, []string{"axpby", "dot"}, &out))
	got := strings.ReplaceAll(out.String(), dir, "DIR")
	assert.Equal(t, `
gcc-host (g++ 12.2.0) on Test CPU, 2 threads: STREAM copy 40.0, triad 33.3 GB/s, measured in this run
GB/s at the largest size measured, % of the best STREAM bandwidth, verified:
                                  axpby            dot
size                               2000              -
serial                      20  50% yes
omp-host                    40 100% yes           - no
other kernels: GB/s at the largest size measured, % of the toolchain's best STREAM bandwidth, verified:
  fir.serial.gcc-host                              size 100      4.0  10% yes
figures, claims, tables: DIR/report.html
`, got)
}
