// Package build compiles cells in parallel, incrementally: a cell is rebuilt
// only when the hash of its source, the harness, the flags and the compiler's
// identity changes. Every build writes its own log; a failure is a row of the
// report, and the other cells still build.
package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/portmatrix/portmatrix/internal/fsutil"
	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// Status of a cell's build.
const (
	Built   = results.StatusBuilt
	Cached  = results.StatusCached
	Failed  = results.StatusFailed
	Skipped = results.StatusSkipped
)

// Result is one row of build.csv.
type Result struct {
	Cell    *matrix.Cell
	Status  string
	Reason  string
	Seconds float64
	Log     string // path of the build log
	Binary  string
	// Blocks are the threads per team of the cell's team patterns at its
	// generated tunables (teamBlocks; GPU cells).
	Blocks []int64
	// DeviceOnly: only the device code was compiled (Options.DeviceOnly);
	// Binary is then its object, not a program.
	DeviceOnly bool
	// DeviceHash identifies the cell's device code (DeviceHash); empty when
	// the source is missing.
	DeviceHash string
	// Kernels are the device kernels' resources (NVIDIA GPU cells);
	// ResourcesNote says why there are none where there could be.
	Kernels       []Kernel
	ResourcesNote string
	// Space is the cell's tuning space (tune.Spaces.RecordCell), which the
	// build stage adds for the manifest; nil in a tree without one.
	Space []byte
}

// OK reports whether the cell has a binary.
func (r Result) OK() bool { return r.Status == Built || r.Status == Cached }

// Options configure a build.
type Options struct {
	Root    string // repository root: generated/ and harness/ are read from here
	Dir     string // build folder
	Jobs    int
	Log     io.Writer // progress lines
	Timeout time.Duration
	// DeviceOnly compiles only the device code of cells that do not run
	// here and whose toolchain declares device_only flags.
	DeviceOnly bool
	// Kernels resolves the kernels a composite uses (their team blocks).
	Kernels  map[string]*spec.Kernel
	Compiler func(ctx context.Context, dir string, name string, args ...string) ([]byte, error)
	// Cache is a folder of programs shared between build folders (CacheEnv;
	// "": none).
	Cache string
}

// Binary is where a cell's program goes: <dir>/<toolchain>/<kernel>.<variant>.
func Binary(dir string, c *matrix.Cell) string {
	return filepath.Join(dir, c.Toolchain.ID, c.Kernel.Name+"."+c.Variant.ID)
}

// Command is the compiler invocation of a cell; deviceOnly adds the
// toolchain's device_only flags (the output is then the device code's object).
func Command(root, dir string, c *matrix.Cell, deviceOnly bool) []string {
	t := c.Toolchain
	args := append([]string{}, t.Flags...)
	if deviceOnly {
		args = append(args, t.DeviceOnly...)
	}
	args = append(args, c.Variant.Strategy.Flags[t.Family]...)
	for _, cp := range t.CapNames() {
		args = append(args, "-DPM_HAS_"+strings.ToUpper(cp)+"=1")
	}
	if in := c.Library; in != nil {
		for _, cp := range in.Caps { // the library's version gates, as the compiler's
			args = append(args, "-DPM_HAS_"+strings.ToUpper(cp)+"=1")
		}
		args = append(args, in.CompileFlags...)
	}
	args = append(args, "-I"+filepath.Join(root, "harness"), "-o", Binary(dir, c), filepath.Join(root, c.Source()))
	if c.Library != nil && !deviceOnly {
		args = append(args, c.Library.LinkFlags...) // the static libraries after the source that uses them
	}
	return t.Command(args...)
}

// sourceLast is a cell's command without the library's link flags, which
// follow the source (deviceFlags takes the last argument for the source).
func sourceLast(cmd []string, c *matrix.Cell) []string {
	if c.Library != nil && len(cmd) > len(c.Library.LinkFlags) && !slices.Contains(cmd, "-c") {
		return cmd[:len(cmd)-len(c.Library.LinkFlags)]
	}
	return cmd
}

// Key hashes everything a binary depends on: the toolchain, the command,
// the environment that changes what a compiler does, the cell's source and
// the harness.
func Key(c *matrix.Cell, cmd []string, src, harness []byte) string {
	return hashKey(c, cmd, src, harness, func(s string) string { return s })
}

