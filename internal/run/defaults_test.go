package run

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/results"
)

// SPMV kk-ompx as clang 19 builds it for sm_90: the team launch (40
// registers) and a harness kernel, as the manifest records them.
func kkOmpx(target string) build.Entry {
	return build.Entry{ID: "spmv.kk-ompx.clang19-sm90", Kernel: "spmv", Variant: "kk-ompx", Toolchain: "clang19-sm90", Target: target,
		Binary: filepath.Join("tc", "args"), Tunables: map[string]int64{"rows_per_team": 16, "team_size": 16, "vector_size": 8},
		Blocks: []int64{16 * 8}, ModelDefaults: map[string]string{"max_teams": "occupancy"},
		Kernels: []build.Kernel{
			{Name: "__omp_offloading_fe00_54e279__ZN4pmkk9ompx_impl11launch_teamILb1E_l257", Arch: "sm_90", Registers: 40},
			{Name: "__omp_offloading_fe00_54e280__ZN2pm6device10stream_dotEPKdS2_l_l209", Arch: "sm_90", Registers: 78, SharedBytes: 144},
		}}
}

// On the H200 the model gives Fig. 12's bound, 12 blocks x 132 SMs, and the
// program gets it as a default; the run names the model.
func TestModelDefaults(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	m, note := Model(root, "NVIDIA H200")
	require.NotNil(t, m, note)
	d, notes := ModelDefaults(m, kkOmpx("sm_90"))
	assert.Equal(t, map[string]int64{"max_teams": 1584}, d)
	assert.Empty(t, notes)

	dir := t.TempDir()
	bin := filepath.Join(dir, "tc", "args")
	require.NoError(t, os.MkdirAll(filepath.Dir(bin), 0o755))
	require.NoError(t, os.WriteFile(bin, []byte("#!/bin/sh\necho '{\"kind\":\"kernel\",\"size\":1,\"verified\":true,\"error\":\"'\"$*\"'\"}'\n"), 0o755))
	opt := Options{BuildDir: dir, Reps: 3, Warmup: 1, Timeout: 5 * time.Second, Model: m}
	w, err := results.Create(filepath.Join(dir, "out"))
	require.NoError(t, err)
	plain := kkOmpx("sm_90")
	plain.ID, plain.ModelDefaults = "spmv.kk-ompx-opt.clang19-sm90", nil
	require.NoError(t, Cells(context.Background(), []Job{{Entry: kkOmpx("sm_90"), Sizes: []int64{7}}, {Entry: plain, Sizes: []int64{7}}}, opt, w))
	require.NoError(t, w.Close())
	recs, err := results.ReadJSONL(w.Dir)
	require.NoError(t, err)
	require.Len(t, recs, 2)
	assert.Contains(t, recs[0].Error, " --defaults max_teams=1584")
	assert.NotContains(t, recs[1].Error, "--defaults", "a variant without model defaults keeps its generated values")

	name, notes := ModelProvenance(m, "", []Job{{Entry: kkOmpx("sm_90")}, {Entry: kkOmpx("sm_80")}})
	assert.Equal(t, "h200-sxm-141gb", name)
	require.Len(t, notes, 1)
	assert.Contains(t, notes[0], "built for sm_80")

	// No model for the GPU: no defaults, and run.json says why.
	m, note = Model(root, "NVIDIA GeForce GTX 480")
	assert.Nil(t, m)
	name, notes = ModelProvenance(m, note, []Job{{Entry: kkOmpx("sm_90")}})
	assert.Empty(t, name)
	require.Len(t, notes, 1)
	assert.True(t, strings.HasPrefix(notes[0], `no machine model reports "NVIDIA GeForce GTX 480"`), notes[0])
}
