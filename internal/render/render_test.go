package render_test

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/pipeline"
	"github.com/portmatrix/portmatrix/internal/render"
	"github.com/portmatrix/portmatrix/internal/spec"
)

const root = "../.."

// shared is the repository's project, loaded once for the tests that only
// read it (Load lowers every loop kernel and asks each compiler its version;
// Render renders every program once and keeps them): the tests here do not
// change it and do not run in parallel.
var shared struct {
	once sync.Once
	p    *pipeline.Project
	err  error
}

// load is the repository's project, shared by the tests.
func load(t *testing.T) *pipeline.Project {
	shared.once.Do(func() { shared.p, shared.err = loadFresh() })
	require.NoError(t, shared.err)
	return shared.p
}

// loadFresh loads the repository's project anew.
func loadFresh() (*pipeline.Project, error) {
	return pipeline.Load(context.Background(), pipeline.Config{Root: root, Log: os.Stderr})
}

// generated/ is the golden output of the templates: regenerate with
// `go run mage.go generate` after a template edit.
func TestGeneratedIsCurrent(t *testing.T) {
	p := load(t)
	files, err := p.Render()
	require.NoError(t, err)
	assert.Empty(t, render.Stale(root, files), "generated/ is stale: run go run mage.go generate")
	for path, src := range files {
		first := strings.SplitN(string(src), "\n", 2)[0]
		assert.Regexp(t, `^// Code generated .* DO NOT EDIT\.$`, first, path)
	}
}

// Two projects loaded apart render the same bytes.
func TestRenderIsDeterministic(t *testing.T) {
	a, err := load(t).Render()
	require.NoError(t, err)
	fresh, err := loadFresh()
	require.NoError(t, err)
	b, err := fresh.Render()
	require.NoError(t, err)
	assert.Equal(t, a, b)
}

// Every backend lowers every pattern, or declares it unsupported.
func TestBackendsImplementEveryHook(t *testing.T) {
	p := load(t)
	for name, b := range p.Engine.Backends {
		for _, hook := range render.Hooks {
			declared := false
			for base := b; base != nil; base = p.Engine.Backends[base.Base] {
				for _, u := range base.Unsupported {
					declared = declared || u == hook
				}
			}
			if declared {
				continue
			}
			assert.True(t, p.Engine.Defined(name, hook), "backend %s neither defines nor declares unsupported %q", name, hook)
		}
	}
}

func TestSprigWithoutEnvironmentOrClock(t *testing.T) {
	f := render.Funcs()
	for _, name := range []string{"env", "expandenv", "now", "date", "randAlpha", "uuidv4", "genPrivateKey"} {
		assert.NotContains(t, f, name)
	}
	for _, name := range []string{"indent", "nindent", "upper", "join"} {
		assert.Contains(t, f, name)
	}
}

func TestTemplateErrorHasPosition(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "backends", "b"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "program.tmpl"), []byte(`{{ define "program" }}x{{ end }}`), 0o644))
	bad := filepath.Join(dir, "backends", "b", "patterns.tmpl")
	require.NoError(t, os.WriteFile(bad, []byte("{{ define \"backend/b/range_for\" }}\nok\n  {{ .Body | nosuchfunc }}\n{{ end }}\n"), 0o644))
	_, err := render.Load(dir)
	require.Error(t, err)
	assert.Equal(t, bad+`:3: function "nosuchfunc" not defined`, err.Error())
}

