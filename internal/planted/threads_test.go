package planted

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/testenv"
)

// threaded is what a host record says of its threads and their binding.
type threaded struct {
	Kind    string `json:"kind"`
	Op      string `json:"op"`
	Threads int    `json:"threads"`
	Bind    string `json:"bind"`
	Places  string `json:"places"`
	CPUs    int    `json:"cpus"`
}

// Every record of a host program, the STREAM ones included, says the
// OpenMP threads and binding it ran with, as the environment set them.
func TestHostRecordsCarryThreads(t *testing.T) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not found (scripts/install-toolchains.sh installs it)")
	}
	testenv.Long(t) // builds a program
	bin := filepath.Join(t.TempDir(), "axpby.omp-host")
	args := append(append([]string{}, gccHostFlags(t)...), "-I"+filepath.Join(root(t), "harness"), "-o", bin,
		filepath.Join(root(t), "generated", "axpby", "omp-host.cpp"))
	out, err := exec.Command(gxx, args...).CombinedOutput()
	require.NoError(t, err, "g++ %s:\n%s", strings.Join(args, " "), out)

	for _, c := range []struct {
		env     []string
		threads int
		bind    string
		places  string
	}{
		{[]string{"OMP_NUM_THREADS=2", "OMP_PROC_BIND=close", "OMP_PLACES=cores"}, 2, "close", "cores"},
		{[]string{"OMP_NUM_THREADS=3", "OMP_PROC_BIND=false"}, 3, "false", ""},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		// STREAM's runs bounded (3 x --rep-seconds; at least 5 runs, of four
		// times the caches): its records are checked, not its rate.
		cmd := exec.CommandContext(ctx, bin, "--size", "1000", "--reps", "3", "--warmup", "1", "--flush-l2", "off",
			"--stream-bytes", "1048576", "--rep-seconds", "0.05")
		cmd.Env = append(os.Environ(), "OMP_WAIT_POLICY=passive", "OMP_PLACES=", "OMP_PROC_BIND=")
		cmd.Env = append(cmd.Env, c.env...)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		cancel()
		require.NoError(t, err, stderr.String())
		kinds := map[string]int{}
		for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
			var r threaded
			require.NoError(t, json.Unmarshal(line, &r), "%s", line)
			kinds[r.Kind]++
			assert.Equal(t, c.threads, r.Threads, "%s %s: %s", c.env, r.Kind+r.Op, line)
			assert.Equal(t, c.bind, r.Bind, "%s %s", c.env, r.Kind+r.Op)
			assert.Equal(t, c.places, r.Places, "%s %s", c.env, r.Kind+r.Op)
			// The process's CPUs, also where libgomp has bound the
			// initial thread to one place before main.
			assert.Equal(t, runtime.NumCPU(), r.CPUs, "%s %s: the CPUs the process may run on", c.env, r.Kind+r.Op)
		}
		assert.Equal(t, map[string]int{"kernel": 1, "stream": 3, "copy": 1}, kinds)
	}
}
