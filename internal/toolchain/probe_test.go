package toolchain

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/testenv"
)

// probe is one program of testdata/probes: it needs a capability ("-": no
// compiler is expected to accept it) and may add flags per family.
type probe struct {
	file, capability string
	flags            map[string][]string
}

func loadProbes(t *testing.T) []probe {
	files, err := filepath.Glob("testdata/probes/*.cpp")
	require.NoError(t, err)
	require.NotEmpty(t, files)
	var out []probe
	for _, f := range files {
		p := probe{file: f, flags: map[string][]string{}}
		fh, err := os.Open(f)
		require.NoError(t, err)
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "// capability: "); ok {
				p.capability = strings.TrimSpace(v)
			}
			if v, ok := strings.CutPrefix(line, "// flags "); ok {
				fam, fl, _ := strings.Cut(v, ":")
				p.flags[fam] = strings.Fields(fl)
			}
		}
		fh.Close()
		require.NotEmpty(t, p.capability, "%s: no '// capability:' line", f)
		out = append(out, p)
	}
	return out
}

// installed discovers the repository's toolchains on this machine.
func installed(t *testing.T) ([]*Toolchain, *Table) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	tcs, err := Load(filepath.Join(root, "toolchains.yaml"), root)
	require.NoError(t, err)
	tb := table(t)
	Discover(context.Background(), tcs, tb, ExecProbe)
	return tcs, tb
}

func compileProbe(t *testing.T, tc *Toolchain, p probe, out string) (bool, string) {
	args := append([]string{}, tc.Flags...)
	args = append(args, p.flags[tc.Family]...)
	// -Werror: clang < 22 ignores an unknown clause with a warning only.
	args = append(args, "-Werror", "-o", out, p.file)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	b, err := exec.CommandContext(ctx, tc.Path, args...).CombinedOutput()
	return err == nil, string(b)
}

// TestProbes compiles and links each probe with every installed OpenMP
// target toolchain and checks that the capability table agrees with the
// compiler: a gate is on exactly where its probe builds, and the forms no
// table row admits are rejected by every compiler. Toolchains not installed
// here are skipped, except those PM_REQUIRE_TOOLCHAINS names (CI names
// every one scripts/install-toolchains.sh gpu installs). PM_PROBE_OUT=<dir>
// keeps the programs as <dir>/<toolchain>/<probe>, to run on a GPU host.
func TestProbes(t *testing.T) {
	testenv.Long(t) // compiles programs
	probes := loadProbes(t)
	tcs, tb := installed(t)
	for _, p := range probes {
		if p.capability != "-" {
			require.True(t, tb.Has(p.capability), "%s: capability %q is not in the table", p.file, p.capability)
		}
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, tc := range tcs {
		t.Run(tc.ID, func(t *testing.T) {
			if !tc.Found() {
				if slices.Contains(strings.Split(os.Getenv("PM_REQUIRE_TOOLCHAINS"), ","), tc.ID) {
					t.Fatalf("PM_REQUIRE_TOOLCHAINS names %s, which is not usable: %s", tc.ID, tc.Missing)
				}
				t.Skipf("not installed: %s", tc.Missing)
			}
			if !tc.Builds("omptarget") || !tc.GPU() {
				t.Skip("no OpenMP offload build")
			}
			for _, p := range probes {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sem <- struct{}{}
					defer func() { <-sem }()
					name := strings.TrimSuffix(filepath.Base(p.file), ".cpp")
					bin := filepath.Join(t.TempDir(), name)
					if keep := os.Getenv("PM_PROBE_OUT"); keep != "" {
						// Kept for a GPU host: each probe checks its result and exits 0 when right.
						bin = filepath.Join(keep, tc.ID, name)
						require.NoError(t, os.MkdirAll(filepath.Dir(bin), 0o755))
					}
					ok, log := compileProbe(t, tc, p, bin)
					want := p.capability != "-" && tc.Caps[p.capability]
					t.Logf("%s %s: builds=%v table=%v %s", tc.ID, name, ok, want, firstError(log))
					assert.Equal(t, want, ok, "%s with %s %s: the table says %v, the compiler %s:\n%s",
						name, tc.Family, tc.VersionString(), want, map[bool]string{true: "accepts it", false: "rejects it"}[ok], log)
				}()
			}
			wg.Wait()
		})
	}
}

