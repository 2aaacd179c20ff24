package library

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	version "github.com/hashicorp/go-version"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/fsutil"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// Options configure the installer.
type Options struct {
	// Deps is the folder holding the source releases (PM_DEPS).
	Deps string
	// Dir is the installs' folder (Dir).
	Dir string
	// Only selects installs: name, name/backend or name/backend/toolchain,
	// each part a path.Match pattern; empty: every install whose toolchain
	// is found.
	Only []string
	// Jobs is the build's parallelism (default: the CPUs).
	Jobs int
	// Scratch is where the sources are unpacked and built (default: the
	// system's temporary folder); each install's folder there is removed after it.
	Scratch string
	Log     io.Writer
	// Now stamps install.json (default time.Now).
	Now func() time.Time
	// RunGPU runs the smoke programs of NVIDIA GPU targets too (a GPU host,
	// PM_GPU=1); host programs always run, AMD ones never.
	RunGPU bool
}

// Install statuses.
const (
	Installed = "installed"
	Current   = "current" // install.json matches the release and the compiler: nothing done
	Failed    = "failed"
	Skipped   = "skipped" // the toolchain is not found here
)

// Result is one install's outcome.
type Result struct {
	ID      string
	Status  string
	Reason  string
	Seconds float64
	Prefix  string
	Log     string
}

// Job is one (library, backend, toolchain) to install.
type Job struct {
	Library   *Library
	Backend   *Backend
	Toolchain *toolchain.Toolchain
}

// ID is name/backend/toolchain.
func (j Job) ID() string { return ID(j.Library.Name, j.Backend.Name, j.Toolchain.ID) }

// Jobs lists the installs the catalog names for the toolchains, selected
// by only (Options.Only); a selection entry that matches nothing is an error.
func Jobs(c *Catalog, tcs []*toolchain.Toolchain, only []string) ([]Job, error) {
	byID := map[string]*toolchain.Toolchain{}
	for _, t := range tcs {
		byID[t.ID] = t
	}
	var all []Job
	var ids []string
	for _, l := range c.Libraries {
		for _, b := range l.Backends {
			for _, id := range b.Toolchains {
				if t := byID[id]; t != nil {
					j := Job{Library: l, Backend: b, Toolchain: t}
					all = append(all, j)
					ids = append(ids, j.ID())
				}
			}
		}
	}
	if len(only) == 0 {
		return all, nil
	}
	var out []Job
	var errs []string
	for _, sel := range only {
		n := 0
		for _, j := range all {
			if selects(sel, j.ID()) {
				n++
				if !slices.ContainsFunc(out, func(o Job) bool { return o.ID() == j.ID() }) {
					out = append(out, j)
				}
			}
		}
		if n == 0 {
			errs = append(errs, fmt.Sprintf("PM_LIBRARIES: %q selects no install%s (known: %s)", sel, diag.DidYouMean(sel, ids), strings.Join(ids, ", ")))
		}
	}
	if len(errs) > 0 {
		return nil, errors.New(strings.Join(errs, "\n"))
	}
	// In the catalog's order, whatever the selection's.
	slices.SortStableFunc(out, func(a, b Job) int { return slices.Index(ids, a.ID()) - slices.Index(ids, b.ID()) })
	return out, nil
}

// selects reports whether sel (name[/backend[/toolchain]], each part a
// pattern) selects id.
func selects(sel, id string) bool {
	sp, ip := strings.Split(sel, "/"), strings.Split(id, "/")
	if len(sp) > len(ip) {
		return false
	}
	for i, p := range sp {
		if ok, _ := path.Match(p, ip[i]); !ok {
			return false
		}
	}
	return true
}

