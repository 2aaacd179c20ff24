// Package render lowers kernel descriptions through backend partials into
// one C++ (or CUDA) program per (kernel, variant): text/template with sprig,
// missingkey=error, every file parsed under its path so that errors read
// templates/backends/<b>/<file>.tmpl:line:col.
package render

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/template"

	"github.com/Masterminds/sprig/v3"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/fsutil"
	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// Hooks are the templates a backend defines, one per pattern, plus its
// prologue and team_scratch (a team with scratch views; see spec.Node.Hook).
var Hooks = []string{"prologue", "range_for", "range_reduce", "team", "team_thread_for", "thread_vector_reduce",
	"mdrange_for", "team_scratch", "team_barrier", "thread_vector_for", "atomic_add", "sequence", "indexset_for",
	"team_thread_reduce", spec.IntoHook}

// Backend is a folder of partials under templates/backends.
type Backend struct {
	Name        string
	Base        string   // hooks not defined here come from the base backend
	Unsupported []string // patterns it declares it cannot lower
	Doc         string
	Layer       bool // its strategies name a layer header (harness/kk) that maps it to hardware
}

// Engine holds the parsed templates.
type Engine struct {
	Root     string // templates directory
	tmpl     *template.Template
	Backends map[string]*Backend
	Files    map[string][]byte // every template input, by path, for hashing
}

// Funcs is sprig's function map without what would make output depend on the
// environment or the clock: env, expandenv, dates, random values, keys.
func Funcs() template.FuncMap {
	f := sprig.TxtFuncMap()
	for name := range f {
		switch {
		case name == "env", name == "expandenv", name == "now", name == "ago", name == "unixEpoch",
			strings.Contains(name, "date"), strings.Contains(name, "Date"), strings.HasPrefix(name, "rand"),
			strings.HasPrefix(name, "uuid"), strings.HasPrefix(name, "gen"), name == "derivePassword",
			name == "shuffle", name == "getHostByName":
			delete(f, name)
		}
	}
	return f
}

// Load parses templates/program.tmpl and every templates/backends/*/*.tmpl.
func Load(root string) (*Engine, error) {
	e := &Engine{Root: root, Backends: map[string]*Backend{}, Files: map[string][]byte{}}
	e.tmpl = template.New("portmatrix").Option("missingkey=error").Funcs(Funcs())
	var errs diag.List
	files, _ := filepath.Glob(filepath.Join(root, "*.tmpl"))
	more, _ := filepath.Glob(filepath.Join(root, "backends", "*", "*.tmpl"))
	files = append(files, more...)
	sort.Strings(files)
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			errs.Add(diag.Pos{File: f}, "%v", err)
			continue
		}
		e.Files[f] = src
		if _, err := e.tmpl.New(f).Parse(string(src)); err != nil {
			errs = append(errs, diag.Error{Pos: diag.Pos{File: f}, Msg: strings.TrimPrefix(err.Error(), "template: ")})
		}
	}
	metas, _ := filepath.Glob(filepath.Join(root, "backends", "*", "backend.yaml"))
	sort.Strings(metas)
	for _, m := range metas {
		b := loadBackend(m, &errs)
		e.Backends[b.Name] = b
		if src, err := os.ReadFile(m); err == nil {
			e.Files[m] = src
		}
	}
	for _, b := range e.Backends {
		if b.Base != "" && e.Backends[b.Base] == nil {
			errs.Add(diag.Pos{File: filepath.Join(root, "backends", b.Name, "backend.yaml")}, "unknown base backend %q", b.Base)
		}
	}
	if e.tmpl.Lookup("program") == nil {
		errs.Add(diag.Pos{File: root}, "no template defines \"program\"")
	}
	return e, fixTemplateErrors(errs).Err()
}

// fixTemplateErrors turns "file:line: msg" messages of text/template into positions.
func fixTemplateErrors(l diag.List) diag.List {
	for i, e := range l {
		if e.Pos.Line != 0 {
			continue
		}
		// text/template says: "<name>:<line>: <msg>" or "<name>:<line>:<col>: <msg>".
		rest := strings.TrimPrefix(e.Msg, e.Pos.File+":")
		if rest == e.Msg {
			continue
		}
		var line, col int
		if n, _ := fmt.Sscanf(rest, "%d:%d:", &line, &col); n == 2 {
			rest = rest[strings.Index(rest, ":")+1:]
			rest = rest[strings.Index(rest, ":")+1:]
		} else if n, _ := fmt.Sscanf(rest, "%d:", &line); n == 1 {
			rest = rest[strings.Index(rest, ":")+1:]
		}
		l[i] = diag.Error{Pos: diag.Pos{File: e.Pos.File, Line: line, Col: col}, Msg: strings.TrimSpace(rest)}
	}
	return l
}

