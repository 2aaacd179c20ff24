package mapping

// Tiling: two nests whose band mapping (one loop a level) is legal but slow,
// lowered instead as R-Stream tiles them.
//
//   - A strided side (a transpose): a parallel 2-D nest that reads an array
//     stride-1 in one loop and writes stride-1 in the other. One level per
//     loop makes one side of every warp access strided (32 lines for 32
//     elements). Tiled, a team loads a tile of the read array into level-0
//     team scratch with the lanes on the read's stride-1 loop, waits at a
//     barrier, and writes with the lanes on the write's stride-1 loop,
//     reading the tile across its rows (a row padded by one element, so that
//     the lanes of a column meet no bank twice).
//   - Reuse (a matrix multiply): a 3-D band of two parallel loops and one
//     reduction loop whose one statement accumulates into an element
//     indexed by the two parallel loops. The two are tiled (a team a block
//     of the target) and unrolled and jammed: each lane keeps a micro-tile
//     of the target in registers through the whole reduction loop, so a k
//     step loads TM + TN elements for TM x TN multiply-adds. When its
//     operands can be staged, the reduction loop runs in steps whose blocks
//     of the operands go through team scratch (tilestage.go).
//
// Both are legal when every dependence of the band has = on the parallel
// loops (tiling a fully permutable band: the loops carry nothing, or only an
// accumulation), checked on the dependence analysis; the sizes come from the
// machine model and explain gives the reasons.

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/depend"
	"github.com/portmatrix/portmatrix/internal/loopnest"
	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// lowerTiled lowers the nest tiled when it has one of the two shapes above,
// and reports whether it did (false: the band lowering goes on).
func lowerTiled(k *spec.Kernel, r *depend.Result, n Nest, m *machine.Model, info *launchInfo) bool {
	b := band(n.Outer)
	if !boxBand(r.Program, b) || !stmtsOnly(b[len(b)-1]) {
		return false
	}
	var t *tiling
	switch len(b) {
	case 2:
		t = transposeTiling(k, r, b, m)
	case 3:
		t = reuseTiling(k, r, b, m)
	}
	if t == nil {
		return false
	}
	k.Pattern = t.tree
	k.Tunables = append(k.Tunables, spec.Tunable{Name: TeamTunable, Value: t.team, Registers: t.teamRegisters}, spec.Tunable{Name: VectorTunable, Value: t.vector, Registers: t.vectorRegisters})
	k.Tunables = append(k.Tunables, t.tunables...)
	if info != nil {
		info.parallel = 2
	}
	var w bytes.Buffer
	r.Explain(&w)
	fmt.Fprintf(&w, "nest %s (%s): %s\n", n.Outer.ID, n.Outer.Pos, t.what)
	for _, line := range t.notes {
		fmt.Fprintf(&w, "  %s\n", line)
	}
	k.Mapping = w.String()
	return true
}

// tiling is a tiled lowering: the tree, its sizes and the explanation.
type tiling struct {
	what         string
	notes        []string
	tree         *spec.Node
	team, vector int64
	// the team and vector where a strategy keeps a work item's state in
	// registers (item_registers) and they differ; 0: team, vector
	teamRegisters, vectorRegisters int64
	tunables                       []spec.Tunable // beyond the team and vector (the staged multiply's step)
}

func (t *tiling) note(format string, args ...any) {
	t.notes = append(t.notes, fmt.Sprintf(format, args...))
}

// boxBand: every band loop has one lower and one upper bound, each in
// the parameters alone (a tile's loops then do not depend on each other).
func boxBand(p *loopnest.Program, b []*loopnest.Loop) bool {
	for _, x := range b {
		if len(x.Lower) != 1 || len(x.Upper) != 1 {
			return false
		}
		for _, e := range []loopnest.Affine{x.Lower[0], x.Upper[0]} {
			for name := range e.Terms {
				if !slices.Contains(p.Params, name) {
					return false
				}
			}
		}
	}
	return true
}

