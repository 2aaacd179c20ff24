// Package toolchain finds compilers, reads their versions, and derives what
// each can build from the capability table (hashicorp/go-version constraints).
package toolchain

import (
	"context"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	version "github.com/hashicorp/go-version"
	"gopkg.in/yaml.v3"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// Toolchain is a compiler with a target and flags.
type Toolchain struct {
	ID        string
	Family    string // one of Families
	Commands  []string
	Target    string   // host, or a GPU architecture such as sm_90 or gfx90a
	Devices   []string // harness devices it builds for (HarnessDevices)
	DevicesAt diag.Pos // where Devices is written
	Flags     []string
	// DeviceOnly are the flags that compile only a cell's device code, for a
	// target never run here (AMD): PM_DEVICE_ONLY's check of every cell.
	DeviceOnly  []string
	Env         []string // NAME=value set for the compiler (build and --version)
	Needs       []string // files that must exist for the toolchain to work
	RuntimeLibs []string
	CUDAFrom    string // "ptxas": the CUDA version of the ptxas on PATH matters (LLVM offload)
	Pinned      string // version from the file, if any
	Pick        string // "first" (default): the first command found; "newest": the highest version
	Enabled     bool
	Pos         diag.Pos

	// Found by Discover.
	Path     string
	Version  *version.Version
	CUDA     *version.Version // ptxas version, when CUDAFrom is set
	Identity string           // first line of --version: part of the build hash
	Missing  string           // why it is not usable, "" when it is
	Caps     map[string]bool
	Broken   string // a known break that makes its GPU cells unusable
	// Candidates are the commands found, "path version", when Pick is
	// "newest": what the choice was made among.
	Candidates []string
}

// Found reports whether the toolchain can build.
func (t *Toolchain) Found() bool { return t.Missing == "" }

// GPU reports whether the toolchain builds for a GPU.
func (t *Toolchain) GPU() bool { return t.Target != "host" }

// Vendor is the GPU vendor of a target: nvidia (sm_*), amd (gfx*), or ""
// for host and for an architecture of neither.
func Vendor(target string) string {
	switch {
	case strings.HasPrefix(target, "sm_"):
		return "nvidia"
	case strings.HasPrefix(target, "gfx"):
		return "amd"
	}
	return ""
}

// NoAMDGPU is why a cell built for an AMD target has no measurement: no AMD
// GPU is available, so AMD cells are compiled (in CI too) and never run, here or
// on an NVIDIA GPU host (docs/amd.md).
const NoAMDGPU = "compiles; not run (no AMD GPU)"

// NotRun says why binaries for target never run ("" when they may, given a
// GPU for a GPU target): NoAMDGPU for AMD targets.
func NotRun(target string) string {
	if Vendor(target) == "amd" {
		return NoAMDGPU
	}
	return ""
}

// Command is the argument list that runs the compiler with args: through
// env(1) when the toolchain sets variables (hipcc picks its platform from
// HIP_PLATFORM, and would pick NVIDIA where nvcc is installed).
func (t *Toolchain) Command(args ...string) []string {
	cmd := []string{t.Path}
	if len(t.Env) > 0 {
		cmd = append(append([]string{"env"}, t.Env...), t.Path)
	}
	return append(cmd, args...)
}

// Builds reports whether the toolchain builds for the harness device.
func (t *Toolchain) Builds(device string) bool {
	for _, d := range t.Devices {
		if d == device {
			return true
		}
	}
	return false
}

// VersionString is the version or "?".
func (t *Toolchain) VersionString() string {
	if t.Version == nil {
		return "?"
	}
	return t.Version.String()
}

// Capability is one row of the capability table.
type Capability struct {
	Name    string
	Doc     string
	When    map[string]version.Constraints // family -> constraint
	Raw     map[string]string
	Targets []string // "host", "gpu"; empty: both
	Source  string
	// Policy says why the version bound is a choice (following a paper)
	// rather than what compilers accept; such a row has no compile probe.
	Policy string
}

// On reports whether the row applies to builds for target.
func (c *Capability) On(target string) bool {
	kind := "host"
	if target != "host" {
		kind = Vendor(target)
	}
	return slices.Contains(targetsOrBoth(c.Targets), kind)
}

// Break is a known broken combination.
type Break struct {
	Name    string
	When    map[string]version.Constraints
	Raw     map[string]string
	CUDA    version.Constraints
	RawCUDA string
	Reason  string
	Source  string
}

// Table is the capability file.
type Table struct {
	Caps   []Capability
	Breaks []Break
}

// Names lists the capabilities, each once (a name may have a row per target).
func (t *Table) Names() []string {
	var out []string
	for _, c := range t.Caps {
		if !slices.Contains(out, c.Name) {
			out = append(out, c.Name)
		}
	}
	return out
}

// Has reports whether the table names a capability.
func (tb *Table) Has(name string) bool {
	for _, c := range tb.Caps {
		if c.Name == name {
			return true
		}
	}
	return false
}

// Cap returns a capability by name.
func (tb *Table) Cap(name string) *Capability {
	for i := range tb.Caps {
		if tb.Caps[i].Name == name {
			return &tb.Caps[i]
		}
	}
	return nil
}

// Need describes what a capability needs from family, e.g. "llvm >= 18"
// (with each row's targets where the name has a row per target).
func (tb *Table) Need(name, family string) string {
	var rows []Capability
	for _, c := range tb.Caps {
		if c.Name == name {
			rows = append(rows, c)
		}
	}
	if len(rows) == 0 {
		return name
	}
	var needs []string
	for _, c := range rows {
		on := ""
		if len(rows) > 1 {
			on = " on " + strings.Join(c.Targets, ", ")
		}
		if raw, ok := c.Raw[family]; ok {
			needs = append(needs, fmt.Sprintf("%s %s%s", family, raw, on))
			continue
		}
		var fams []string
		for f, raw := range c.Raw {
			fams = append(fams, f+" "+raw)
		}
		sort.Strings(fams)
		if len(fams) == 0 {
			needs = append(needs, "no compiler family"+on)
			continue
		}
		needs = append(needs, strings.Join(fams, " or ")+on)
	}
	return strings.Join(needs, "; ")
}

// Families lists the compiler families a toolchain may belong to: those
// whose version this package reads (versionRe), sorted. Toolchains,
// capability rows, messages and the report's vocabulary take it from here.
var Families = slices.Sorted(maps.Keys(versionRe))

// HarnessDevices lists the devices the harness at dir implements, sorted:
// each is a header pm/device_<name>.hpp, which a generated program includes
// for its strategy's device. They are the execution spaces a strategy may
// run on and a toolchain may build for. cuda is the CUDA dialect: nvcc
// builds it, and hipcc for AMD targets through harness/pm/gpu_runtime.hpp.
func HarnessDevices(dir string) ([]string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "pm", "device_*.hpp"))
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("%s: no devices (pm/device_<name>.hpp)", dir)
	}
	var out []string
	for _, f := range files {
		out = append(out, strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "device_"), ".hpp"))
	}
	sort.Strings(out)
	return out, nil
}

