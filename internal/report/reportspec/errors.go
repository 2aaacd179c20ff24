package reportspec

import (
	"gopkg.in/yaml.v3"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// errorList collects every input error, so that all problems are reported at
// once, one line per problem, sorted by position (internal/diag).
type errorList diag.List

// errs returns the list sorted, or nil when empty.
func (l errorList) errs() error { return diag.List(l).Err() }

func (l *errorList) at(file string, n *yaml.Node, format string, args ...any) {
	(*diag.List)(l).Add(diag.At(file, n), format, args...)
}

// decoder is a diag.Decoder whose errors go to errs.
func decoder(file string, errs *errorList) diag.Decoder {
	return diag.Decoder{File: file, Errs: (*diag.List)(errs)}
}

// parse parses data as YAML, reporting a syntax error to errs.
func parse(file string, data []byte, errs *errorList) *yaml.Node {
	return diag.ParseYAML(file, data, (*diag.List)(errs))
}
