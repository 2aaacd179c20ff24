package mapping

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/portmatrix/portmatrix/internal/depend"
	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/loopnest"
	"github.com/portmatrix/portmatrix/internal/loopnest/loopnesttest"
)

// Phased programs: a parallel element loop around several nests. sweep's
// first phase carries a recurrence along i (A[e][i] needs A[e][i-1]), so i
// must stay sequential there; its second reads a neighbour's value (a
// barrier before it); its third reads only what the second wrote at the
// same point, but the analysis does not compare phases' iterations, so it
// gets a barrier too.
var sweep = program(`params: [ne, n]
assume: [ne >= 1, n >= 2]
arrays: {A: [ne, n, n], B: [ne, n, n], C: [ne, n, n]}`,
	loop("e", "ne",
		loopFrom("i", "1", "n", loop("j", "n", stmt(`name: rec, reads: "A[e][i-1][j]", writes: "A[e][i][j]"`))),
		loop("i", "n", loop("j", "n - 1", stmt(`name: nb, reads: "A[e][i][j+1]", writes: "B[e][i][j]"`))),
		loop("i", "n", loop("j", "n", stmt(`name: same, reads: "B[e][i][j]", writes: "C[e][i][j]"`)))))

func phasesOf(t *testing.T, src string) (*loopnest.Program, *depend.Result, []*phase) {
	t.Helper()
	p := parse(t, "phased.yaml", []byte(src))
	r := depend.Analyze(p)
	require.True(t, phased(r, p.Body[0].Loop))
	return p, r, mapPhases(r, p.Body[0].Loop, 32, nil)
}

func TestPhasesKeepRecurrenceSequential(t *testing.T) {
	_, _, phases := phasesOf(t, sweep)
	require.Len(t, phases, 3)
	ids := func(p *phase) string {
		v := "-"
		if p.vector != nil {
			v = p.vector.ID
		}
		var team []string
		for _, l := range p.team {
			team = append(team, l.ID)
		}
		var inner []string
		for _, l := range p.inner {
			inner = append(inner, l.ID)
		}
		return fmt.Sprintf("team [%s] vector %s inner [%s] barrier %v", strings.Join(team, " "), v, strings.Join(inner, " "), p.barrier != nil)
	}
	assert.Equal(t, "team [] vector j#1 inner [i#1] barrier false", ids(phases[0]), "i carries the recurrence")
	assert.Contains(t, phases[0].why[phases[0].inner[0]], "sequential: carries flow")
	assert.Equal(t, "team [i#2] vector j#2 inner [] barrier true", ids(phases[1]))
	assert.Equal(t, "team [i#3] vector j#3 inner [] barrier true", ids(phases[2]))
}

// checkPhaseRaces enumerates every pair of instances that touch one element
// (one writing) and fails where the phased mapping runs them concurrently:
// different iterations of the league loop; or one phase with different
// values of a mapped loop; or different phases with no barrier between.
func checkPhaseRaces(p *loopnest.Program, phases []*phase, params map[string]int64) error {
	outer := p.Body[0].Loop
	phaseOf := func(s *loopnest.Stmt) int {
		return slices.IndexFunc(phases, func(q *phase) bool { return within(s, q.outer) })
	}
	var err error
	loopnesttest.Conflicts(p, params, func(x, y loopnesttest.Event) {
		if err != nil {
			return
		}
		xs, ys := x.Acc.Stmt, y.Acc.Stmt
		if !within(xs, outer) || !within(ys, outer) {
			return
		}
		if x.Iter[0] != y.Iter[0] {
			err = fmt.Errorf("league loop %s: %s %v and %s %v touch one element", outer.ID, x.Acc.Text, x.Iter, y.Acc.Text, y.Iter)
			return
		}
		px, py := phaseOf(xs), phaseOf(ys)
		if px == py {
			for _, m := range phases[px].mapped() {
				if x.Iter[m.Depth] != y.Iter[m.Depth] {
					err = fmt.Errorf("loop %s is mapped, but %s %v and %s %v touch one element", m.ID, x.Acc.Text, x.Iter, y.Acc.Text, y.Iter)
					return
				}
			}
			return
		}
		for q := min(px, py) + 1; q <= max(px, py); q++ {
			if phases[q].barrier != nil {
				return
			}
		}
		err = fmt.Errorf("phases %d and %d have no barrier between them, but %s %v and %s %v touch one element", px+1, py+1, x.Acc.Text, x.Iter, y.Acc.Text, y.Iter)
	})
	return err
}