// CheckDevices reports a toolchain's device that the harness does not
// implement (devices: HarnessDevices).
func CheckDevices(tcs []*Toolchain, devices []string) error {
	var errs diag.List
	for _, t := range tcs {
		for _, dev := range t.Devices {
			if !slices.Contains(devices, dev) {
				errs.Add(t.DevicesAt, "unknown device %q (known: %s)%s", dev, strings.Join(devices, ", "), diag.DidYouMean(dev, devices))
			}
		}
	}
	return errs.Err()
}

// Targets are the values of a capability row's targets: host builds, GPU
// builds of any vendor, or of one vendor (Vendor).
var Targets = []string{"host", "gpu", "nvidia", "amd"}

// LoadTable reads the capability table.
func LoadTable(file string) (*Table, error) {
	var errs diag.List
	root := diag.ReadYAML(file, &errs)
	if root == nil {
		return nil, errs.Err()
	}
	d := diag.Decoder{File: file, Errs: &errs}
	f := d.Fields(root, "capability file", "capabilities", "breaks")
	tb := &Table{}
	seen := map[string][]string{} // a name's targets so far; a name may have one row for host and one for GPU builds
	for _, item := range d.Seq(f["capabilities"], "capabilities") {
		cf := d.Fields(item, "capability", "name", "doc", "when", "targets", "source", "policy")
		d.Require(item, cf, "capability", "name", "when", "source")
		c := Capability{Name: d.String(cf["name"], "name"), Doc: d.String(cf["doc"], "doc"),
			Targets: d.Strings(cf["targets"], "targets"), Source: d.String(cf["source"], "source"), Policy: d.String(cf["policy"], "policy")}
		if prev, ok := seen[c.Name]; ok && overlap(prev, c.Targets) {
			d.Add(cf["name"], "capability %q defined twice for the same targets (rows of one name need disjoint targets)", c.Name)
		}
		seen[c.Name] = append(seen[c.Name], targetsOrBoth(c.Targets)...)
		c.When, c.Raw = constraints(d, cf["when"])
		for _, t := range c.Targets {
			if !slices.Contains(Targets, t) {
				d.Add(cf["targets"], "targets are %s, not %q", strings.Join(Targets, ", "), t)
			}
		}
		tb.Caps = append(tb.Caps, c)
	}
	for _, item := range d.Seq(f["breaks"], "breaks") {
		bf := d.Fields(item, "break", "name", "when", "cuda", "reason", "source")
		d.Require(item, bf, "break", "name", "when", "reason", "source")
		b := Break{Name: d.String(bf["name"], "name"), Reason: d.String(bf["reason"], "reason"), Source: d.String(bf["source"], "source")}
		b.When, b.Raw = constraints(d, bf["when"])
		if bf["cuda"] != nil {
			b.RawCUDA = d.String(bf["cuda"], "cuda")
			c, err := version.NewConstraint(b.RawCUDA)
			if err != nil {
				d.Add(bf["cuda"], "bad version constraint %q: %v", b.RawCUDA, err)
			}
			b.CUDA = c
		}
		tb.Breaks = append(tb.Breaks, b)
	}
	return tb, errs.Err()
}

