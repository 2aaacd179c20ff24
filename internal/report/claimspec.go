package report

import (
	"math"
	"os"

	"gopkg.in/yaml.v3"

	"github.com/portmatrix/portmatrix/internal/results"
)

// ClaimSpec is one checkable statement of a paper (claims.yaml).
//
// A claim compares the GB/s of numerator series with denominator series of
// the same kernel at the same size. Type "ratio" aggregates the ratios and
// expects the result inside Range; type "order" expects the numerator to be
// faster: the aggregate above 1 + Margin.
type ClaimSpec struct {
	ID            string     `yaml:"id"`
	Paper         string     `yaml:"paper"`
	Statement     string     `yaml:"statement"`
	Type          string     `yaml:"type"`    // ratio or order
	Kernels       []string   `yaml:"kernels"` // each pairs with itself
	Numerator     Selector   `yaml:"numerator"`
	Denominator   Selector   `yaml:"denominator"`
	Target        string     `yaml:"target"`         // device (default), host or any: which toolchains
	SameToolchain bool       `yaml:"same_toolchain"` // pair only series of one toolchain
	Sizes         string     `yaml:"sizes"`          // largest (common to a pair) or all
	Aggregate     string     `yaml:"aggregate"`      // median, geomean, min, max or all
	Range         []float64  `yaml:"range"`          // ratio: [lo, hi]; .inf for open
	Margin        float64    `yaml:"margin"`         // order: faster by at least this fraction
	Node          *yaml.Node `yaml:"-"`
}

// Selector picks series: any of Variants, built by a toolchain of any of
// Families or any of Toolchains (both empty: every toolchain).
type Selector struct {
	Variants   []string   `yaml:"variants"`
	Families   []string   `yaml:"families"`
	Toolchains []string   `yaml:"toolchains"`
	Node       *yaml.Node `yaml:"-"`
}

type claimsDoc struct {
	Claims []ClaimSpec `yaml:"claims"`
}

var (
	claimTypes  = []string{"ratio", "order"}
	sizeChoices = []string{"largest", "all"}
	aggregates  = []string{"median", "geomean", "min", "max", "all"}
)

// LoadClaims reads and validates a claims file.
func LoadClaims(path string, v *results.Vocabulary) ([]ClaimSpec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseClaims(path, data, v)
}

// ParseClaims decodes and validates claims.yaml; file names the errors.
func ParseClaims(file string, data []byte, v *results.Vocabulary) ([]ClaimSpec, error) {
	root, err := parseDoc(file, data)
	if err != nil {
		return nil, err
	}
	var cf claimsDoc
	var errs ErrorList
	decodeStrict(file, root, &cf, &errs)
	if valueNode(root, "claims") == root {
		errs.at(file, root, "claims is missing")
	}
	seen := map[string]*yaml.Node{}
	for i := range cf.Claims {
		c := &cf.Claims[i]
		c.defaults()
		c.validate(file, seen, &errs, v)
	}
	if err := errs.errs(); err != nil {
		return nil, err
	}
	return cf.Claims, nil
}

func (c *ClaimSpec) defaults() {
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

func (c *ClaimSpec) validate(file string, seen map[string]*yaml.Node, errs *ErrorList, v *results.Vocabulary) {
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
	checkEnum(file, n, name, "type", c.Type, claimTypes, errs)
	checkEnum(file, n, name, "target", c.Target, targetValues, errs)
	checkEnum(file, n, name, "sizes", c.Sizes, sizeChoices, errs)
	checkEnum(file, n, name, "aggregate", c.Aggregate, aggregates, errs)
	if len(c.Kernels) == 0 {
		errs.at(file, valueNode(n, "kernels"), "%s: kernels is empty", name)
	}
	for i, k := range c.Kernels {
		checkName(file, itemNode(n, "kernels", i), name, "kernel", k, v.KernelNames(), errs)
	}
	c.Numerator.validate(file, valueNode(n, "numerator"), name+" numerator", errs, v)
	c.Denominator.validate(file, valueNode(n, "denominator"), name+" denominator", errs, v)
	c.validateExpectation(file, name, errs)
}

func (c *ClaimSpec) validateExpectation(file, name string, errs *ErrorList) {
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

func (s *Selector) validate(file string, n *yaml.Node, name string, errs *ErrorList, voc *results.Vocabulary) {
	if len(s.Variants) == 0 {
		errs.at(file, valueNode(n, "variants"), "%s: variants is empty", name)
	}
	for i, v := range s.Variants {
		checkName(file, itemNode(n, "variants", i), name, "variant", v, voc.VariantNames(), errs)
	}
	for i, f := range s.Families {
		checkName(file, itemNode(n, "families", i), name, "family", f, voc.Families, errs)
	}
}
