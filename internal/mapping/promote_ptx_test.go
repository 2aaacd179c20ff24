package mapping

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// sharedBufferShifts lists the instructions of NVPTX assembly that convert
// to a generic address (cvta.shared) a register computed from the team's
// dynamic shared buffer and another register: the buffer moved by a run-time
// offset. The buffer itself, or the buffer plus a constant, is no such line.
func sharedBufferShifts(ptx string) []string {
	base := map[string]bool{}  // registers holding DynamicSharedBuffer
	moved := map[string]bool{} // base plus or minus a register
	def := regexp.MustCompile(`^\s*(\S+)\s+(%rd\d+), (.*);`)
	var out []string
	for _, line := range strings.Split(ptx, "\n") {
		m := def.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		op, dst, args := m[1], m[2], strings.Split(m[3], ", ")
		delete(base, dst)
		delete(moved, dst)
		switch {
		case op == "mov.b64" && args[0] == "DynamicSharedBuffer":
			base[dst] = true
		case op == "cvta.shared.u64" && moved[args[0]]:
			out = append(out, strings.TrimSpace(line))
		case strings.HasPrefix(op, "add.s64") || strings.HasPrefix(op, "sub.s64") || strings.HasPrefix(op, "mad.lo.s64"):
			fromBase, byReg := false, false
			for _, a := range args {
				fromBase = fromBase || base[a]
				byReg = byReg || (strings.HasPrefix(a, "%rd") && !base[a])
			}
			if fromBase && byReg {
				moved[dst] = true
			}
		}
	}
	return out
}

// The ablation without promoted inputs faulted in every kk-omp variant on an
// H100 (docs/repro/scratch-rebase-out-of-window): its promoted work was a
// pointer shifted back by the team's offset, outside the scratch buffer, and
// clang 22 moved that shift into the shared address space before the
// generic conversion. Through pm::TeamSlice the device code converts only
// the buffer. Compiles the checked-in program's device code with the
// project's clang 22 (skipped without it).
func TestPromotedSliceStaysInTheSharedWindow(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	llvm := filepath.Join(root, ".toolchains", "llvm22")
	cxx, err := exec.LookPath("clang++-22")
	if err != nil {
		t.Skip("no clang++-22")
	}
	if _, err := os.Stat(filepath.Join(llvm, "lib", "nvptx64-nvidia-cuda", "libomptarget-nvptx.bc")); err != nil {
		t.Skip("no NVPTX device runtime in .toolchains/llvm22 (scripts/install-llvm22.sh)")
	}
	src := filepath.Join(root, "generated", "hommexx_laplace_simple_mapped_noinputs", "kk-omp-a.cpp")
	for _, f := range []string{src, filepath.Join(root, "harness", "pm", "scratch.hpp")} {
		_, err := os.ReadFile(f) // read here too, so that go test's cache knows them
		require.NoError(t, err)
	}
	// -save-temps keeps the device assembly of the compile, where the device
	// runtime is linked in and inlined (--offload-device-only -S links none).
	tmp := t.TempDir()
	cmd := exec.Command(cxx, "-O3", "-std=c++17", "-fopenmp", "--offload-arch=sm_90", "-c", "-save-temps=obj", "-o", filepath.Join(tmp, "k.o"),
		"-I"+filepath.Join(llvm, "include"), "--libomptarget-nvptx-bc-path="+filepath.Join(llvm, "lib", "nvptx64-nvidia-cuda"),
		"-Wno-unknown-cuda-version", "-Wno-pass-failed", "-DPM_HAS_CXX17=1", "-DPM_HAS_OMP_TARGET=1", "-DPM_HAS_OMPX_DYN_CGROUP_MEM=1",
		"-DPM_HAS_OMPX_TEAM_SHARED_SCRATCH=1", "-I"+filepath.Join(root, "harness"), src)
	cmd.Dir = tmp
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	ptx, err := os.ReadFile(filepath.Join(tmp, "kk-omp-a-openmp-nvptx64-nvidia-cuda-sm_90.s"))
	require.NoError(t, err)
	require.Contains(t, string(ptx), "DynamicSharedBuffer", "the team launch takes its scratch from team-shared memory")
	assert.Empty(t, sharedBufferShifts(string(ptx)), "cvta.shared of the shared buffer moved by a run-time offset")
}

// The scan itself, on the lines clang 22 gave for the shifted pointer and
// for the slice.
func TestSharedBufferShifts(t *testing.T) {
	shifted := `
	mov.b64 	%rd91, DynamicSharedBuffer;
	add.s64 	%rd34, %rd91, %rd90;
	cvta.shared.u64 	%rd92, %rd34;`
	assert.Equal(t, []string{"cvta.shared.u64 \t%rd92, %rd34;"}, sharedBufferShifts(shifted))
	madded := `
	mov.b64 	%rd40, DynamicSharedBuffer;
	mad.lo.s64 	%rd41, %rd9, -18432, %rd40;
	cvta.shared.u64 	%rd42, %rd41;`
	assert.Len(t, sharedBufferShifts(madded), 1)
	slice := `
	mov.b64 	%rd88, DynamicSharedBuffer;
	cvta.shared.u64 	%rd89, %rd88;
	add.s64 	%rd90, %rd88, 18432;
	cvta.shared.u64 	%rd91, %rd90;`
	assert.Empty(t, sharedBufferShifts(slice))
}
