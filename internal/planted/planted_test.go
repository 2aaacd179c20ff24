package planted

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/spec"
	"github.com/portmatrix/portmatrix/internal/testenv"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// A mutation plants one bug: old is replaced by new in the variant's device
// code (the dev namespace), and must occur there exactly once.
type mutation struct {
	name     string
	old, new string
	want     string // in the record's error
	// afterFirst: the first run is right, every later one wrong.
	afterFirst bool
	// passesAt: a size at which the bug cannot show (a multiple of the width
	// it drops), where the mutant must verify: the sizes sets need odd sizes.
	passesAt int64
	// racy: a data race, which shows only when threads overlap; it runs at
	// raceSize with raceReps timed reps, every one of them checked.
	racy bool
}

// A missing reduction loses updates only where threads overlap, which a
// loaded 2-core machine makes rare: between 3% and 90% of the runs show it
// with 8 spinning threads at 1e6 elements. The racy mutants run 200 reps,
// every one checked (about a second): a miss has odds of a few in a thousand
// at the worst rate seen.
const raceSize, raceReps, raceThreads = 1000003, 200, 8

func race(name, old, new, want string) mutation {
	m := replace(name, old, new, want)
	m.racy = true
	return m
}

// A target is one generated source and the bugs planted in it.
type target struct {
	kernel, variant string
	size            int64
	muts            []mutation
}

const (
	notFinite = "NaN/Inf"
	aboveTol  = "above tolerance"
	pastEnd   = "writes past the end (guard zone after the data changed)"
)

const reps, warmup = 3, 1

func replace(name, old, new, want string) mutation {
	return mutation{name: name, old: old, new: new, want: want}
}

// stopsAfterFirstCall makes the kernel return at once from its second call on.
func stopsAfterFirstCall(signature, want string) mutation {
	return mutation{name: "output not written after the first call", old: signature + " {\n",
		new: signature + " {\n  static int pm_calls = 0;\n  if (pm_calls++ > 0) return;\n", want: want, afterFirst: true}
}

func droppedTail(old, new, want string, passesAt int64) mutation {
	m := replace("dropped vector tail", old, new, want)
	m.passesAt = passesAt
	return m
}

const (
	axpbySig = "void axpby_kernel(const int64_t n, const double a, const double* x, const double b, double* y)"
	spmvSig  = "void spmv_kernel(const pm::Csr& A, const double* x, double* y)"
	scale    = " * (1 + 1e-9)"
	// dot's omp-raw launch without the tuned num_teams and thread_limit.
	dotRawLoop = "simd reduction(+ : sum) is_device_ptr(x, y)\n    for (int64_t i = 0; i < n; ++i) {"
)