func sizesOf(p *loopnest.Program, f func(params map[string]int64)) {
	for _, size := range loopnesttest.Sizes(len(p.Params)) {
		params := map[string]int64{}
		for i, name := range p.Params {
			params[name] = size[i]
		}
		if p.Holds(params) {
			f(params)
		}
	}
}

// TestPhasesNoRace: the phased mapping of sweep, of the HOMMEXX operators'
// loops and of random phased programs never runs two instances
// that touch one element concurrently; and the check itself catches the
// race when the barriers are taken away.
func TestPhasesNoRace(t *testing.T) {
	sources := map[string]string{"sweep": sweep}
	for _, op := range []string{"laplace_simple", "gradient_sphere", "divergence_sphere", "vorticity_sphere"} {
		data, err := os.ReadFile(filepath.Join("..", "..", "templates", "kernels", "hommexx_"+op+"_mapped.yaml"))
		require.NoError(t, err)
		sources[op+"_mapped"] = string(data)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	for i := range 400 {
		src := randomPhased(rng)
		sources[fmt.Sprintf("random %d", i)] = src
	}
	n, mapped := 0, 0
	for name, src := range sources {
		p := loopnestOf(t, name, src)
		r := depend.Analyze(p)
		if len(p.Body) != 1 || p.Body[0].Loop == nil || !phased(r, p.Body[0].Loop) {
			continue
		}
		n++
		phases := mapPhases(r, p.Body[0].Loop, 2, nil) // a warp of 2: small loops fill it
		for _, q := range phases {
			mapped += len(q.mapped())
		}
		sizesOf(p, func(params map[string]int64) {
			if err := checkPhaseRaces(p, phases, params); err != nil {
				t.Errorf("%s at %v: %v\n%s", name, params, err, src)
			}
		})
	}
	t.Logf("%d phased programs checked, %d loops mapped to team or vector", n, mapped)
	assert.Greater(t, n, 20)
	assert.Greater(t, mapped, n/4, "the check is not vacuous: many phases run in parallel")

	// Without its barriers sweep races.
	p, _, phases := phasesOf(t, sweep)
	for _, q := range phases {
		q.barrier = nil
	}
	raced := false
	sizesOf(p, func(params map[string]int64) { raced = raced || checkPhaseRaces(p, phases, params) != nil })
	assert.True(t, raced, "the check sees the race the barriers prevent")
}

// loopnestOf reads the loops: block of a loops file or a kernel description.
func loopnestOf(t *testing.T, name, src string) *loopnest.Program {
	t.Helper()
	var errs diag.List
	root := diag.ParseYAML(name, []byte(src), &errs)
	require.NotNil(t, root)
	var p *loopnest.Program
	for i := 0; i+1 < len(root.Content); i += 2 {
		if root.Content[i].Value == "loops" {
			p = loopnest.Decode(diag.Decoder{File: name, Errs: &errs}, root.Content[i+1])
		}
	}
	require.NoError(t, errs.Err())
	require.NotNil(t, p)
	return p
}

// randomPhased is a random phased program: an element loop e around two
// or three nests of depth 1 or 2 over i and j in [1, n - 1), whose
// statements read and write A[e][.] and B[e][.][.] at offsets -1, 0, 1 (in
// range), some of them accumulations.
func randomPhased(rng *rand.Rand) string {
	pick := func(list ...string) string { return list[rng.IntN(len(list))] }
	off := func(x string) string { return x + pick("", "", " + 1", " - 1") }
	var b strings.Builder
	b.WriteString("loops:\n  params: [ne, n]\n  assume: [ne >= 1, n >= 3]\n  arrays: {A: [ne, n], B: [ne, n, n]}\n  body:\n")
	b.WriteString("    - for:\n        index: e\n        to: ne\n        body:\n")
	for range 2 + rng.IntN(2) {
		depth := 1 + rng.IntN(2)
		vars := []string{"i", "j"}[:depth]
		access := func() string {
			if depth == 1 || rng.IntN(3) == 0 {
				return fmt.Sprintf("A[e][%s]", off(pick(vars...)))
			}
			x, y := vars[0], vars[1]
			if rng.IntN(2) == 0 {
				x, y = y, x
			}
			return fmt.Sprintf("B[e][%s][%s]", off(x), off(y))
		}
		pad := "          "
		for _, v := range vars {
			fmt.Fprintf(&b, "%s- for:\n%s    index: %s\n%s    from: 1\n%s    to: n - 1\n%s    body:\n", pad, pad, v, pad, pad, pad)
			pad += "      "
		}
		for range 1 + rng.IntN(2) {
			w := access()
			if rng.IntN(4) == 0 {
				fmt.Fprintf(&b, "%s- stmt: {reads: \"%s\", accumulate: \"%s\"}\n", pad, access(), w)
			} else {
				fmt.Fprintf(&b, "%s- stmt: {reads: \"%s, %s\", writes: \"%s\"}\n", pad, access(), access(), w)
			}
		}
	}
	return b.String()
}

// The laplace_simple kernel written as loops maps as HOMMEXX's hand-written
// form does: a team per element, the points on the team threads, the levels
// on the lanes, the temporary in team scratch, a barrier before the phase
// that reads it; the first two nests fuse.
func TestPhasedLaplaceSimple(t *testing.T) {
	text := explained(t, "hommexx_laplace_simple_mapped")
	for _, want := range []string{
		"loop ie -> league: parallel; the outer loop, a team per iteration",
		"trip counts with the kernel's constant parameters: np = 4, nlev = 72",
		"loop k#2 -> vector: parallel; stride-1 score 16, the highest of the phase's parallel loops that fill a warp of 32",
		"fuse i#1 and i#2: legal with the same bounds, and fusing the whole band (i#1, j#1, k#1) reverses no dependence; the team barrier before i#2 goes",
		"keep i and n apart: illegal: ",
		"team: league num_elem, team_size map_team_size, vector map_vector_size",
		"team_thread_for: [n, m] in [0, np) x [0, np)",
		// the gradient lives in team scratch, as in the hand-written form
		"promote work to level-0 team scratch pm_team_work: written in phase 1, read in phase 2 of the same iteration of ie; its part per iteration, work[ie][0:2][0:np][0:np][0:nlev], is 2304 doubles = 18432 bytes per team",
		"| const pm::TeamSlice<double> work{pm_team_work, ie * ((2) * (np) * (np) * (nlev))};",
	} {
		assert.Contains(t, text, want)
	}
	// the gradient and its contravariant components fused, then the divergence
	assert.Equal(t, 2, strings.Count(text, "thread_vector_for: k in [0, nlev)"))
	// the sums over l in registers, as the hand-written form keeps them:
	// laplace is then written once per element, straight to global memory
	assert.Regexp(t, `keep div.s accumulation into laplace\[ie\]\[n\]\[m\]\[k\] \([^)]*\) in register pm_acc_2 across loop l#2`, text)
	assert.Contains(t, text, "keep laplace global (output): 1152 reads and writes of 1152 elements, 1 per element; each element is written once: a copy out would only add traffic")
	assert.Contains(t, text, "| laplace[((ie * np + n) * np + m) * nlev + k] = pm_acc_2;")
	assert.NotContains(t, text, "pm_team_laplace")
	// after the copies in and between the phases; no copy out
	assert.Equal(t, 2, strings.Count(text, "    team_barrier\n"))
}

// One nest inside the element loop is phased only when its band has more
// loops a phase may run in parallel than the team and vector levels take
// one each: i, j and k (HOMMEXX's gradient_sphere) go to the team (i, j
// flattened) and the vector; j and k alone (a 3-D stencil's shape) keep the
// band mapping, one loop a level; nor does a nest whose third loop carries a
// recurrence or whose bounds use an inner index.
func TestPhasedOneNest(t *testing.T) {
	// nest writes the element loop e around loops (index, bounds) and one statement.
	nest := func(stmt string, loops ...[2]string) string {
		var b strings.Builder
		b.WriteString("loops:\n  params: [ne, n]\n  assume: [ne >= 1, n >= 2]\n  arrays: {A: [ne, n, n, n]}\n  body:\n")
		pad := "    "
		for _, l := range append([][2]string{{"e", "to: ne"}}, loops...) {
			fmt.Fprintf(&b, "%s- for:\n%s    index: %s\n%s    %s\n%s    body:\n", pad, pad, l[0], pad, strings.ReplaceAll(l[1], "\n", "\n"+pad+"    "), pad)
			pad += "      "
		}
		fmt.Fprintf(&b, "%s- stmt: {%s}\n", pad, stmt)
		return b.String()
	}
	own := `reads: "A[e][i][j][k]", writes: "A[e][i][j][k]"`
	i, j, k := [2]string{"i", "to: n"}, [2]string{"j", "to: n"}, [2]string{"k", "to: n"}
	for _, c := range []struct {
		name, src string
		phased    bool
	}{
		{"i, j, k parallel", nest(own, i, j, k), true},
		{"j and k parallel (a stencil's shape)", nest(`reads: "A[e][0][j][k]", writes: "A[e][1][j][k]"`, j, k), false},
		{"i and j carry a transpose's dependences", nest(`reads: "A[e][j][i][k]", writes: "A[e][i][j][k]"`, i, j, k), false},
		{"k carries a recurrence", nest(`reads: "A[e][i][j][k-1]", writes: "A[e][i][j][k]"`, i, j, [2]string{"k", "from: 1\nto: n"}), false},
		{"k's bounds use j", nest(own, i, j, [2]string{"k", "to: j + 1"}), false},
	} {
		p := loopnestOf(t, c.name, c.src)
		r := depend.Analyze(p)
		assert.Equal(t, c.phased, phased(r, p.Body[0].Loop), c.name)
	}
}

// The other HOMMEXX operators written as loops map as their hand-written
// forms: gradient_sphere one phase over the points and levels (no barrier,
// no temporary); divergence_sphere and vorticity_sphere two, the temporary
// in team scratch and a barrier before the phase that reads other points'
// values of it; each with its reused inputs in scratch. The sums over l are
// kept in registers: divergence's and vorticity's outputs (the sum, then its
// scaling, applied to the register) are written once and stay global;
// gradient's, read and rewritten in place by the next statement, goes
// through scratch.
func TestPhasedSphereOperators(t *testing.T) {
	for _, c := range []struct {
		op        string
		phases    int
		barriers  int
		promoted  bool
		output    string // the output
		inScratch bool   // updated more than once in memory: accumulated in scratch
	}{
		{"gradient_sphere", 1, 0, false, "grad", true},
		{"divergence_sphere", 2, 1, true, "div", false},
		{"vorticity_sphere", 2, 1, true, "vort", false},
	} {
		text := explained(t, "hommexx_"+c.op+"_mapped")
		assert.Contains(t, text, "loop ie -> league: parallel; the outer loop, a team per iteration", c.op)
		assert.Contains(t, text, "team: league num_elem, team_size map_team_size, vector map_vector_size", c.op)
		assert.Equal(t, c.phases, strings.Count(text, "-> vector: parallel; stride-1 score"), c.op)
		assert.Equal(t, c.phases, strings.Count(text, "thread_vector_for: k in [0, nlev)"), c.op)
		assert.Equal(t, c.phases, strings.Count(text, "(i, j flattened, as HOMMEXX's TeamThreadRange over the points)")/2+
			strings.Count(text, "(n, m flattened, as HOMMEXX's TeamThreadRange over the points)")/2, c.op)
		// the phases' barriers, then one after the inputs' copies in and one
		// before the output's copy out
		assert.Contains(t, text, "promote dvv (read-only input) to level-0 team scratch", c.op)
		copyOut := 0
		if c.inScratch {
			copyOut = 1
			assert.Contains(t, text, "promote "+c.output+" (output) to level-0 team scratch", c.op)
		} else {
			assert.Contains(t, text, "keep "+c.output+" global (output): 1152 reads and writes of 1152 elements, 1 per element; each element is written once", c.op)
			assert.Contains(t, text, "whose * applies to the register", c.op)
		}
		assert.Equal(t, c.barriers+1+copyOut, strings.Count(text, "    team_barrier\n"), c.op)
		assert.Equal(t, c.promoted, strings.Contains(text, "promote work to level-0 team scratch pm_team_work: written in phase 1, read in phase 2"), c.op)
		assert.NotContains(t, text, "-> sequential: parallel;", c.op)
	}
}
