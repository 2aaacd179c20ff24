package build

import (
	"path"
	"regexp"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/layout"
)

// KnownFile is the checked-in list of build failures that are data, not
// bugs (variants/known-failures.yaml).
const KnownFile = layout.KnownFailures

// Known is one documented build failure: cells matching the glob Cell whose
// failure reason matches the regular expression Message.
type Known struct {
	Cell    string
	Message *regexp.Regexp
	Why     string
	Pos     diag.Pos
}

// LoadKnown reads the known-failure list; positioned errors.
func LoadKnown(file string) ([]Known, error) {
	var errs diag.List
	root := diag.ReadYAML(file, &errs)
	d := diag.Decoder{File: file, Errs: &errs}
	var out []Known
	top := d.Fields(root, "known-failures file", "failures")
	for _, n := range d.Seq(top["failures"], "failures") {
		f := d.Fields(n, "known failure", "cell", "message", "why")
		if !d.Require(n, f, "known failure", "cell", "message", "why") {
			continue
		}
		k := Known{Cell: d.String(f["cell"], "cell"), Why: d.String(f["why"], "why"), Pos: d.Pos(n)}
		if _, err := path.Match(k.Cell, ""); err != nil {
			d.Add(f["cell"], "bad cell pattern %q: %v", k.Cell, err)
		}
		re, err := regexp.Compile(d.String(f["message"], "message"))
		if err != nil {
			d.Add(f["message"], "bad message pattern: %v", err)
			continue
		}
		k.Message = re
		out = append(out, k)
	}
	return out, errs.Err()
}

// Match returns the known failure that explains a failed cell and its
// reason, or nil: both the cell and the message must match.
func Match(known []Known, cell, reason string) *Known {
	for i, k := range known {
		if ok, _ := path.Match(k.Cell, cell); ok && k.Message.MatchString(reason) {
			return &known[i]
		}
	}
	return nil
}