func stmtsOnly(x *loopnest.Loop) bool {
	for _, n := range x.Body {
		if n.Loop != nil {
			return false
		}
	}
	return len(x.Body) > 0
}

// onlyLoop reports whether the affine expression uses loop x with
// coefficient 1 and no other loop of the band (parameters and a constant
// may be added).
func onlyLoop(e loopnest.Affine, x *loopnest.Loop, b []*loopnest.Loop) bool {
	if e.Coef(x.Index) != 1 {
		return false
	}
	for _, y := range b {
		if y != x && e.Uses(y.Index) {
			return false
		}
	}
	return true
}

// withinIterations reports whether every dependence of the band has = on
// each of the given loops (their iterations may then run concurrently, in
// any tiles, the other band loops inside them in order), or returns the
// first that does not.
func withinIterations(r *depend.Result, b []*loopnest.Loop, par ...*loopnest.Loop) *depend.Dep {
	last := b[len(b)-1]
	for _, d := range r.Deps {
		if len(d.Loops) <= last.Depth || d.Loops[last.Depth] != last {
			continue
		}
		for _, x := range par {
			if d.Dirs[x.Depth] != depend.Eq {
				return d
			}
		}
	}
	return nil
}

// ceilDiv is the C++ of the number of chunks of size c in a trip count that
// may be negative (0 chunks then), trip being a loop's tripOf.
func ceilDiv(x *loopnest.Loop, c string) string {
	trip, c := tripOf(x), paren(c)
	if lowerOf(x) == "0" {
		return fmt.Sprintf("((%s + %s - 1) / %s)", trip, c, c)
	}
	return fmt.Sprintf("(%s > 0 ? (%s + %s - 1) / %s : 0)", trip, trip, c, c)
}

