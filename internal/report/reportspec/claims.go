package reportspec

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"os"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/results"
)

// Claim is one checkable statement of a paper (claims.yaml).
//
// A claim compares the GB/s of numerator series with denominator series of
// the same kernel at the same size. Type "ratio" aggregates the ratios and
// expects the result inside Range; type "order" expects the numerator to be
// faster: the aggregate above 1 + Margin.
type Claim struct {
	ID          string
	Paper       string
	Quote       string // the paper's sentence the claim checks, word for word
	Statement   string
	Type        string   // ratio, order, or time (the numerator's median time per call, in µs; no denominator)
	Kernels     []string // each pairs with itself
	Numerator   Selector
	Denominator Selector
	Target      string // device (default), host or any: which toolchains
	// Keep is what the claim keeps equal between the two sides of a ratio,
	// as its sentence does (keep: [toolchain, library, size]), sorted:
	// KeepToolchain, KeepFamily, KeepLibrary, KeepSize. Without keep (or
	// same_toolchain, its older spelling) a claim keeps the family's
	// toolchain, the library and the size. The size is always kept.
	Keep          []string
	SameToolchain bool // keep toolchain: pair only series of one toolchain
	// WithinFamily (keep family; same_toolchain: within-family) pairs
	// series of one compiler family only when one toolchain built both, and
	// a series with one of another family (an LLVM version against nvcc's
	// native one) with each toolchain: "the LLVM ones of the same
	// toolchain, KK-CUDA from nvcc".
	WithinFamily bool
	// SameLibrary (keep library) pairs two series that both run on a
	// Kokkos-like or RAJA-like implementation only when it is the same
	// one: the project's layer with the layer, a library with itself; code
	// written directly pairs with either. RanOn gives each variant's.
	SameLibrary bool
	// RanOn is what each variant the claim selects runs on, from the
	// vocabulary (results.Vocabulary.RanOn, the library by name): "" for
	// code written directly, results.LayerMark, or the library's name.
	RanOn     map[string]string
	Sizes     string    // largest or smallest (common to a pair), all, or growth (largest over smallest); "at" when At is given
	At        []int64   // sizes: [n, ...]: the ratios at these sizes (each both sides measured)
	Aggregate string    // median, geomean, min, max or all
	Except    int       // all: ratios of each numerator toolchain allowed outside the band ("all but N")
	Range     []float64 // ratio: [lo, hi]; .inf for open
	Margin    float64   // order: faster by at least this fraction
	// PaperSays is the paper's number or statement the claim checks, short
	// ("10x", "about 70% of KK-CUDA 3 levels"), shown beside ours.
	PaperSays string
	// Ours marks a claim that is the project's, not the paper's: its quote
	// gives the paper's context only (beyond 000: the warp-only reductions).
	Ours bool
	// Differs says, where known, why our measurement differs from the
	// paper's (hardware, compiler, library, our layer, the paper's setup).
	Differs string
	Node    *yaml.Node
}

// Unmeasurable is a quantitative sentence of a paper that no claim checks
// because nothing here can measure it (an AMD GPU, NVHPC, a K40m, a
// profile of the whole application), with the reason.
type Unmeasurable struct {
	Paper  string // "000 Sec. IV-A, Fig. 13"
	Quote  string // the sentence, word for word
	Reason string
	Node   *yaml.Node
}

// Selector picks series: any of Variants, built by a toolchain of any of
// Families or any of Toolchains (both empty: every toolchain).
type Selector struct {
	// Kernels, where given, replace the claim's on this side: the ratios
	// then pair a numerator kernel with a denominator kernel (one operator
	// in two forms, 004's mapped against hand-written code; each kernel's
	// bytes must count the same traffic, so that GB/s ratios are time ratios).
	Kernels    []string
	Variants   []string
	Families   []string
	Toolchains []string
	// Premises are the launch parameters the sentence holds the side at
	// (000 Fig. 7: Kokkos-OMP at snap_vector 1): every cell the side
	// selects must have each tunable, at that generated value; a tuned
	// verdict takes only configurations that hold them.
	Premises map[string]int64
	Node     *yaml.Node
}

// Holds says whether a configuration (tunable -> value) holds every
// premise; a tunable the configuration does not name does not hold.
func (s Selector) Holds(config map[string]int64) bool {
	for name, want := range s.Premises {
		if got, ok := config[name]; !ok || got != want {
			return false
		}
	}
	return true
}

// PremiseText is the premises as "name=value, ...", sorted; "" without.
func (s Selector) PremiseText() string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(s.Premises)) {
		out = append(out, fmt.Sprintf("%s=%d", name, s.Premises[name]))
	}
	return strings.Join(out, ", ")
}

