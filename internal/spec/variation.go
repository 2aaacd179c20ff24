package spec

// A variation is a kernel described as another kernel with a few fields
// changed (`variation_of:`), for an ablation or a study of one choice: it
// is the base's description, re-read from the base's file, under its own
// name, with its own doc and, for a kernel written as loops, its own
// `promote:`. The base stays the one owner of everything else, so the two
// cannot drift apart.

import (
	"os"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/loopnest"
)

// Variation is what a variation's file says; the loader replaces the
// variation by the base's kernel with these applied (resolveVariations).
type Variation struct {
	Of      string   // the base kernel
	Promote []string // the mapper's promote: kinds; nil keeps the base's
	pos     map[string]diag.Pos
}

// variationFields are the fields a variation may give.
var variationFields = []string{"kernel", "variation_of", "doc", "promote"}

// parseVariation reads a variation's fields into k (root has variation_of).
func parseVariation(d diag.Decoder, k *Kernel, root *yaml.Node) {
	f := d.Fields(root, "kernel variation (variation_of: changes only "+strings.Join(variationFields[2:], " and ")+")", variationFields...)
	if !d.Require(root, f, "kernel variation", "kernel", "variation_of") {
		return
	}
	k.Name = d.String(f["kernel"], "kernel")
	k.Doc = d.String(f["doc"], "doc")
	v := &Variation{Of: d.String(f["variation_of"], "variation_of"), pos: map[string]diag.Pos{}}
	v.pos["variation_of"] = d.Pos(f["variation_of"])
	if f["promote"] != nil {
		v.pos["promote"] = d.Pos(f["@promote"])
	}
	v.Promote = loopnest.DecodePromote(d, f["promote"])
	k.Variation = v
}

// resolveVariations replaces every variation by its base, re-read from the
// base's file (a kernel of its own, which the mapper may change apart from
// the base's), with the variation's name, doc and promote. The base's own
// problems are reported once, by the base.
func resolveVariations(kernels []*Kernel, errs *diag.List) []*Kernel {
	byName := map[string]*Kernel{}
	var names []string
	for _, k := range kernels {
		byName[k.Name] = k
		names = append(names, k.Name)
	}
	out := kernels[:0:0]
	for _, k := range kernels {
		v := k.Variation
		if v == nil {
			out = append(out, k)
			continue
		}
		base, ok := byName[v.Of]
		switch {
		case !ok:
			errs.Add(v.pos["variation_of"], "kernel %q is a variation of unknown kernel %q%s", k.Name, v.Of, diag.DidYouMean(v.Of, names))
			continue
		case base.Variation != nil:
			errs.Add(v.pos["variation_of"], "kernel %q is a variation of %q, itself a variation of %q: name %q", k.Name, v.Of, base.Variation.Of, base.Variation.Of)
			continue
		case v.Promote != nil && base.Loops == nil:
			errs.Add(v.pos["promote"], "promote: changes how a kernel written as loops is mapped; %q has no loops", v.Of)
			continue
		}
		data, err := os.ReadFile(base.File)
		if err != nil {
			errs.Add(v.pos["variation_of"], "%v", err)
			continue
		}
		var quiet diag.List // the base reported its own problems
		nk := Parse(base.File, data, &quiet)
		if nk == nil || quiet.Err() != nil {
			continue
		}
		nk.Name, nk.File, nk.Pos, nk.Variation = k.Name, k.File, k.Pos, v
		if k.Doc != "" {
			nk.Doc = k.Doc
		}
		if v.Promote != nil {
			nk.Loops.Promote = v.Promote
		}
		out = append(out, nk)
	}
	return out
}
