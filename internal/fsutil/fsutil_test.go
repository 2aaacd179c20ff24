package fsutil

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWriteFileReplacesAndLeavesNoTemp(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub", "a.json")
	for _, s := range []string{"one", "two"} {
		if err := WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(p); string(b) != s {
			t.Fatalf("got %q, want %q", b, s)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(p))
	if len(entries) != 1 {
		t.Fatalf("temporary files left: %v", entries)
	}
}

func TestPortableDropsTheWorkingDirectory(t *testing.T) {
	wd := t.TempDir()
	t.Chdir(wd)
	for in, want := range map[string]string{
		wd + "/build/clang22-sm90/axpby.kk-omp-a --size 7":    "build/clang22-sm90/axpby.kk-omp-a --size 7",
		"clang++ -I" + wd + "/.toolchains/llvm22/include -O3": "clang++ -I.toolchains/llvm22/include -O3",
		"portmatrix -root " + wd + " -out results/x":          "portmatrix -root . -out results/x",
		"--ref-cache=" + wd:                                      "--ref-cache=.",
		wd + "2/build/x " + wd + "-old/y":                        wd + "2/build/x " + wd + "-old/y",
		"/usr/lib/llvm-19/lib --libomptarget-nvptx-bc-path=/opt": "/usr/lib/llvm-19/lib --libomptarget-nvptx-bc-path=/opt",
	} {
		assert.Equal(t, want, Portable(in), in)
	}
}