type claimsDoc struct {
	Claims        []Claim
	NotMeasurable []Unmeasurable
}

// decodeClaims reads the claims file's nodes (internal/diag's idiom).
func decodeClaims(d diag.Decoder, root *yaml.Node) claimsDoc {
	var cf claimsDoc
	if root == nil {
		return cf
	}
	f := fields(d, root, "claims file", "claims", "not_measurable")
	if root.Kind == yaml.MappingNode && f["claims"] == nil {
		d.Add(root, "claims is missing")
	}
	for _, item := range d.Seq(f["claims"], "claims") {
		g := fields(d, item, "claim", "id", "paper", "quote", "statement", "type", "kernels", "numerator", "denominator", "target",
			"keep", "same_toolchain", "sizes", "aggregate", "except", "range", "margin", "paper_says", "ours", "differs")
		c := Claim{ID: d.String(g["id"], "id"), Paper: d.String(g["paper"], "paper"), Quote: d.String(g["quote"], "quote"), Statement: d.String(g["statement"], "statement"),
			Type: d.String(g["type"], "type"), Kernels: d.Strings(g["kernels"], "kernels"),
			Numerator: decodeSelector(d, g["numerator"]), Denominator: decodeSelector(d, g["denominator"]),
			Target:    d.String(g["target"], "target"),
			Aggregate: d.String(g["aggregate"], "aggregate"),
			Margin:    number(d, g["margin"], "margin"), Except: int(d.Int(g["except"], "except")),
			PaperSays: d.String(g["paper_says"], "paper_says"), Differs: d.String(g["differs"], "differs")}
		if g["ours"] != nil {
			c.Ours = d.Bool(g["ours"], "ours")
		}
		c.Keep = decodeKeep(d, c.ID, g["keep"], g["same_toolchain"])
		if n := g["sizes"]; n != nil && n.Kind == yaml.SequenceNode {
			c.Sizes, c.At = "at", d.Ints(n, "sizes")
			if len(c.At) == 0 {
				d.Add(n, "sizes is empty")
			}
		} else {
			c.Sizes = d.String(n, "sizes")
		}
		for _, r := range d.Seq(g["range"], "range") {
			c.Range = append(c.Range, number(d, r, "range"))
		}
		if item.Kind == yaml.MappingNode {
			c.Node = item
		}
		cf.Claims = append(cf.Claims, c)
	}
	for _, item := range d.Seq(f["not_measurable"], "not_measurable") {
		g := fields(d, item, "not_measurable entry", "paper", "quote", "reason")
		u := Unmeasurable{Paper: d.String(g["paper"], "paper"), Quote: d.String(g["quote"], "quote"), Reason: d.String(g["reason"], "reason")}
		if item.Kind == yaml.MappingNode {
			u.Node = item
		}
		cf.NotMeasurable = append(cf.NotMeasurable, u)
	}
	return cf
}

// The axes a claim keeps equal (keep:).
const (
	KeepToolchain = "toolchain" // one toolchain builds both sides
	KeepFamily    = "family"    // one toolchain where both sides are of one compiler family
	KeepLibrary   = "library"   // one implementation of the layer (the project's, or one library)
	KeepSize      = "size"      // one size: always
)

var keepAxes = []string{KeepFamily, KeepLibrary, KeepSize, KeepToolchain}

// DefaultKeep is what a claim keeps without keep: the safe pairing.
var DefaultKeep = []string{KeepFamily, KeepLibrary, KeepSize}

// decodeKeep reads keep, or same_toolchain, its older spelling (true: keep
// toolchain, within-family: keep family, false: neither; the library and
// the size kept); neither: DefaultKeep.
func decodeKeep(d diag.Decoder, id string, keep, same *yaml.Node) []string {
	switch {
	case keep != nil && same != nil:
		d.Add(same, "claim %q: give keep or same_toolchain, not both (same_toolchain: true is keep: [toolchain, library, size])", id)
	case keep != nil:
		out := []string{KeepSize}
		for i, k := range d.Strings(keep, "keep") {
			if !slices.Contains(keepAxes, k) {
				d.Add(keep.Content[i], "claim %q: keep: unknown axis %q (known: %s)%s", id, k, strings.Join(keepAxes, ", "), diag.DidYouMean(k, keepAxes))
				continue
			}
			out = results.AppendNew(out, k)
		}
		slices.Sort(out)
		return out
	case same != nil && same.Kind == yaml.ScalarNode && same.Value == "within-family":
		return DefaultKeep
	case same != nil && d.Bool(same, "same_toolchain"):
		return []string{KeepLibrary, KeepSize, KeepToolchain}
	case same != nil:
		return []string{KeepLibrary, KeepSize}
	}
	return DefaultKeep
}