// InstallAll installs every selected (library, backend, toolchain), one at
// a time: a failed install leaves its log and no install.json and the
// others go on. It returns one result per job; the error is the failures'.
func InstallAll(ctx context.Context, c *Catalog, tcs []*toolchain.Toolchain, opt Options) ([]Result, error) {
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	if opt.Jobs < 1 {
		opt.Jobs = runtime.NumCPU()
	}
	if opt.Now == nil {
		opt.Now = time.Now
	}
	jobs, err := Jobs(c, tcs, opt.Only)
	if err != nil {
		return nil, err
	}
	if len(jobs) == 0 {
		fmt.Fprintf(opt.Log, "libraries: no install to do (no toolchain of variants/libraries.yaml's backends is in the toolchain file)\n")
		return nil, nil
	}
	checked := map[string]error{} // a release's sha256, checked once
	var out []Result
	var f diag.Failures
	t0 := time.Now()
	for i, j := range jobs {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		r := installOne(ctx, j, opt, checked)
		fmt.Fprintf(opt.Log, "libraries [%d/%d] %-9s %s", i+1, len(jobs), r.Status, r.ID)
		switch r.Status {
		case Installed:
			fmt.Fprintf(opt.Log, " in %s: %s", time.Duration(r.Seconds*float64(time.Second)).Round(100*time.Millisecond), r.Prefix)
		case Current:
			fmt.Fprintf(opt.Log, ": %s", r.Prefix)
		default:
			fmt.Fprintf(opt.Log, ": %s", r.Reason)
		}
		fmt.Fprintln(opt.Log)
		if r.Status == Failed {
			f.Add("libraries", r.ID, r.Reason)
		}
		out = append(out, r)
	}
	n := map[string]int{}
	for _, r := range out {
		n[r.Status]++
	}
	fmt.Fprintf(opt.Log, "libraries: %d installs: %d installed, %d current, %d failed, %d skipped; took %s\n",
		len(out), n[Installed], n[Current], n[Failed], n[Skipped], time.Since(t0).Round(time.Millisecond))
	return out, f.Err()
}

// current reports whether prefix holds this job's install already.
func current(j Job, prefix string) bool {
	in, err := ReadInstall(prefix)
	if err != nil {
		return false
	}
	return in.Version == j.Library.Version && in.SHA256 == j.Library.SHA256 && in.CompilerVersion == j.Toolchain.VersionString() &&
		in.CompilerIdentity == j.Toolchain.Identity && in.Recipe == Recipe(j)
}

// Recipe hashes what variants/libraries.yaml says of a job (the library's
// cmake options and fixes, the backend's compiler, env, options, flags,
// libraries and smoke program) and the toolchain's flags: an install made
// from another recipe is made again.
func Recipe(j Job) string {
	type fix struct{ Name, File, Find, Replace string }
	var fixes []fix
	for _, f := range j.Library.Fixes {
		fixes = append(fixes, fix{f.Name, f.File, f.Find, f.Replace})
	}
	b := *j.Backend
	b.Pos, b.ToolchainsAt, b.Toolchains, b.Doc = diag.Pos{}, nil, nil, ""
	data, _ := json.Marshal(struct {
		CMake   []Option
		Fixes   []fix
		Backend Backend
		Flags   []string
	}{j.Library.CMake, fixes, b, j.Toolchain.Flags})
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}

func installOne(ctx context.Context, j Job, opt Options, checked map[string]error) Result {
	l, t := j.Library, j.Toolchain
	prefix := l.Prefix(opt.Dir, j.Backend.Name, t.ID)
	r := Result{ID: j.ID(), Prefix: prefix}
	if !t.Found() {
		r.Status, r.Reason = Skipped, "toolchain "+t.ID+": "+t.Missing
		return r
	}
	if current(j, prefix) {
		r.Status = Current
		return r
	}
	t0 := time.Now()
	fail := func(format string, args ...any) Result {
		r.Status, r.Reason, r.Seconds = Failed, fmt.Sprintf(format, args...), time.Since(t0).Seconds()
		return r
	}
	if opt.Deps == "" {
		return fail("no sources folder: set PM_DEPS (or -deps) to the folder holding %s", l.Source)
	}
	src := filepath.Join(opt.Deps, l.Source)
	if abs, err := filepath.Abs(src); err == nil {
		src = abs
	}
	if _, ok := checked[src]; !ok {
		checked[src] = CheckSHA256(src, l.SHA256)
	}
	if err := checked[src]; err != nil {
		return fail("%v", err)
	}
	// A reinstall starts from nothing: the old install.json goes first.
	if err := os.RemoveAll(prefix); err != nil {
		return fail("%v", err)
	}
	if err := os.MkdirAll(prefix, 0o755); err != nil {
		return fail("%v", err)
	}
	r.Log = filepath.Join(prefix, LogFile)
	logf, err := os.Create(r.Log)
	if err != nil {
		return fail("%v", err)
	}
	defer logf.Close()
	scratch, err := os.MkdirTemp(opt.Scratch, "pm-"+l.Name+"-"+j.Backend.Name+"-"+t.ID+"-")
	if err != nil {
		return fail("%v", err)
	}
	defer os.RemoveAll(scratch)
	in, err := build(ctx, j, opt, src, prefix, scratch, logf)
	if err != nil {
		fmt.Fprintf(logf, "\nfailed: %v\n", err)
		return fail("%v (log %s)", err, r.Log)
	}
	in.Seconds = time.Since(t0).Seconds()
	in.Date = opt.Now().UTC().Format(time.RFC3339)
	b, err := json.MarshalIndent(in, "", "  ")
	if err != nil {
		return fail("%v", err)
	}
	fmt.Fprintf(logf, "\ninstalled in %.1f s\n", in.Seconds)
	if err := fsutil.WriteFile(filepath.Join(prefix, InstallFile), append(b, '\n'), 0o644); err != nil {
		return fail("%v", err)
	}
	r.Status, r.Seconds = Installed, in.Seconds
	return r
}

