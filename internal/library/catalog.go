// Package library owns the field's libraries that strategies build against
// (Kokkos, RAJA): which releases, backends and toolchains
// variants/libraries.yaml names, what is installed where
// (.toolchains/libraries/<name>-<version>/<backend>-<toolchain>/, each with
// its install.json), the gate a cell of a library strategy passes (installed
// for its toolchain, version gates as capabilities), and the installer that
// builds each install from a source release with CMake (docs/libraries.md).
package library

import (
	"fmt"
	"path"
	"slices"
	"strings"

	version "github.com/hashicorp/go-version"
	"gopkg.in/yaml.v3"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// Catalog is variants/libraries.yaml.
type Catalog struct {
	File      string
	Libraries []*Library
}

// Library is one release of a library and the backends it is installed for.
type Library struct {
	Name    string
	Version string
	// Title is the library's name as its project writes it (Kokkos, RAJA;
	// default Name), Tag its release's tag (v2025.09.1; default Version):
	// Release names the library so in the book and the figures.
	Title, Tag string
	// Source is the release's file name in the sources folder (PM_DEPS),
	// SHA256 its checksum, Dir the folder it unpacks into.
	Source, SHA256, Dir string
	// CMake are the configure options of every backend (Option).
	CMake []Option
	// Fixes are exact replacements applied to the unpacked sources, in order.
	Fixes        []Fix
	Capabilities []Capability
	Backends     []*Backend
	Pos          diag.Pos
}

// Backend is one way a library is built (Kokkos' Serial+OpenMP host, CUDA,
// OpenMPTarget) and the toolchains it is installed for.
type Backend struct {
	Name string
	Doc  string
	// Toolchains are ids of toolchains.yaml; a cell of another toolchain is
	// no cell of a strategy naming this backend.
	Toolchains   []string
	ToolchainsAt []diag.Pos
	// CXX is the compiler CMake is given (default ${COMPILER}, the toolchain's);
	// Env is NAME=value for the configure and build.
	CXX string
	Env []string
	// ToolchainFlags are the toolchain's flags that the library's own build
	// needs too (${TOOLCHAIN_FLAGS}): each a flag, or a prefix ending in *
	// (FlagMatch).
	ToolchainFlags []string
	CMake          []Option
	// CompileFlags and LinkFlags are what a consumer adds to the
	// toolchain's command; Libs the static libraries, in link order, found
	// under lib/ or lib64/ of the prefix (before LinkFlags).
	CompileFlags []string
	Libs         []string
	LinkFlags    []string
	// Smoke is a small program built against the install (and run when
	// the toolchain's target is the host): the install's last check.
	Smoke string
	Pos   diag.Pos
}

// Option is one CMake configure argument, applied when the toolchain's
// target matches Target ("" any) and its CUDA version meets CUDA (nil any).
type Option struct {
	Arg     string
	Target  string
	CUDA    version.Constraints
	RawCUDA string
}

// Fix is an exact text replacement in one file of a library's sources:
// Find must occur exactly once.
type Fix struct {
	Name, File, Why string
	Find, Replace   string
	Pos             diag.Pos
}

// Capability is a version gate of a library: an install has it when its
// version meets When. Strategies require it like a compiler's capability
// (variants/strategies.yaml `requires:`).
type Capability struct {
	Name, Doc, Source string
	When              version.Constraints
	Raw               string
}

// Names lists the libraries.
func (c *Catalog) Names() []string {
	var out []string
	for _, l := range c.Libraries {
		out = append(out, l.Name)
	}
	return out
}

// Library returns a library by name, or nil.
func (c *Catalog) Library(name string) *Library {
	if c == nil {
		return nil
	}
	for _, l := range c.Libraries {
		if l.Name == name {
			return l
		}
	}
	return nil
}

// Backend returns a backend by name, or nil.
func (l *Library) Backend(name string) *Backend {
	for _, b := range l.Backends {
		if b.Name == name {
			return b
		}
	}
	return nil
}

// BackendNames lists the library's backends.
func (l *Library) BackendNames() []string {
	var out []string
	for _, b := range l.Backends {
		out = append(out, b.Name)
	}
	return out
}

// Installs lists the toolchains a backend installs for.
func (b *Backend) Installs(toolchain string) bool { return slices.Contains(b.Toolchains, toolchain) }

// Load reads variants/libraries.yaml; toolchains are the ids of
// toolchains.yaml (nil: not checked).
func Load(file string, toolchains []string) (*Catalog, error) {
	var errs diag.List
	root := diag.ReadYAML(file, &errs)
	if root == nil {
		return nil, errs.Err()
	}
	return parse(file, root, toolchains, &errs), errs.Err()
}

// Parse reads a libraries file's text (Load without the file).
func Parse(file string, data []byte, toolchains []string) (*Catalog, error) {
	var errs diag.List
	root := diag.ParseYAML(file, data, &errs)
	if root == nil {
		return nil, errs.Err()
	}
	return parse(file, root, toolchains, &errs), errs.Err()
}

var sha256Hex = func(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, r := range s {
		if !strings.ContainsRune("0123456789abcdef", r) {
			return false
		}
	}
	return true
}

func parse(file string, root *yaml.Node, toolchains []string, errs *diag.List) *Catalog {
	d := diag.Decoder{File: file, Errs: errs}
	c := &Catalog{File: file}
	f := d.Fields(root, "libraries file", "libraries")
	d.Require(root, f, "libraries file", "libraries")
	caps := map[string]bool{}
	for _, item := range d.Seq(f["libraries"], "libraries") {
		lf := d.Fields(item, "library", "name", "version", "source", "sha256", "dir", "cmake", "fixes", "capabilities", "backends", "doc", "upstream", "license", "title", "tag")
		if !d.Require(item, lf, "library", "name", "version", "source", "sha256", "dir", "backends") {
			continue
		}
		l := &Library{Name: d.String(lf["name"], "name"), Version: d.String(lf["version"], "version"),
			Source: d.String(lf["source"], "source"), SHA256: d.String(lf["sha256"], "sha256"), Dir: d.String(lf["dir"], "dir"),
			CMake: options(d, lf["cmake"]), Pos: d.Pos(item), Title: d.String(lf["title"], "title"), Tag: d.String(lf["tag"], "tag")}
		if l.Title == "" {
			l.Title = l.Name
		}
		if l.Tag == "" {
			l.Tag = l.Version
		}
		if c.Library(l.Name) != nil {
			d.Add(lf["name"], "library %q defined twice", l.Name)
		}
		if _, err := version.NewVersion(l.Version); err != nil {
			d.Add(lf["version"], "bad version %q: %v", l.Version, err)
		}
		if !sha256Hex(l.SHA256) {
			d.Add(lf["sha256"], "sha256 is 64 lower-case hex digits, not %q", l.SHA256)
		}
		if strings.Contains(l.Source, "/") || strings.Contains(l.Dir, "/") || l.Dir == ".." {
			d.Add(item, "source and dir are plain names, not paths")
		}
		for _, fn := range d.Seq(lf["fixes"], "fixes") {
			ff := d.Fields(fn, "fix", "name", "file", "why", "find", "replace")
			if !d.Require(fn, ff, "fix", "name", "file", "why", "find", "replace") {
				continue
			}
			fx := Fix{Name: d.String(ff["name"], "name"), File: d.String(ff["file"], "file"), Why: d.String(ff["why"], "why"),
				Find: d.String(ff["find"], "find"), Replace: d.String(ff["replace"], "replace"), Pos: d.Pos(fn)}
			if fx.Find == "" {
				d.Add(ff["find"], "fix %q finds nothing: find must be the exact text to replace", fx.Name)
			}
			if path.IsAbs(fx.File) || strings.HasPrefix(path.Clean(fx.File), "..") {
				d.Add(ff["file"], "fix %q: file is a path inside the sources, not %q", fx.Name, fx.File)
			}
			for _, prev := range l.Fixes {
				if prev.Name == fx.Name {
					d.Add(ff["name"], "fix %q defined twice", fx.Name)
				}
			}
			l.Fixes = append(l.Fixes, fx)
		}
		for _, cn := range d.Seq(lf["capabilities"], "capabilities") {
			cf := d.Fields(cn, "capability", "name", "doc", "when", "source")
			if !d.Require(cn, cf, "capability", "name", "when", "source") {
				continue
			}
			cp := Capability{Name: d.String(cf["name"], "name"), Doc: d.String(cf["doc"], "doc"), Source: d.String(cf["source"], "source"),
				Raw: d.String(cf["when"], "when")}
			con, err := version.NewConstraint(cp.Raw)
			if err != nil {
				d.Add(cf["when"], "bad version constraint %q: %v", cp.Raw, err)
			}
			cp.When = con
			if caps[cp.Name] {
				d.Add(cf["name"], "capability %q defined twice", cp.Name)
			}
			caps[cp.Name] = true
			l.Capabilities = append(l.Capabilities, cp)
		}
		for _, bn := range d.Seq(lf["backends"], "backends") {
			bf := d.Fields(bn, "backend", "name", "doc", "toolchains", "cxx", "env", "toolchain_flags", "cmake", "compile_flags", "libs", "link_flags", "smoke")
			if !d.Require(bn, bf, "backend", "name", "toolchains", "smoke") {
				continue
			}
			b := &Backend{Name: d.String(bf["name"], "name"), Doc: d.String(bf["doc"], "doc"), Toolchains: d.Strings(bf["toolchains"], "toolchains"),
				CXX: d.String(bf["cxx"], "cxx"), Env: d.Strings(bf["env"], "env"), ToolchainFlags: d.Strings(bf["toolchain_flags"], "toolchain_flags"),
				CMake: options(d, bf["cmake"]), CompileFlags: d.Strings(bf["compile_flags"], "compile_flags"), Libs: d.Strings(bf["libs"], "libs"),
				LinkFlags: d.Strings(bf["link_flags"], "link_flags"), Smoke: d.String(alias(bf["smoke"]), "smoke"), Pos: d.Pos(bn)}
			if b.CXX == "" {
				b.CXX = "${COMPILER}"
			}
			if l.Backend(b.Name) != nil {
				d.Add(bf["name"], "backend %q of library %q defined twice", b.Name, l.Name)
			}
			if n := bf["toolchains"]; n != nil && n.Kind == yaml.SequenceNode {
				for i, tn := range n.Content {
					b.ToolchainsAt = append(b.ToolchainsAt, d.Pos(tn))
					if toolchains != nil && i < len(b.Toolchains) && !slices.Contains(toolchains, b.Toolchains[i]) {
						d.Add(tn, "unknown toolchain %q%s (known: %s)", b.Toolchains[i], diag.DidYouMean(b.Toolchains[i], toolchains), strings.Join(toolchains, ", "))
					}
				}
			}
			for _, e := range b.Env {
				if k, _, ok := strings.Cut(e, "="); !ok || k == "" {
					d.Add(bf["env"], "env entries are NAME=value, not %q", e)
				}
			}
			for _, p := range b.ToolchainFlags {
				if strings.Contains(strings.TrimSuffix(p, "*"), "*") || p == "" {
					d.Add(bf["toolchain_flags"], "a toolchain_flags pattern is a flag or a prefix ending in *, not %q", p)
				}
			}
			l.Backends = append(l.Backends, b)
		}
		c.Libraries = append(c.Libraries, l)
	}
	return c
}

// alias is the node an alias (*name) stands for, else n: a smoke program
// written once serves several backends.
func alias(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.AliasNode && n.Alias != nil {
		return n.Alias
	}
	return n
}

// options reads cmake options: a string, or {arg, target, cuda}.
func options(d diag.Decoder, n *yaml.Node) []Option {
	var out []Option
	for _, on := range d.Seq(n, "cmake") {
		if on.Kind == yaml.ScalarNode {
			out = append(out, Option{Arg: on.Value})
			continue
		}
		of := d.Fields(on, "cmake option", "arg", "target", "cuda")
		if !d.Require(on, of, "cmake option", "arg") {
			continue
		}
		o := Option{Arg: d.String(of["arg"], "arg"), Target: d.String(of["target"], "target")}
		if of["cuda"] != nil {
			o.RawCUDA = d.String(of["cuda"], "cuda")
			c, err := version.NewConstraint(o.RawCUDA)
			if err != nil {
				d.Add(of["cuda"], "bad version constraint %q: %v", o.RawCUDA, err)
			}
			o.CUDA = c
		}
		if o.Target != "" && o.Target != "host" && toolchain.Vendor(o.Target) == "" {
			d.Add(of["target"], "target is host or a GPU architecture (sm_*, gfx*), not %q", o.Target)
		}
		out = append(out, o)
	}
	return out
}

// CheckRef reports a strategy's `library: {name, backend}` that names no
// library or no backend of it, at pos.
func (c *Catalog) CheckRef(name, backend string, pos diag.Pos) error {
	var errs diag.List
	l := c.Library(name)
	switch {
	case l == nil:
		var known []string
		if c != nil {
			known = c.Names()
		}
		errs.Add(pos, "unknown library %q%s (known: %s; see variants/libraries.yaml)", name, diag.DidYouMean(name, known), strings.Join(known, ", "))
	case l.Backend(backend) == nil:
		errs.Add(pos, "library %s has no backend %q%s (known: %s)", name, backend, diag.DidYouMean(backend, l.BackendNames()), strings.Join(l.BackendNames(), ", "))
	}
	return errs.Err()
}

// AddCapabilities appends the libraries' version gates to the capability
// table as rows of the library's name (a compiler family never matches
// them), so that strategies may require them and the matrix names them.
func (c *Catalog) AddCapabilities(tb *toolchain.Table) {
	if c == nil || tb == nil {
		return
	}
	for _, l := range c.Libraries {
		for _, cp := range l.Capabilities {
			tb.Caps = append(tb.Caps, toolchain.Capability{Name: cp.Name, Doc: cp.Doc, Source: cp.Source,
				When: map[string]version.Constraints{l.Name: cp.When}, Raw: map[string]string{l.Name: cp.Raw}})
		}
	}
}

// Capability returns the library and row of a library capability, or nils.
func (c *Catalog) Capability(name string) (*Library, *Capability) {
	if c == nil {
		return nil, nil
	}
	for _, l := range c.Libraries {
		for i := range l.Capabilities {
			if l.Capabilities[i].Name == name {
				return l, &l.Capabilities[i]
			}
		}
	}
	return nil, nil
}

// Caps are the capabilities of version of library l, sorted.
func (l *Library) Caps(v string) []string {
	ver, err := version.NewVersion(v)
	if err != nil {
		return nil
	}
	var out []string
	for _, cp := range l.Capabilities {
		if cp.When != nil && cp.When.Check(ver) {
			out = append(out, cp.Name)
		}
	}
	slices.Sort(out)
	return out
}

// ID names one install: name/backend/toolchain (PM_LIBRARIES' entries).
func ID(name, backend, toolchain string) string { return name + "/" + backend + "/" + toolchain }

func (l *Library) String() string { return fmt.Sprintf("%s %s", l.Name, l.Version) }

// Release names the release as its project does: "Kokkos 4.6.01", "RAJA v2025.09.1".
func (l *Library) Release() string { return l.Title + " " + l.Tag }