// hashKey is Key's hash, with each argument of the command and each value
// of KeyEnv passed through place first (sharedKey's placeholders for paths).
func hashKey(c *matrix.Cell, cmd []string, src, harness []byte, place func(string) string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", c.Toolchain.Identity)
	for _, a := range cmd {
		fmt.Fprintf(h, "%s\x00", place(a))
	}
	if c.Library != nil { // a reinstall at the same prefix rebuilds its cells
		fmt.Fprintf(h, "%s\x00", c.Library.Key())
	}
	for _, k := range KeyEnv {
		fmt.Fprintf(h, "%s=%s\x00", k, place(os.Getenv(k)))
	}
	h.Write(src)
	h.Write(harness)
	return hex.EncodeToString(h.Sum(nil))
}

// KeyEnv is the environment that can change what a compiler does, part of
// every cache key (a failure is remembered under the same key): search
// paths for headers, libraries and tools (clang finds ptxas on PATH), and
// the compilers' own variables.
var KeyEnv = []string{"PATH", "CPATH", "C_INCLUDE_PATH", "CPLUS_INCLUDE_PATH", "LIBRARY_PATH", "LD_LIBRARY_PATH",
	"COMPILER_PATH", "GCC_EXEC_PREFIX", "CUDA_HOME", "CUDA_PATH", "NVCC_PREPEND_FLAGS", "NVCC_APPEND_FLAGS",
	"NVCC_CCBIN", "LIBOMPTARGET_DEVICE_ARCHITECTURES", "OMPI_CXX"}

// HarnessHash hashes every file under harness/ in order.
func HarnessHash(root string) ([]byte, error) {
	l, err := ReadLayers(root)
	if err != nil {
		return nil, err
	}
	return l.hash(root), nil
}

// hash is every file's path (as found under root) and content, in order.
func (l Layers) hash(root string) []byte {
	h := sha256.New()
	for _, f := range slices.Sorted(maps.Keys(l)) {
		p := filepath.ToSlash(filepath.Join(root, "harness", filepath.FromSlash(f)))
		fmt.Fprintf(h, "%s\x00%d\x00", p, len(l[f]))
		h.Write(l[f])
	}
	return h.Sum(nil)
}

func execCompiler(ctx context.Context, dir, name string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	return cmd.CombinedOutput()
}

// Run builds every cell that is on; cells that are off become skipped rows.
// It returns one result per cell, in the cells' order.
func Run(ctx context.Context, cells []*matrix.Cell, opt Options) ([]Result, error) {
	if opt.Jobs < 1 {
		opt.Jobs = 1
	}
	if opt.Compiler == nil {
		opt.Compiler = execCompiler
	}
	if opt.Timeout == 0 {
		opt.Timeout = 10 * time.Minute
	}
	layers, err := ReadLayers(opt.Root)
	if err != nil {
		return nil, fmt.Errorf("reading harness/: %w", err)
	}
	harness := layers.hash(opt.Root)
	results := make([]Result, len(cells))
	var mu sync.Mutex
	done, total := 0, 0
	for _, c := range cells {
		if c.On {
			total++
		}
	}
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opt.Jobs)
	for i, c := range cells {
		if !c.On {
			results[i] = Result{Cell: c, Status: Skipped, Reason: c.Reason}
			continue
		}
		g.Go(func() error {
			r := one(gctx, c, opt, harness, layers)
			if r.OK() {
				r.Kernels, r.ResourcesNote = kernelResources(gctx, r.Binary, c.Toolchain)
			}
			if c.Toolchain.GPU() {
				r.Blocks = teamBlocks(c, opt.Kernels)
			}
			mu.Lock()
			results[i] = r
			done++
			if opt.Log != nil {
				line := fmt.Sprintf("build [%d/%d %s] %-7s %s", done, total, since(start), r.Status, c.ID)
				if r.Status == Failed {
					line += ": " + r.Reason
				}
				fmt.Fprintln(opt.Log, line)
			}
			mu.Unlock()
			return nil
		})
	}
	g.Wait()
	return results, ctx.Err()
}

// current reports whether binary exists and was built with key.
func current(binary, key string) bool {
	old, err := os.ReadFile(binary + ".key")
	if err != nil || string(old) != key {
		return false
	}
	_, err = os.Stat(binary)
	return err == nil
}

func since(t time.Time) string { return time.Since(t).Round(100 * time.Millisecond).String() }

