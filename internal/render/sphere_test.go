package render_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSphereLowering: an array with init {sphere: <field>} is filled from
// HOMMEXX's element geometry in main, the program includes pm/sphere.hpp
// for it (and only then), and both forms of an operator share the reference.
func TestSphereLowering(t *testing.T) {
	p := load(t)
	files, err := p.Render()
	require.NoError(t, err)
	for _, kernel := range []string{"hommexx_laplace_simple", "hommexx_laplace_simple_outer"} {
		src := string(files[filepath.Join("generated", kernel, "serial.cpp")])
		require.NotEmpty(t, src, kernel)
		assert.Contains(t, src, `#include "pm/sphere.hpp"`, kernel)
		assert.Contains(t, src, `dvv_data.fill_values(pm::sphere::field("dvv", dvv_data.size()));`, kernel)
		assert.Contains(t, src, `spheremp_data.fill_values(pm::sphere::field("spheremp", spheremp_data.size()));`, kernel)
		assert.Contains(t, src, "pm::sphere::ref::laplace_simple(num_elem, nlev, dvv, dinv, spheremp, rrearth, field, laplace);", kernel)
	}
	axpby := string(files[filepath.Join("generated", "axpby", "serial.cpp")])
	assert.NotContains(t, axpby, "pm/sphere.hpp")
}

// TestSphereGeometry builds harness/pm/sphere.hpp's checks (testdata/
// spherecheck.cpp) and runs them: the GLL derivative matrix, the cubed
// sphere's area and metric terms, and the operator references against
// calculus on the sphere (grad z, div grad z = -2z, curl grad = 0).
func TestSphereGeometry(t *testing.T) {
	cxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not found")
	}
	// Read the header here too: go test caches a result by the files the
	// test process opens, and the compiler's reads are not among them.
	_, err = os.ReadFile(filepath.Join(root, "harness", "pm", "sphere.hpp"))
	require.NoError(t, err)
	bin := filepath.Join(t.TempDir(), "spherecheck")
	out, err := exec.Command(cxx, "-std=c++17", "-O2", "-I", filepath.Join(root, "harness"), "-o", bin,
		filepath.Join("testdata", "spherecheck.cpp")).CombinedOutput()
	require.NoError(t, err, "%s", out)
	out, err = exec.Command(bin).CombinedOutput()
	t.Logf("spherecheck:\n%s", out)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	assert.GreaterOrEqual(t, len(lines), 15)
	for _, l := range lines {
		assert.True(t, strings.HasPrefix(l, "PASS "), l)
	}
}