// Keeps says whether the claim keeps axis equal.
func (c Claim) Keeps(axis string) bool { return slices.Contains(c.Keep, axis) }

func decodeSelector(d diag.Decoder, n *yaml.Node) Selector {
	if n == nil {
		return Selector{}
	}
	f := fields(d, n, "selector", "kernels", "variants", "families", "toolchains", "premises")
	s := Selector{Kernels: d.Strings(f["kernels"], "kernels"), Variants: d.Strings(f["variants"], "variants"), Families: d.Strings(f["families"], "families"),
		Toolchains: d.Strings(f["toolchains"], "toolchains")}
	for _, kv := range d.Pairs(f["premises"], "premises") {
		if s.Premises == nil {
			s.Premises = map[string]int64{}
		}
		s.Premises[kv[0].Value] = d.Int(kv[1], "premise "+kv[0].Value)
	}
	if n.Kind == yaml.MappingNode {
		s.Node = n
	}
	return s
}

// number reads a YAML float (.inf included).
func number(d diag.Decoder, n *yaml.Node, what string) float64 {
	if d.String(n, what) == "" {
		return 0
	}
	var v float64
	if err := n.Decode(&v); err != nil {
		d.Add(n, "%s must be a number, not %q", what, n.Value)
	}
	return v
}

var (
	claimTypes  = []string{"ratio", "order", "time"}
	sizeChoices = []string{"largest", "smallest", "all", "growth"} // or a list of sizes
	aggregates  = []string{"median", "geomean", "min", "max", "all"}
)

// LoadClaims reads and validates a claims file.
func LoadClaims(path string, v *results.Vocabulary) ([]Claim, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseClaims(path, data, v)
}

// ParseClaims decodes and validates claims.yaml; file names the errors.
func ParseClaims(file string, data []byte, v *results.Vocabulary) ([]Claim, error) {
	cf, err := ParseClaimsFile(file, data, v)
	if err != nil {
		return nil, err
	}
	return cf.Claims, nil
}

// ClaimsFile is claims.yaml: the claims, and the papers' quantitative
// sentences that nothing here can measure (not_measurable), each with
// its reason.
type ClaimsFile struct {
	Claims        []Claim
	NotMeasurable []Unmeasurable
}

// LoadClaimsFile reads and validates a claims file, its not_measurable
// list too.
func LoadClaimsFile(path string, v *results.Vocabulary) (*ClaimsFile, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseClaimsFile(path, data, v)
}

// ParseClaimsFile decodes and validates claims.yaml whole.
func ParseClaimsFile(file string, data []byte, v *results.Vocabulary) (*ClaimsFile, error) {
	var errs errorList
	cf := decodeClaims(decoder(file, &errs), parse(file, data, &errs))
	seen := map[string]*yaml.Node{}
	for i := range cf.Claims {
		c := &cf.Claims[i]
		c.defaults()
		c.validate(file, seen, &errs, v)
		c.SetRanOn(v)
	}
	for _, u := range cf.NotMeasurable {
		if u.Node == nil {
			continue // not a mapping: already reported
		}
		for _, field := range []struct{ name, value, what string }{
			{"paper", u.Paper, "the paper and section"}, {"quote", u.Quote, "the sentence, word for word"}, {"reason", u.Reason, "why nothing here measures it"}} {
			if field.value == "" {
				errs.at(file, u.Node, "not_measurable entry: %s is missing (%s)", field.name, field.what)
			}
		}
	}
	if err := errs.errs(); err != nil {
		return nil, err
	}
	return &ClaimsFile{Claims: cf.Claims, NotMeasurable: cf.NotMeasurable}, nil
}

func (c *Claim) defaults() {
	if c.Keep == nil {
		c.Keep = DefaultKeep
	}
	c.SameToolchain = c.Keeps(KeepToolchain)
	c.WithinFamily = !c.SameToolchain && c.Keeps(KeepFamily)
	c.SameLibrary = c.Keeps(KeepLibrary)
	if c.Type == "" {
		c.Type = "ratio"
	}
	if c.Target == "" {
		c.Target = "device"
	}
	if c.Sizes == "" {
		c.Sizes = "largest"
	}
	if c.Aggregate == "" {
		c.Aggregate = "median"
		if c.Type == "order" {
			c.Aggregate = "min"
		}
	}
}

