package library

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/layout"
	"github.com/portmatrix/portmatrix/internal/testenv"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// The real thing with the releases in PM_DEPS: Kokkos (Serial + OpenMP) and
// RAJA (OpenMP) installed with g++ from variants/libraries.yaml into a
// temporary folder, each ending with its smoke program run, found by the
// gate, and a program of its own built against each with the install's flags
// and run. CI's libraries step installs the same with the CLI and leaves
// PM_DEPS unset for the tests.
func TestInstallHostLibrariesFromReleases(t *testing.T) {
	testenv.Long(t)
	deps := os.Getenv("PM_DEPS")
	if deps == "" {
		t.Skip("PM_DEPS is not set: it names the folder of the libraries' source releases (docs/libraries.md)")
	}
	if _, err := exec.LookPath("cmake"); err != nil {
		t.Skip("cmake not found")
	}
	root := filepath.Join("..", "..")
	all, err := toolchain.Load(layout.Path(root, layout.Toolchains), root)
	require.NoError(t, err)
	var gcc *toolchain.Toolchain
	for _, tc := range all {
		if tc.ID == "gcc-host" {
			gcc = tc
		}
	}
	require.NotNil(t, gcc)
	tb, err := toolchain.LoadTable(layout.Path(root, layout.Capabilities))
	require.NoError(t, err)
	toolchain.Discover(context.Background(), []*toolchain.Toolchain{gcc}, tb, toolchain.ExecProbe)
	if !gcc.Found() {
		t.Skip("gcc-host: " + gcc.Missing)
	}
	cat, err := Load(layout.Path(root, layout.Libraries), nil)
	require.NoError(t, err)
	dir := t.TempDir()
	var log strings.Builder
	res, err := InstallAll(context.Background(), cat, []*toolchain.Toolchain{gcc}, Options{Deps: deps, Dir: dir, Log: &log,
		Only: []string{"kokkos/openmp/gcc-host", "raja/openmp/gcc-host"}})
	t.Log(log.String())
	require.NoError(t, err)
	require.Len(t, res, 2)
	for _, r := range res {
		assert.Equal(t, Installed, r.Status, r.ID)
		t.Logf("%s installed in %.0f s", r.ID, r.Seconds)
	}
	programs := map[string]string{
		"kokkos": `#include <Kokkos_Core.hpp>
#include <cstdio>
int main(int argc, char* argv[]) {
  Kokkos::initialize(argc, argv);
  int bad;
  {
    using team = Kokkos::TeamPolicy<>::member_type;
    long sum = 0;
    Kokkos::parallel_reduce(Kokkos::TeamPolicy<>(100, Kokkos::AUTO), KOKKOS_LAMBDA(const team& m, long& s) {
      long part = 0;
      Kokkos::parallel_reduce(Kokkos::TeamThreadRange(m, 10), [&](int i, long& p) { p += m.league_rank() * 10 + i; }, part);
      Kokkos::single(Kokkos::PerTeam(m), [&] { s += part; });
    }, sum);
    std::printf("teams sum=%ld\n", sum);
    bad = sum != 999L * 1000 / 2;
  }
  Kokkos::finalize();
  return bad;
}
`,
		"raja": `#include <RAJA/RAJA.hpp>
#include <cstdio>
int main() {
  RAJA::ReduceSum<RAJA::omp_reduce, long> sum(0);
  RAJA::forall<RAJA::omp_parallel_for_exec>(RAJA::TypedRangeSegment<long>(0, 1000), [=](long i) { sum += i; });
  std::printf("forall sum=%ld\n", sum.get());
  return sum.get() != 999L * 1000 / 2;
}
`}
	set := &Set{Catalog: cat, Dir: dir}
	for name, program := range programs {
		lk := set.Find(name, "openmp", gcc)
		require.NotNil(t, lk.Install, lk.Why)
		work := t.TempDir()
		src, bin := filepath.Join(work, "p.cpp"), filepath.Join(work, "p")
		require.NoError(t, os.WriteFile(src, []byte(program), 0o644))
		cmd := SmokeCommand(gcc, lk.Install, src, bin)
		t0 := time.Now()
		out, err := exec.Command(cmd[0], cmd[1:]...).CombinedOutput()
		require.NoError(t, err, "%s\n%s", strings.Join(cmd, " "), out)
		t.Logf("%s program built in %.1f s", name, time.Since(t0).Seconds())
		out, err = exec.Command(bin).CombinedOutput()
		require.NoError(t, err, string(out))
		assert.Contains(t, string(out), "sum=499500", name)
	}
}
