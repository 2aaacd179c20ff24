package suite

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// matrix is a synthetic matrix: every kernel with every strategy with every
// toolchain, but the strategies a toolchain does not build and the kernels
// a strategy does not lower.
func matrix(kernels map[string]string, strategies []string, toolchains map[string]bool, skip func(k, s, t string) bool) []Cell {
	var out []Cell
	for k, fam := range kernels {
		for _, s := range strategies {
			for t, host := range toolchains {
				if skip != nil && skip(k, s, t) {
					continue
				}
				// three variants per strategy, as knob values make them: two
				// forms (the first knob) and a variation of one (a second knob)
				for _, v := range []string{s + "-a", s + "-b", s + "-b-wo"} {
					out = append(out, Cell{ID: k + "." + v + "." + t, Kernel: k, Family: fam, Strategy: s, Variant: v, Toolchain: t, Host: host, CPU: host,
						Form: !strings.HasSuffix(v, "-wo")})
				}
			}
		}
	}
	return out
}

var (
	kernels = map[string]string{"axpby": "002", "dot": "002", "spmv": "002", "cgsolve": "002",
		"snap_ui": "testsnap", "snap_yi": "testsnap", "fir": "lcals", "eos": "lcals", "hydro_1d": "lcals", "stencil_md": "stencils"}
	strategies = []string{"serial", "omp-host", "kk-omp", "omp-raw", "omp-lambda", "kk-cuda", "raja-omp", "omp-region"}
	toolchains = map[string]bool{"gcc-host": true, "clang19-host": true, "clang19-sm90": false, "nvcc-sm90": false}
)

// skip mimics the real matrix: CUDA strategies only with nvcc, nvcc builds
// only them, host toolchains no CUDA, omp-region only the LCALS sequences.
func skip(k, s, t string) bool {
	cuda := s == "kk-cuda"
	switch {
	case cuda != (t == "nvcc-sm90"):
		return true
	case s == "omp-region" && kernels[k] != "lcals":
		return true
	case t == "clang19-sm90" && (s == "serial" || s == "omp-host"):
		return true
	}
	return false
}

// covers checks what a sample must cover, computed from the cells.
func covers(t *testing.T, all []Cell, ids []string, name string) {
	t.Helper()
	in := map[string]bool{}
	for _, id := range ids {
		in[id] = true
	}
	need, got := map[string]bool{}, map[string]bool{}
	hostKernel := map[string]bool{}
	for _, c := range all {
		hostKernel[c.Kernel] = hostKernel[c.Kernel] || c.Host
	}
	for _, c := range all {
		if name == Quick && c.Fails {
			continue // quick never takes a failure: LeftOut names what only failures cover
		}
		want := []string{"strategy " + c.Strategy + " with " + c.Toolchain, "family " + c.Family + " with " + c.Toolchain}
		if name == Wide {
			want = append(want, "kernel "+c.Kernel, "variant "+c.Variant+" with "+c.Toolchain, "strategy "+c.Strategy+" for "+c.Family+" with "+c.Toolchain)
		}
		if name == Quick && c.Family == Measured && c.CPU && c.Host && c.Form && !c.Fails {
			want = append(want, "cell "+c.ID)
		}
		for _, k := range want {
			need[k] = true
			if in[c.ID] && (k != "kernel "+c.Kernel || c.Host || !hostKernel[c.Kernel]) {
				got[k] = true
			}
		}
	}
	for k := range need {
		if !got[k] {
			t.Errorf("sample of %d cells leaves %s uncovered", len(ids), k)
		}
	}
}

func TestSampleCoversEveryStrategyFamilyAndKernel(t *testing.T) {
	all := matrix(kernels, strategies, toolchains, skip)
	ids := Sample(all, Quick)
	covers(t, all, ids, Quick)
	// Beside the measured family's host cells, a few cells cover the rest.
	rest := 0
	for _, c := range all {
		if slices.Contains(ids, c.ID) && !(c.Family == Measured && c.CPU) {
			rest++
		}
	}
	if rest >= len(all)/10 {
		t.Errorf("sample of %d cells of %d, %d beside family %s on the CPU, is no quick run", len(ids), len(all), rest, Measured)
	}
	ids = Sample(all, Wide)
	covers(t, all, ids, Wide)
	// wide: every kernel is measured on a host toolchain, not only compiled
	for k := range kernels {
		if !slices.ContainsFunc(ids, func(id string) bool {
			return slices.ContainsFunc(all, func(c Cell) bool { return c.ID == id && c.Kernel == k && c.Host })
		}) {
			t.Errorf("kernel %s has no host cell in the sample", k)
		}
	}
}

