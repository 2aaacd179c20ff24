package tune

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The dry run's costs come from a tuning log under the tuning protocol,
// whatever protocol measured it: a configuration's calls are counted from
// its record and priced at the protocol's calls; a computed reference is
// a cost of its own, paid once, and a loaded one part of its process; a
// process line replaces the assumed start cost with what the process ran
// beyond its records.
func TestReadCostsUnderTheTuningProtocol(t *testing.T) {
	dir := t.TempDir()
	var log bytes.Buffer
	// Process 1, an earlier protocol: 1 warm-up, 5 reps, a sections run
	// (8 calls of 0.1 s each, 0.8 s measured); 5 s of set-up, 3 of them
	// the reference. It ran 7.3 s: 0.7 s beyond its records (6.6 s).
	log.WriteString("$ build/x/cgsolve.a --size 150 --configs <configs>\n")
	log.WriteString(`{"kind":"kernel","kernel":"cgsolve","size":150,"reps":5,"warmup":1,"median_s":0.1,"setup_s":5,"reference_s":3,"reference_cached":false,"measure_s":0.8,"sections":{"spmv":{}}}` + "\n")
	log.WriteString(`{"kind":"kernel","kernel":"cgsolve","size":150,"reps":5,"warmup":1,"median_s":0.1,"setup_s":0,"reference_s":0,"measure_s":0.8,"sections":{"spmv":{}}}` + "\n")
	LogProcess(&log, 2, 7.3)
	// Process 2, the tuning protocol: no warm-up, no sections; its
	// reference loaded (0.2 s); no process line.
	log.WriteString("$ build/x/cgsolve.b --size 150 --configs <configs>\n")
	log.WriteString(`{"kind":"kernel","kernel":"cgsolve","size":150,"reps":5,"warmup":0,"median_s":0.1,"setup_s":1.2,"reference_s":0.2,"reference_cached":true,"measure_s":0.6}` + "\n")
	require.NoError(t, os.WriteFile(filepath.Join(dir, LogFile), log.Bytes(), 0o644))

	costs, err := ReadCosts(dir)
	require.NoError(t, err)
	c := costs["cgsolve"][150]
	// At 0.1 s a call the protocol keeps 5 reps after its first run: 6 calls.
	assert.InDelta(t, 0.6, c.ConfigS, 1e-9, "0.1 s a call, 6 calls, for every record")
	assert.InDelta(t, 3, c.ReferenceS, 1e-9, "the one computed reference")
	// Process 1: 2 s of set-up beside its reference, 0.7 s beyond its
	// records; process 2: 1.2 s with the loaded reference, startS beyond.
	assert.InDelta(t, (2+0.7+1.2+startS)/2, c.ProcessS, 1e-9)

	assert.InDelta(t, 2*c.ProcessS+10*c.ConfigS+c.ReferenceS, c.Seconds(10, 2, true), 1e-9)
	assert.InDelta(t, 2*c.ProcessS+10*c.ConfigS, c.Seconds(10, 2, false), 1e-9, "a reference computed before is loaded")
}

// A slow call keeps the fewest reps the protocol allows; a fast one all.
func TestProtocolCalls(t *testing.T) {
	assert.Equal(t, 6, protocolCalls(0.01), "5 reps fit in TuneRepSeconds")
	assert.Equal(t, 1+3, protocolCalls(0.37), "a TestSNAP step: 2 fit, 3 kept")
	assert.Equal(t, 1+4, protocolCalls(0.25))
	assert.Equal(t, 1+3, protocolCalls(5))
}
