// Package diag collects positioned input errors and reports them all at once,
// sorted, as file:line:col: message.
package diag

import (
	"fmt"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"
)

// Pos is a position in an input file; Line and Col are 1-based, 0 if unknown.
type Pos struct {
	File      string
	Line, Col int
}

// At returns the position of a YAML node in file.
func At(file string, n *yaml.Node) Pos {
	if n == nil {
		return Pos{File: file}
	}
	return Pos{File: file, Line: n.Line, Col: n.Column}
}

func (p Pos) String() string {
	switch {
	case p.Line == 0:
		return p.File
	case p.Col == 0:
		return fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	return fmt.Sprintf("%s:%d:%d", p.File, p.Line, p.Col)
}

// Error is one problem at one position.
type Error struct {
	Pos Pos
	Msg string
}

func (e Error) Error() string { return e.Pos.String() + ": " + e.Msg }

// List collects errors; its zero value is ready to use.
type List []Error

// Add records a problem at pos.
func (l *List) Add(pos Pos, format string, args ...any) {
	*l = append(*l, Error{Pos: pos, Msg: fmt.Sprintf(format, args...)})
}

// Err returns nil when l is empty, or l sorted by position as an error.
func (l List) Err() error {
	if len(l) == 0 {
		return nil
	}
	sorted := append(List(nil), l...)
	sort.SliceStable(sorted, func(i, j int) bool {
		a, b := sorted[i].Pos, sorted[j].Pos
		if a.File != b.File {
			return a.File < b.File
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	return sorted
}

func (l List) Error() string {
	lines := make([]string, len(l))
	for i, e := range l {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}