var corpus = []target{
	// Serial C++.
	{"axpby", "serial", 1003, []mutation{
		replace("off-by-one", "for (int64_t i = 0; i < n; ++i)", "for (int64_t i = 1; i < n; ++i)", aboveTol),
		replace("skipped elements", "y[i] = a*x[i] + b*y[i];", "if (i % 97 != 13) y[i] = a*x[i] + b*y[i];", aboveTol),
		droppedTail("i < n;", "i < n / 8 * 8;", aboveTol, 1000),
		replace("overrun", "i < n;", "i <= n;", pastEnd),
		replace("underrun", "for (int64_t i = 0; i < n; ++i)", "for (int64_t i = -1; i < n; ++i)",
			"writes before the start (guard zone before the data changed)"),
		stopsAfterFirstCall(axpbySig, aboveTol),
		replace("result scaled by 1+1e-9", "y[i] = a*x[i] + b*y[i];", "y[i] = (a*x[i] + b*y[i])"+scale+";", aboveTol),
	}},
	{"dot", "serial", 1003, []mutation{
		replace("off-by-one", "int64_t i = 0;", "int64_t i = 1;", aboveTol),
		replace("wrong accumulator start", "double sum = 0;", "double sum = 1;", aboveTol),
		replace("skipped elements", "sum += x[i] * y[i];", "if (i % 97 != 13) sum += x[i] * y[i];", aboveTol),
		droppedTail("i < n;", "i < n / 8 * 8;", aboveTol, 1000),
		replace("overrun", "i < n;", "i <= n;", notFinite),
		replace("result scaled by 1+1e-9", "return sum;", "return sum"+scale+";", aboveTol),
		replace("writes an input", "sum += x[i] * y[i];", "sum += x[i] * y[i];\n    const_cast<double*>(x)[i] = 0;",
			"x: input changed by the kernel (first at index 0)"),
	}},
	{"spmv", "serial", 10, []mutation{
		replace("off-by-one", "row < last_row;", "row < last_row - 1;", notFinite),
		replace("wrong accumulator start", "double y_row = 0;", "double y_row = 0.5;", aboveTol),
		replace("wrong league stride", "++league_rank)", "league_rank += 2)", notFinite),
		replace("dropped vector tail", "i < row_length;", "i < row_length / vector_size * vector_size;", aboveTol),
		stopsAfterFirstCall(spmvSig, notFinite),
		replace("result scaled by 1+1e-9", "y[row] = y_row;", "y[row] = y_row"+scale+";", aboveTol),
	}},
	{"cgsolve", "serial", 6, []mutation{
		replace("wrong accumulator start", "double sum = 0;", "double sum = 1e-6;", aboveTol),
		replace("result scaled by 1+1e-9", "return std::sqrt(dot(n, r, r));", "return std::sqrt(dot(n, r, r))"+scale+";", aboveTol),
	}},

	// OpenMP on the host.
	{"axpby", "omp-host", 1003, []mutation{
		droppedTail("i < n;", "i < n / 8 * 8;", aboveTol, 1000),
		replace("overrun", "i < n;", "i <= n;", pastEnd),
		stopsAfterFirstCall(axpbySig, aboveTol),
	}},
	{"dot", "omp-host", 1003, []mutation{
		race("missing reduction clause", " reduction(+ : sum)", "", aboveTol),
		replace("wrong accumulator start", "double sum = 0;", "double sum = 1;", aboveTol),
		replace("result scaled by 1+1e-9", "return sum;", "return sum"+scale+";", aboveTol),
	}},
	{"spmv", "omp-host", 10, []mutation{
		replace("wrong league stride", "++league_rank)", "league_rank += 2)", notFinite),
		replace("skipped elements", "y[row] = y_row;", "if (row % 97 != 13) y[row] = y_row;", notFinite),
	}},

	// OpenMP target, host fallback (-foffload=disable).
	{"axpby", "omp-raw", 1003, []mutation{
		replace("overrun", "i < n;", "i <= n;", pastEnd),
		replace("skipped elements", "y[i] = a*x[i] + b*y[i];", "if (i % 97 != 13) y[i] = a*x[i] + b*y[i];", aboveTol),
		stopsAfterFirstCall(axpbySig, aboveTol),
	}},
	{"dot", "omp-raw", 1003, []mutation{
		// The launch without tuned clauses, the one a default run takes.
		replace("missing reduction clause", dotRawLoop, strings.Replace(dotRawLoop, " reduction(+ : sum)", "", 1), aboveTol),
		replace("off-by-one", dotRawLoop, strings.Replace(dotRawLoop, "i = 0;", "i = 1;", 1), aboveTol),
		replace("overrun", dotRawLoop, strings.Replace(dotRawLoop, "i < n;", "i <= n;", 1), notFinite),
	}},
	{"spmv", "omp-raw", 10, []mutation{
		replace("wrong league stride", "++league_rank)", "league_rank += 2)", notFinite),
		replace("dropped vector tail", "i < row_length;", "i < row_length / 8 * 8;", aboveTol),
		replace("result scaled by 1+1e-9", "y[row] = y_row;", "y[row] = y_row"+scale+";", aboveTol),
	}},
	{"axpby", "kk-omp-b", 1003, []mutation{
		replace("off-by-one", "pmkk::RangePolicy(0, n)", "pmkk::RangePolicy(1, n)", aboveTol),
		replace("overrun", "pmkk::RangePolicy(0, n)", "pmkk::RangePolicy(0, n + 1)", pastEnd),
		stopsAfterFirstCall(axpbySig, aboveTol),
	}},
	{"dot", "kk-omp-b", 1003, []mutation{
		replace("skipped elements", "sum += x[i] * y[i];", "if (i % 97 != 13) sum += x[i] * y[i];", aboveTol),
		droppedTail("pmkk::RangePolicy(0, n)", "pmkk::RangePolicy(0, n / 8 * 8)", aboveTol, 1000),
		replace("result scaled by 1+1e-9", "return sum;", "return sum"+scale+";", aboveTol),
	}},
	{"spmv", "kk-omp-b", 10, []mutation{
		replace("wrong league stride", "league_rank * rows_per_team;", "league_rank * (rows_per_team + 1);", notFinite),
		replace("dropped vector tail", "pmkk::ThreadVectorRange(team, 0, row_length)",
			"pmkk::ThreadVectorRange(team, 0, row_length / 8 * 8)", aboveTol),
		stopsAfterFirstCall(spmvSig, notFinite),
	}},
}

