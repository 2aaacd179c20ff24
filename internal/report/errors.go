package report

import (
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// PosError is an input error at a position of a file (internal/diag).
type PosError = diag.Error

// ErrorList collects every input error, so that all problems are reported at
// once, one line per problem, sorted by position (internal/diag).
type ErrorList diag.List

func (l ErrorList) Error() string { return diag.List(l).Error() }

// errs returns the list sorted, or nil when empty.
func (l ErrorList) errs() error { return diag.List(l).Err() }

func (l *ErrorList) at(file string, n *yaml.Node, format string, args ...any) {
	(*diag.List)(l).Add(diag.At(file, n), format, args...)
}

func (l *ErrorList) line(file string, line int, format string, args ...any) {
	(*diag.List)(l).Add(diag.Pos{File: file, Line: line}, format, args...)
}

var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// yamlError turns a yaml.v3 error into positioned errors.
func yamlError(file string, err error) ErrorList {
	var msgs []string
	if te, ok := err.(*yaml.TypeError); ok {
		msgs = te.Errors
	} else {
		msgs = []string{err.Error()}
	}
	var out ErrorList
	for _, m := range msgs {
		if g := yamlLineRE.FindStringSubmatch(m); g != nil {
			n, _ := strconv.Atoi(g[1])
			out.line(file, n, "%s", g[2])
			continue
		}
		out.line(file, 0, "%s", strings.TrimPrefix(m, "yaml: "))
	}
	return out
}
