package mapping

// Reuse tiling with k panels staged in team scratch (R-Stream's and the
// hand-written gemm_team's structure): a team owns a BM x BN block of the
// target; for each step of KT (the tunable map_step) along the reduction
// loop it loads the blocks of the operands the step reads into level-0 team
// scratch (coalesced, the lanes on each operand's stride-1 loop), waits at a
// team barrier, and each work item multiplies them into a TM x TN
// micro-tile held in registers over the step's KT products.
//
// The micro-tiles are each work item's state across the team's barriers,
// an item_state node (spec.ItemState) holding two forms of the team body:
// in the work item's registers from the first step to the store, for the
// strategies whose work item is one hardware thread for the whole team body
// (item_registers); or in team scratch between steps (pm_acc, a view marked
// Item), read into registers at the start of a step and written back at
// its end, 2 TM TN scratch accesses to KT TM TN multiply-adds: every other
// strategy (on the host a team's threads and lanes run in one thread, so
// the team body keeps nothing per work item).
//
// Each element of the target still sums its terms in the reference's order:
// the micro-tile starts from the target's value, the steps run in order
// and, in a step, k ascending; a step past the loop's end is cut to it (no
// padded term is added), so only FMA contraction differs, as before.

import (
	"fmt"
	"strings"

	"github.com/portmatrix/portmatrix/internal/depend"
	"github.com/portmatrix/portmatrix/internal/loopnest"
	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/spec"
)

// stageSteps are the steps KT along the reduction loop the model weighs,
// the longest first: a step reads and writes each work item's micro-tile
// in team scratch once (pm_acc), so a step of 32 halves that traffic per
// multiply-add against 16, and takes a longer block of each operand. The
// step is the kernel's tunable map_step (StepTunable), a constant of the
// program (spec.Tunable.Rendered): the scratch sizes and the loops use it,
// so any value a strategy renders stays correct, and the compiler folds it
// into the step's trip count and the row operand's padded stride (read at
// run time, the register form ran at 5.9 TFLOP/s against 9.4 as a
// constant: 130 registers against 120, the stride an address register a
// row).
var stageSteps = []int64{64, 32, 16, 8}

// stageLanes is the vector length of the staged multiply: 16 doubles are
// 128 bytes, one shared-memory wavefront (32 banks of 4 bytes), so a row of
// a column operand's block read by 16 lanes costs one wavefront (32 lanes,
// two), and the two team threads of a warp read two rows of the row
// operand's block (two addresses: one wavefront).
const stageLanes = 16

// stageUnroll is the unrolling of a step's k loop: 2 lets a lane load the
// next k's operands while it multiplies (nvcc 11.8 for sm_90: 126
// registers, four teams of 8 x 16 an SM); a whole step unrolled, the
// compiler keeps a step's operands in registers ahead of their use (254
// registers, two teams), and 4 takes 134 (three teams).
const stageUnroll = 2

// stagedShape is the staged multiply's sizes: the micro-tile, the team
// (threads x lanes), the step and the scratch bytes of a team.
type stagedShape struct {
	tm, tn, team, vector, step int64
	scratch                    int64
	why, stepWhy               string
}

// stagedScratch is a team's scratch bytes at step kt: the row operand's
// block BM x (KT + 1) (its rows padded by one), the column operand's KT x
// BN and, where the micro-tiles live in team scratch (acc), TM TN + 1
// doubles for each of the team's work items.
func stagedScratch(tm, tn, team, vector, kt int64, acc bool) int64 {
	bm, bn := team*tm, vector*tn
	b := bm*(kt+1) + kt*bn
	if acc {
		b += team * vector * (tm*tn + 1)
	}
	return 8 * b
}