// transposeTiling: a 2-D band of parallel loops whose writes are all
// stride-1 in one loop w and which reads, stride-1 in the other loop r, a
// rank-2 array it does not write, through one access A[w + a][r + b]: each
// such array is staged through a tile of team scratch.
func transposeTiling(k *spec.Kernel, r *depend.Result, b []*loopnest.Loop, m *machine.Model) *tiling {
	for _, x := range b {
		if v := r.Verdict(x); !v.Parallel || v.Reduction {
			return nil
		}
	}
	stmts := b[1].Stmts()
	var writes, reads []*loopnest.Access
	written := map[*loopnest.Array]bool{}
	for _, s := range stmts {
		for _, a := range s.Accesses {
			if a.Write {
				writes = append(writes, a)
				written[a.Array] = true
			} else {
				reads = append(reads, a)
			}
		}
	}
	if len(writes) == 0 {
		return nil
	}
	var w, rd *loopnest.Loop
	for i, x := range b {
		all := true
		for _, a := range writes {
			all = all && len(a.Subs) > 0 && onlyLoop(a.Subs[len(a.Subs)-1], x, b)
		}
		if all {
			w, rd = x, b[1-i]
		}
	}
	if w == nil {
		return nil
	}
	// the arrays to stage: read-only here, rank 2, one access A[w+a][r+b]
	var staged []*loopnest.Access
	byArray := map[*loopnest.Array][]*loopnest.Access{}
	var order []*loopnest.Array
	for _, a := range reads {
		if len(byArray[a.Array]) == 0 {
			order = append(order, a.Array)
		}
		byArray[a.Array] = append(byArray[a.Array], a)
	}
	var skipped []string
	for _, arr := range order {
		as := byArray[arr]
		a := as[0]
		if written[arr] || arr.Rank() != 2 || !onlyLoop(a.Subs[1], rd, b) {
			continue // not read stride-1 in r, or written: left as it is
		}
		same := true
		for _, x := range as[1:] {
			same = same && flatIndex(x) == flatIndex(a)
		}
		switch {
		case !onlyLoop(a.Subs[0], w, b):
			skipped = append(skipped, fmt.Sprintf("%s (%s): its first subscript does not step with loop %s alone", a.Text, a.Pos, w.ID))
		case !same:
			skipped = append(skipped, fmt.Sprintf("%s (%s): the nest reads %s through more than one subscript", a.Text, a.Pos, arr.Name))
		case elemType(k, arr) != "double":
			skipped = append(skipped, fmt.Sprintf("%s (%s): its elements are %s (the tile is of doubles)", a.Text, a.Pos, elemType(k, arr)))
		default:
			staged = append(staged, a)
		}
	}
	if len(staged) == 0 {
		return nil
	}
	if !r.Program.Promotes("inputs") {
		return nil // promote: without inputs: the band mapping, without scratch
	}
	if d := withinIterations(r, b, b...); d != nil {
		return nil
	}
	t := &tiling{what: fmt.Sprintf("tiled: it writes stride-1 in %s and reads %s stride-1 in %s (a strided side under one loop a level)", w.ID, names(staged), rd.ID)}
	V, T := VectorTunable, TeamTunable
	warp := int64(32)
	if m.Kind == machine.KindGPU {
		warp = m.GPU.WarpSize
	}
	tileBytes := int64(len(staged)) * warp * (warp + 1) * 8
	team, vector, why := teamShape(m, []int64{warp}, warp, tileBytes)
	if m.Kind != machine.KindGPU {
		team, vector, why = 4, warp, "the default shape (no GPU model)"
	}
	t.team, t.vector = team, vector
	t.note("loop %s -> league+vector: parallel; stride-1 in every write (%s): tiles of %s iterations, the lanes on it when the team writes", w.ID, texts(writes), V)
	t.note("loop %s -> league+vector: parallel; stride-1 in %s: tiles of %s iterations, the lanes on it when the team loads the tile", rd.ID, names(staged), V)
	t.note("a team a %s x %s tile (league: the tiles of %s times those of %s); the tile's rows over the team's threads, its remainder tiles cut to the loops' ends", V, V, w.ID, rd.ID)
	for _, a := range staged {
		t.note("stage %s (read-only input, %s) through team scratch %s: %s x (%s + 1) doubles, its row padded by one so that the lanes reading a column of the tile meet each bank once; loaded with the lanes on %s (coalesced), a team barrier, then read with the lanes on %s", a.Text, a.Pos, tileName(a.Array), V, V, rd.ID, w.ID)
	}
	for _, s := range skipped {
		t.note("not staged: %s", s)
	}
	t.note("vector length %d, team size %d: the tile's side is the warp (%d lanes, a row of %d bytes: whole 32-byte sectors); %s", vector, team, warp, warp*8, why)
	t.note("legal: both loops carry no dependence, so the tiles and the two phases of a tile may run in any order; the staged arrays are not written in the nest")

	// The tree.
	tilesR := ceilDiv(rd, V)
	top := []string{
		fmt.Sprintf("const int64_t pm_tiles_%s = %s;", rd.Index, tilesR),
		fmt.Sprintf("const int64_t %s_tile = %s;", w.Index, plus(lowerOf(w), "(league_rank / pm_tiles_"+rd.Index+") * "+V)),
		fmt.Sprintf("const int64_t %s_tile = %s;", rd.Index, plus(lowerOf(rd), "(league_rank % pm_tiles_"+rd.Index+") * "+V)),
	}
	wEnd := minExpr(V, minus(upperOf(w), w.Index+"_tile"))
	rEnd := minExpr(V, minus(upperOf(rd), rd.Index+"_tile"))
	idx := fmt.Sprintf("const int64_t %s = %s_tile + pm_a;\nconst int64_t %s = %s_tile + pm_b;", w.Index, w.Index, rd.Index, rd.Index)
	slot := "pm_a * (" + V + " + 1) + pm_b"
	var loads, views []string
	var scratch []spec.Scratch
	for _, a := range staged {
		loads = append(loads, fmt.Sprintf("%s[%s] = %s;", tileName(a.Array), slot, lvalue(a)))
		views = append(views, fmt.Sprintf("const pm::TeamSlice<const double> %s{%s, (%s) - (%s)};", a.Array.Name, tileName(a.Array), flatIndex(a), slot))
		scratch = append(scratch, spec.Scratch{Name: tileName(a.Array), Type: "double", Size: V + " * (" + V + " + 1)", Level: "0"})
	}
	code := func(s ...string) *spec.Node { return &spec.Node{Kind: "code", Code: strings.Join(s, "\n")} }
	load := &spec.Node{Kind: "team_thread_for", Index: "pm_a", Begin: "0", End: wEnd, Body: []*spec.Node{
		{Kind: "thread_vector_for", Index: "pm_b", Begin: "0", End: rEnd, Body: []*spec.Node{code(idx, strings.Join(loads, "\n"))}}}}
	store := &spec.Node{Kind: "team_thread_for", Index: "pm_b", Begin: "0", End: rEnd, Body: []*spec.Node{
		{Kind: "thread_vector_for", Index: "pm_a", Begin: "0", End: wEnd, Body: []*spec.Node{code(idx, strings.Join(views, "\n"), (*registers)(nil).bodyCode(b[1].Body))}}}}
	t.tree = &spec.Node{Kind: "team", League: ceilDiv(w, V) + " * " + tilesR, TeamSize: T, Vector: V, Scratch: scratch,
		Body: []*spec.Node{code(top...), load, {Kind: "team_barrier"}, store}}
	return t
}

