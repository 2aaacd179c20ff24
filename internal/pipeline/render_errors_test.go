package pipeline

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A partial that fails to execute (a field that does not exist, a template
// that is not defined) is an error, not a reason for its cells to be off:
// generate, check and build fail, each failing program is listed once at the
// partial's line and column, and no generated source is written or removed.
func TestTemplateErrorIsAnError(t *testing.T) {
	base := t.TempDir()
	copyInputs(t, base)
	p, err := Load(context.Background(), Config{Root: base, Log: io.Discard})
	require.NoError(t, err)
	require.NoError(t, Generate(p))
	before := tree(t, filepath.Join(base, "generated"))
	require.NotEmpty(t, before)

	const partial = "templates/backends/serial/patterns.tmpl"
	for _, c := range []struct{ name, old, new, at, msg string }{
		{"unknown field", "for (int64_t {{ .Index }} = ", "for (int64_t {{ .Stride }} = ",
			":4:16: ", `executing "backend/serial/range_for" at <.Stride>: can't evaluate field Stride in type *render.Node`},
		{"undefined template", "{{ .Body | indent 2 }}", `{{ template "backend/serial/nope" . }}`,
			":5:12: ", `executing "backend/serial/range_for" at <{{template "backend/serial/nope" .}}>: template "backend/serial/nope" not defined`},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := t.TempDir()
			require.NoError(t, os.CopyFS(root, os.DirFS(base)))
			file := filepath.Join(root, partial)
			src, err := os.ReadFile(file)
			require.NoError(t, err)
			require.Contains(t, string(src), c.old)
			require.NoError(t, os.WriteFile(file, []byte(strings.Replace(string(src), c.old, c.new, 1)), 0o644))
			var log bytes.Buffer
			cfg := Config{Root: root, Log: &log, Kernels: []string{"axpby"}, Toolchains: []string{"gcc-host"}}

			for _, stage := range []string{"generate", "check"} {
				err := Stage(context.Background(), stage, cfg) // what the magefile and the CLI call
				require.Error(t, err, stage)
				programs := failing(t, err.Error(), stage, file+c.at, c.msg)
				assert.Contains(t, programs, "kernel axpby, variant serial")
				assert.True(t, slices.IsSorted(programs), "sorted: %v", programs)
				assert.Len(t, slices.Compact(slices.Clone(programs)), len(programs), "each program once")
			}
			assert.NotContains(t, log.String(), "Stride", "a template error among the off notes")
			assert.NotContains(t, log.String(), "nope")
			assert.Equal(t, before, tree(t, filepath.Join(root, "generated")), "generated/ changed")

			p, err := Load(context.Background(), cfg)
			require.NoError(t, err)
			_, err = Build(context.Background(), p)
			require.Error(t, err)
			assert.True(t, strings.HasPrefix(err.Error(), "build: "), err.Error())
			var doc bytes.Buffer
			Doctor(p, &doc)
			assert.Contains(t, doc.String(), "\n  error axpby.serial.gcc-host: template error: "+file+c.at+c.msg)
		})
	}
}

// failing checks that err reads "<stage>: N programs failed to render...:"
// and then N lines, each at position at with msg, and returns the programs
// they name ("kernel k, variant v").
func failing(t *testing.T, err, stage, at, msg string) []string {
	t.Helper()
	lines := strings.Split(err, "\n")
	head := regexp.MustCompile(`^` + stage + `: (\d+) programs failed to render[^:]*:$`).FindStringSubmatch(lines[0])
	require.NotNil(t, head, "first line: %q", lines[0])
	n, _ := strconv.Atoi(head[1])
	require.Len(t, lines[1:], n)
	var programs []string
	for _, l := range lines[1:] {
		require.True(t, strings.HasPrefix(l, at+msg+" ("), "line %q", l)
		programs = append(programs, strings.TrimSuffix(strings.TrimPrefix(l, at+msg+" ("), ")"))
	}
	return programs
}

// tree reads every file under dir, by path relative to it.
func tree(t *testing.T, dir string) map[string]string {
	out := map[string]string{}
	require.NoError(t, filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		rel, _ := filepath.Rel(dir, path)
		out[rel] = string(b)
		return err
	}))
	return out
}