func loadBackend(file string, errs *diag.List) *Backend {
	b := &Backend{Name: filepath.Base(filepath.Dir(file))}
	root := diag.ReadYAML(file, errs)
	if root == nil {
		return b
	}
	d := diag.Decoder{File: file, Errs: errs}
	f := d.Fields(root, "backend", "doc", "base", "unsupported", "layer")
	b.Doc = d.String(f["doc"], "doc")
	b.Layer = f["layer"] != nil && d.Bool(f["layer"], "layer")
	b.Base = d.String(f["base"], "base")
	b.Unsupported = d.Strings(f["unsupported"], "unsupported")
	for i, u := range b.Unsupported {
		if !slices.Contains(Hooks, u) || u == "prologue" {
			d.Add(f["unsupported"].Content[i], "unknown pattern %q (known: %s)", u, strings.Join(Hooks[1:], ", "))
		}
	}
	return b
}

// hookName finds the template implementing hook for backend, following bases.
func (e *Engine) hookName(backend, hook string) (string, bool) {
	for b := e.Backends[backend]; b != nil; b = e.Backends[b.Base] {
		for _, u := range b.Unsupported {
			if u == hook {
				return "", false
			}
		}
		name := "backend/" + b.Name + "/" + hook
		if e.tmpl.Lookup(name) != nil {
			return name, true
		}
	}
	return "", false
}

// Missing returns the pattern kinds backend cannot lower (code always lowers).
func (e *Engine) Missing(backend string, kinds []string) []string {
	var out []string
	for _, k := range kinds {
		if k == "code" || k == "for" || k == spec.Launches { // lowered in Go
			continue
		}
		if _, ok := e.hookName(backend, k); !ok {
			out = append(out, k)
		}
	}
	return out
}

// Defined reports whether backend defines or inherits hook (for tests).
func (e *Engine) Defined(backend, hook string) bool {
	_, ok := e.hookName(backend, hook)
	return ok
}

func (e *Engine) exec(name string, data any) (string, error) {
	var buf bytes.Buffer
	if err := e.tmpl.ExecuteTemplate(&buf, name, data); err != nil {
		return "", err
	}
	return buf.String(), nil
}

// Render renders the program of kernel k in variant v. Its error is an *Off
// when a check in Go declares that the program cannot be made, else a
// diag.Error positioned at the template line that failed.
func (e *Engine) Render(k *spec.Kernel, kernels map[string]*spec.Kernel, v *matrix.Variant) ([]byte, error) {
	p := newProgram(e, k, kernels, v)
	out, err := e.exec("program", p)
	if err != nil {
		var off *Off
		if errors.As(err, &off) {
			return nil, off
		}
		return nil, templateError(err, fmt.Sprintf("kernel %s, variant %s", k.Name, v.ID))
	}
	return []byte(tidy(out)), nil
}

// Off is a declared reason a program cannot be made, found by a check in Go
// while it renders (a loop end omp-class cannot keep, a CSR argument a
// host-data variant cannot map, a pattern the backend does not lower): its
// cells are off with the reason. Every other error of rendering is a
// template error, and an error of the pipeline.
type Off struct{ Msg string }

func (o *Off) Error() string { return o.Msg }

func offf(format string, args ...any) error { return &Off{Msg: fmt.Sprintf(format, args...)} }

// templatePos reads "<file>:<line>:<col>: <msg>" (or without the column),
// the start of text/template's execution errors.
var templatePos = regexp.MustCompile(`^(?s)(.+?):(\d+)(?::(\d+))?: (.*)$`)

// templateError positions err at the innermost template that failed: a
// hook's error reaches program.tmpl through the view's Lowered, Body and
// Render calls, each execution wrapping it in another ExecError.
func templateError(err error, program string) diag.Error {
	msg := err.Error()
	for e := err; e != nil; e = errors.Unwrap(e) {
		if x, ok := e.(template.ExecError); ok {
			msg = x.Error()
		}
	}
	msg = strings.TrimPrefix(msg, "template: ")
	m := templatePos.FindStringSubmatch(msg)
	if m == nil {
		return diag.Error{Pos: diag.Pos{File: "program " + program}, Msg: msg}
	}
	line, _ := strconv.Atoi(m[2])
	col, _ := strconv.Atoi(m[3])
	return diag.Error{Pos: diag.Pos{File: m[1], Line: line, Col: col}, Msg: m[4] + " (" + program + ")"}
}

// tidy drops trailing spaces and runs of blank lines, so templates can be
// written for reading without their whitespace reaching the output.
func tidy(s string) string {
	lines := strings.Split(s, "\n")
	var out []string
	blank := false
	for _, l := range lines {
		l = strings.TrimRight(l, " \t")
		if l == "" {
			if blank {
				continue
			}
			blank = true
		} else {
			blank = false
		}
		out = append(out, l)
	}
	return strings.TrimSpace(strings.Join(out, "\n")) + "\n"
}