func TestWideCoversEveryVariant(t *testing.T) {
	all := matrix(kernels, strategies, toolchains, skip)
	quick, wide := Sample(all, Quick), Sample(all, Wide)
	covers(t, all, wide, Wide)
	// beside the measured family's host cells, which quick takes whole
	rest := func(ids []string) (n int) {
		for _, c := range all {
			if slices.Contains(ids, c.ID) && !(c.Family == Measured && c.CPU) {
				n++
			}
		}
		return n
	}
	if rest(wide) <= rest(quick) || len(wide) >= len(all)/2 {
		t.Errorf("wide sample of %d cells (quick %d) of %d", len(wide), len(quick), len(all))
	}
	var sub []Cell
	for _, c := range all {
		if slices.Contains(wide, c.ID) {
			sub = append(sub, c)
		}
	}
	if got := Sample(sub, Wide); !slices.Equal(got, wide) {
		t.Errorf("wide sample of the wide sample: %v, want %v", got, wide)
	}
}

func TestSampleIsDeterministic(t *testing.T) {
	all := matrix(kernels, strategies, toolchains, skip)
	want := Sample(all, Quick)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20 {
		shuffled := slices.Clone(all)
		r.Shuffle(len(shuffled), func(a, b int) { shuffled[a], shuffled[b] = shuffled[b], shuffled[a] })
		if got := Sample(shuffled, Quick); !slices.Equal(got, want) {
			t.Fatalf("shuffle %d: sample %v, want %v", i, got, want)
		}
	}
}

// The run stage samples the cells the manifest holds: after a quick build,
// the sample itself. It must come out unchanged.
func TestSampleOfSampleIsItself(t *testing.T) {
	all := matrix(kernels, strategies, toolchains, skip)
	ids := Sample(all, Quick)
	var sub []Cell
	for _, c := range all {
		if slices.Contains(ids, c.ID) {
			sub = append(sub, c)
		}
	}
	if got := Sample(sub, Quick); !slices.Equal(got, ids) {
		t.Errorf("sample of the sample: %v, want %v", got, ids)
	}
}

func TestAddingAKernelOrStrategyKeepsCovering(t *testing.T) {
	ks := map[string]string{"new_kernel": "newpaper"}
	for k, f := range kernels {
		ks[k] = f
	}
	ss := append(slices.Clone(strategies), "new-strategy")
	all := matrix(ks, ss, toolchains, skip)
	ids := Sample(all, Quick)
	covers(t, all, ids, Quick)
	for _, want := range []string{".new-strategy-", "new_kernel."} {
		if !slices.ContainsFunc(ids, func(id string) bool { return strings.Contains(id, want) }) {
			t.Errorf("no cell of %q in the sample %v", want, ids)
		}
	}
}

// A kernel that only GPU toolchains build is still covered, by a GPU cell.
func TestKernelWithoutHostCell(t *testing.T) {
	all := matrix(kernels, strategies, toolchains, skip)
	all = append(all, Cell{ID: "gpu_only.kk-cuda.nvcc-sm90", Kernel: "gpu_only", Family: "002", Strategy: "kk-cuda", Toolchain: "nvcc-sm90"})
	ids := Sample(all, Wide)
	covers(t, all, ids, Wide)
	if !slices.Contains(ids, "gpu_only.kk-cuda.nvcc-sm90") {
		t.Errorf("gpu_only not sampled: %v", ids)
	}
}

func TestSampleEmpty(t *testing.T) {
	if got := Sample(nil, Quick); len(got) != 0 {
		t.Errorf("Sample(nil, Quick) = %v", got)
	}
}

func TestCheck(t *testing.T) {
	for _, n := range Names {
		if err := Check(n); err != nil {
			t.Errorf("Check(%q): %v", n, err)
		}
	}
	if err := Check("quik"); err == nil || !strings.Contains(err.Error(), Quick) {
		t.Errorf("Check(quik) = %v", err)
	}
}

