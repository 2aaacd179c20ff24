package results

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCreateRefusesAFolderWithARun(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, WriteRun(dir, Run{ID: "x", State: StateFinished}))
	_, err := Create(dir)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "never overwritten")
}

func TestTornLastLineSkippedAndRepaired(t *testing.T) {
	dir := t.TempDir()
	body := `{"kind":"kernel","cell":"a","size":1,"trial":2,"verified":true}` + "\n" + `{"kind":"kernel","cell":"a","si`
	require.NoError(t, os.WriteFile(filepath.Join(dir, JSONLFile), []byte(body), 0o644))
	var warn bytes.Buffer
	old := Warnings
	Warnings = &warn
	defer func() { Warnings = old }()
	recs, err := ReadJSONL(dir)
	require.NoError(t, err)
	require.Len(t, recs, 1)
	assert.Contains(t, warn.String(), filepath.Join(dir, JSONLFile)+":2: torn last line skipped")
	fin, err := Finished(dir)
	require.NoError(t, err)
	assert.Equal(t, map[Unit]bool{{Cell: "a", Size: 1, Trial: 2}: true}, fin)

	w, err := Open(dir)
	require.NoError(t, err)
	require.NoError(t, w.Add(Record{Kind: KindKernel, Cell: "a", Size: 2, Verified: true}))
	require.NoError(t, w.Close())
	require.NoError(t, w.Close(), "a second Close does nothing")
	warn.Reset()
	recs, err = ReadJSONL(dir)
	require.NoError(t, err)
	assert.Len(t, recs, 2)
	assert.Empty(t, warn.String())
	assert.Equal(t, 1, recs[1].Unit().Trial, "no trial reads as trial 1")
}

func TestRunningWithoutProcessIsInterrupted(t *testing.T) {
	host, _ := os.Hostname()
	r := Run{State: StateRunning, PID: os.Getpid()}
	r.Host.Hostname = host
	assert.Equal(t, StateRunning, r.Status())
	r.PID = 1 << 30
	assert.Equal(t, StateInterrupted, r.Status())
	assert.Equal(t, StateFinished, Run{}.Status(), "older folders")
}