func tileName(a *loopnest.Array) string { return "pm_tile_" + a.Name }

func names(as []*loopnest.Access) string {
	var out []string
	for _, a := range as {
		out = append(out, a.Array.Name)
	}
	return strings.Join(out, ", ")
}

func texts(as []*loopnest.Access) string {
	var out []string
	for _, a := range as {
		if !slices.Contains(out, a.Text) {
			out = append(out, a.Text)
		}
	}
	return strings.Join(out, ", ")
}

// microTiles are the register tiles the reuse tiling weighs, rows x columns
// of the target a lane keeps, the most multiply-adds per element loaded
// first: a k step loads TM elements of the row operand (one per row, the
// same in every lane of a warp: a broadcast) and TN of the column operand
// (consecutive lanes, consecutive elements) for TM x TN multiply-adds.
var microTiles = [][2]int64{{8, 8}, {8, 4}, {4, 4}, {4, 2}, {2, 2}, {1, 1}}

// microRegisters estimates the registers per thread of a TM x TN micro-tile
// of doubles: the accumulators and one k step's operands, two registers a
// double, and about 40 for the indices, pointers and loop (ptxas gives the
// real count only after the build).
func microRegisters(tm, tn int64) int64 { return 2*tm*tn + 2*(tm+tn) + 40 }

