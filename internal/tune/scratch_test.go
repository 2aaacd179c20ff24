package tune

import (
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/spec"
	"github.com/portmatrix/portmatrix/internal/testenv"
)

// TestScratchConstsAreTheProgram compiles the harness on the host and prints
// each term of tuning.yaml's scratch_consts as the generated program sees it
// (the TestSNAP system S of the kernel's sizes, as its run_size makes it):
// a declared value the program does not have would prune, or admit, the
// wrong configurations.
func TestScratchConstsAreTheProgram(t *testing.T) {
	cxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++")
	}
	spaces, kernels, _ := project(t)
	byName := spec.ByName(kernels)
	var body strings.Builder
	type term struct {
		kernel, text string
		size         int64
	}
	var terms []term
	for _, name := range slices.Sorted(maps.Keys(spaces.Kernels)) {
		sc := spaces.Kernels[name]
		if len(sc.ScratchConsts) == 0 {
			continue
		}
		k := byName[name]
		require.NotNil(t, k, name)
		require.True(t, slices.ContainsFunc(k.Args, func(a spec.Arg) bool { return a.Type == "snap" && a.Name == "S" }),
			"%s: the test makes TestSNAP's S; teach it the kernel's arguments", name)
		var sizes []int64
		for _, set := range spec.SizeSets {
			sizes = append(sizes, k.Size.Sets[set]...)
		}
		slices.Sort(sizes)
		for _, size := range slices.Compact(sizes) {
			fmt.Fprintf(&body, "  {\n    pm::SnapSystem S_data(\"S\", pm::snap_input(%d));\n    const snap::System S = S_data.dev();\n", size)
			for _, text := range slices.Sorted(maps.Keys(sc.ScratchConsts)) {
				fmt.Fprintf(&body, "    std::printf(\"%%lld\\n\", (long long)(%s));\n", text)
				terms = append(terms, term{name, text, size})
			}
			body.WriteString("  }\n")
		}
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "consts.cpp")
	require.NoError(t, os.WriteFile(src, []byte("#include <cstdio>\n#include \"pm/device_host.hpp\"\n#include \"pm/harness.hpp\"\n#include \"snap/pm_snap.hpp\"\nint main() {\n"+body.String()+"}\n"), 0o644))
	bin := filepath.Join(dir, "consts")
	out, err := exec.Command(cxx, "-std=c++17", "-O0", "-I", filepath.Join("..", "..", "harness"), src, "-o", bin).CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command(bin).Output()
	require.NoError(t, err)
	got := strings.Fields(string(out))
	require.Len(t, got, len(terms))
	for i, tm := range terms {
		v, err := strconv.ParseInt(got[i], 10, 64)
		require.NoError(t, err)
		assert.Equal(t, spaces.Kernels[tm.kernel].ScratchConsts[tm.text], v, "%s size %d: %s", tm.kernel, tm.size, tm.text)
	}
}

// The generated program refuses a team launch over the limit before the
// runtime is called (pm::check_team_scratch, which every GPU team layer
// calls with the device's limit): on the host, with --team-shared-limit,
// TestSNAP's duarray (serial, the same scratch expressions every backend
// renders) dies one byte under the tuner's scratch_bytes, naming those
// bytes and the configuration, and runs and verifies at them: the tuner's
// arithmetic is the program's.
func TestProgramRefusesScratchOverTheLimit(t *testing.T) {
	testenv.Long(t) // builds TestSNAP's duarray and runs it at the limit and one byte under
	cxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++")
	}
	spaces, kernels, strategies := project(t)
	var v *matrix.Variant
	for _, mv := range matrix.Variants(strategies) {
		if mv.ID == "serial" {
			v = mv
		}
	}
	const size = 1
	cell, err := spaces.Cell(spec.ByName(kernels)["snap_duarray"], nil, v, size)
	require.NoError(t, err)
	env := maps.Clone(cell.env)
	env["snap_team"], env["scratch_level"] = spec.Value{I: 32, Int: true}, spec.Value{I: 0, Int: true}
	want, ok := cell.scratchBytes(env)
	require.True(t, ok)

	root := filepath.Join("..", "..")
	bin := filepath.Join(t.TempDir(), "snap_duarray")
	out, err := exec.Command(cxx, "-std=c++17", "-O1", "-fopenmp", "-I", filepath.Join(root, "harness"),
		filepath.Join(root, "generated", "snap_duarray", "serial.cpp"), "-o", bin).CombinedOutput()
	require.NoError(t, err, "%s", out)
	run := func(limit int64) (string, string, error) {
		var stdout, stderr strings.Builder
		cmd := exec.Command(bin, "--size", strconv.Itoa(size), "--reps", "1", "--warmup", "0",
			"--config", "snap_team=32,snap_vector=1", "--team-shared-limit", strconv.FormatInt(limit, 10))
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		return stdout.String(), stderr.String(), err
	}
	_, stderr, err := run(want - 1)
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit, stderr)
	assert.Equal(t, 2, exit.ExitCode())
	assert.Equal(t, fmt.Sprintf("portmatrix: snap_duarray: team scratch %d bytes at level 0 > --team-shared-limit's %d bytes per block (snap_team=32,snap_vector=1): a smaller team or scratch level 1 fits\n", want, want-1), stderr)
	stdout, stderr, err := run(want)
	require.NoError(t, err, stderr)
	assert.Contains(t, stdout, `"verified":true`)
}
