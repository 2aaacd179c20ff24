package planted

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/testenv"
)

// The Kokkos OpenMP-target layer built without offload runs its launches on
// the host's threads (harness/kk/omptarget.hpp, docs/cpu.md): a team launch
// as teams of one thread side by side, each with its own scratch, and range
// launches on the threads the process keeps, not through GCC's host fallback
// (teams one after another, new threads for every target region).
func TestKokkosLayerOnTheHost(t *testing.T) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not found (scripts/install-toolchains.sh installs it)")
	}
	testenv.Long(t) // builds a program
	bin := filepath.Join(t.TempDir(), "kk_host")
	args := append(append([]string{}, gccHostFlags(t)...), "-I"+filepath.Join(root(t), "harness"), "-o", bin,
		filepath.Join("testdata", "kk_host.cpp"))
	out, err := exec.Command(gxx, args...).CombinedOutput()
	require.NoError(t, err, "g++ %s:\n%s", strings.Join(args, " "), out)

	for _, threads := range []string{"2", "3"} {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		cmd := exec.CommandContext(ctx, bin)
		cmd.Env = append(os.Environ(), "OMP_NUM_THREADS="+threads, "OMP_WAIT_POLICY=passive", "OMP_PROC_BIND=false", "OMP_PLACES=")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		cancel()
		lines := strings.Split(strings.TrimSpace(string(out)), "\n")
		for _, line := range lines {
			assert.True(t, strings.HasPrefix(line, "ok "), "%s threads: %s", threads, line)
		}
		assert.Len(t, lines, 9, "%s threads: every check reports", threads)
		assert.NoError(t, err, "%s threads: %s", threads, stderr.String())
	}
}