// Job is one file to render.
type Job struct {
	Kernel  *spec.Kernel
	Variant *matrix.Variant
}

// Failures are the programs not made for a declared reason (see Off), by
// source path, each with its reason: the cell is off for that reason
// (doctor, the build report), and every other program still renders.
type Failures map[string]string

// Errors are the programs whose templates failed to execute, by source path,
// each positioned at the template line that failed.
type Errors map[string]diag.Error

// Err lists every failing program once, sorted by template position, then by
// program; nil when none failed.
func (e Errors) Err() error {
	var l diag.List
	for _, path := range slices.Sorted(maps.Keys(e)) {
		l = append(l, e[path])
	}
	return l.Err()
}

// All renders every job. A program not made for a declared reason is left
// out of files with its reason in off; a program whose templates fail is
// left out of files with its error in errs. Every job is tried, so that
// errs holds every failing program at once.
func (e *Engine) All(jobs []Job, kernels map[string]*spec.Kernel) (files map[string][]byte, off Failures, errs Errors) {
	files, off, errs = map[string][]byte{}, Failures{}, Errors{}
	for _, j := range jobs {
		path := matrix.SourcePath(j.Kernel, j.Variant)
		_, done := files[path]
		_, isOff := off[path]
		_, failed := errs[path]
		if done || isOff || failed {
			continue
		}
		src, err := e.Render(j.Kernel, kernels, j.Variant)
		var o *Off
		var d diag.Error
		switch {
		case err == nil:
			files[path] = src
		case errors.As(err, &o):
			off[path] = "cannot render: " + o.Msg
		case errors.As(err, &d):
			errs[path] = d
		default:
			errs[path] = diag.Error{Pos: diag.Pos{File: path}, Msg: err.Error()}
		}
	}
	return files, off, errs
}

// Write writes files under root (paths are relative to it) only where their
// bytes changed, and removes files under root/generated that no job made.
func Write(root string, files map[string][]byte) (written, removed []string, err error) {
	paths := make([]string, 0, len(files))
	for p := range files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		full := filepath.Join(root, p)
		if old, err := os.ReadFile(full); err == nil && bytes.Equal(old, files[p]) {
			continue
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return written, removed, err
		}
		if err := fsutil.WriteFile(full, files[p], 0o644); err != nil {
			return written, removed, err
		}
		written = append(written, p)
	}
	genDir := filepath.Join(root, "generated")
	err = filepath.WalkDir(genDir, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if _, keep := files[filepath.ToSlash(rel)]; !keep && filepath.Base(path) != "README.md" {
			removed = append(removed, filepath.ToSlash(rel))
			return os.Remove(path)
		}
		return nil
	})
	removeEmptyDirs(genDir)
	return written, removed, err
}

func removeEmptyDirs(dir string) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if e.IsDir() {
			sub := filepath.Join(dir, e.Name())
			removeEmptyDirs(sub)
			if rest, _ := os.ReadDir(sub); len(rest) == 0 {
				os.Remove(sub)
			}
		}
	}
}

// Stale compares files with what is on disk under root: changed or missing
// files, and generated files no job makes.
func Stale(root string, files map[string][]byte) []string {
	var stale []string
	for p, src := range files {
		if old, err := os.ReadFile(filepath.Join(root, p)); err != nil || !bytes.Equal(old, src) {
			stale = append(stale, p)
		}
	}
	filepath.WalkDir(filepath.Join(root, "generated"), func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		rel, _ := filepath.Rel(root, path)
		if _, ok := files[filepath.ToSlash(rel)]; !ok && filepath.Base(path) != "README.md" {
			stale = append(stale, filepath.ToSlash(rel)+" (no longer generated)")
		}
		return nil
	})
	sort.Strings(stale)
	return stale
}

// CheckStrategies reports strategies naming a backend that does not exist,
// lacking the layer header their backend needs, or naming one it ignores.
func (e *Engine) CheckStrategies(strategies []*matrix.Strategy) error {
	var errs diag.List
	for _, s := range strategies {
		b := e.Backends[s.Backend]
		switch {
		case b == nil:
			errs.Add(s.Pos, "strategy %s: no backend %q (templates/backends/%s/backend.yaml)", s.Name, s.Backend, s.Backend)
		case b.Layer && s.Layer == "":
			errs.Add(s.Pos, "strategy %s: the %s backend needs a layer header", s.Name, s.Backend)
		case !b.Layer && s.Layer != "":
			errs.Add(s.Pos, "strategy %s: the %s backend takes no layer header (backend.yaml: layer: true)", s.Name, s.Backend)
		}
	}
	return errs.Err()
}