// vars are the placeholders of a backend's cmake options, compiler, env and
// flags: ${COMPILER} (the toolchain's compiler), ${COMPILER_C} (its C
// sibling), ${SRC}, ${PREFIX}, ${CUDA} (the CUDA root), ${TOOLCHAIN_FLAGS}
// (the toolchain flags the backend keeps, space-separated) and
// ${TOOLCHAIN_FLAGS_LIST} (the same, ;-separated, for a CMake list).
type vars map[string]string

func (v vars) expand(s string) string {
	for k, x := range v {
		s = strings.ReplaceAll(s, "${"+k+"}", x)
	}
	return s
}

func (v vars) all(ss []string) []string {
	var out []string
	for _, s := range ss {
		out = append(out, v.expand(s))
	}
	return out
}

// keepFlags are the toolchain flags matching patterns (FlagMatch); a flag
// that takes the next as its argument (-Xoffload-linker, -Xopenmp-target,
// -x) keeps it.
func keepFlags(flags, patterns []string) []string {
	var out []string
	for i := 0; i < len(flags); i++ {
		f := flags[i]
		if !slices.ContainsFunc(patterns, func(p string) bool { return FlagMatch(p, f) }) {
			continue
		}
		out = append(out, f)
		if (strings.HasPrefix(f, "-X") || f == "-x") && i+1 < len(flags) {
			out = append(out, flags[i+1])
			i++
		}
	}
	return out
}

// FlagMatch reports whether a toolchain flag matches a pattern of a
// backend's toolchain_flags: the flag itself, or a prefix ending in *
// (--libomptarget-nvptx-bc-path=* keeps the flag whatever its path).
func FlagMatch(pattern, flag string) bool {
	if p, ok := strings.CutSuffix(pattern, "*"); ok {
		return strings.HasPrefix(flag, p)
	}
	return pattern == flag
}

// CUDAVersion is the CUDA version a toolchain builds with: nvcc's own, or
// the ptxas an LLVM offload toolchain uses; nil when none.
func CUDAVersion(t *toolchain.Toolchain) *version.Version {
	if t.Family == "nvcc" {
		return t.Version
	}
	return t.CUDA
}

// cudaRoot is the CUDA installation of a toolchain: nvcc's, or ptxas' on
// PATH (the one LLVM offload uses); "" when none.
func cudaRoot(t *toolchain.Toolchain) string {
	bin := ""
	if t.Family == "nvcc" {
		bin = t.Path
	} else if p, err := exec.LookPath("ptxas"); err == nil {
		bin = p
	}
	if bin == "" {
		return ""
	}
	return filepath.Dir(filepath.Dir(bin))
}

// cCompiler is the C compiler beside a C++ one (clang++-19: clang-19,
// g++: gcc), "" when there is none.
func cCompiler(cxx string) string {
	dir, base := filepath.Split(cxx)
	for _, p := range [][2]string{{"clang++", "clang"}, {"g++", "gcc"}} {
		if strings.Contains(base, p[0]) {
			c := filepath.Join(dir, strings.Replace(base, p[0], p[1], 1))
			if _, err := os.Stat(c); err == nil {
				return c
			}
		}
	}
	return ""
}