// chooseStaged picks the micro-tile, the team and the step from the model:
// the largest micro-tile of microTiles (most multiply-adds per scratch
// element read) whose square block (BN = 16 TN columns, BM = BN rows: team
// BN / TM threads) keeps, with its estimated registers and its team scratch
// at some step of stageSteps, at least machine.MinResidentFraction of an
// SM's threads resident; of those steps the longest (stagedStep). acc: the
// micro-tiles live in team scratch between steps (counted in the scratch).
func chooseStaged(m *machine.Model, acc bool) stagedShape {
	if m.Kind != machine.KindGPU {
		return stagedShape{tm: 8, tn: 4, team: 8, vector: stageLanes, step: 16, scratch: stagedScratch(8, 4, 8, stageLanes, 16, acc), why: "the default shape (no GPU model)"}
	}
	var passed []string
	for _, c := range microTiles {
		tm, tn := c[0], c[1]
		bn := stageLanes * tn
		if bn%tm != 0 || bn/tm < 1 {
			continue
		}
		team := bn / tm
		if sh := stagedStep(m, tm, tn, team, acc); sh.step > 0 {
			if len(passed) > 0 {
				sh.why += "; " + strings.Join(passed, ", ") + " would hold fewer"
			}
			return sh
		}
		// the micro-tile at its shortest step, the most it could hold
		kt := stageSteps[len(stageSteps)-1]
		regs := microRegisters(tm, tn)
		if bytes, o, err := stagedOccupancy(m, tm, tn, team, stageLanes, kt, acc); err == nil {
			passed = append(passed, fmt.Sprintf("%d x %d (%d teams of %d threads, %d bytes of scratch at step %d, %d registers: %.0f%%, bound by %s)", tm, tn, o.BlocksPerSM, team*stageLanes, bytes, kt, regs, 100*o.Fraction, o.Limiter))
		}
	}
	return stagedShape{}
}

// stagedStep is the longest step of stageSteps at which a TM x TN
// micro-tile's block, its team scratch (the micro-tiles counted where acc)
// and its estimated registers keep at least machine.MinResidentFraction of
// an SM's threads resident, with the reasons; step 0 when none does. A
// longer step takes longer blocks of the operands (more scratch) and
// fewer barriers, and, with the micro-tiles in team scratch, reads and
// writes them less often a multiply-add.
func stagedStep(m *machine.Model, tm, tn, team int64, acc bool) stagedShape {
	where := "in registers across the steps (not in the scratch)"
	if acc {
		where = "in team scratch between steps (counted in the scratch)"
	}
	bn := stageLanes * tn
	regs := microRegisters(tm, tn)
	var longer []string
	for _, kt := range stageSteps {
		bytes, o, err := stagedOccupancy(m, tm, tn, team, stageLanes, kt, acc)
		if err != nil || o.Fraction < machine.MinResidentFraction {
			if err == nil {
				longer = append(longer, fmt.Sprintf("step %d (%d bytes: %d teams, %.0f%%, bound by %s)", kt, bytes, o.BlocksPerSM, 100*o.Fraction, o.Limiter))
			}
			continue
		}
		why := fmt.Sprintf("on %s, the largest micro-tile whose block (%d x %d of the target, team %d x %d, %d bytes of team scratch at step %d, the micro-tiles %s) and registers (about %d a thread, estimated: 2 a double for %d accumulators and %d operands, 40 for the rest; ptxas counts after the build) keep at least %.0f%% of an SM's threads resident: %.0f%% (%d teams, bound by %s)",
			m.Name, bn, bn, team, stageLanes, bytes, kt, where, regs, tm*tn, tm+tn, 100*machine.MinResidentFraction, 100*o.Fraction, o.BlocksPerSM, o.Limiter)
		step := fmt.Sprintf("step %d, the longest of %s that keeps it", kt, joinInts(stageSteps))
		if len(longer) > 0 {
			step += " (" + strings.Join(longer, "; ") + ")"
		}
		return stagedShape{tm: tm, tn: tn, team: team, vector: stageLanes, step: kt, scratch: bytes, why: why, stepWhy: step}
	}
	return stagedShape{}
}

