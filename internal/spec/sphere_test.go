package spec

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const sphereKernel = `kernel: k
size: {name: num_elem, ci: [3], default: [7], gpu: [101]}
args:
  - {name: num_elem, type: int64, value: size}
  - {name: dvv, type: "double[]", extent: 16, init: {sphere: dvv}, intent: in}
  - {name: dinv, type: "double[]", extent: num_elem * 64, init: {sphere: dinv}, intent: in}
  - {name: y, type: "double[]", extent: num_elem * 16, intent: out}
reference: ";"
bytes: "1.0"
flops: "1.0"
tolerance: 1e-12
pattern:
  range_for: {index: e, end: num_elem, body: "y[e] = dvv[0] * dinv[e];"}
`

func TestSphereInit(t *testing.T) {
	k, err := parseText(t, sphereKernel)
	require.NoError(t, err)
	assert.Equal(t, Init{Kind: "sphere", Field: "dvv"}, k.Args[1].Init)
	assert.Equal(t, Init{Kind: "sphere", Field: "dinv"}, k.Args[2].Init)
	assert.True(t, k.UsesSphere())
	k, err = parseText(t, replaceOnce(t, replaceOnce(t, sphereKernel, "{sphere: dvv}", "{random: [0, 1]}"), "{sphere: dinv}", "{random: [0, 1]}"))
	require.NoError(t, err)
	assert.False(t, k.UsesSphere())
}

func TestSphereErrors(t *testing.T) {
	for name, c := range map[string]struct{ from, to, want string }{
		"unknown field": {"{sphere: dinv}", "{sphere: dinverse}",
			`k.yaml:6:65: unknown sphere field "dinverse" (known: dvv, d, dinv, metdet, rmetdet, spheremp, metinv, mp)`},
		"not double": {`{name: dvv, type: "double[]"`, `{name: dvv, type: "int64[]"`,
			`k.yaml:5:52: sphere: <field> fills a double[] array, not int64[] "dvv"`},
		"two inits": {"{sphere: dvv}", "{sphere: dvv, zero: true}",
			`k.yaml:5:53: init needs exactly one of random: [lo, hi], zero: true, formula: <expr of k>, minife27: <grid>, bcc_w: <cells>, snap: <stage>, sphere: <field>`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := parseText(t, replaceOnce(t, sphereKernel, c.from, c.to))
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}
