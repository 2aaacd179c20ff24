package tune

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// This package is the one writer of a tuning folder's files: no other
// source of the project names one of them as a path (a string that is the
// name), so none can open one but through the functions here (the tune
// stage's, and cluster's joining of shards through Join).
func TestOneWriterOfTheTuningFolder(t *testing.T) {
	root := filepath.Join("..", "..")
	names := []string{CacheFile, ReportFile, LogFile, KernelsFile}
	var found []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "internal/tune" || rel != "." && strings.HasPrefix(d.Name(), ".") || rel == "generated" || rel == "results" || rel == "build" {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(token.NewFileSet(), path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			lit, ok := n.(*ast.BasicLit)
			if !ok || lit.Kind != token.STRING {
				return true
			}
			s, err := strconv.Unquote(lit.Value)
			if err != nil {
				return true
			}
			for _, name := range names { // a path, not a help text's mention
				if s == name || strings.HasSuffix(s, "/"+name) {
					found = append(found, rel+": "+name)
				}
			}
			return true
		})
		return nil
	})
	require.NoError(t, err)
	assert.Empty(t, found, "a tuning folder's file named outside internal/tune")
}