// Applies reports whether a cmake option applies to toolchain t.
func (o Option) Applies(t *toolchain.Toolchain) bool {
	if o.Target != "" && o.Target != t.Target {
		return false
	}
	if o.CUDA != nil {
		cv := CUDAVersion(t)
		return cv != nil && o.CUDA.Check(cv)
	}
	return true
}

// configureArgs are the cmake configure arguments of a job.
func configureArgs(j Job, v vars, srcDir, buildDir, prefix, generator string) []string {
	args := []string{"-S", srcDir, "-B", buildDir, "-G", generator, "-DCMAKE_INSTALL_PREFIX=" + prefix,
		"-DCMAKE_CXX_COMPILER=" + v.expand(j.Backend.CXX)}
	if cc := v["COMPILER_C"]; cc != "" && j.Backend.CXX == "${COMPILER}" {
		args = append(args, "-DCMAKE_C_COMPILER="+cc)
	}
	for _, o := range append(slices.Clone(j.Library.CMake), j.Backend.CMake...) {
		if o.Applies(j.Toolchain) {
			args = append(args, v.expand(o.Arg))
		}
	}
	return args
}

func build(ctx context.Context, j Job, opt Options, src, prefix, scratch string, logw io.Writer) (*Install, error) {
	l, b, t := j.Library, j.Backend, j.Toolchain
	step := func(what string) { fmt.Fprintf(logw, "\n== %s (%s)\n", what, time.Now().UTC().Format(time.RFC3339)) }
	step("unpack " + src)
	if err := run(ctx, logw, nil, "", "tar", "-C", scratch, "-xJf", src); err != nil {
		return nil, fmt.Errorf("unpacking %s: %v", src, err)
	}
	srcDir := filepath.Join(scratch, l.Dir)
	if _, err := os.Stat(srcDir); err != nil {
		return nil, fmt.Errorf("%s does not unpack into %s (variants/libraries.yaml dir)", l.Source, l.Dir)
	}
	step("fixes")
	fixes, err := ApplyFixes(srcDir, l.Fixes)
	if err != nil {
		return nil, err
	}
	fmt.Fprintf(logw, "applied: %s\n", strings.Join(fixes, ", "))
	kept := keepFlags(t.Flags, b.ToolchainFlags)
	v := vars{"COMPILER": t.Path, "COMPILER_C": cCompiler(t.Path), "SRC": srcDir, "PREFIX": prefix, "CUDA": cudaRoot(t),
		"TOOLCHAIN_FLAGS": strings.Join(kept, " "), "TOOLCHAIN_FLAGS_LIST": strings.Join(kept, ";")}
	env := append(append(os.Environ(), t.Env...), v.all(b.Env)...)
	generator := "Unix Makefiles"
	if _, err := exec.LookPath("ninja"); err == nil {
		generator = "Ninja"
	}
	buildDir := filepath.Join(scratch, "build")
	cmakeArgs := configureArgs(j, v, srcDir, buildDir, prefix, generator)
	step("configure")
	if err := run(ctx, logw, env, scratch, "cmake", cmakeArgs...); err != nil {
		return nil, fmt.Errorf("cmake configure: %v", err)
	}
	step("build")
	if err := run(ctx, logw, env, scratch, "cmake", "--build", buildDir, "-j", strconv.Itoa(opt.Jobs)); err != nil {
		return nil, fmt.Errorf("build: %v", err)
	}
	step("install")
	if err := run(ctx, logw, env, scratch, "cmake", "--install", buildDir); err != nil {
		return nil, fmt.Errorf("cmake install: %v", err)
	}
	in := &Install{Name: l.Name, Version: l.Version, Backend: b.Name, Toolchain: t.ID, Prefix: prefix, Compiler: t.Path,
		CompilerVersion: t.VersionString(), CompilerIdentity: t.Identity, SHA256: l.SHA256, Fixes: fixes, Recipe: Recipe(j), CMake: cmakeArgs}
	if cv := CUDAVersion(t); cv != nil {
		in.CUDA = cv.String()
	}
	in.CompileFlags = v.all(b.CompileFlags)
	libs, err := LibFlags(prefix, b.Libs)
	if err != nil {
		return nil, err
	}
	in.LinkFlags = append(libs, v.all(b.LinkFlags)...)
	step("smoke check")
	if err := Smoke(ctx, t, in, b.Smoke, scratch, opt.RunGPU, logw); err != nil {
		return nil, fmt.Errorf("smoke check: %v", err)
	}
	return in, nil
}

