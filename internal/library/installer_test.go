package library

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// A fix must find its text exactly once: none or twice is an error naming
// the fix, where it is written, and the file; fixes before it stay applied.
func TestApplyFixes(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "core"), 0o755))
	file := filepath.Join(dir, "core", "a.hpp")
	require.NoError(t, os.WriteFile(file, []byte("call(x, 1);\ncall(y, 2);\ncall(y, 2);\n"), 0o644))
	at := diag.Pos{File: "variants/libraries.yaml", Line: 40, Col: 9}
	ok := Fix{Name: "first", File: "core/a.hpp", Find: "call(x, 1);\n", Replace: "#if V\ncall(x, 1, 0);\n#endif\n", Pos: at}
	names, err := ApplyFixes(dir, []Fix{ok})
	require.NoError(t, err)
	assert.Equal(t, []string{"first"}, names)
	b, _ := os.ReadFile(file)
	assert.Equal(t, "#if V\ncall(x, 1, 0);\n#endif\ncall(y, 2);\ncall(y, 2);\n", string(b))

	twice := Fix{Name: "twice", File: "core/a.hpp", Find: "call(y, 2);", Replace: "z", Pos: at}
	_, err = ApplyFixes(dir, []Fix{twice})
	require.Error(t, err)
	assert.Equal(t, `variants/libraries.yaml:40:9: fix "twice": its find text occurs 2 times in core/a.hpp, not once (make it longer)`, err.Error())

	gone := Fix{Name: "gone", File: "core/a.hpp", Find: "call(x, 1);\n", Replace: "z", Pos: at}
	names, err = ApplyFixes(dir, []Fix{{Name: "y", File: "core/a.hpp", Find: "call(y, 2);\ncall(y, 2);", Replace: "w", Pos: at}, gone})
	require.Error(t, err)
	assert.Equal(t, []string{"y"}, names)
	assert.Equal(t, `variants/libraries.yaml:40:9: fix "gone": its find text does not occur in core/a.hpp (a changed release? check the fix against it)`, err.Error())

	_, err = ApplyFixes(dir, []Fix{{Name: "nofile", File: "core/b.hpp", Find: "x", Pos: at}})
	require.Error(t, err)
	assert.Contains(t, err.Error(), `variants/libraries.yaml:40:9: fix "nofile": open `)
}

func TestCheckSHA256(t *testing.T) {
	file := filepath.Join(t.TempDir(), "r.tar.xz")
	require.NoError(t, os.WriteFile(file, []byte("release"), 0o644))
	sum := sha256.Sum256([]byte("release"))
	assert.NoError(t, CheckSHA256(file, hex.EncodeToString(sum[:])))
	err := CheckSHA256(file, strings.Repeat("0", 64))
	require.Error(t, err)
	assert.Equal(t, fmt.Sprintf("%s: sha256 is %x, variants/libraries.yaml says %s: not the release it names (a damaged or other file)", file, sum, strings.Repeat("0", 64)), err.Error())
}

// gxx is g++ found and its version read, as toolchain discovery does.
func gxx(t *testing.T) *toolchain.Toolchain {
	t.Helper()
	tc := &toolchain.Toolchain{ID: "gcc-host", Family: "gcc", Commands: []string{"g++"}, Target: "host", Devices: []string{"host"},
		Flags: []string{"-O2", "-std=c++17"}, Enabled: true}
	toolchain.Discover(context.Background(), []*toolchain.Toolchain{tc}, &toolchain.Table{}, toolchain.ExecProbe)
	if !tc.Found() {
		t.Skip("g++: " + tc.Missing)
	}
	return tc
}