func TestMissingKeyIsAnError(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "backends", "b"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "program.tmpl"), []byte(`{{ define "program" }}{{ .Kernel.NoSuchField }}{{ end }}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "backends", "b", "backend.yaml"), []byte("doc: test\n"), 0o644))
	e, err := render.Load(dir)
	require.NoError(t, err)
	p := load(t)
	k := p.ByName["axpby"]
	_, err = e.Render(k, p.ByName, p.Variants[0])
	var d diag.Error
	require.ErrorAs(t, err, &d, "a template error, not a declared reason")
	assert.Equal(t, diag.Pos{File: filepath.Join(dir, "program.tmpl"), Line: 1, Col: 32}, d.Pos) // text/template's column: the failing field
	assert.Contains(t, d.Msg, "can't evaluate field NoSuchField")
	assert.Contains(t, d.Msg, "(kernel axpby, variant "+p.Variants[0].ID+")")
}

// A partial that fails inside a hook is positioned at the partial's line and
// column, however deep the hook is in program.tmpl's calls, and is an error
// of every program it reaches, never a reason for its cells to be off.
func TestHookErrorIsPositionedAtThePartial(t *testing.T) {
	p := load(t)
	for _, c := range []struct{ name, old, new, want string }{
		{"unknown field", "for (int64_t {{ .Index }} = ", "for (int64_t {{ .Stride }} = ",
			`:4:16: executing "backend/serial/range_for" at <.Stride>: can't evaluate field Stride in type *render.Node (kernel axpby, variant serial)`},
		{"undefined template", "{{ .Body | indent 2 }}", `{{ template "backend/serial/nope" . }}`,
			`:5:12: executing "backend/serial/range_for" at <{{template "backend/serial/nope" .}}>: template "backend/serial/nope" not defined (kernel axpby, variant serial)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := copyTemplates(t)
			partial := filepath.Join(dir, "backends", "serial", "patterns.tmpl")
			src, err := os.ReadFile(partial)
			require.NoError(t, err)
			require.Contains(t, string(src), c.old)
			require.NoError(t, os.WriteFile(partial, []byte(strings.Replace(string(src), c.old, c.new, 1)), 0o644))
			e, err := render.Load(dir)
			require.NoError(t, err)
			_, err = e.Render(p.ByName["axpby"], p.ByName, variant(t, p, "serial"))
			var off *render.Off
			assert.False(t, errors.As(err, &off), "a template error reads as a declared reason: %v", err)
			var d diag.Error
			require.ErrorAs(t, err, &d)
			assert.Equal(t, partial+c.want, d.Error())

			files, offs, errs := e.All([]render.Job{
				{Kernel: p.ByName["axpby"], Variant: variant(t, p, "serial")},
				{Kernel: p.ByName["axpby"], Variant: variant(t, p, "omp-raw")},
			}, p.ByName)
			assert.Empty(t, offs)
			assert.Contains(t, files, "generated/axpby/omp-raw.cpp")
			assert.Equal(t, []string{"generated/axpby/serial.cpp"}, slices.Collect(maps.Keys(errs)))
			assert.Equal(t, partial+c.want, errs.Err().Error())
		})
	}
}

func variant(t *testing.T, p *pipeline.Project, id string) *matrix.Variant {
	for _, v := range p.Variants {
		if v.ID == id {
			return v
		}
	}
	t.Fatalf("no variant %s", id)
	return nil
}

// copyTemplates copies templates/ into a temporary directory.
func copyTemplates(t *testing.T) string {
	dir := t.TempDir()
	require.NoError(t, os.CopyFS(dir, os.DirFS(filepath.Join(root, "templates"))))
	return dir
}

// omp-class keeps the trip count in a data member; a kernel whose loop end is
// an expression cannot be written that way, and says so.
func TestOmpClassNeedsScalarEnd(t *testing.T) {
	p := load(t)
	var errs = new(diagList)
	k := spec.Parse("scale.yaml", []byte(`kernel: scale
size: {name: n, ci: [8], default: [8], gpu: [8]}
args:
  - {name: n, type: int64, value: size}
  - {name: y, type: "double[]", extent: n, init: {random: [1, 2]}, intent: inout}
pattern: {range_for: {index: i, end: n / 2, body: "y[i] *= 2;"}}
reference: "for (int64_t i = 0; i < n / 2; ++i) y[i] *= 2;"
bytes: 16.0 * n
flops: n
tolerance: 1e-15
`), &errs.l)
	require.NoError(t, errs.l.Err())
	for _, v := range p.Variants {
		if v.ID == "omp-class" {
			_, err := p.Engine.Render(k, p.ByName, v)
			var off *render.Off
			require.ErrorAs(t, err, &off, "a declared reason: the cell is off")
			assert.Equal(t, `scale.yaml:6:11: omp-class keeps the trip count in a data member: the loop end "n / 2" must be a scalar parameter`, off.Msg)
		}
	}
}
