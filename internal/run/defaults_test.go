package run

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/host"
	"github.com/portmatrix/portmatrix/internal/machine"
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
	m, note := Model(t.TempDir(), root, "NVIDIA H200", nil)
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
	m, note = Model(t.TempDir(), root, "NVIDIA GeForce GTX 480", nil)
	assert.Nil(t, m)
	name, notes = ModelProvenance(m, note, []Job{{Entry: kkOmpx("sm_90")}})
	assert.Empty(t, name)
	require.Len(t, notes, 1)
	assert.True(t, strings.HasPrefix(notes[0], `no machine model reports "NVIDIA GeForce GTX 480"`), notes[0])
}

// A build folder moved away from the tree finds, for each name a device
// reports, the model the tree finds: the GPUs the papers ran on, the host's
// CPU and a device no model reports. A build folder made before the build
// carried the models reads the tree's, with a line saying so.
func TestModelFromTheBuildFolderAlone(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	built := filepath.Join(t.TempDir(), "build")
	require.NoError(t, build.CopyMachines(built, filepath.Join(root, machine.Dir)))
	moved := filepath.Join(t.TempDir(), "gpu-host", "build")
	require.NoError(t, os.MkdirAll(filepath.Dir(moved), 0o755))
	require.NoError(t, os.Rename(built, moved))
	noTree := filepath.Join(t.TempDir(), "no-tree")
	tree, err := machine.Load(filepath.Join(root, machine.Dir))
	require.NoError(t, err)

	cpu := host.Probe(context.Background(), root, "0000000", func(context.Context, string, ...string) ([]byte, error) {
		return nil, errors.New("not run")
	}).Machine.CPU
	for _, name := range []string{"NVIDIA H200", "NVIDIA H100 80GB HBM3", "Intel(R) Xeon(R) Processor", cpu, "NVIDIA GeForce GTX 480"} {
		want, found := tree.ByReported(name)
		var log bytes.Buffer
		got, note := Model(moved, noTree, name, &log)
		assert.Empty(t, log.String(), name)
		if !found {
			assert.Nil(t, got, name)
			assert.Contains(t, note, "no machine model reports", name)
			continue
		}
		require.NotNil(t, got, "%s: %s", name, note)
		assert.Equal(t, want.Name, got.Name, name)
		assert.Equal(t, want.GPU, got.GPU, name)
		assert.Equal(t, want.CPU, got.CPU, name)
		if got.Kind == machine.KindGPU {
			d, notes := ModelDefaults(got, kkOmpx(got.Arch))
			wd, wnotes := ModelDefaults(want, kkOmpx(want.Arch))
			assert.Equal(t, wd, d, name)
			assert.Equal(t, wnotes, notes, name)
			assert.NotEmpty(t, d["max_teams"], name)
		}
	}

	// Without the tree, an older build folder has no models: the cells run
	// their generated launch values, and the log and run.json say why.
	old := t.TempDir()
	var log bytes.Buffer
	m, note := Model(old, noTree, "NVIDIA H200", &log)
	assert.Nil(t, m)
	assert.Contains(t, note, "no machine models")
	assert.Equal(t, 1, strings.Count(log.String(), "\n"))
	assert.Contains(t, log.String(), old+" has no machine models")
	log.Reset()
	m, _ = Model(old, root, "NVIDIA H200", &log)
	require.NotNil(t, m)
	assert.Equal(t, "h200-sxm-141gb", m.Name)
	assert.Contains(t, log.String(), "reading "+filepath.Join(root, machine.Dir))
}