// LibFlags links the static libraries names, in order, from prefix/lib or
// prefix/lib64: -L<folder> once per folder, then -l<name> each. Not the
// archives' paths: nvcc's -x cu (the CUDA toolchain's flags) would compile
// an archive named on its command line as CUDA source.
func LibFlags(prefix string, names []string) ([]string, error) {
	var dirs, ls []string
	for _, name := range names {
		found := ""
		for _, d := range []string{"lib", "lib64"} {
			if _, err := os.Stat(filepath.Join(prefix, d, "lib"+name+".a")); err == nil {
				found = filepath.Join(prefix, d)
				break
			}
		}
		if found == "" {
			return nil, fmt.Errorf("the install has no lib%s.a under %s/lib or lib64 (variants/libraries.yaml libs)", name, prefix)
		}
		if !slices.Contains(dirs, found) {
			dirs = append(dirs, found)
		}
		ls = append(ls, "-l"+name)
	}
	var out []string
	for _, d := range dirs {
		out = append(out, "-L"+d)
	}
	return append(out, ls...), nil
}

// SmokeCommand is how a program is built against an install: the
// toolchain's command and flags, the install's compile flags, the source,
// the install's link flags. For a target never run here whose toolchain has
// device_only flags, only the device code is compiled (no link).
func SmokeCommand(t *toolchain.Toolchain, in *Install, source, out string) []string {
	args := append([]string{}, t.Flags...)
	deviceOnly := toolchain.NotRun(t.Target) != "" && len(t.DeviceOnly) > 0
	if deviceOnly {
		args = append(args, t.DeviceOnly...)
	}
	args = append(append(args, in.CompileFlags...), "-o", out, source)
	if !deviceOnly {
		args = append(args, in.LinkFlags...)
	}
	return t.Command(args...)
}

// Smoke builds the program text against the install in dir, and runs it
// when the toolchain's target is the host, or an NVIDIA GPU with runGPU.
func Smoke(ctx context.Context, t *toolchain.Toolchain, in *Install, program, dir string, runGPU bool, logw io.Writer) error {
	source, bin := filepath.Join(dir, "smoke.cpp"), filepath.Join(dir, "smoke")
	if err := os.WriteFile(source, []byte(program), 0o644); err != nil {
		return err
	}
	cmd := SmokeCommand(t, in, source, bin)
	if err := run(ctx, logw, append(os.Environ(), t.Env...), dir, cmd[0], cmd[1:]...); err != nil {
		return err
	}
	if t.GPU() && (!runGPU || toolchain.NotRun(t.Target) != "") {
		fmt.Fprintf(logw, "built, not run (target %s)\n", t.Target)
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	return run(rctx, logw, append(os.Environ(), "OMP_NUM_THREADS=2"), dir, bin)
}

// run runs a command with its output into the log; the error carries the
// output's last lines.
func run(ctx context.Context, logw io.Writer, env []string, dir, name string, args ...string) error {
	fmt.Fprintf(logw, "$ %s %s\n", name, strings.Join(args, " "))
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env, cmd.Dir = env, dir
	var tail tailWriter
	cmd.Stdout = io.MultiWriter(logw, &tail)
	cmd.Stderr = cmd.Stdout
	if err := cmd.Run(); err != nil {
		if last := tail.firstError(); last != "" {
			return fmt.Errorf("%s: %v: %s", filepath.Base(name), err, last)
		}
		return fmt.Errorf("%s: %v", filepath.Base(name), err)
	}
	return nil
}

// tailWriter keeps the last 64 KiB of a command's output.
type tailWriter struct{ b []byte }

func (w *tailWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	if len(w.b) > 64<<10 {
		w.b = w.b[len(w.b)-64<<10:]
	}
	return len(p), nil
}

// firstError is the first line of the kept output that reads as an error,
// else its last line.
func (w *tailWriter) firstError() string {
	lines := strings.Split(strings.TrimSpace(string(w.b)), "\n")
	for i, line := range lines {
		if strings.Contains(line, "error") || strings.Contains(line, "Error") {
			// CMake says what is wrong on the next line
			if strings.HasSuffix(line, ":") && i+1 < len(lines) {
				line += " " + strings.TrimSpace(lines[i+1])
			}
			return strings.TrimSpace(line)
		}
	}
	return strings.TrimSpace(lines[len(lines)-1])
}