// reuseTiling: a 3-D band of two parallel loops i, j and a reduction loop
// k whose one statement accumulates (+, with term:) into T[i + a][j + b],
// reading no other element of T.
func reuseTiling(k *spec.Kernel, r *depend.Result, b []*loopnest.Loop, m *machine.Model) *tiling {
	stmts := b[2].Stmts()
	if len(stmts) != 1 || stmts[0].Term == "" {
		return nil
	}
	s := stmts[0]
	target := accumTarget(s)
	if target == nil || target.Op != "+" || target.Array.Rank() != 2 {
		return nil
	}
	for _, a := range s.Accesses {
		if a.Array == target.Array && !a.Accum {
			return nil
		}
	}
	var i, j, red *loopnest.Loop
	for _, x := range b {
		v := r.Verdict(x)
		switch {
		case onlyLoop(target.Subs[1], x, b) && v.Parallel && !v.Reduction:
			j = x
		case onlyLoop(target.Subs[0], x, b) && v.Parallel && !v.Reduction:
			i = x
		case v.Reduction && !target.Subs[0].Uses(x.Index) && !target.Subs[1].Uses(x.Index):
			red = x
		}
	}
	if i == nil || j == nil || red == nil || elemType(k, target.Array) != "double" {
		return nil
	}
	if withinIterations(r, b, i, j) != nil {
		return nil
	}
	staged, notStaged := stagedReuse(k, r, m, b, s, target, i, j, red)
	if staged != nil {
		return staged
	}
	tm, tn, team, vector, why := microTile(m)
	t := &tiling{what: fmt.Sprintf("tiled for reuse: %s accumulates over %s into %s, an element per iteration of %s and %s (register tiling: unroll-and-jam of %s and %s)", s.Name, red.ID, target.Text, i.ID, j.ID, i.ID, j.ID)}
	t.team, t.vector = team, vector
	T, V := TeamTunable, VectorTunable
	rows := fmt.Sprintf("%s * %d", T, tm)
	cols := fmt.Sprintf("%s * %d", V, tn)
	t.note("loop %s -> league+team: parallel; the target's row: tiles of %s rows, %d consecutive rows a team thread", i.ID, rows, tm)
	t.note("loop %s -> league+vector: parallel; stride-1 in the target (%s): tiles of %s columns, %d a lane %s apart, so that consecutive lanes take consecutive elements (coalesced)", j.ID, target.Text, cols, tn, V)
	t.note("loop %s -> sequential: parallel with reduction (+ into %s); it runs in each lane in order, around a %d x %d micro-tile of the target kept in registers (started from the target's value and stored once after the loop: the reference's order of the sums)", red.ID, target.Text, tm, tn)
	t.note("micro-tile %d x %d, vector length %d, team size %d: %s", tm, tn, vector, team, why)
	t.note("a k step loads %d elements of each row operand (one per row, the same in every lane of a warp) and %d of each column operand (consecutive in the lanes), through the L1 cache, for %d multiply-adds; rows and columns past the loops' ends (remainder tiles) compute on the last row or column and are not stored", tm, tn, tm*tn)
	t.note("%s is not staged through team scratch a step at a time: %s", red.ID, notStaged)
	t.note("legal: every dependence of the band has = on %s and %s (tiling a fully permutable band: %s carries only the accumulation)", i.ID, j.ID, red.ID)

	// The tree.
	tilesJ := ceilDiv(j, cols)
	top := []string{
		fmt.Sprintf("const int64_t pm_tiles_%s = %s;", j.Index, tilesJ),
		fmt.Sprintf("const int64_t %s_tile = %s;", i.Index, plus(lowerOf(i), "(league_rank / pm_tiles_"+j.Index+") * ("+rows+")")),
		fmt.Sprintf("const int64_t %s_tile = %s;", j.Index, plus(lowerOf(j), "(league_rank % pm_tiles_"+j.Index+") * ("+cols+")")),
	}
	hiI, hiJ := upperOf(i), upperOf(j)
	rowAt := func(clamp bool) string {
		e := fmt.Sprintf("%s_0 + pm_r", i.Index)
		if clamp {
			return fmt.Sprintf("const int64_t %s = %s;", i.Index, minExpr("("+e+")", minus(hiI, "1")))
		}
		return fmt.Sprintf("const int64_t %s = %s;", i.Index, e)
	}
	colAt := func(clamp bool) string {
		e := fmt.Sprintf("%s_0 + pm_s * %s", j.Index, V)
		if clamp {
			return fmt.Sprintf("const int64_t %s = %s;", j.Index, minExpr("("+e+")", minus(hiJ, "1")))
		}
		return fmt.Sprintf("const int64_t %s = %s;", j.Index, e)
	}
	unrolled := func(body ...string) string {
		return fmt.Sprintf("#pragma unroll\nfor (int pm_r = 0; pm_r < %d; ++pm_r) {\n#pragma unroll\n  for (int pm_s = 0; pm_s < %d; ++pm_s) {\n%s\n  }\n}", tm, tn, indent(indent(strings.Join(body, "\n"))))
	}
	acc := "pm_c[pm_r][pm_s]"
	lane := []string{
		fmt.Sprintf("const int64_t %s_0 = %s_tile + pm_t * %d;", i.Index, i.Index, tm),
		fmt.Sprintf("const int64_t %s_0 = %s_tile + pm_v;", j.Index, j.Index),
		fmt.Sprintf("double pm_c[%d][%d];", tm, tn),
		unrolled(rowAt(true), colAt(true), fmt.Sprintf("%s = %s;", acc, lvalue(target))),
		fmt.Sprintf("for (int64_t %s = %s; %s < %s; ++%s) {\n%s\n}", red.Index, lowerOf(red), red.Index, upperOf(red), red.Index,
			indent(unrolled(rowAt(true), colAt(true), fmt.Sprintf("%s += %s;", acc, s.Term)))),
		unrolled(fmt.Sprintf("if (%s_0 + pm_r < %s && %s_0 + pm_s * %s < %s) {\n  %s\n  %s\n  %s = %s;\n}", i.Index, hiI, j.Index, V, hiJ,
			rowAt(false), colAt(false), lvalue(target), acc)),
	}
	code := func(s ...string) *spec.Node { return &spec.Node{Kind: "code", Code: strings.Join(s, "\n")} }
	tf := &spec.Node{Kind: "team_thread_for", Index: "pm_t", Begin: "0", End: minExpr(T, fmt.Sprintf("(%s + %d) / %d", minus(hiI, i.Index+"_tile"), tm-1, tm)), Body: []*spec.Node{
		{Kind: "thread_vector_for", Index: "pm_v", Begin: "0", End: minExpr(V, minus(hiJ, j.Index+"_tile")), Body: []*spec.Node{code(lane...)}}}}
	t.tree = &spec.Node{Kind: "team", League: ceilDiv(i, rows) + " * " + tilesJ, TeamSize: T, Vector: V,
		Body: []*spec.Node{code(top...), tf}}
	return t
}