// tinyRelease packs a CMake project of one static library into
// deps/tiny-1.0.tar.xz and returns its sha256.
func tinyRelease(t *testing.T, deps string) string {
	t.Helper()
	src := filepath.Join(t.TempDir(), "tiny-1.0")
	require.NoError(t, os.MkdirAll(src, 0o755))
	files := map[string]string{
		"CMakeLists.txt": "cmake_minimum_required(VERSION 3.13)\nproject(tiny CXX)\nadd_library(tiny tiny.cpp)\n" +
			"install(TARGETS tiny ARCHIVE DESTINATION lib)\ninstall(FILES tiny.hpp DESTINATION include)\n",
		"tiny.hpp": "int tiny_answer();\n",
		"tiny.cpp": "#include \"tiny.hpp\"\nint tiny_answer() { return ANSWER; }\n#define UNUSED 0\n",
	}
	for name, text := range files {
		require.NoError(t, os.WriteFile(filepath.Join(src, name), []byte(text), 0o644))
	}
	out, err := exec.Command("tar", "-C", filepath.Dir(src), "-cJf", filepath.Join(deps, "tiny-1.0.tar.xz"), "tiny-1.0").CombinedOutput()
	require.NoError(t, err, string(out))
	b, err := os.ReadFile(filepath.Join(deps, "tiny-1.0.tar.xz"))
	require.NoError(t, err)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// The installer end to end on a tiny CMake release with g++: a fix makes it
// build (ANSWER is defined by nothing else), install.json comes last with the
// flags a consumer needs, the smoke program is built with them and run; a
// second run does nothing; a wrong sha256 or a fix that no longer matches
// fails that install alone, leaving no install.json.
func TestInstallTinyRelease(t *testing.T) {
	for _, tool := range []string{"cmake", "tar", "xz"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " not found")
		}
	}
	tc := gxx(t)
	deps, dir := t.TempDir(), t.TempDir()
	sum := tinyRelease(t, deps)
	file := func(sha, find string) string {
		return `libraries:
  - name: tiny
    version: "1.0"
    source: tiny-1.0.tar.xz
    sha256: ` + sha + `
    dir: tiny-1.0
    cmake: [-DCMAKE_BUILD_TYPE=Release]
    fixes:
      - name: answer
        file: tiny.cpp
        why: the release leaves ANSWER undefined
        find: "` + find + `"
        replace: "#define ANSWER 42\n#include"
    backends:
      - name: host
        toolchains: [gcc-host]
        compile_flags: ["-I${PREFIX}/include", -DTINY]
        libs: [tiny]
        link_flags: [-lm]
        smoke: |
          #include <tiny.hpp>
          #include <cstdio>
          int main() { std::printf("%d\n", tiny_answer()); return tiny_answer() != 42; }
`
	}
	install := func(text string) ([]Result, string, error) {
		c, err := Parse("libraries.yaml", []byte(text), nil)
		require.NoError(t, err)
		var log strings.Builder
		res, err := InstallAll(context.Background(), c, []*toolchain.Toolchain{tc}, Options{Deps: deps, Dir: dir, Jobs: 2, Log: &log,
			Now: func() time.Time { return time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC) }})
		return res, log.String(), err
	}
	prefix := filepath.Join(dir, "tiny-1.0", "host-gcc-host")

	res, log, err := install(file(sum, "#include"))
	require.NoError(t, err, log)
	require.Len(t, res, 1)
	assert.Equal(t, Installed, res[0].Status, log)
	assert.Contains(t, log, "libraries [1/1] installed tiny/host/gcc-host in ")
	in, err := ReadInstall(prefix)
	require.NoError(t, err)
	assert.Equal(t, "tiny", in.Name)
	assert.Equal(t, "1.0", in.Version)
	assert.Equal(t, "host", in.Backend)
	assert.Equal(t, "gcc-host", in.Toolchain)
	assert.Equal(t, tc.Path, in.Compiler)
	assert.Equal(t, tc.Version.String(), in.CompilerVersion)
	assert.Equal(t, sum, in.SHA256)
	assert.Equal(t, []string{"answer"}, in.Fixes)
	assert.Equal(t, []string{"-I" + prefix + "/include", "-DTINY"}, in.CompileFlags)
	assert.Equal(t, []string{"-L" + filepath.Join(prefix, "lib"), "-ltiny", "-lm"}, in.LinkFlags)
	assert.Equal(t, "2026-11-28T12:00:00Z", in.Date)
	b, _ := os.ReadFile(filepath.Join(prefix, LogFile))
	assert.Contains(t, string(b), "applied: answer")
	assert.Contains(t, string(b), "== smoke check")

	// Found by the gate, with the toolchain's version.
	c, _ := Parse("libraries.yaml", []byte(file(sum, "#include")), nil)
	lk := (&Set{Catalog: c, Dir: dir}).Find("tiny", "host", tc)
	require.NotNil(t, lk.Install, lk.Why)
	assert.Equal(t, prefix, lk.Install.Prefix)

	res, log, err = install(file(sum, "#include"))
	require.NoError(t, err)
	assert.Equal(t, Current, res[0].Status, log)

	// Another sha256: not the release named; no install.json stays.
	res, log, err = install(file(strings.Repeat("a", 64), "#include"))
	require.Error(t, err)
	assert.Equal(t, Failed, res[0].Status)
	assert.Contains(t, res[0].Reason, "sha256 is "+sum+", variants/libraries.yaml says "+strings.Repeat("a", 64))
	assert.Contains(t, log, "libraries [1/1] failed    tiny/host/gcc-host: ")

	// A fix whose text is gone: failed, its log kept, no install.json.
	res, _, err = install(file(sum, "#include <nothing>"))
	require.Error(t, err)
	assert.Equal(t, Failed, res[0].Status)
	assert.Contains(t, res[0].Reason, `libraries.yaml:9:9: fix "answer": its find text does not occur in tiny.cpp`)
	assert.NoFileExists(t, filepath.Join(prefix, InstallFile))
	assert.FileExists(t, filepath.Join(prefix, LogFile))
	lk = (&Set{Catalog: c, Dir: dir}).Find("tiny", "host", tc)
	assert.Nil(t, lk.Install)
	assert.Contains(t, lk.Why, "library tiny 1.0 (backend host) for gcc-host is not installed: its install failed (log "+filepath.Join(prefix, LogFile)+")")
}