// record is the part of a harness line the corpus reads.
type record struct {
	Kind        string                     `json:"kind"`
	Size        int64                      `json:"size"`
	Verified    bool                       `json:"verified"`
	Error       string                     `json:"error"`
	RunsChecked int                        `json:"runs_checked"`
	RunsFailed  int                        `json:"runs_failed"`
	MaxRelErr   *float64                   `json:"max_rel_err"`
	Tolerance   float64                    `json:"tolerance"`
	Bytes       float64                    `json:"bytes"`
	BytesMin    float64                    `json:"bytes_min"`
	Op          string                     `json:"op"`
	FlushL2     bool                       `json:"flush_l2"`
	Reps        int                        `json:"reps"`
	TimesS      []float64                  `json:"times_s"`
	RefCached   bool                       `json:"reference_cached"`
	Warmup      int                        `json:"warmup"`
	Sections    map[string]json.RawMessage `json:"sections"`
}

func root(t *testing.T) string {
	r, err := filepath.Abs("../..")
	require.NoError(t, err)
	return r
}

// built holds the programs the tests of this package share, each built
// once per test binary (sharedBinary); TestMain removes them.
var built = struct {
	sync.Mutex
	dir  string
	bins map[string]string // generated source, relative to the root -> binary
}{bins: map[string]string{}}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// sharedBinary builds the generated source src (relative to the root) with
// gcc-host's flags once for all the tests that run it; it skips without g++.
func sharedBinary(t *testing.T, src string) string {
	t.Helper()
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not found (scripts/install-toolchains.sh installs it)")
	}
	built.Lock()
	defer built.Unlock()
	if bin, ok := built.bins[src]; ok {
		return bin
	}
	if built.dir == "" {
		built.dir, err = os.MkdirTemp("", "planted")
		require.NoError(t, err)
	}
	bin := filepath.Join(built.dir, strings.NewReplacer("/", ".", ".cpp", "").Replace(src))
	args := append(append([]string{}, gccHostFlags(t)...), "-I"+filepath.Join(root(t), "harness"), "-o", bin,
		filepath.Join(root(t), filepath.FromSlash(src)))
	out, err := exec.Command(gxx, args...).CombinedOutput()
	require.NoError(t, err, "g++ %s:\n%s", strings.Join(args, " "), out)
	built.bins[src] = bin
	return bin
}

// gccHostFlags are the flags the build gives gcc-host.
func gccHostFlags(t *testing.T) []string {
	tcs, err := toolchain.Load(filepath.Join(root(t), "toolchains.yaml"), root(t))
	require.NoError(t, err)
	for _, tc := range tcs {
		if tc.ID == "gcc-host" {
			return tc.Flags
		}
	}
	t.Fatal("toolchains.yaml has no gcc-host")
	return nil
}