// microTile chooses the register tile and the team: the largest micro-tile
// (most multiply-adds per element loaded) whose estimated registers, in the
// team Kokkos recommends for them, keep at least machine.MinResidentFraction
// of an SM's threads resident; the vector is the warp.
func microTile(m *machine.Model) (tm, tn, team, vector int64, why string) {
	if m.Kind != machine.KindGPU {
		return 8, 4, 4, 32, "the default tile (no GPU model)"
	}
	vector = m.GPU.WarpSize
	for _, c := range microTiles {
		regs := microRegisters(c[0], c[1])
		s, err := m.KokkosTeamRecommended(machine.KokkosTeam{VectorLength: int(vector), Registers: int(regs)})
		if err != nil {
			continue
		}
		o, err := m.Occupancy(machine.Launch{BlockThreads: s.BlockSize, Registers: int(regs)})
		if err != nil || o.Fraction < machine.MinResidentFraction {
			continue
		}
		var passed []string
		for _, d := range microTiles {
			if d == c {
				break
			}
			passed = append(passed, fmt.Sprintf("%d x %d", d[0], d[1]))
		}
		why = fmt.Sprintf("on %s, the largest micro-tile whose registers (about %d a thread, estimated: 2 a double for %d accumulators and %d operands, 40 for the rest; ptxas counts after the build) keep at least %.0f%% of an SM's threads resident in the team Kokkos recommends for them: %.0f%% (%d teams of %d x %d)",
			m.Name, regs, c[0]*c[1], c[0]+c[1], 100*machine.MinResidentFraction, 100*o.Fraction, o.BlocksPerSM, s.TeamSize, vector)
		if len(passed) > 0 {
			why += "; " + strings.Join(passed, ", ") + " would hold fewer"
		}
		return c[0], c[1], int64(s.TeamSize), vector, why
	}
	return 1, 1, 4, vector, "no micro-tile keeps enough threads resident: 1 x 1"
}