// A backend keeps the toolchain flags its library's build needs: a flag
// ending in * is a prefix (paths included), and a flag taking the next as
// its argument keeps it (clang 22's -Xoffload-linker -L<device runtime>).
func TestKeepFlags(t *testing.T) {
	flags := []string{"-O3", "-std=c++17", "-fopenmp", "--offload-arch=sm_90", "-I/r/.toolchains/llvm22/include", "-L/r/.toolchains/llvm22/lib",
		"--libomptarget-nvptx-bc-path=/r/.toolchains/llvm22/lib/nvptx64-nvidia-cuda", "-Xoffload-linker", "-L/r/.toolchains/llvm22/lib/nvptx64-nvidia-cuda",
		"-Wno-unknown-cuda-version"}
	kept := keepFlags(flags, []string{"--libomptarget-nvptx-bc-path=*", "-I*", "-L*", "-Xoffload-linker", "-Wno-unknown-cuda-version"})
	assert.Equal(t, []string{"-I/r/.toolchains/llvm22/include", "-L/r/.toolchains/llvm22/lib",
		"--libomptarget-nvptx-bc-path=/r/.toolchains/llvm22/lib/nvptx64-nvidia-cuda", "-Xoffload-linker", "-L/r/.toolchains/llvm22/lib/nvptx64-nvidia-cuda",
		"-Wno-unknown-cuda-version"}, kept)
	assert.False(t, FlagMatch("-fopenmp", "-fopenmp-targets=x"))
	assert.True(t, FlagMatch("--offload-arch=*", "--offload-arch=sm_90"))
}