// A cell known to fail is taken only for what no other cell covers.
func TestFailingCellsOnlyWhereNothingElseCovers(t *testing.T) {
	all := matrix(kernels, strategies, toolchains, skip)
	for i, c := range all {
		// every omp-lambda cell fails, and every host cell of snap_yi but one
		all[i].Fails = c.Strategy == "omp-lambda" || c.Kernel == "snap_yi" && c.Host && c.ID != "snap_yi.omp-raw-b.clang19-host"
	}
	ids := Sample(all, Wide)
	covers(t, all, ids, Wide)
	var failing []string
	for _, c := range all {
		if c.Fails && slices.Contains(ids, c.ID) {
			failing = append(failing, c.ID)
		}
	}
	// omp-lambda is covered by a failing cell per toolchain (nothing else
	// covers it); snap_yi by its one host cell that builds.
	assert := func(ok bool, format string, args ...any) {
		t.Helper()
		if !ok {
			t.Errorf(format, args...)
		}
	}
	assert(slices.Contains(ids, "snap_yi.omp-raw-b.clang19-host"), "snap_yi's building host cell not sampled: %v", ids)
	for _, id := range failing {
		assert(strings.Contains(id, ".omp-lambda-"), "failing cell %s sampled although others cover it", id)
	}
}

// The quick suite measures the measured family's kernels under every
// variant each host toolchain builds, never a cell that fails, and names the
// strategies it leaves out because all their cells fail; the others keep one
// cell per strategy and family with each toolchain.
func TestQuickMeasuresTheFamilyWholeAndNoFailure(t *testing.T) {
	all := matrix(kernels, strategies, toolchains, skip)
	for i, c := range all {
		// omp-lambda fails with gcc-host, as GCC 12's ICE; one dot cell too
		all[i].Fails = c.Strategy == "omp-lambda" && c.Toolchain == "gcc-host" || c.ID == "dot.omp-raw-a.clang19-host"
	}
	ids := Sample(all, Quick)
	covers(t, all, ids, Quick)
	for _, c := range all {
		in := slices.Contains(ids, c.ID)
		switch {
		case c.Fails && in:
			t.Errorf("quick takes %s, a failure", c.ID)
		case c.Family == Measured && c.CPU && c.Form && !c.Fails && !in:
			t.Errorf("quick leaves out %s, a host cell of family %s", c.ID, Measured)
		case c.Family == Measured && c.CPU && !c.Form && in:
			t.Errorf("quick takes %s, a variation of a form (the wide suite's)", c.ID)
		case c.Family == Measured && !c.CPU && in && !slices.Contains([]string{"kk-cuda", "kk-omp", "omp-raw", "omp-lambda", "raja-omp"}, c.Strategy):
			t.Errorf("quick takes %s", c.ID)
		}
	}
	if got := LeftOut(all, Quick); !slices.Equal(got, []string{"omp-lambda with gcc-host"}) {
		t.Errorf("LeftOut = %v", got)
	}
	if got := LeftOut(all, Wide); got != nil {
		t.Errorf("LeftOut(wide) = %v: the wide suite takes failures where nothing else covers", got)
	}
	var sub []Cell
	for _, c := range all {
		if slices.Contains(ids, c.ID) {
			sub = append(sub, c)
		}
	}
	if got := Sample(sub, Quick); !slices.Equal(got, ids) {
		t.Errorf("sample of the sample: %v, want %v", got, ids)
	}
}

// Sizes: the smallest of each set; a host cell of the measured family under
// quick, the smallest and the median of the benchmark set at ci.
func TestSizes(t *testing.T) {
	sets := map[string][]int64{"ci": {1003, 100003}, "default": {10000000, 100000, 1000000, 3162277}, "gpu": {7}}
	measured := Cell{ID: "axpby.serial.gcc-host", Kernel: "axpby", Family: Measured, Host: true, CPU: true, Form: true}
	other := Cell{ID: "fir.serial.gcc-host", Kernel: "fir", Family: "lcals", Host: true, CPU: true}
	gpu := Cell{ID: "axpby.kk-cuda.nvcc-sm90", Kernel: "axpby", Family: Measured, Host: true}
	eq := func(got, want map[string][]int64) {
		t.Helper()
		for set := range want {
			if !slices.Equal(got[set], want[set]) {
				t.Errorf("%s: %v, want %v", set, got[set], want[set])
			}
		}
	}
	eq(Sizes(measured, Quick, sets), map[string][]int64{"ci": {100000, 1000000}, "default": {100000, 1000000}, "gpu": {7}})
	cg := map[string][]int64{"ci": {6, 12}, "default": {60, 30}}
	eq(Sizes(measured, Quick, cg), map[string][]int64{"ci": {30}, "default": {30}})
	eq(Sizes(measured, Wide, sets), map[string][]int64{"ci": {1003}, "default": {100000}, "gpu": {7}})
	eq(Sizes(other, Quick, sets), map[string][]int64{"ci": {1003}, "default": {100000}})
	eq(Sizes(gpu, Quick, sets), map[string][]int64{"ci": {1003}, "default": {100000}})
	failing := measured
	failing.Fails = true
	eq(Sizes(failing, Quick, sets), map[string][]int64{"ci": {1003}})
}
