package report

import (
	"fmt"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// PosError is an input error at a position of a file. Line and Col are
// 1-based; zero means unknown.
type PosError struct {
	File      string
	Line, Col int
	Msg       string
}

func (e PosError) Error() string {
	switch {
	case e.Line > 0 && e.Col > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	default:
		return fmt.Sprintf("%s: %s", e.File, e.Msg)
	}
}

// ErrorList collects every input error, so that all problems are reported at
// once. Its Error is one line per problem, sorted by position.
type ErrorList []PosError

func (l ErrorList) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// errs returns the list sorted, or nil when empty.
func (l ErrorList) errs() error {
	if len(l) == 0 {
		return nil
	}
	sort.SliceStable(l, func(i, j int) bool {
		a, b := l[i], l[j]
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	return l
}

func (l *ErrorList) at(file string, n *yaml.Node, format string, args ...any) {
	e := PosError{File: file, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Col = n.Line, n.Column
	}
	*l = append(*l, e)
}

func (l *ErrorList) line(file string, line int, format string, args ...any) {
	*l = append(*l, PosError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)})
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
