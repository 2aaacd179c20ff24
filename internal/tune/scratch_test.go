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

	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/spec"
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

// The harness refuses a team launch over the device's limit before the
// runtime is called, with the bytes the tuner computes for the
// configuration, the limit and the configuration (host build of the check
// every GPU team layer makes: pm::check_team_scratch).
func TestHarnessRefusesScratchOverTheLimit(t *testing.T) {
	cxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("no g++")
	}
	spaces, kernels, strategies := project(t)
	var v *matrix.Variant
	for _, mv := range matrix.Variants(strategies) {
		if mv.ID == "kk-cuda-2lvl" {
			v = mv
		}
	}
	cell, err := spaces.Cell(spec.ByName(kernels)["snap_duarray"], nil, v, 10)
	require.NoError(t, err)
	models, err := machine.Load(filepath.Join("..", "..", "machines"))
	require.NoError(t, err)
	h100, err := models.Get("h100-sxm5-80gb")
	require.NoError(t, err)
	limit := h100.GPU.SharedMemoryPerBlockOptin
	bytesAt := func(team int64) int64 {
		env := maps.Clone(cell.env)
		env["snap_team"], env["scratch_level"] = spec.Value{I: team, Int: true}, spec.Value{I: 0, Int: true}
		b, ok := cell.scratchBytes(env)
		require.True(t, ok)
		return b
	}
	fits, over := bytesAt(16), bytesAt(32)
	require.LessOrEqual(t, fits, limit)
	require.Greater(t, over, limit)
	src := fmt.Sprintf(`#include <cstdio>
#include "pm/device_host.hpp"
#include "pm/harness.hpp"
#include "pm/scratch.hpp"
int main() {
  const std::vector<std::pair<std::string, int64_t>> config{{"snap_team", 32}, {"snap_vector", 4}};
  pm::tuning().config = &config;
  pm::check_team_scratch("snap_duarray", %d, 0, %d);
  std::printf("fits\n");
  pm::check_team_scratch("snap_duarray", %d, 64, %d);
  std::printf("launched\n");
}
`, fits, limit, over, limit)
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "refuse.cpp"), []byte(src), 0o644))
	bin := filepath.Join(dir, "refuse")
	out, err := exec.Command(cxx, "-std=c++17", "-O0", "-I", filepath.Join("..", "..", "harness"), filepath.Join(dir, "refuse.cpp"), "-o", bin).CombinedOutput()
	require.NoError(t, err, "%s", out)
	var stdout, stderr strings.Builder
	cmd := exec.Command(bin)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var exit *exec.ExitError
	require.ErrorAs(t, err, &exit)
	assert.Equal(t, 2, exit.ExitCode())
	assert.Equal(t, "fits\n", stdout.String())
	assert.Equal(t, fmt.Sprintf("portmatrix: snap_duarray: team scratch %d bytes at level 0 and 64 bytes of the layer's own > the device's %d bytes per block (snap_team=32,snap_vector=4): a smaller team or scratch level 1 fits\n", over, limit), stderr.String())
}
