package results

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Fields a newer writer adds survive a read and a write; known ones are typed.
func TestRecordKeepsUnknownFields(t *testing.T) {
	in := `{"kind":"stream","op":"triad","toolchain":"tc","gbps":3000.5,"trial":2,"gpu_uuid":"GPU-1","future":{"a":[1,2]},"note":"x"}`
	var r Record
	require.NoError(t, json.Unmarshal([]byte(in), &r))
	assert.Equal(t, KindStream, r.Kind)
	assert.Equal(t, OpTriad, r.Op)
	assert.Equal(t, 2, r.Trial)
	assert.Equal(t, "GPU-1", r.GPUUUID)
	assert.False(t, r.IsRoofline())
	assert.JSONEq(t, `{"a":[1,2]}`, string(r.Extra["future"]))
	out, err := json.Marshal(r)
	require.NoError(t, err)
	assert.JSONEq(t, in, string(out))
}

// An error record keeps verified:false and has no max_rel_err; a zero error is kept.
func TestRecordVerifiedAndError(t *testing.T) {
	out, err := json.Marshal(Record{Kind: KindKernel, Cell: "c", Size: 3, Error: "boom"})
	require.NoError(t, err)
	assert.JSONEq(t, `{"kind":"kernel","cell":"c","size":3,"verified":false,"error":"boom"}`, string(out))
	var r Record
	require.NoError(t, json.Unmarshal([]byte(`{"kind":"kernel","max_rel_err":0,"verified":true}`), &r))
	require.NotNil(t, r.MaxRelErr)
	assert.Equal(t, 0.0, *r.MaxRelErr)
}

// The committed H200 folder, written before these types, still loads whole.
func TestLoadCommittedGPUFolder(t *testing.T) {
	f, err := Load("../../results/archive/20261121-220700-nvidia-h200")
	require.NoError(t, err)
	assert.Len(t, f.Kernel, 355)
	assert.Len(t, f.Copy, 4)
	assert.Zero(t, f.Other)
	assert.Len(t, f.Builds, 128)
	c := f.Run.Cells
	assert.Equal(t, Cells{Total: 128, Built: 81, Cached: 13, Failed: 2, Skipped: 32, Ran: 94, Verified: 94, VerifiedMeasurements: 355}, c)
	assert.Nil(t, f.Run.Vocabulary)
	assert.Empty(t, f.Kernel[0].Extra, "every field of the old format is typed")
}

// Each status the build writes is classified by the row, the report's one
// reading of build.csv.
func TestBuildRowStatuses(t *testing.T) {
	for status, want := range map[string][2]bool{StatusBuilt: {}, StatusCached: {}, StatusFailed: {true, false}, StatusSkipped: {false, true}} {
		r := BuildRow{Status: status}
		assert.Equal(t, want, [2]bool{r.Failed(), r.Skipped()}, status)
	}
}

func TestRecordTuned(t *testing.T) {
	for line, want := range map[string]bool{
		`{"kind":"kernel","cell":"c"}`:                               false,
		`{"kind":"kernel","cell":"c","defaults":{"max_teams":1584}}`: false,
		`{"kind":"kernel","cell":"c","config":{"team_size":32}}`:     true,
		`{"kind":"kernel","cell":"c","tuned":true}`:                  true,
		`{"kind":"kernel","cell":"c","tuned":false}`:                 false,
	} {
		var r Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		if r.Tuned() != want {
			t.Errorf("%s: Tuned() = %v, want %v", line, r.Tuned(), want)
		}
	}
}
