package main

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/pipeline"
)

const root = "../.."

// directive is the //go:generate line of generate.go, as words.
func directive(t *testing.T) []string {
	src, err := os.ReadFile("generate.go")
	require.NoError(t, err)
	var found []string
	for _, l := range strings.Split(string(src), "\n") {
		if rest, ok := strings.CutPrefix(l, "//go:generate "); ok {
			require.Nil(t, found, "one directive")
			found = strings.Fields(rest)
		}
	}
	require.NotNil(t, found, "generate.go has no //go:generate directive")
	return found
}

// The directive runs this command's generate stage from the repository root.
func TestGoGenerateRunsTheGenerateStage(t *testing.T) {
	words := directive(t)
	require.Len(t, words, 6)
	assert.Equal(t, []string{"go", "run", "-C"}, words[:3])
	dir := words[3] // go generate runs it here, in the package's directory
	assert.FileExists(t, filepath.Join(dir, "go.mod"), "-C names the repository root")
	pkg, err := filepath.Abs(filepath.Join(dir, words[4]))
	require.NoError(t, err)
	here, err := filepath.Abs(".")
	require.NoError(t, err)
	assert.Equal(t, here, pkg, "it runs this command")
	assert.Equal(t, "generate", words[5])
	assert.Contains(t, pipeline.StageNames(), words[5])
}

// `go generate ./...` in a copy of the repository whose generated/ is stale
// (a file edited, one deleted, one no template makes) leaves generated/ as
// the generate stage renders it: the checked-in tree, byte for byte.
func TestGoGenerateRegeneratesGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("compiles the command")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go not found")
	}
	dir := t.TempDir()
	for _, p := range []string{"go.mod", "go.sum", "toolchains.yaml", "cmd", "internal", "templates", "variants", "harness", "machines", "generated"} {
		info, err := os.Stat(filepath.Join(root, p))
		require.NoError(t, err)
		if !info.IsDir() {
			b, err := os.ReadFile(filepath.Join(root, p))
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, p), b, 0o644))
			continue
		}
		require.NoError(t, os.CopyFS(filepath.Join(dir, p), os.DirFS(filepath.Join(root, p))))
	}
	want := tree(t, filepath.Join(root, "generated"))
	gen := filepath.Join(dir, "generated")
	require.NoError(t, os.WriteFile(filepath.Join(gen, "axpby", "serial.cpp"), []byte("// edited\n"), 0o644))
	require.NoError(t, os.Remove(filepath.Join(gen, "dot", "serial.cpp")))
	require.NoError(t, os.WriteFile(filepath.Join(gen, "axpby", "gone.cpp"), []byte("// no template makes this\n"), 0o644))
	require.Error(t, pipeline.Stage(context.Background(), "check", pipeline.Config{Root: dir, Log: io.Discard}))

	cmd := exec.Command(goCmd, "generate", "./...")
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	require.NoError(t, cmd.Run(), out.String())
	assert.Contains(t, out.String(), "generate: ")
	assert.Contains(t, out.String(), "  wrote generated/axpby/serial.cpp\n", "paths read from the repository root")
	assert.Equal(t, want, tree(t, gen))
	assert.NoError(t, pipeline.Stage(context.Background(), "check", pipeline.Config{Root: dir, Log: io.Discard}))
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