func one(ctx context.Context, c *matrix.Cell, opt Options, harness []byte, layers Layers) Result {
	r := Result{Cell: c, Binary: Binary(opt.Dir, c), DeviceOnly: opt.DeviceOnly && !c.Runnable && len(c.Toolchain.DeviceOnly) > 0}
	r.Log = r.Binary + ".log"
	src, err := os.ReadFile(filepath.Join(opt.Root, c.Source()))
	if err != nil {
		r.Status, r.Reason = Failed, fmt.Sprintf("source missing (run: go run mage.go generate): %v", err)
		return r
	}
	cmd := Command(opt.Root, opt.Dir, c, r.DeviceOnly)
	if r.DeviceOnly {
		// A cell built whole (a sample CI builds first) has its device code
		// compiled already, and more: it is kept, not built again.
		whole := Command(opt.Root, opt.Dir, c, false)
		if current(r.Binary, Key(c, whole, src, harness)) {
			r.DeviceOnly, cmd = false, whole
		}
	}
	key := Key(c, cmd, src, harness)
	r.DeviceHash = DeviceHash(src, deviceFlags(sourceLast(cmd, c)), layers)
	stamp, failStamp := r.Binary+".key", r.Binary+".failed"
	if current(r.Binary, key) {
		r.Status = Cached
		return r
	}
	// The same inputs fail the same way: a failure is cached like a success.
	if old, err := os.ReadFile(failStamp); err == nil && strings.HasPrefix(string(old), key+"\n") {
		r.Status, r.Reason = Failed, strings.TrimPrefix(string(old), key+"\n")
		return r
	}
	if err := os.MkdirAll(filepath.Dir(r.Binary), 0o755); err != nil {
		r.Status, r.Reason = Failed, err.Error()
		return r
	}
	os.Remove(stamp)
	cache, shared := opt.Cache, ""
	if cache != "" {
		shared = sharedKey(c, cmd, src, layers, opt.Root, opt.Dir)
		if fromCache(cache, shared, r.Binary) {
			logText := "$ " + fsutil.Portable(strings.Join(cmd, " ")) + "\n(the program these inputs built before, from " + CacheEnv + ")\n"
			if err := fsutil.WriteFile(r.Log, []byte(logText), 0o644); err == nil {
				os.Remove(failStamp)
				r.Status = Built
				if err := fsutil.WriteFile(stamp, []byte(key), 0o644); err != nil {
					r.Status, r.Reason = Failed, err.Error()
				}
				return r
			}
		}
	}
	cctx, cancel := context.WithTimeout(ctx, opt.Timeout)
	defer cancel()
	t0 := time.Now()
	out, err := opt.Compiler(cctx, opt.Root, cmd[0], cmd[1:]...)
	r.Seconds = time.Since(t0).Seconds()
	logText := "$ " + fsutil.Portable(strings.Join(cmd, " ")) + "\n" + string(out)
	if err != nil {
		logText += "\nerror: " + err.Error() + "\n"
	}
	if werr := fsutil.WriteFile(r.Log, []byte(logText), 0o644); werr != nil && err == nil {
		err = werr
	}
	if err != nil {
		r.Status, r.Reason = Failed, failure(err, out, cctx)
		if cctx.Err() == nil {
			fsutil.WriteFile(failStamp, []byte(key+"\n"+r.Reason), 0o644)
		}
		return r
	}
	os.Remove(failStamp)
	r.Status = Built
	if err := fsutil.WriteFile(stamp, []byte(key), 0o644); err != nil {
		r.Status, r.Reason = Failed, err.Error()
	}
	toCache(cache, shared, r.Binary)
	return r
}

// failure summarises a compiler failure by its first error line.
func failure(err error, out []byte, ctx context.Context) string {
	if ctx.Err() == context.DeadlineExceeded {
		return "compiler timed out"
	}
	for _, line := range strings.Split(string(out), "\n") {
		if diagnostic.MatchString(line) {
			return strings.TrimSpace(line)
		}
	}
	return err.Error()
}

// diagnostic is a compiler's or linker's error line ("x.cpp:3:5: error:",
// nvcc's "x.cu(3): error:", "collect2: error:", "internal compiler error"),
// not a path that holds the word (a folder named build-compile-error).
var diagnostic = regexp.MustCompile(`(?i)(^|[\s:)])(fatal )?error( [^:\s]+)?:|internal compiler error`)
