package library

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/portmatrix/portmatrix/internal/layout"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// InstallFile is the record an install's prefix holds, written last: a
// prefix without it is no install (a build cut short or failed).
const InstallFile = "install.json"

// LogFile is the installer's log in the prefix (kept when the install fails).
const LogFile = "install.log"

// Install is install.json: one library built for one backend with one
// toolchain, and what a consumer adds to the toolchain's command.
type Install struct {
	Name      string `json:"name"`
	Version   string `json:"version"`
	Backend   string `json:"backend"`
	Toolchain string `json:"toolchain"`
	Prefix    string `json:"prefix"`
	// Compiler is the toolchain's compiler path, CompilerVersion its
	// version and CompilerIdentity the first line of its --version.
	Compiler         string   `json:"compiler"`
	CompilerVersion  string   `json:"compiler_version"`
	CompilerIdentity string   `json:"compiler_identity"`
	CUDA             string   `json:"cuda,omitempty"`
	SHA256           string   `json:"sha256"`
	Fixes            []string `json:"fixes,omitempty"`
	// Recipe hashes the libraries.yaml entry it was made from (Recipe).
	Recipe string   `json:"recipe"`
	CMake  []string `json:"cmake"`
	// CompileFlags go before a consumer's source, LinkFlags after it (the
	// static libraries in link order, then -ldl and the like).
	CompileFlags []string `json:"compile_flags"`
	LinkFlags    []string `json:"link_flags"`
	Seconds      float64  `json:"seconds"`
	Date         string   `json:"date"`

	// Caps are the library capabilities its version has (set by Set.Find).
	Caps []string `json:"-"`
}

// ID is name/backend/toolchain.
func (in *Install) ID() string { return ID(in.Name, in.Backend, in.Toolchain) }

// Key identifies the install's content for a build's cache key: a
// reinstall with other sources, fixes or compiler changes it.
func (in *Install) Key() string {
	return strings.Join([]string{in.ID(), in.Version, in.SHA256, strings.Join(in.Fixes, ","), in.CompilerIdentity, in.Date}, "\x00")
}

// Dir is the folder of every install: dir when given, else
// .toolchains/libraries under root.
func Dir(root, dir string) string {
	if dir != "" {
		return dir
	}
	return layout.Path(root, layout.LibraryInstalls)
}

// Prefix is the install prefix of (l, backend, toolchain) under dir.
func (l *Library) Prefix(dir, backend, tc string) string {
	return layout.LibraryPrefix(dir, l.Name, l.Version, backend, tc)
}

// ReadInstall reads prefix/install.json.
func ReadInstall(prefix string) (*Install, error) {
	b, err := os.ReadFile(filepath.Join(prefix, InstallFile))
	if err != nil {
		return nil, err
	}
	in := &Install{}
	if err := json.Unmarshal(b, in); err != nil {
		return nil, fmt.Errorf("%s: corrupt install record (%v); reinstall", filepath.Join(prefix, InstallFile), err)
	}
	return in, nil
}

// Set is the catalog with the installs of one folder: what a cell of a
// library strategy builds against.
type Set struct {
	Catalog *Catalog
	Dir     string // the installs' folder (Dir)
}

// Command is how to install one (library, backend, toolchain): the stage,
// with the selection and sources knobs.
func Command(name, backend, tc string) string {
	return fmt.Sprintf("PM_LIBRARIES=%s PM_DEPS=<folder of the source releases> go run mage.go libraries (or: portmatrix -libraries %s -deps <folder> libraries)",
		ID(name, backend, tc), ID(name, backend, tc))
}

// Lookup is what Find says of a (library, backend, toolchain).
type Lookup struct {
	// Listed: the backend installs for the toolchain (else no cell).
	Listed bool
	// Install is the install a cell builds against; nil with Why when there
	// is none usable.
	Install *Install
	Why     string
}

// Find looks up the install of library name's backend for toolchain t.
func (s *Set) Find(name, backend string, t *toolchain.Toolchain) Lookup {
	if s == nil || s.Catalog == nil {
		return Lookup{}
	}
	l := s.Catalog.Library(name)
	if l == nil {
		return Lookup{}
	}
	b := l.Backend(backend)
	if b == nil || !b.Installs(t.ID) {
		return Lookup{}
	}
	prefix := l.Prefix(s.Dir, backend, t.ID)
	what := fmt.Sprintf("library %s %s (backend %s) for %s", l.Name, l.Version, backend, t.ID)
	in, err := ReadInstall(prefix)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		why := fmt.Sprintf("%s is not installed (no %s)", what, filepath.Join(prefix, InstallFile))
		if _, lerr := os.Stat(filepath.Join(prefix, LogFile)); lerr == nil {
			why = fmt.Sprintf("%s is not installed: its install failed (log %s)", what, filepath.Join(prefix, LogFile))
		}
		return Lookup{Listed: true, Why: why + "; install it: " + Command(l.Name, backend, t.ID)}
	case err != nil:
		return Lookup{Listed: true, Why: err.Error()}
	}
	if t.Found() && t.Version != nil && in.CompilerVersion != t.Version.String() {
		return Lookup{Listed: true, Why: fmt.Sprintf("%s was installed with %s %s, the toolchain is now %s %s; reinstall it: %s",
			what, t.Family, in.CompilerVersion, t.Family, t.Version, Command(l.Name, backend, t.ID))}
	}
	if in.Version != l.Version || in.SHA256 != l.SHA256 {
		return Lookup{Listed: true, Why: fmt.Sprintf("%s: %s holds version %s (sha256 %.12s), not the release variants/libraries.yaml names; reinstall it: %s",
			what, prefix, in.Version, in.SHA256, Command(l.Name, backend, t.ID))}
	}
	in.Prefix = prefix
	in.Caps = l.Caps(in.Version)
	return Lookup{Listed: true, Install: in}
}

// Status is one (library, backend, toolchain) as doctor lists it.
type Status struct {
	Library   *Library
	Backend   string
	Toolchain string
	Prefix    string
	Install   *Install // nil when not installed
	Why       string   // why not, with the command that installs it
}

// Statuses lists every (library, backend, toolchain) of the catalog with
// its install or why there is none; tcs are the toolchains (a toolchain not
// found is said so).
func (s *Set) Statuses(tcs []*toolchain.Toolchain) []Status {
	var out []Status
	if s == nil || s.Catalog == nil {
		return nil
	}
	byID := map[string]*toolchain.Toolchain{}
	for _, t := range tcs {
		byID[t.ID] = t
	}
	for _, l := range s.Catalog.Libraries {
		for _, b := range l.Backends {
			for _, id := range b.Toolchains {
				st := Status{Library: l, Backend: b.Name, Toolchain: id, Prefix: l.Prefix(s.Dir, b.Name, id)}
				t := byID[id]
				switch {
				case t == nil:
					st.Why = "toolchain " + id + " is not in the toolchain file"
				default:
					lk := s.Find(l.Name, b.Name, t)
					st.Install, st.Why = lk.Install, lk.Why
					if st.Install == nil && !t.Found() {
						st.Why = "toolchain " + id + ": " + t.Missing
					}
				}
				out = append(out, st)
			}
		}
	}
	return out
}

// Capability is the catalog's library capability of that name (nil Set: none).
func (s *Set) Capability(name string) (*Library, *Capability) {
	if s == nil {
		return nil, nil
	}
	return s.Catalog.Capability(name)
}