func constraints(d diag.Decoder, n *yaml.Node) (map[string]version.Constraints, map[string]string) {
	out, raw := map[string]version.Constraints{}, map[string]string{}
	for _, kv := range d.Pairs(n, "when") {
		fam := kv[0].Value
		if !slices.Contains(Families, fam) {
			d.Add(kv[0], "unknown compiler family %q (known: %s)%s", fam, strings.Join(Families, ", "), diag.DidYouMean(fam, Families))
			continue
		}
		s := d.String(kv[1], "constraint")
		c, err := version.NewConstraint(s)
		if err != nil {
			d.Add(kv[1], "bad version constraint %q: %v", s, err)
			continue
		}
		out[fam], raw[fam] = c, s
	}
	return out, raw
}

// Load reads the toolchain file; root replaces ${ROOT}.
func Load(file, root string) ([]*Toolchain, error) {
	var errs diag.List
	rootNode := diag.ReadYAML(file, &errs)
	if rootNode == nil {
		return nil, errs.Err()
	}
	d := diag.Decoder{File: file, Errs: &errs}
	f := d.Fields(rootNode, "toolchain file", "toolchains")
	var out []*Toolchain
	seen := map[string]bool{}
	expand := func(ss []string) []string {
		for i, s := range ss {
			ss[i] = strings.ReplaceAll(s, "${ROOT}", root)
		}
		return ss
	}
	for _, item := range d.Seq(f["toolchains"], "toolchains") {
		tf := d.Fields(item, "toolchain", "id", "family", "commands", "target", "devices", "flags", "needs",
			"runtime_libs", "cuda_from", "version", "pick", "enabled", "env", "device_only")
		if !d.Require(item, tf, "toolchain", "id", "family", "commands", "target", "devices") {
			continue
		}
		t := &Toolchain{ID: d.String(tf["id"], "id"), Family: d.String(tf["family"], "family"),
			Commands: expand(d.Strings(tf["commands"], "commands")), Target: d.String(tf["target"], "target"),
			Devices: d.Strings(tf["devices"], "devices"), Flags: expand(d.Strings(tf["flags"], "flags")),
			DeviceOnly: d.Strings(tf["device_only"], "device_only"),
			Needs:      expand(d.Strings(tf["needs"], "needs")), RuntimeLibs: expand(d.Strings(tf["runtime_libs"], "runtime_libs")),
			CUDAFrom: d.String(tf["cuda_from"], "cuda_from"), Pinned: d.String(tf["version"], "version"),
			Pick: d.String(tf["pick"], "pick"), Env: d.Strings(tf["env"], "env"),
			Enabled: tf["enabled"] == nil || d.Bool(tf["enabled"], "enabled"), Pos: d.Pos(item), DevicesAt: d.Pos(tf["devices"])}
		if seen[t.ID] {
			d.Add(tf["id"], "toolchain %q defined twice", t.ID)
		}
		seen[t.ID] = true
		if !slices.Contains(Families, t.Family) {
			d.Add(tf["family"], "unknown compiler family %q (known: %s)%s", t.Family, strings.Join(Families, ", "), diag.DidYouMean(t.Family, Families))
		}
		if t.Target != "host" && Vendor(t.Target) == "" {
			d.Add(tf["target"], "target is host or a GPU architecture (sm_*, gfx*), not %q", t.Target)
		}
		for _, e := range t.Env {
			if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
				d.Add(tf["env"], "env entries are NAME=value, not %q", e)
			}
		}
		if t.Pick != "" && t.Pick != "first" && t.Pick != "newest" {
			d.Add(tf["pick"], "pick is first or newest, not %q", t.Pick)
		}
		if t.Pinned != "" {
			if _, err := version.NewVersion(t.Pinned); err != nil {
				d.Add(tf["version"], "bad version %q: %v", t.Pinned, err)
			}
		}
		out = append(out, t)
	}
	return out, errs.Err()
}

