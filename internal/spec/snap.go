package spec

// TestSNAP's arguments (docs/testsnap.md): a SNAP system, built on the host
// as the harness's pm::SnapSystem and seen by kernels as a snap::System, and
// arrays filled from a stage of its float64 reference (the input of a
// kernel measured alone, e.g. snap_yi's ulisttot).

import (
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// SnapStages are the reference stages an array may be filled from
// (pm::SnapSystem::stage).
var SnapStages = []string{"utot_init", "ulisttot", "ylist", "dulist", "dedr", "force"}

// checkSnapArg checks a snap argument: init {bcc_w: <cells>} and nothing else.
func checkSnapArg(d diag.Decoder, item *yaml.Node, f map[string]*yaml.Node, a Arg) {
	if a.Type != "snap" {
		d.Add(f["init"], "bcc_w initialises a snap argument, not %s %q", a.Type, a.Name)
		return
	}
	if a.Init.Kind != "bcc_w" {
		d.Add(item, "snap argument %q needs init: {bcc_w: <cells per side>}", a.Name)
	}
	for _, field := range []string{"value", "extent", "intent"} {
		if f[field] != nil {
			d.Add(f["@"+field], "snap argument %q takes no %s", a.Name, field)
		}
	}
}

// checkSnapStage checks an array filled from a stage of an earlier snap
// argument's reference.
func checkSnapStage(d diag.Decoder, n *yaml.Node, a Arg, earlier []Arg) {
	if a.Type != "double[]" {
		d.Add(n, "snap: <stage> fills a double[] array, not %s %q", a.Type, a.Name)
	}
	if !slices.ContainsFunc(earlier, func(e Arg) bool { return e.Type == "snap" }) {
		d.Add(n, "array %q is filled from a SNAP stage: a snap argument must come before it", a.Name)
	}
	if !slices.Contains(SnapStages, a.Init.Stage) {
		d.Add(n, "unknown SNAP stage %q (known: %s)", a.Init.Stage, strings.Join(SnapStages, ", "))
	}
}

// SnapSource is the name of the snap argument whose stages fill arrays (the
// first one), or "".
func (k *Kernel) SnapSource() string {
	for _, a := range k.Args {
		if a.Type == "snap" {
			return a.Name
		}
	}
	return ""
}