// registerLanes are the vector lengths the register form weighs, a warp
// first: with 32 lanes a team thread is a whole warp, so a row operand's
// element of a k is one broadcast address to the warp (a row of the column
// operand's block, 256 bytes, two wavefronts).
var registerLanes = []int64{32, stageLanes}

// stagedRegisterBlock is the register form's block for a TM x TN
// micro-tile: with no micro-tiles in team scratch a team can be wider and
// its step longer than the scratch form's square block. At the longest
// step of stageSteps that some block keeps, the block (team threads x
// lanes of registerLanes) with the most elements of the target (the most
// multiply-adds for each operand element a step loads) that keeps at least
// machine.MinResidentFraction of an SM's threads and two teams resident (a
// team waits at its barriers while the other multiplies); of equal blocks,
// the wider lanes. On an H200 (nvcc 13, m = 2001, docs/analysis/gemm)
// 64 x 128 at step 64 ran 10.1 TFLOP/s, 128 x 64 at 64 9.85, 64 x 128 at
// 32 9.77, the square 64 x 64 at 32 9.35 and at 64 (three teams) 6.6.
// A zero step when none fits.
func stagedRegisterBlock(m *machine.Model, tm, tn int64) stagedShape {
	if m.Kind != machine.KindGPU {
		return stagedShape{}
	}
	regs := microRegisters(tm, tn)
	var fewer []string
	for _, kt := range stageSteps {
		var best stagedShape
		for _, lanes := range registerLanes {
			for team := int64(1); team*lanes <= 1024; team *= 2 {
				bytes, o, err := stagedOccupancy(m, tm, tn, team, lanes, kt, false)
				if err != nil || o.Fraction < machine.MinResidentFraction || o.BlocksPerSM < 2 {
					continue
				}
				if best.step > 0 && team*tm*lanes*tn <= best.team*tm*best.vector*tn {
					continue
				}
				best = stagedShape{tm: tm, tn: tn, team: team, vector: lanes, step: kt, scratch: bytes,
					why: fmt.Sprintf("the micro-tiles in registers: at step %d the largest block (%d x %d of the target, team %d x %d, %d bytes of team scratch, about %d registers a thread) that keeps at least %.0f%% of an SM's threads and two teams resident: %.0f%% (%d teams, bound by %s); of equal blocks the wider lanes",
						kt, team*tm, lanes*tn, team, lanes, bytes, regs, 100*machine.MinResidentFraction, 100*o.Fraction, o.BlocksPerSM, o.Limiter)}
			}
		}
		if best.step > 0 {
			best.stepWhy = fmt.Sprintf("step %d, the longest of %s that some block keeps", kt, joinInts(stageSteps))
			if len(fewer) > 0 {
				best.stepWhy += " (" + strings.Join(fewer, ", ") + " keep no block so)"
			}
			return best
		}
		fewer = append(fewer, fmt.Sprint(kt))
	}
	return stagedShape{}
}

// stagedOccupancy is a staged block's team scratch at step kt and the
// residency the model gives a team of team x lanes threads with the TM x TN
// micro-tile's estimated registers.
func stagedOccupancy(m *machine.Model, tm, tn, team, lanes, kt int64, acc bool) (int64, machine.Occupancy, error) {
	bytes := stagedScratch(tm, tn, team, lanes, kt, acc)
	o, err := m.Occupancy(machine.Launch{BlockThreads: int(team * lanes), Registers: int(microRegisters(tm, tn)), DynamicSharedBytes: bytes, SharedOptIn: true})
	return bytes, o, err
}

func joinInts(xs []int64) string {
	var out []string
	for _, x := range xs {
		out = append(out, fmt.Sprint(x))
	}
	return strings.Join(out, ", ")
}

// stagedOperand is a read of the statement staged a step at a time: its
// access X[x + a][y + b], the band loops of its two subscripts.
type stagedOperand struct {
	a    *loopnest.Access
	x, y *loopnest.Loop
}