// assemble puts the unmutated program (mutant 0) and every mutant into one
// source, each in its own namespace, and a main that runs the one PM_MUTANT
// names: one compile per target.
func assemble(t *testing.T, src string, muts []mutation) string {
	at := func(marker string) int {
		i := strings.Index(src, marker)
		require.GreaterOrEqual(t, i, 0, "generated source lacks %q", marker)
		return i
	}
	refAt, devAt, runAt, mainAt := at("\nnamespace ref {"), at("\nnamespace dev {"), at("\nstatic void run_size("), at("\nint main(")
	prelude, refs, dev, run := src[:refAt+1], src[refAt:devAt], src[devAt:runAt], src[runAt:mainAt]
	defaults := defaultSizes(t, src)
	var b strings.Builder
	b.WriteString(prelude)
	b.WriteString("#include <cstdlib>\n")
	for k := 0; k <= len(muts); k++ {
		d := dev
		if k > 0 {
			m := muts[k-1]
			require.Equal(t, 1, strings.Count(d, m.old), "mutation %q: %q must occur once in the device code", m.name, m.old)
			d = strings.Replace(d, m.old, m.new, 1)
		}
		fmt.Fprintf(&b, "namespace m%d {\n%s%s%s\n}  // namespace m%d\n", k, refs, d, run, k)
	}
	b.WriteString("\nint main(int argc, char** argv) {\n")
	fmt.Fprintf(&b, "  const pm::Options opt = pm::parse(argc, argv, {%s});\n", defaults)
	b.WriteString("  const int mutant = std::atoi(std::getenv(\"PM_MUTANT\"));\n")
	b.WriteString("  for (const int64_t size : opt.sizes) {\n    switch (mutant) {\n")
	for k := 0; k <= len(muts); k++ {
		fmt.Fprintf(&b, "      case %d: m%d::run_size(opt, size); break;\n", k, k)
	}
	b.WriteString("    }\n  }\n  pm::stream(opt);\n  return 0;\n}\n")
	return b.String()
}

// defaultSizes returns the default sizes of the generated main.
func defaultSizes(t *testing.T, src string) string {
	const marker = "pm::parse(argc, argv, {"
	i := strings.Index(src, marker)
	require.GreaterOrEqual(t, i, 0)
	j := strings.Index(src[i:], "})")
	return src[i+len(marker) : i+j]
}

// run runs one mutant at one size; it returns the kernel record and the
// others (stream, copy). Later flags override earlier ones.
func run(t *testing.T, bin string, mutant int, size int64, extra ...string) (record, []record) {
	return runEnv(t, bin, mutant, size, []string{"OMP_NUM_THREADS=2", "OMP_WAIT_POLICY=passive"}, extra...)
}