func (c *Claim) validate(file string, seen map[string]*yaml.Node, errs *errorList, v *results.Vocabulary) {
	n := c.Node
	if n == nil {
		return // not a mapping: already reported
	}
	name := checkID(file, n, "claim", c.ID, seen, errs)
	if c.Statement == "" {
		errs.at(file, n, "%s: statement is missing", name)
	}
	if c.Paper == "" {
		errs.at(file, n, "%s: paper is missing", name)
	}
	if c.Quote == "" {
		errs.at(file, n, "%s: quote is missing (the paper's sentence the claim checks)", name)
	}
	checkEnum(file, n, name, "type", c.Type, claimTypes, errs)
	checkEnum(file, n, name, "target", c.Target, targetValues, errs)
	if c.At == nil {
		checkEnum(file, n, name, "sizes", c.Sizes, sizeChoices, errs)
	}
	checkEnum(file, n, name, "aggregate", c.Aggregate, aggregates, errs)
	if len(c.Kernels) == 0 && (len(c.Numerator.Kernels) == 0 || (c.Type != "time" && len(c.Denominator.Kernels) == 0)) {
		errs.at(file, valueNode(n, "kernels"), "%s: kernels is empty", name)
	}
	for i, k := range c.Kernels {
		checkName(file, itemNode(n, "kernels", i), name, "kernel", k, v.KernelNames(), errs)
	}
	c.Numerator.validate(file, valueNode(n, "numerator"), name+" numerator", errs, v)
	c.checkPremises(file, c.Numerator, valueNode(n, "numerator"), name+" numerator", errs, v)
	if c.Type == "time" {
		if c.Denominator.Node != nil {
			errs.at(file, valueNode(n, "denominator"), "%s: a time claim bounds the numerator's time per call; it has no denominator", name)
		}
	} else {
		c.Denominator.validate(file, valueNode(n, "denominator"), name+" denominator", errs, v)
		c.checkPremises(file, c.Denominator, valueNode(n, "denominator"), name+" denominator", errs, v)
	}
	c.checkSizes(file, name, errs, v)
	c.validateExpectation(file, name, errs)
	if c.Except < 0 || (c.Except > 0 && c.Aggregate != "all") {
		errs.at(file, valueNode(n, "except"), "%s: except is a count of ratios (>= 0) for aggregate all", name)
	}
}

func (c *Claim) validateExpectation(file, name string, errs *errorList) {
	n := c.Node
	if c.Type == "order" {
		if len(c.Range) > 0 {
			errs.at(file, valueNode(n, "range"), "%s: range does not apply to order claims (use margin)", name)
		}
		if c.Margin < 0 {
			errs.at(file, valueNode(n, "margin"), "%s: margin must not be negative", name)
		}
		return
	}
	if c.Margin != 0 {
		errs.at(file, valueNode(n, "margin"), "%s: margin applies to order claims only", name)
	}
	switch {
	case len(c.Range) != 2:
		errs.at(file, valueNode(n, "range"), "%s: range must be [lo, hi]", name)
	case math.IsNaN(c.Range[0]) || math.IsNaN(c.Range[1]) || c.Range[0] > c.Range[1]:
		errs.at(file, valueNode(n, "range"), "%s: range [%g, %g] is empty", name, c.Range[0], c.Range[1])
	}
}

func (s *Selector) validate(file string, n *yaml.Node, name string, errs *errorList, voc *results.Vocabulary) {
	if len(s.Variants) == 0 {
		errs.at(file, valueNode(n, "variants"), "%s: variants is empty", name)
	}
	for i, v := range s.Variants {
		checkName(file, itemNode(n, "variants", i), name, "variant", v, voc.VariantNames(), errs)
	}
	for i, f := range s.Families {
		checkName(file, itemNode(n, "families", i), name, "family", f, voc.Families, errs)
	}
	for i, k := range s.Kernels {
		checkName(file, itemNode(n, "kernels", i), name, "kernel", k, voc.KernelNames(), errs)
	}
	if voc != nil && len(voc.Toolchains) > 0 {
		for i, tc := range s.Toolchains {
			checkName(file, itemNode(n, "toolchains", i), name, "toolchain", tc, voc.Toolchains, errs)
		}
	}
}