// stagedReuse lowers the multiply with its operands staged, or returns nil
// and why not (the register tiling then): every read of the statement other than the
// target must be a read-only rank-2 array of doubles read through one
// access whose two subscripts step with the reduction loop and one of i, j
// (coefficient 1), and promote: must allow inputs.
func stagedReuse(k *spec.Kernel, r *depend.Result, m *machine.Model, b []*loopnest.Loop, s *loopnest.Stmt, target *loopnest.Access, i, j, red *loopnest.Loop) (*tiling, string) {
	if !r.Program.Promotes("inputs") {
		return nil, "promote: does not allow inputs"
	}
	written := map[*loopnest.Array]bool{}
	for _, x := range b[len(b)-1].Stmts() {
		for _, a := range x.Accesses {
			if a.Write {
				written[a.Array] = true
			}
		}
	}
	var ops []stagedOperand
	seen := map[*loopnest.Array]*loopnest.Access{}
	for _, a := range s.Accesses {
		if a.Array == target.Array {
			continue
		}
		if prev := seen[a.Array]; prev != nil {
			if flatIndex(prev) != flatIndex(a) {
				return nil, fmt.Sprintf("%s (%s): the statement reads %s through more than one subscript", a.Text, a.Pos, a.Array.Name)
			}
			continue
		}
		seen[a.Array] = a
		switch {
		case a.Write || written[a.Array]:
			return nil, fmt.Sprintf("%s (%s): written in the nest", a.Text, a.Pos)
		case a.Array.Rank() != 2:
			return nil, fmt.Sprintf("%s (%s): of rank %d (a staged block is of rank 2)", a.Text, a.Pos, a.Array.Rank())
		case elemType(k, a.Array) != "double":
			return nil, fmt.Sprintf("%s (%s): its elements are %s (the blocks are of doubles)", a.Text, a.Pos, elemType(k, a.Array))
		}
		var op stagedOperand
		op.a = a
		for _, x := range []*loopnest.Loop{i, j, red} {
			if onlyLoop(a.Subs[0], x, b) {
				op.x = x
			}
			if onlyLoop(a.Subs[1], x, b) {
				op.y = x
			}
		}
		if op.x == nil || op.y == nil || op.x == op.y || (op.x != red && op.y != red) {
			return nil, fmt.Sprintf("%s (%s): its subscripts do not step with %s and one of %s, %s, each alone", a.Text, a.Pos, red.ID, i.ID, j.ID)
		}
		ops = append(ops, op)
	}
	if len(ops) == 0 {
		return nil, "the statement reads no operand to stage"
	}
	sh := chooseStaged(m, true)
	if sh.tm == 0 {
		return nil, "no staged block keeps enough threads resident on " + m.Name
	}
	tm, tn := sh.tm, sh.tn
	// the register form: the same micro-tile, the pm_acc views not
	// allocated, so its block may be wider and its step longer
	shr := stagedRegisterBlock(m, tm, tn)
	if shr.step == 0 {
		shr = stagedStep(m, tm, tn, sh.team, false)
	}
	if shr.step == 0 {
		shr = sh
	}
	T, V, KT := TeamTunable, VectorTunable, StepTunable
	bm, bn := fmt.Sprintf("(%s * %d)", T, tm), fmt.Sprintf("(%s * %d)", V, tn)
	ext := map[*loopnest.Loop]string{i: bm, j: bn, red: KT}
	org := map[*loopnest.Loop]string{i: i.Index + "_tile", j: j.Index + "_tile", red: red.Index + "_tile"}
	// a work item's offset in the block: rows TM t + r (consecutive, so that
	// a row operand's elements sit at constant offsets from one address),
	// columns v + V s (consecutive lanes, consecutive elements)
	off := map[*loopnest.Loop]string{i: fmt.Sprintf("(pm_t * %d + pm_r)", tm), j: fmt.Sprintf("(pm_v + %s * pm_s)", V), red: "pm_kk"}
	rowLen := func(op stagedOperand) string {
		if op.y == red {
			return "(" + KT + " + 1)" // read down a column by the team threads of a warp: padded
		}
		return ext[op.y]
	}
	acc := "pm_acc"
	// a work item's micro-tile is contiguous in pm_acc, TM TN + 1 doubles
	// apart (an odd stride: the 16 work items of a half-warp meet 16
	// different banks), so its elements sit at constant offsets
	accLen := tm*tn + 1

	t := &tiling{what: fmt.Sprintf("tiled for reuse, staged: %s accumulates over %s into %s, an element per iteration of %s and %s (a team a block of the target; %s a step at a time through team scratch; register micro-tiles)", s.Name, red.ID, target.Text, i.ID, j.ID, red.ID)}
	t.team, t.vector = sh.team, sh.vector
	if shr.team != sh.team || shr.vector != sh.vector {
		t.teamRegisters, t.vectorRegisters = shr.team, shr.vector
	}
	step := spec.Tunable{Name: KT, Value: sh.step, Rendered: true}
	if shr.step != sh.step {
		step.Registers = shr.step
	}
	t.tunables = []spec.Tunable{step}
	t.note("loop %s -> league+team: parallel; the target's row: blocks of %s * %d rows, %d consecutive rows a team thread (a row operand's elements of a k at constant offsets from one address)", i.ID, T, tm, tm)
	t.note("loop %s -> league+vector: parallel; stride-1 in the target (%s): blocks of %s * %d columns, %d a lane %s apart, so that consecutive lanes take consecutive elements", j.ID, target.Text, V, tn, tn, V)
	t.note("loop %s -> sequential: parallel with reduction (+ into %s); steps of %s, each staged and then multiplied, in order", red.ID, target.Text, KT)
	for _, op := range ops {
		pad := ""
		if op.y == red {
			pad = ", its rows padded by one so that the team threads of a warp reading a column meet different banks"
		}
		t.note("stage %s (read-only input, %s) a step at a time through team scratch %s: %s x %s doubles%s; loaded with the lanes on %s (coalesced), elements past the loops' ends as 0 (never summed)", op.a.Text, op.a.Pos, tileName(op.a.Array), ext[op.x], rowLen(op), pad, op.y.ID)
	}
	t.note("each work item multiplies the step's blocks into a %d x %d micro-tile pm_c in registers, the step's k loop unrolled by %d; the micro-tiles are a work item's state across the team's barriers (item_state), in one of two forms by the strategy:", tm, tn, stageUnroll)
	t.note("  in registers (strategies with item_registers: a work item one hardware thread for the whole team body, the team barrier a real barrier): pm_c declared once at the top of the team body, started from %s's value, stored once after the last step; no scratch traffic for it", target.Array.Name)
	t.note("  in team scratch (every other strategy; on the host a team's threads and lanes run in one thread, so the team body keeps nothing per work item): %s, %s x %s x %d doubles, a work item's micro-tile contiguous and %d doubles apart (odd: the work items of a half-warp meet different banks; its elements at constant offsets), read into pm_c and written back around each step", acc, T, V, accLen, accLen)
	t.note("sums in the reference's order: each micro-tile starts from %s's value, the steps run in order, %s ascending in a step, the last step cut to the loop's end; stored once after the last step, rows and columns past the loops' ends not stored", target.Array.Name, red.ID)
	t.note("micro-tile %d x %d, vector length %d, team size %d: %s", tm, tn, sh.vector, sh.team, sh.why)
	if t.teamRegisters > 0 {
		t.note("with the micro-tiles in registers, vector length %d, team size %d: %s", shr.vector, shr.team, shr.why)
	}
	t.note("step %s = %d with the micro-tiles in team scratch: %s", KT, sh.step, sh.stepWhy)
	t.note("step %s = %d with the micro-tiles in registers (%d bytes of team scratch): %s", KT, shr.step, shr.scratch, shr.stepWhy)
	t.note("vector length %d: %d doubles are one 128-byte shared-memory wavefront, so a row of a column operand's block costs one, and the two team threads of a warp read two rows of a row operand's block (padded: two banks, one wavefront)", sh.vector, sh.vector)
	t.note("each k of a step reads %d + %d scratch elements for %d multiply-adds (%.3g a multiply-add); in team scratch a step also reads and writes the micro-tile once (%d accesses to %s x %d multiply-adds: %.3g a multiply-add at step %d, %.3g at %d)", tm, tn, tm*tn, float64(tm+tn)/float64(tm*tn), 2*tm*tn, KT, tm*tn, 2/float64(sh.step), sh.step, 1/float64(sh.step), 2*sh.step)
	t.note("legal: every dependence of the band has = on %s and %s (tiling a fully permutable band: %s carries only the accumulation); the staged arrays are not written in the nest", i.ID, j.ID, red.ID)

	// The tree.
	hi := func(x *loopnest.Loop) string { return upperOf(x) }
	tilesJ := ceilDiv(j, bn)
	top := []string{
		fmt.Sprintf("const int64_t pm_tiles_%s = %s;", j.Index, tilesJ),
		fmt.Sprintf("const int64_t %s = %s;", org[i], plus(lowerOf(i), "(league_rank / pm_tiles_"+j.Index+") * "+bm)),
		fmt.Sprintf("const int64_t %s = %s;", org[j], plus(lowerOf(j), "(league_rank % pm_tiles_"+j.Index+") * "+bn)),
	}
	code := func(s ...string) *spec.Node { return &spec.Node{Kind: "code", Code: strings.Join(s, "\n")} }
	items := func(body ...string) *spec.Node {
		return &spec.Node{Kind: "team_thread_for", Index: "pm_t", Begin: "0", End: T, Body: []*spec.Node{
			{Kind: "thread_vector_for", Index: "pm_v", Begin: "0", End: V, Body: []*spec.Node{code(body...)}}}}
	}
	loops := func(unroll string, body ...string) string {
		return fmt.Sprintf("#pragma unroll%s\nfor (int pm_r = 0; pm_r < %d; ++pm_r) {\n#pragma unroll%s\n  for (int pm_s = 0; pm_s < %d; ++pm_s) {\n%s\n  }\n}", unroll, tm, unroll, tn, indent(indent(strings.Join(body, "\n"))))
	}
	unrolled := func(body ...string) string { return loops("", body...) }
	// once a team in the scratch form: rolled, so that the loads of C do not
	// all wait in registers (in registers they must be unrolled: pm_c's
	// elements are registers only at constant indices)
	rolled := func(body ...string) string { return loops(" 1", body...) }
	at := func(x *loopnest.Loop) string {
		return fmt.Sprintf("const int64_t %s = %s + %s;", x.Index, org[x], off[x])
	}
	accSlot := fmt.Sprintf("(pm_t * %s + pm_v) * %d + pm_r * %d + pm_s", V, accLen, tn)
	inside := fmt.Sprintf("%s < %s && %s < %s", i.Index, hi(i), j.Index, hi(j))
	decl := fmt.Sprintf("double pm_c[%d][%d];", tm, tn)

	var stage []*spec.Node
	stage = append(stage, &spec.Node{Kind: "team_barrier"}, code(fmt.Sprintf("const int64_t %s = %s;", org[red], plus(lowerOf(red), "pm_kt * "+KT))))
	var views []string
	for _, op := range ops {
		x, y, a := op.x, op.y, op.a
		load := &spec.Node{Kind: "team_thread_for", Index: "pm_x", Begin: "0", End: ext[x], Body: []*spec.Node{
			{Kind: "thread_vector_for", Index: "pm_y", Begin: "0", End: ext[y], Body: []*spec.Node{code(
				fmt.Sprintf("const int64_t %s = %s + pm_x;", x.Index, org[x]),
				fmt.Sprintf("const int64_t %s = %s + pm_y;", y.Index, org[y]),
				fmt.Sprintf("%s[pm_x * %s + pm_y] = %s < %s && %s < %s ? %s : 0.0;", tileName(a.Array), rowLen(op), x.Index, hi(x), y.Index, hi(y), lvalue(a)),
			)}}}}
		stage = append(stage, load)
		slot := fmt.Sprintf("%s * %s + %s", off[x], rowLen(op), off[y])
		views = append(views, fmt.Sprintf("const pm::TeamSlice<const double> %s{%s, (%s) - (%s)};", a.Array.Name, tileName(a.Array), flatIndex(a), slot))
	}
	stage = append(stage, &spec.Node{Kind: "team_barrier"})
	kn := fmt.Sprintf("const int64_t pm_kn = %s;", minExpr(KT, minus(hi(red), org[red])))
	product := func() string {
		body := unrolled(append([]string{at(i), at(j)}, append(views, fmt.Sprintf("pm_c[pm_r][pm_s] += %s;", s.Term))...)...)
		return fmt.Sprintf("#pragma unroll %d\nfor (int pm_kk = 0; pm_kk < pm_kn; ++pm_kk) {\n%s\n%s\n}", stageUnroll, indent(fmt.Sprintf("const int64_t %s = %s + pm_kk;", red.Index, org[red])), indent(body))
	}
	steps := func(mul *spec.Node) *spec.Node {
		body := append(append([]*spec.Node{}, stage...), mul)
		return &spec.Node{Kind: "for", Index: "pm_kt", Begin: "0", End: ceilDiv(red, KT), Body: body}
	}

	// in registers: pm_c declared once, a work item's for the whole body;
	// the store tests a row once and then its columns (one guard of all
	// 32 elements took nvcc 11.8 for sm_90 to 138 registers, three teams
	// an SM; so, 126)
	storeRows := fmt.Sprintf("#pragma unroll\nfor (int pm_r = 0; pm_r < %d; ++pm_r) {\n  %s\n  if (%s < %s) {\n#pragma unroll\n    for (int pm_s = 0; pm_s < %d; ++pm_s) {\n      %s\n      if (%s < %s) %s = pm_c[pm_r][pm_s];\n    }\n  }\n}",
		tm, at(i), i.Index, hi(i), tn, at(j), j.Index, hi(j), lvalue(target))
	inRegs := []*spec.Node{
		code(decl + "  // a work item's micro-tile, in its registers from the first step to the store"),
		items(unrolled(at(i), at(j), fmt.Sprintf("pm_c[pm_r][pm_s] = %s ? %s : 0.0;", inside, lvalue(target)))),
		steps(items(kn, product())),
		items(storeRows),
	}
	// in team scratch: pm_acc between steps
	inScratch := []*spec.Node{
		items(rolled(at(i), at(j), fmt.Sprintf("%s[%s] = %s ? %s : 0.0;", acc, accSlot, inside, lvalue(target)))),
		steps(items(
			decl,
			unrolled(fmt.Sprintf("pm_c[pm_r][pm_s] = %s[%s];", acc, accSlot)),
			kn,
			product(),
			unrolled(fmt.Sprintf("%s[%s] = pm_c[pm_r][pm_s];", acc, accSlot)),
		)),
		{Kind: "team_barrier"},
		items(rolled(at(i), at(j), fmt.Sprintf("if (%s) %s = %s[%s];", inside, lvalue(target), acc, accSlot))),
	}

	var scratch []spec.Scratch
	for _, op := range ops {
		scratch = append(scratch, spec.Scratch{Name: tileName(op.a.Array), Type: "double", Size: ext[op.x] + " * " + rowLen(op), Level: "0"})
	}
	scratch = append(scratch, spec.Scratch{Name: acc, Type: "double", Size: fmt.Sprintf("%s * %s * %d", T, V, accLen), Level: "0", Item: true})
	t.tree = &spec.Node{Kind: "team", League: ceilDiv(i, bm) + " * " + tilesJ, TeamSize: T, Vector: V, Scratch: scratch,
		Body: []*spec.Node{
			code(top...),
			{Kind: spec.ItemState, Body: inRegs, Else: inScratch},
		}}
	return t, ""
}
