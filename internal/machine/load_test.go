package machine

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/portmatrix/portmatrix/internal/diag"
)

var update = flag.Bool("update", false, "rewrite golden files")

// repoMachines is the shipped models' folder.
var repoMachines = filepath.Join("..", "..", Dir)

func loadShipped(t *testing.T) *Set {
	t.Helper()
	s, err := Load(repoMachines)
	if err != nil {
		t.Fatalf("shipped machine models:\n%v", err)
	}
	return s
}

func TestShippedModelsLoad(t *testing.T) {
	s := loadShipped(t)
	for _, want := range []string{"h100-sxm5-80gb", "h200-sxm-141gb", "a100-sxm4-40gb", "a100-sxm4-80gb", "mi250x-gcd", "mi300a", "build-host-xeon-kvm", "x86-64-generic"} {
		m, err := s.Get(want)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		for name, v := range m.Values {
			if m.Sources[v.Source] == "" {
				t.Errorf("%s: %s cites %q, which has no citation", m.Name, name, v.Source)
			}
		}
	}
}

// Models of one architecture agree on the compute-capability numbers, so a
// typo in one file shows as a disagreement with its sibling.
func TestSameArchSameLimits(t *testing.T) {
	s := loadShipped(t)
	perArch := []string{"warp_size", "max_threads_per_block", "max_block_dims", "max_grid_dims", "max_threads_per_sm",
		"max_warps_per_sm", "max_blocks_per_sm", "sm_sub_partitions", "registers_per_sm", "registers_per_block",
		"max_registers_per_thread", "register_alloc_unit", "shared_memory_per_sm_bytes", "shared_memory_per_block_bytes",
		"shared_memory_per_block_optin_bytes", "shared_memory_reserved_per_block_bytes", "shared_memory_alloc_unit_bytes"}
	first := map[string]*Model{}
	for _, m := range s.Models {
		if m.Kind != KindGPU {
			continue
		}
		f, ok := first[m.Arch]
		if !ok {
			first[m.Arch] = m
			continue
		}
		for _, name := range perArch {
			a, b := f.Values[name].Ints, m.Values[name].Ints
			if ints(a) != ints(b) {
				t.Errorf("%s %s: %s has %s, %s has %s", m.Arch, name, f.Name, ints(a), m.Name, ints(b))
			}
		}
	}
}

func TestLookup(t *testing.T) {
	s := loadShipped(t)
	for reported, want := range map[string]string{
		"NVIDIA H200":                "h200-sxm-141gb",
		"NVIDIA H100 80GB HBM3":      "h100-sxm5-80gb",
		"nvidia  h100 80gb hbm3":     "h100-sxm5-80gb",
		"NVIDIA A100-SXM4-40GB":      "a100-sxm4-40gb",
		"AMD Instinct MI250X":        "mi250x-gcd",
		"Intel(R) Xeon(R) Processor": "build-host-xeon-kvm",
	} {
		m, ok := s.ByReported(reported)
		if !ok || m.Name != want {
			t.Errorf("ByReported(%q) = %v, %v; want %s", reported, m, ok, want)
		}
	}
	if m, ok := s.ByReported("NVIDIA GeForce RTX 4090"); ok {
		t.Errorf("ByReported found %s for a device no model reports", m.Name)
	}
	_, err := s.Get("h200-sxm-14gb")
	if err == nil || !strings.Contains(err.Error(), `did you mean "h200-sxm-141gb"?`) {
		t.Errorf("Get of a typo: %v", err)
	}
}

// TestBadInput loads testdata/bad/*.yaml and compares every error with
// testdata/bad.golden: positioned, collected, sorted.
func TestBadInput(t *testing.T) {
	dir := filepath.Join("testdata", "bad")
	_, err := Load(dir)
	if err == nil {
		t.Fatal("bad models loaded without error")
	}
	for _, line := range strings.Split(err.Error(), "\n") {
		if !strings.HasPrefix(line, filepath.ToSlash(dir)+"/") {
			t.Errorf("unpositioned error %q", line)
		}
	}
	got := []byte(err.Error() + "\n")
	golden := filepath.Join("testdata", "bad.golden")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test -update)", err)
	}
	if string(got) != string(want) {
		t.Errorf("errors differ from %s (go test -update rewrites it):\n%s", golden, got)
	}
}

// FuzzParse: any input parses or fails with positioned errors, never panics.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(repoMachines, "*.yaml"))
	for _, p := range files {
		data, _ := os.ReadFile(p)
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := Parse("m.yaml", data)
		if err := diag.CheckPositioned(err, "m.yaml"); err != nil {
			t.Fatal(err)
		}
	})
}

// docs/machines.md explains every field a model may hold.
func TestDocsNameEveryField(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "machines.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, kind := range []string{KindGPU, KindCPU} {
		for _, f := range Fields(kind) {
			if !strings.Contains(string(doc), "`"+f[0]+"`") {
				t.Errorf("docs/machines.md does not explain %s field %q (%s)", kind, f[0], f[1])
			}
		}
	}
}
