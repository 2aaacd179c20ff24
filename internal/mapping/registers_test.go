package mapping

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/depend"
	"github.com/portmatrix/portmatrix/internal/loopnest"
)

// registersOf plans the registers of a program whose outermost loop e is
// the only mapped one, around a body under loop i: a value: write of the
// target, then the loop j with the accumulation and the other statements.
func registersOf(t *testing.T, zero, target, others string) (*registers, string) {
	t.Helper()
	src := fmt.Sprintf(`loops:
  params: [ne, n]
  assume: [ne >= 1, n >= 2]
  arrays: {A: [ne, n, n], B: [ne, n]}
  body:
    - for:
        index: e
        to: ne
        body:
          - for:
              index: i
              to: n
              body:
                - stmt: {name: zero, writes: "%[3]s", value: "0"}
                - for:
                    index: j
                    to: n
                    body:
                      - stmt: {name: acc, reads: "A[e][i][j]", accumulate: "%[1]s", term: "A[(e * n + i) * n + j]"}
%[2]s`, target, others, zero)
	p := loopnestOf(t, "r.yaml", src)
	r := depend.Analyze(p)
	outer := p.Body[0].Loop
	regs := planRegisters(nil, r, outer, func(l *loopnest.Loop) bool { return l != outer })
	return regs, regs.bodyCode(outer.Body)
}

// The register takes the place of the target in the loop where no other
// access may touch its element (proved on the subscripts: B[e][j+1] never
// meets B[e][0]); the write before the loop starts it and is no longer
// stored.
func TestRegistersApplied(t *testing.T) {
	for _, others := range []string{"", `                      - stmt: {name: other, reads: "B[e][j+1]", writes: "A[e][i][j]", code: ";"}` + "\n"} {
		regs, code := registersOf(t, "B[e][0]", "B[e][0]", strings.ReplaceAll(others, "j+1", "j + 1"))
		require.Len(t, regs.byStmt, 1, regs.notes)
		assert.Contains(t, regs.notes[0], "keep acc's accumulation into B[e][0] (r.yaml:19:77) in register pm_acc_0 across loop j")
		assert.Contains(t, regs.notes[0], "it starts from the value of zero")
		want := "for (int64_t i = 0; i < n; ++i) {\n  double pm_acc_0 = 0;\n  for (int64_t j = 0; j < n; ++j) {\n    pm_acc_0 += A[(e * n + i) * n + j];\n"
		assert.Contains(t, code, want)
		assert.Contains(t, code, "  }\n  B[e * n] = pm_acc_0;\n}")
		assert.NotContains(t, code, "B[e * n] = 0;")
	}
}

// Refused, with the reason, when another access in the loop may touch the
// target's element (B[e][j] meets B[e][0] at j = 0; a write too), or when
// the target changes with the loop; the statements then keep their memory
// form, written from the subscripts and the shape.
func TestRegistersRefused(t *testing.T) {
	for _, c := range []struct{ target, others, why string }{
		{"B[e][0]", `                      - stmt: {name: other, reads: "B[e][j]", writes: "A[e][i][j]", code: ";"}`,
			"keep acc's accumulation into B[e][0] (r.yaml:19:77) in memory: B[e][j] (other, r.yaml:20:53) may touch the same element in the loop: "},
		{"B[e][0]", `                      - stmt: {name: other, writes: "B[e][n-1-j]", code: ";"}`,
			"in memory: B[e][n-1-j] (other, r.yaml:20:54) may touch the same element in the loop: "},
		{"B[e][j]", "", "keep acc's accumulation into B[e][j] (r.yaml:19:77) in memory: the target changes with loop j"},
	} {
		regs, code := registersOf(t, "B[e][i]", c.target, c.others+"\n")
		assert.Empty(t, regs.byStmt, c.why)
		require.Len(t, regs.notes, 1)
		assert.Contains(t, regs.notes[0], c.why)
		assert.Contains(t, code, "B[", c.why)
		assert.NotContains(t, code, "pm_acc", c.why)
	}
	regs, code := registersOf(t, "B[e][i]", "B[e][j]", "")
	assert.Empty(t, regs.byStmt)
	assert.Contains(t, code, "B[e * n + j] += A[(e * n + i) * n + j];")
}

// Around the loop: a value: write just before it starts the register unless
// a statement between them reads the element (then a load, after that
// store); an accumulation into the element just after it applies to the
// register, the store following it, unless a statement between them reads
// the element (then the store comes first).
func TestRegistersAroundTheLoop(t *testing.T) {
	plan := func(before, after string) string {
		src := `loops:
  params: [ne, n]
  assume: [ne >= 1, n >= 2]
  arrays: {A: [ne, n], B: [ne, n], C: [ne]}
  body:
    - for:
        index: e
        to: ne
        body:
          - stmt: {name: zero, writes: "C[e]", value: "1"}
` + before + `          - for:
              index: j
              to: n
              body:
                - stmt: {name: acc, reads: "A[e][j]", accumulate: "C[e]", term: "A[e * n + j]"}
` + after
		p := loopnestOf(t, "a.yaml", src)
		r := depend.Analyze(p)
		outer := p.Body[0].Loop
		regs := planRegisters(nil, r, outer, func(l *loopnest.Loop) bool { return l != outer })
		require.Len(t, regs.byStmt, 1, regs.notes)
		return regs.bodyCode(outer.Body)
	}
	scale := "          - stmt: {name: scale, accumulate: \"C[e]\", op: \"*\", term: \"2.0\"}\n"
	other := func(name, reads string) string {
		return fmt.Sprintf("          - stmt: {name: %s, reads: %q, writes: \"B[e][0]\", code: \";\"}\n", name, reads)
	}
	loop := "for (int64_t j = 0; j < n; ++j) {\n  pm_acc_0 += A[e * n + j];\n}\n"

	assert.Equal(t, "double pm_acc_0 = 1;\n"+loop+"pm_acc_0 *= 2.0;\nC[e] = pm_acc_0;", plan("", scale))
	// B[e][1] is another element: neither blocks
	assert.Equal(t, ";\ndouble pm_acc_0 = 1;\n"+loop+";\npm_acc_0 *= 2.0;\nC[e] = pm_acc_0;",
		plan(other("b", "B[e][1]"), other("a", "B[e][1]")+scale))
	// reading C[e] between: the store stays before the loop, the register loads it
	assert.Equal(t, "C[e] = 1;\n;\ndouble pm_acc_0 = C[e];\n"+loop+"C[e] = pm_acc_0;\n;\nC[e] *= 2.0;",
		plan(other("b", "C[e]"), other("a", "C[e]")+scale))
}
