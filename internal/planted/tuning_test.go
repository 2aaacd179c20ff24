package planted

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tuned is a kernel record with the configuration it measured.
type tuned struct {
	record
	Config map[string]int64 `json:"config"`
	SetupS float64          `json:"setup_s"`
}

// spmvHost builds SPMV's omp-host program, whose launch parameters
// (rows_per_team, team_size, vector_size) are run-time tunables.
func spmvHost(t *testing.T) string {
	return sharedBinary(t, "generated/spmv/omp-host.cpp")
}

func runTuned(t *testing.T, bin string, args ...string) ([]tuned, string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, append([]string{"--size", "12", "--reps", "3", "--warmup", "1", "--flush-l2", "off"}, args...)...)
	cmd.Env = append(os.Environ(), "OMP_NUM_THREADS=2", "OMP_WAIT_POLICY=passive")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var recs []tuned
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var r tuned
		if len(line) > 0 && json.Unmarshal(line, &r) == nil && r.Kind == "kernel" {
			recs = append(recs, r)
		}
	}
	return recs, stderr.String(), err
}

// One process measures every configuration over the same data: a record
// per configuration, each verified on its own, the data set up once.
func TestConfigurationsInOneProcess(t *testing.T) {
	bin := spmvHost(t)
	configs := filepath.Join(t.TempDir(), "configs")
	require.NoError(t, os.WriteFile(configs, []byte("# rows per team that divide the rows, and that do not\nrows_per_team=1\nrows_per_team=7,team_size=2\n\nrows_per_team=100000\n"), 0o644))
	recs, stderr, err := runTuned(t, bin, "--config", "rows_per_team=64", "--configs", configs)
	require.NoError(t, err, stderr)
	require.Len(t, recs, 4)
	want := []map[string]int64{{"rows_per_team": 64}, {"rows_per_team": 1}, {"rows_per_team": 7, "team_size": 2}, {"rows_per_team": 100000}}
	for i, r := range recs {
		assert.Equal(t, want[i], r.Config)
		assert.True(t, r.Verified, "%v: %s", r.Config, r.Error)
		assert.Equal(t, 1+1+3, r.RunsChecked, "every run of every configuration is checked")
	}
	assert.Greater(t, recs[0].SetupS, 0.0, "the first record carries the set-up")
	assert.Zero(t, recs[1].SetupS, "later configurations reuse the data")

	plain, stderr, err := runTuned(t, bin)
	require.NoError(t, err, stderr)
	require.Len(t, plain, 1)
	assert.Nil(t, plain[0].Config, "without --config: the generated values, no configuration in the record")
}

// A configuration the program cannot take is a harness error naming it.
func TestBadConfigurationsAreErrors(t *testing.T) {
	bin := spmvHost(t)
	for _, c := range []struct{ arg, want string }{
		{"rows_per_tem=8", "rows_per_tem is no run-time tunable of this program (it reads: rows_per_team"},
		{"rows_per_team=0", "tunables are positive: rows_per_team=0"},
		{"rows_per_team", "name=value pairs"},
		{"rows_per_team=4,rows_per_team=8", "names a tunable twice: rows_per_team"},
	} {
		_, stderr, err := runTuned(t, bin, "--config", c.arg)
		require.Error(t, err, c.arg)
		assert.Contains(t, stderr, c.want, c.arg)
	}
}

// defaulted is a kernel record with its configuration and the defaults in effect.
type defaulted struct {
	tuned
	Defaults map[string]int64 `json:"defaults"`
}

// --defaults replaces the generated values, alone or under the tunables a
// configuration leaves out, and the record names the defaults in effect.
func TestDefaults(t *testing.T) {
	bin := spmvHost(t)
	read := func(args ...string) []defaulted {
		ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"--size", "12", "--reps", "3", "--warmup", "1", "--flush-l2", "off"}, args...)...)
		cmd.Env = append(os.Environ(), "OMP_NUM_THREADS=2", "OMP_WAIT_POLICY=passive")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		require.NoError(t, err, stderr.String())
		var recs []defaulted
		for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
			var r defaulted
			if json.Unmarshal(line, &r) == nil && r.Kind == "kernel" {
				recs = append(recs, r)
			}
		}
		return recs
	}
	recs := read("--defaults", "rows_per_team=7")
	require.Len(t, recs, 1)
	assert.True(t, recs[0].Verified, recs[0].Error)
	assert.Equal(t, map[string]int64{"rows_per_team": 7}, recs[0].Defaults)
	assert.Nil(t, recs[0].Config, "defaults are no configuration")

	// A configuration that names the tunable replaces its default; the record
	// then carries only the defaults still in effect.
	recs = read("--defaults", "rows_per_team=7,team_size=2", "--config", "rows_per_team=3", "--config", "vector_size=2")
	require.Len(t, recs, 2)
	assert.Equal(t, map[string]int64{"team_size": 2}, recs[0].Defaults)
	assert.Equal(t, map[string]int64{"rows_per_team": 7, "team_size": 2}, recs[1].Defaults)
	for _, r := range recs {
		assert.True(t, r.Verified, "%v %v: %s", r.Config, r.Defaults, r.Error)
	}

	// A default the program does not read (a team launch with scratch takes
	// its teams by occupancy, not max_teams) is not in effect: it runs, and
	// the record names only the defaults it read.
	recs = read("--defaults", "max_teams=1584,rows_per_team=7")
	require.Len(t, recs, 1)
	assert.True(t, recs[0].Verified, recs[0].Error)
	assert.Equal(t, map[string]int64{"rows_per_team": 7}, recs[0].Defaults)

	_, stderr, err := runTuned(t, bin, "--defaults", "rows_per_team=0")
	require.Error(t, err)
	assert.Contains(t, stderr, "--defaults: tunables are positive")
}
