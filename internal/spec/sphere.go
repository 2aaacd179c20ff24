package spec

// HOMMEXX's element geometry (docs/hommexx.md): arrays filled on the host by
// pm::sphere::field (harness/pm/sphere.hpp), the derivative matrix of the
// NP = 4 Gauss-Lobatto-Legendre points and the metric terms of the elements
// of an equiangular cubed sphere, so that the sphere operators run on the
// geometry they were written for rather than on unrelated random numbers.

import (
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/portmatrix/portmatrix/internal/diag"
)

// SphereFields are the geometry fields an array may be filled from, with
// their layout (the harness checks the extent against it).
var SphereFields = []string{
	"dvv",      // [NP][NP]: dvv[j][k] = l_k'(x_j), the derivative of GLL basis k at node j
	"d",        // [elem][2][2][NP][NP]: reference-element to physical (east, north) vectors, unit sphere
	"dinv",     // [elem][2][2][NP][NP]: the inverse of d
	"metdet",   // [elem][NP][NP]: |det d|
	"rmetdet",  // [elem][NP][NP]: 1 / metdet
	"spheremp", // [elem][NP][NP]: GLL weight w_i w_j times metdet
	"metinv",   // [elem][2][2][NP][NP]: the inverse of the metric d d^T, dinv^T dinv
	"mp",       // [NP][NP]: the reference element's mass, GLL weights w_i w_j
}

// checkSphereField checks an array filled from the element geometry.
func checkSphereField(d diag.Decoder, n *yaml.Node, a Arg) {
	if a.Type != "double[]" {
		d.Add(n, "sphere: <field> fills a double[] array, not %s %q", a.Type, a.Name)
	}
	if !slices.Contains(SphereFields, a.Init.Field) {
		d.Add(n, "unknown sphere field %q (known: %s)", a.Init.Field, strings.Join(SphereFields, ", "))
	}
}

// UsesSphere reports whether an array is filled from the element geometry.
func (k *Kernel) UsesSphere() bool {
	return slices.ContainsFunc(k.Args, func(a Arg) bool { return a.Init.Kind == "sphere" })
}