func runEnv(t *testing.T, bin string, mutant int, size int64, env []string, extra ...string) (record, []record) {
	ctx, cancel := context.WithTimeout(context.Background(), 120*time.Second)
	defer cancel()
	args := append([]string{"--size", strconv.FormatInt(size, 10), "--reps", strconv.Itoa(reps),
		"--warmup", strconv.Itoa(warmup), "--flush-l2", "off"}, extra...)
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = append(append(os.Environ(), "PM_MUTANT="+strconv.Itoa(mutant)), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	require.NoError(t, err, "mutant %d: %s", mutant, stderr.String())
	var kernels, others []record
	for _, line := range bytes.Split(bytes.TrimSpace(out), []byte("\n")) {
		var r record
		require.NoError(t, json.Unmarshal(line, &r), "%s", line)
		if r.Kind == "kernel" {
			kernels = append(kernels, r)
		} else {
			others = append(others, r)
		}
	}
	require.Len(t, kernels, 1, "%s", out)
	return kernels[0], others
}

func TestPlantedVariantsAreCaught(t *testing.T) {
	gxx, err := exec.LookPath("g++")
	if err != nil {
		t.Skip("g++ not found: the planted-variant corpus needs it (scripts/install-toolchains.sh installs it)")
	}
	testenv.Long(t) // builds and runs the planted-variant corpus
	flags := gccHostFlags(t)
	kernels, err := spec.LoadDir(filepath.Join(root(t), "templates/kernels"))
	require.NoError(t, err)
	byName := spec.ByName(kernels)
	dir := t.TempDir()
	for _, tg := range corpus {
		t.Run(tg.kernel+"/"+tg.variant, func(t *testing.T) {
			t.Parallel()
			data, err := os.ReadFile(filepath.Join(root(t), "generated", tg.kernel, tg.variant+".cpp"))
			require.NoError(t, err)
			src := filepath.Join(dir, tg.kernel+"."+tg.variant+".cpp")
			bin := strings.TrimSuffix(src, ".cpp")
			require.NoError(t, os.WriteFile(src, []byte(assemble(t, string(data), tg.muts)), 0o644))
			args := append(append([]string{}, flags...), "-I"+filepath.Join(root(t), "harness"), "-o", bin, src)
			out, err := exec.Command(gxx, args...).CombinedOutput()
			require.NoError(t, err, "g++ %s:\n%s", strings.Join(args, " "), out)
			total := 1 + warmup + reps
			if byName[tg.kernel].Pattern == nil {
				total++ // the sections run of a composite
			}

			// The unmutated variant verifies, in every run, with the
			// description's byte counts and tolerance at this size, the L2
			// flushed; its STREAM kernels verify too (a run of their own,
			// bounded by --rep-seconds: their 5 runs of four times the
			// caches, not the default's 6 s of them).
			r, _ := run(t, bin, 0, tg.size, "--flush-l2", "on")
			require.True(t, r.Verified, "unmutated %s/%s: %s", tg.kernel, tg.variant, r.Error)
			rs, others := run(t, bin, 0, tg.size, "--stream-bytes", "4000000", "--rep-seconds", "0.05")
			require.True(t, rs.Verified, "unmutated %s/%s beside STREAM: %s", tg.kernel, tg.variant, rs.Error)
			rd, _ := run(t, bin, 0, tg.size, "--device-checks")
			require.True(t, rd.Verified, "unmutated %s/%s with device checks: %s", tg.kernel, tg.variant, rd.Error)
			assert.True(t, r.FlushL2)
			assert.Equal(t, total, r.RunsChecked)
			assert.Equal(t, 0, r.RunsFailed)
			var ops []string
			for _, o := range others {
				if o.Kind == "stream" {
					ops = append(ops, o.Op)
					assert.True(t, o.Verified, "stream %s: %s", o.Op, o.Error)
				}
			}
			assert.Equal(t, []string{"copy", "triad", "dot"}, ops)
			k := byName[tg.kernel]
			env := k.Env(tg.size)
			for field, got := range map[string]float64{"bytes": r.Bytes, "bytes_min": r.BytesMin, "tolerance": r.Tolerance} {
				expr := map[string]string{"bytes": k.Bytes, "bytes_min": k.BytesMin, "tolerance": k.Tolerance}[field]
				want, err := spec.Eval(expr, env)
				require.NoError(t, err)
				assert.InEpsilon(t, want.Float(), got, 1e-5, "%s: the harness and the description disagree", field)
			}

			for i, m := range tg.muts {
				// Two threads, sleeping rather than spinning at barriers on a
				// shared machine; a race gets more, spinning.
				size, env, extra := tg.size, []string{"OMP_NUM_THREADS=2", "OMP_WAIT_POLICY=passive"}, []string{}
				if m.racy {
					size, extra = raceSize, []string{"--reps", strconv.Itoa(raceReps)}
					env = []string{"OMP_NUM_THREADS=" + strconv.Itoa(raceThreads), "OMP_WAIT_POLICY=active"}
				}
				// Each mutant is caught by the host's comparisons and by the
				// device's (--device-checks: on a GPU the runs between the first
				// and the last compare there), except a race, run once.
				checks := [][]string{nil, {"--device-checks"}}
				if m.racy {
					checks = checks[:1]
				}
				for _, c := range checks {
					r, _ := runEnv(t, bin, i+1, size, env, append(c, extra...)...)
					assert.False(t, r.Verified, "%s %v: verified (runs %d, tolerance %g)", m.name, c, r.RunsChecked, r.Tolerance)
					assert.Contains(t, r.Error, m.want, "%s %v", m.name, c)
					assert.NotContains(t, r.Error, "harness bug", "%s %v", m.name, c)
					if m.afterFirst {
						assert.Equal(t, total-1, r.RunsFailed, "%s %v: %s", m.name, c, r.Error)
						assert.Contains(t, r.Error, fmt.Sprintf("first: run 2 of %d", total), "%s %v", m.name, c)
					}
				}
				if m.passesAt > 0 {
					r, _ := run(t, bin, i+1, m.passesAt)
					assert.True(t, r.Verified, "%s at %d (nothing to drop there): %s", m.name, m.passesAt, r.Error)
				}
			}
		})
	}
}
