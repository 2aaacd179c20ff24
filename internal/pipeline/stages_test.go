package pipeline

import (
	"bytes"
	"context"
	"flag"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/tune"
)

var update = flag.Bool("update", false, "rewrite the knob list of magefile.go")

// knobComment is the knob list as the magefile's All doc holds it.
func knobComment() string {
	var b strings.Builder
	for _, l := range strings.Split(strings.TrimSuffix(config.KnobHelp(), "\n"), "\n") {
		b.WriteString("//\t" + l + "\n")
	}
	return b.String()
}

// The magefile is built from the stage table: a target per stage with the
// stage's doc and arguments, and All's doc lists every knob, one per line.
func TestMagefileFollowsTheStageTable(t *testing.T) {
	if *update {
		src, err := os.ReadFile("../../magefile.go")
		require.NoError(t, err)
		const start, end = "read by every target:\n//\n", "func All("
		i, j := strings.Index(string(src), start), strings.Index(string(src), end)
		require.True(t, i > 0 && j > i)
		out := string(src[:i+len(start)]) + knobComment() + string(src[j:])
		require.NoError(t, os.WriteFile("../../magefile.go", []byte(out), 0o644))
	}
	f, err := parser.ParseFile(token.NewFileSet(), "../../magefile.go", nil, parser.ParseComments)
	require.NoError(t, err)
	targets := map[string]*ast.FuncDecl{}
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.IsExported() {
			targets[strings.ToLower(fn.Name.Name)] = fn
		}
	}
	for _, s := range Stages {
		fn := targets[s.Name]
		if !assert.NotNil(t, fn, "no mage target for stage %s", s.Name) {
			continue
		}
		doc := fn.Doc.Text()
		assert.True(t, strings.HasPrefix(doc, s.Doc+"\n"), "target %s: doc %q, stage doc %q", s.Name, doc, s.Doc)
		var params []string
		for _, p := range fn.Type.Params.List[1:] {
			for _, n := range p.Names {
				params = append(params, n.Name)
			}
		}
		assert.Equal(t, strings.Join(s.Args, ","), strings.Join(params, ","), "target %s arguments", s.Name)
		delete(targets, s.Name)
	}
	assert.Empty(t, targets, "mage targets that are no stage")
	var allDoc string
	for _, d := range f.Decls {
		if fn, ok := d.(*ast.FuncDecl); ok && fn.Name.Name == "All" {
			allDoc = fn.Doc.Text()
		}
	}
	for _, line := range strings.Split(strings.TrimSuffix(config.KnobHelp(), "\n"), "\n") {
		assert.Contains(t, allDoc, "\t"+line+"\n")
	}
	src, err := os.ReadFile("../../magefile.go")
	require.NoError(t, err)
	assert.Contains(t, string(src), "\n//mage:multiline\n")
}

// A positional argument a stage does not take is refused, not ignored: a
// mistyped flag after the stage once ran the whole quick suite.
func TestStageRefusesArguments(t *testing.T) {
	err := Stage(context.Background(), "doctor", Config{Root: t.TempDir()}, "-h")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "stage doctor takes no arguments")
	err = Stage(context.Background(), "compare", Config{Root: t.TempDir()}, "a", "b", "c")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "at most 2 argument(s) (a b)")
	for _, s := range Stages {
		if s.Name == "merge" {
			assert.NoError(t, s.checkArgs([]string{"x", "y", "z"}), "merge takes any number of folders")
		}
	}
}

// The merge stage merges tuning folders with the tuner's merge, refuses a
// mix of tuning and results folders naming one of each, and refuses a
// selection, which only results folders take.
func TestMergeStageOfTuningFolders(t *testing.T) {
	a, b, r := t.TempDir(), t.TempDir(), t.TempDir()
	for _, d := range []string{a, b} {
		require.NoError(t, os.WriteFile(filepath.Join(d, tune.CacheFile), []byte(`{"cell":"dot.kk-cuda-3lvl.nvcc-sm90","size":100,"config":"","build_key":"k","device":"`+filepath.Base(d)+`","median_s":0.001,"verified":true}`+"\n"), 0o644))
	}
	require.NoError(t, os.WriteFile(filepath.Join(r, results.JSONLFile), nil, 0o644))
	out := filepath.Join(t.TempDir(), "merged")
	var log bytes.Buffer
	require.NoError(t, Stage(context.Background(), "merge", Config{Root: t.TempDir(), Out: out, Log: &log}, a+","+b))
	assert.Contains(t, log.String(), "holds 2 evaluations")
	assert.True(t, tune.Has(out))

	err := Stage(context.Background(), "merge", Config{Root: t.TempDir(), Out: out, Log: &log}, a+","+r)
	assert.ErrorContains(t, err, "merge takes results folders or tuning folders, not both: "+a+" is a tuning folder, "+r+" a results folder")
	err = Stage(context.Background(), "merge", Config{Root: t.TempDir(), Out: out, Log: &log, Kernels: []string{"dot"}}, a+","+b)
	assert.ErrorContains(t, err, "tuning folders merge whole")
}