func firstError(log string) string {
	for _, l := range strings.Split(log, "\n") {
		if strings.Contains(l, "error") {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// TestProbeCapabilities: every GPU capability of the llvm family has a probe,
// but for a policy gate (a bound the project chose, e.g. as a paper draws it).
func TestProbeCapabilities(t *testing.T) {
	have := map[string]bool{}
	for _, p := range loadProbes(t) {
		have[p.capability] = true
	}
	for _, c := range table(t).Caps {
		if _, ok := c.When["llvm"]; ok && len(c.Targets) == 1 && c.Targets[0] == "gpu" && c.Policy == "" {
			assert.True(t, have[c.Name], "capability %s has no probe in testdata/probes", c.Name)
		}
	}
}

// cubinLayout reads an NVIDIA cubin's ELF header: the ABI version
// (e_ident[EI_ABIVERSION]) and the SM number. CUDA < 13 writes ABI version 7
// with the SM in e_flags bits 0-7 (sm_90: 0x5a); the new ABI (CUDA 13 for every
// SM, 12.8/12.9 for sm_100 and later) writes version 8 with the SM in bits
// 8-15 (llvm/llvm-project issue 159088, PRs 149534 and 159354).
func cubinLayout(b []byte) (abi int, sm int, err error) {
	if len(b) < 64 || string(b[:4]) != "\x7fELF" || b[4] != 2 {
		return 0, 0, fmt.Errorf("not an ELF64 file")
	}
	if m := binary.LittleEndian.Uint16(b[18:]); m != 190 { // EM_CUDA
		return 0, 0, fmt.Errorf("e_machine %d is not EM_CUDA", m)
	}
	abi = int(b[8])
	flags := binary.LittleEndian.Uint32(b[48:])
	if abi >= 8 {
		return abi, int(flags>>8) & 0xff, nil
	}
	return abi, int(flags & 0xff), nil
}

func TestCubinLayout(t *testing.T) {
	// From issue 159088: CUDA 13.0 ptxas, sm_75.
	h := make([]byte, 64)
	copy(h, "\x7fELF\x02\x01\x01\x41\x08")
	binary.LittleEndian.PutUint16(h[18:], 190)
	binary.LittleEndian.PutUint32(h[48:], 0x6004B04)
	abi, sm, err := cubinLayout(h)
	require.NoError(t, err)
	assert.Equal(t, []int{8, 75}, []int{abi, sm})
	h[8] = 7
	binary.LittleEndian.PutUint32(h[48:], 0x5a055a)
	abi, sm, err = cubinLayout(h)
	require.NoError(t, err)
	assert.Equal(t, []int{7, 90}, []int{abi, sm})
}

// TestBreakEvidence builds the device object of each installed LLVM offload
// toolchain with the ptxas it uses and checks the break against the cubin:
// a toolchain the table calls usable must emit the layout its runtime reads
// (old ABI for LLVM < 21), and one the table calls broken must emit the new one.
func TestBreakEvidence(t *testing.T) {
	testenv.Long(t) // compiles programs
	tcs, _ := installed(t)
	for _, tc := range tcs {
		t.Run(tc.ID, func(t *testing.T) {
			if !tc.Found() || tc.Family != "llvm" || !tc.GPU() || tc.CUDAFrom != "ptxas" {
				t.Skip("not an installed LLVM offload toolchain")
			}
			out := filepath.Join(t.TempDir(), "probe.cubin")
			args := append(append([]string{}, tc.Flags...), "--offload-device-only", "-c", "-o", out, "testdata/probes/ompx_dyn_cgroup_mem.cpp")
			b, err := exec.Command(tc.Path, args...).CombinedOutput()
			require.NoError(t, err, string(b))
			cubin, err := os.ReadFile(out)
			require.NoError(t, err)
			abi, sm, err := cubinLayout(cubin)
			require.NoError(t, err)
			t.Logf("%s (ptxas %s): cubin ABI version %d, sm_%d; broken=%q", tc.ID, cudaString(tc), abi, sm, tc.Broken)
			assert.Equal(t, strings.TrimPrefix(tc.Target, "sm_"), fmt.Sprint(sm))
			if tc.Version.Segments()[0] < 21 {
				assert.Equal(t, abi >= 8, tc.Broken != "", "LLVM %s reads only the old cubin layout", tc.VersionString())
			} else {
				assert.Empty(t, tc.Broken)
			}
		})
	}
}