// checkPremises reports a premise on a tunable that a cell of the side
// lacks, or whose generated value is another: the premises say what the
// sentence holds the side at, which the as-published program is. Checked
// where the vocabulary knows the cells' tunables (the source tree).
func (c *Claim) checkPremises(file string, s Selector, n *yaml.Node, name string, errs *errorList, voc *results.Vocabulary) {
	if voc == nil || voc.Tunables == nil || len(s.Premises) == 0 {
		return
	}
	pn := valueNode(n, "premises")
	for _, tunable := range slices.Sorted(maps.Keys(s.Premises)) {
		at := pn
		for _, kv := range pn.Content {
			if kv.Value == tunable {
				at = kv
			}
		}
		for _, k := range c.KernelsOf(s) {
			for _, v := range s.Variants {
				cell, ok := voc.Tunables[k][v]
				if !ok {
					continue // an unknown kernel or variant: reported already
				}
				known := slices.Sorted(maps.Keys(cell))
				got, has := cell[tunable]
				switch {
				case !has && len(known) == 0:
					errs.at(file, at, "%s: premise on %s, but %s.%s has no tunable", name, tunable, k, v)
				case !has:
					errs.at(file, at, "%s: premise on %s, which %s.%s lacks (its tunables: %s)%s", name, tunable, k, v,
						strings.Join(known, ", "), diag.DidYouMean(tunable, known))
				case got != s.Premises[tunable]:
					errs.at(file, at, "%s: premise %s=%d, but %s.%s is generated with %s=%d (a premise is what the program as published holds)",
						name, tunable, s.Premises[tunable], k, v, tunable, got)
				}
			}
		}
	}
}

// checkSizes reports a size of sizes: [...] that no kernel of the claim
// has (any of its size sets), listing those it has.
func (c *Claim) checkSizes(file, name string, errs *errorList, voc *results.Vocabulary) {
	if voc == nil || voc.Sizes == nil {
		return
	}
	var have []int64
	for _, k := range append(c.KernelsOf(c.Numerator), c.KernelsOf(c.Denominator)...) {
		have = results.AppendNew(have, voc.Sizes[k]...)
	}
	if len(have) == 0 {
		return
	}
	slices.Sort(have)
	for i, size := range c.At {
		if !slices.Contains(have, size) {
			var known []string
			for _, h := range have {
				known = append(known, fmt.Sprint(h))
			}
			near := slices.MinFunc(have, func(a, b int64) int { // the nearest size, by ratio
				return cmp.Compare(math.Abs(math.Log(float64(a)/float64(size))), math.Abs(math.Log(float64(b)/float64(size))))
			})
			errs.at(file, itemNode(c.Node, "sizes", i), "%s: no kernel of the claim has size %d (sizes: %s); did you mean %d?",
				name, size, strings.Join(known, ", "), near)
		}
	}
}

// SetRanOn records what each variant of the claim runs on (RanOn), from
// the vocabulary; a variant it does not know counts as code written directly.
func (c *Claim) SetRanOn(v *results.Vocabulary) {
	c.RanOn = map[string]string{}
	for _, name := range append(slices.Clone(c.Numerator.Variants), c.Denominator.Variants...) {
		switch s := v.Strategy(name); {
		case s == nil:
		case s.Library != nil:
			c.RanOn[name] = s.Library.Named()
		case s.Layer != "":
			c.RanOn[name] = results.LayerMark
		}
	}
}

// MixesLibrary says why the claim does not pair numerator variant a with
// denominator variant b: both run on an implementation of the layer and
// they differ ("the pm layer against Kokkos"); "" where it pairs them.
func (c Claim) MixesLibrary(a, b string) string {
	ra, rb := c.RanOn[a], c.RanOn[b]
	if !c.SameLibrary || ra == "" || rb == "" || ra == rb {
		return ""
	}
	return ra + " against " + rb
}

// KernelsOf are the kernels a side selects: its own, or the claim's.
func (c *Claim) KernelsOf(s Selector) []string {
	if len(s.Kernels) > 0 {
		return s.Kernels
	}
	return c.Kernels
}

// AcrossKernels reports whether the claim pairs different kernels.
func (c *Claim) AcrossKernels() bool {
	return len(c.Numerator.Kernels) > 0 || len(c.Denominator.Kernels) > 0
}

// Band is the interval the claim accepts: range, or above 1 + margin for
// an order claim.
func (c Claim) Band() (lo, hi float64) {
	if c.Type == "order" {
		return 1 + c.Margin, math.Inf(1)
	}
	return c.Range[0], c.Range[1]
}

// Matches says whether the selector takes series built by toolchain tc of
// family.
func (s Selector) Matches(tc, family string) bool {
	if len(s.Families) == 0 && len(s.Toolchains) == 0 {
		return true
	}
	return slices.Contains(s.Families, family) || slices.Contains(s.Toolchains, tc)
}

// Where names the toolchains the selector takes: its families and
// toolchains, or "any".
func (s Selector) Where() string {
	names := append(append([]string(nil), s.Families...), s.Toolchains...)
	if len(names) == 0 {
		return "any"
	}
	return strings.Join(names, "/")
}
