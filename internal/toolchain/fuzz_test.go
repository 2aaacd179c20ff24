package toolchain

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// The capability and toolchain loaders never panic and position every error
// (go test -fuzz=FuzzCapabilities / -fuzz=FuzzToolchains -fuzztime=10s).
func FuzzCapabilities(f *testing.F) {
	b, _ := os.ReadFile("../../variants/capabilities.yaml")
	f.Add(b)
	f.Add([]byte("capabilities:\n  - {name: a, when: {gcc: '>= 1'}, source: s}\nbreaks:\n  - {name: b, when: {llvm: '< 2'}, cuda: '>= x', reason: r, source: s}\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(dir, "c.yaml")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		tb, err := LoadTable(file)
		if err := diag.CheckPositioned(err, file); err != nil {
			t.Fatal(err)
		}
		if tb != nil {
			tb.Names()
		}
	})
}

func FuzzToolchains(f *testing.F) {
	b, _ := os.ReadFile("../../toolchains.yaml")
	f.Add(b)
	f.Add([]byte("toolchains:\n  - {id: a, family: gcc, commands: [g++], target: host, devices: [host], version: '1.x'}\n"))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(dir, "t.yaml")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Load(file, dir)
		if err := diag.CheckPositioned(err, file); err != nil {
			t.Fatal(err)
		}
	})
}