// versionRe reads a version from `--version` output, by compiler family:
// a family is a key here.
var versionRe = map[string]*regexp.Regexp{
	"gcc":   regexp.MustCompile(`(?m)^\S*(?:g\+\+|gcc)\S* \(.*\) (\d+\.\d+(?:\.\d+)?)`),
	"llvm":  regexp.MustCompile(`clang version (\d+\.\d+(?:\.\d+)?)`),
	"nvcc":  regexp.MustCompile(`release (\d+\.\d+)`),
	"nvhpc": regexp.MustCompile(`nvc\+\+ (\d+\.\d+)`),
	"rocm":  regexp.MustCompile(`HIP version: (\d+\.\d+)`),
}

var ptxasRe = regexp.MustCompile(`release (\d+\.\d+)`)

// ParseVersion finds the family's version in `--version` output.
func ParseVersion(family, out string) (*version.Version, error) {
	re := versionRe[family]
	if re == nil {
		return nil, fmt.Errorf("no version pattern for family %q", family)
	}
	m := re.FindStringSubmatch(out)
	if m == nil {
		return nil, fmt.Errorf("no %s version in %q", family, firstLine(out))
	}
	return version.NewVersion(m[1])
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// Probe runs a command and returns its combined output.
type Probe func(ctx context.Context, name string, args ...string) (string, error)

// ExecProbe runs the real command.
func ExecProbe(ctx context.Context, name string, args ...string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	return string(out), err
}

// Discover finds each toolchain's command, version and capabilities.
func Discover(ctx context.Context, tcs []*Toolchain, tb *Table, probe Probe) {
	for _, t := range tcs {
		discover(ctx, t, tb, probe)
	}
}

func discover(ctx context.Context, t *Toolchain, tb *Table, probe Probe) {
	t.Caps = map[string]bool{}
	if !t.Enabled {
		t.Missing = "disabled in toolchains.yaml"
		return
	}
	if t.Pick == "newest" && t.Pinned == "" {
		pickNewest(ctx, t, probe)
	} else {
		for _, c := range t.Commands {
			if p, err := exec.LookPath(c); err == nil {
				t.Path = p
				break
			}
		}
	}
	if t.Path == "" {
		t.Missing = fmt.Sprintf("%s not found on PATH", strings.Join(t.Commands, " or "))
		return
	}
	for _, n := range t.Needs {
		if _, err := os.Stat(n); err != nil {
			t.Missing = fmt.Sprintf("%s is missing (see scripts/install-toolchains.sh)", n)
			return
		}
	}
	cmd := t.Command("--version")
	out, err := probe(ctx, cmd[0], cmd[1:]...)
	t.Identity = t.Path + " " + firstLine(out)
	if t.Pinned != "" {
		t.Version, _ = version.NewVersion(t.Pinned)
	} else if v, perr := ParseVersion(t.Family, out); perr == nil {
		t.Version = v
	} else {
		t.Missing = fmt.Sprintf("cannot read the version of %s: %v", t.Path, firstErr(err, perr))
		return
	}
	if t.CUDAFrom == "ptxas" {
		if p, err := exec.LookPath("ptxas"); err == nil {
			if out, err := probe(ctx, p, "--version"); err == nil {
				if m := ptxasRe.FindStringSubmatch(out); m != nil {
					t.CUDA, _ = version.NewVersion(m[1])
				}
			}
		}
		if t.CUDA == nil {
			t.Missing = "ptxas (CUDA) not found on PATH: LLVM offload to NVPTX needs it"
			return
		}
	}
	Derive(t, tb)
}

// commandPaths lists the executables a toolchain's commands name, in order,
// once each: a command with a slash is a path and may be a glob
// (/usr/local/cuda-*/bin/nvcc), any other is looked up on PATH.
func commandPaths(cmds []string) []string {
	var out []string
	seen := map[string]bool{}
	add := func(p string) {
		real, err := filepath.EvalSymlinks(p)
		if err != nil || seen[real] {
			return
		}
		if lp, err := exec.LookPath(p); err == nil {
			seen[real] = true
			out = append(out, lp)
		}
	}
	for _, c := range cmds {
		if !strings.Contains(c, "/") {
			if p, err := exec.LookPath(c); err == nil {
				add(p)
			}
			continue
		}
		matches, _ := filepath.Glob(c)
		sort.Strings(matches)
		for _, m := range matches {
			add(m)
		}
	}
	return out
}

// pickNewest sets Path to the command with the highest version; among equal
// versions the first listed wins.
func pickNewest(ctx context.Context, t *Toolchain, probe Probe) {
	var best *version.Version
	for _, p := range commandPaths(t.Commands) {
		out, _ := probe(ctx, p, "--version")
		v, err := ParseVersion(t.Family, out)
		if err != nil {
			t.Candidates = append(t.Candidates, p+" ?")
			continue
		}
		t.Candidates = append(t.Candidates, p+" "+v.String())
		if best == nil || v.GreaterThan(best) {
			best, t.Path = v, p
		}
	}
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// targetsOrBoth lists the kinds of target a row covers: gpu stands for
// every vendor.
func targetsOrBoth(t []string) []string {
	if len(t) == 0 {
		t = []string{"host", "gpu"}
	}
	var out []string
	for _, x := range t {
		if x == "gpu" {
			out = append(out, "nvidia", "amd")
			continue
		}
		out = append(out, x)
	}
	return out
}

func overlap(a, b []string) bool {
	for _, t := range targetsOrBoth(b) {
		if slices.Contains(a, t) {
			return true
		}
	}
	return false
}

// Derive sets the capabilities and breaks of a toolchain with a version.
func Derive(t *Toolchain, tb *Table) {
	t.Caps = map[string]bool{}
	for _, c := range tb.Caps {
		con, ok := c.When[t.Family]
		if !ok || t.Version == nil || !con.Check(t.Version) {
			continue
		}
		if !c.On(t.Target) {
			continue
		}
		t.Caps[c.Name] = true
	}
	for _, b := range tb.Breaks {
		con, ok := b.When[t.Family]
		if !ok || !t.GPU() || t.Version == nil || !con.Check(t.Version) {
			continue
		}
		if b.CUDA != nil && (t.CUDA == nil || !b.CUDA.Check(t.CUDA)) {
			continue
		}
		t.Broken = fmt.Sprintf("%s (%s %s with CUDA %s): %s", b.Name, t.Family, t.VersionString(), cudaString(t), b.Reason)
	}
}

func cudaString(t *Toolchain) string {
	if t.CUDA == nil {
		return "?"
	}
	return t.CUDA.String()
}

// CapNames returns the toolchain's capabilities, sorted.
func (t *Toolchain) CapNames() []string {
	var out []string
	for c := range t.Caps {
		out = append(out, c)
	}
	sort.Strings(out)
	return out
}
