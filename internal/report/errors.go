package report

import (
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
