package mapping

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/portmatrix/portmatrix/internal/spec"
)

var transposeNest = program(`params: [m, n]
arrays: {A: [m, n], B: [n, m]}
PROMOTE`,
	loop("i", "m", loop("j", "n", stmt(`reads: "READS", writes: "B[j][i]", value: "VALUE"`))))

func transposeSrc(reads, value, promote string) string {
	return strings.NewReplacer("READS", reads, "VALUE", value, "PROMOTE", promote).Replace(transposeNest)
}

// A parallel 2-D nest that reads A stride-1 in j and writes B stride-1 in i
// is tiled: A's tile loaded into team scratch with the lanes on j, a
// barrier, then written with the lanes on i, the statement reading the
// tile through a TeamSlice whose offset sends A[i * n + j] to the lane's
// slot; the reasons are in the mapping.
func TestTileTranspose(t *testing.T) {
	k, err := lower(t, transposeSrc("A[i][j]", "A[i * n + j]", ""))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := shape(k.Pattern), "team [code] team_thread_for:pm_a thread_vector_for:pm_b [code] team_barrier team_thread_for:pm_b thread_vector_for:pm_a [code]"; got != want {
		t.Fatalf("tree %s, want %s\n%s", got, want, k.Mapping)
	}
	if s := k.Pattern.Scratch; len(s) != 1 || s[0].Name != "pm_tile_A" || s[0].Size != "map_vector_size * (map_vector_size + 1)" || s[0].Level != "0" {
		t.Errorf("scratch %+v, want one padded tile of A at level 0", s)
	}
	if tunable(k, VectorTunable) != 32 || tunable(k, TeamTunable) < 1 {
		t.Errorf("vector %d team %d, want the warp and a team", tunable(k, VectorTunable), tunable(k, TeamTunable))
	}
	var b bytes.Buffer
	PrintTree(&b, k.Pattern, "")
	for _, want := range []string{
		"pm_tile_A[pm_a * (map_vector_size + 1) + pm_b] = A[i * n + j];",
		"const pm::TeamSlice<const double> A{pm_tile_A, (i * n + j) - (pm_a * (map_vector_size + 1) + pm_b)};",
		"B[j * m + i] = A[i * n + j];",
		"team_thread_for: pm_a in [0, (map_vector_size < (m - i_tile) ? map_vector_size : (m - i_tile)))",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("tree lacks %q:\n%s", want, b.String())
		}
	}
	for _, want := range []string{
		"tiled: it writes stride-1 in i and reads A stride-1 in j",
		"stage A[i][j] (read-only input, k.yaml:",
		"its row padded by one",
		"legal: both loops carry no dependence",
	} {
		if !strings.Contains(k.Mapping, want) {
			t.Errorf("mapping lacks %q:\n%s", want, k.Mapping)
		}
	}
}

// What is not tiled keeps the band mapping: promote: [] (no scratch), a
// read of A through two subscripts (the tile's slot would be wrong for
// one), a read and a write stride-1 in the same loop (nothing strided), and
// an in-place transpose (it carries a dependence).
func TestTileTransposeNot(t *testing.T) {
	cases := map[string]string{
		"promote: []":    transposeSrc("A[i][j]", "A[i * n + j]", "promote: []"),
		"two subscripts": transposeSrc("A[i][j], A[i][0]", "A[i * n + j] + A[i * n]", ""),
		"same stride":    strings.Replace(transposeSrc("A[i][j]", "A[i * n + j]", ""), "B[j][i]", "B[i][j]", 1),
		"written in place": program(`params: [n]
arrays: {A: [n, n]}`, loop("i", "n", loop("j", "n", stmt(`reads: "A[j][i]", writes: "A[i][j]", value: "A[j * n + i]"`)))),
	}
	if !strings.Contains(cases["same stride"], "B[i][j]") {
		t.Fatal("fixture")
	}
	for name, src := range cases {
		src = strings.Replace(src, "B: [n, m]", "B: [m, n]", map[bool]int{true: 1, false: 0}[name == "same stride"])
		k, err := lower(t, src)
		if err != nil && name == "written in place" {
			continue // refused by the band lowering, as before: not tiled
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.Contains(shape(k.Pattern), "team_barrier") || strings.Contains(k.Mapping, "tiled") {
			t.Errorf("%s: tiled:\n%s", name, k.Mapping)
		}
	}
}

var gemmNest = program(`params: [m, n, p]
arrays: {A: [m, p], B: [p, n], C: [m, n]}`,
	loop("I", "m", loop("J", "n", loop("K", "p", stmt(`reads: "A[i][k], B[k][j]", accumulate: "C[i][j]", TERM`)))))

func gemmSrc(order, term string) string {
	idx := strings.Split(order, "")
	to := map[string]string{"i": "m", "j": "n", "k": "p"}
	return strings.NewReplacer(`index: I`, "index: "+idx[0], `to: m`, "to: "+to[idx[0]],
		`index: J`, "index: "+idx[1], `to: n`, "to: "+to[idx[1]],
		`index: K`, "index: "+idx[2], `to: p`, "to: "+to[idx[2]], "TERM", term).Replace(gemmNest)
}

// A matrix multiply, in any loop order (a fully permutable band), is tiled
// for reuse with its operands staged: a team a block of C, for each step of
// map_step along k A's and B's blocks loaded into level-0 team scratch (A's
// rows padded by one), a barrier, and each work item an 8 x 4 micro-tile
// over the step's products. The micro-tiles are a work item's state across
// the barriers (item_state): in its registers from the first step to the
// store where the strategy allows it, else in team scratch (pm_acc, a view
// marked Item) between steps, read and written back around each. The sizes
// come from the model's registers and shared memory: step 16 with pm_acc
// counted (32 holds 3 teams), 32 without it.
func TestTileGemm(t *testing.T) {
	for _, order := range []string{"ijk", "kij", "jki"} {
		k, err := lower(t, gemmSrc(order, `term: "A[i * p + k] * B[k * n + j]"`))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := shape(k.Pattern), "team [code] item_state"; !strings.HasPrefix(got, want) {
			t.Fatalf("%s: tree %s, want %s ...\n%s", order, got, want, k.Mapping)
		}
		load := "for:pm_kt team_barrier [code] team_thread_for:pm_x thread_vector_for:pm_y [code] team_thread_for:pm_x thread_vector_for:pm_y [code] team_barrier "
		items := "team_thread_for:pm_t thread_vector_for:pm_v [code]"
		forms := map[bool]string{
			false: "team [code] " + items + " " + load + items + " team_barrier " + items,
			true:  "team [code] [code] " + items + " " + load + items + " " + items,
		}
		for regs, want := range forms {
			if got := shape(k.Pattern.ItemForm(regs)); got != want {
				t.Errorf("%s: registers %v: tree %s, want %s", order, regs, got, want)
			}
		}
		if tunable(k, TeamTunable) != 8 || tunable(k, VectorTunable) != 16 || tunable(k, StepTunable) != 16 {
			t.Errorf("%s: team %d vector %d step %d, want 8 x 16, 16", order, tunable(k, TeamTunable), tunable(k, VectorTunable), tunable(k, StepTunable))
		}
		// the register form: a wider block (64 x 128: 8 x 32) at a longer step
		for name, want := range map[string][3]int64{StepTunable: {64, 16, 16}, TeamTunable: {8, 8, 0}, VectorTunable: {32, 16, 0}} {
			for _, x := range k.Tunables {
				if x.Name != name {
					continue
				}
				got := [3]int64{x.OnItems("cuda", true), x.OnItems("cuda", false), x.OnItems("host", false)}
				if want[2] == 0 {
					got[2] = 0 // the host's is LowerHost's
				}
				if got != want {
					t.Errorf("%s: %s %d in registers, %d in scratch, %d on the host; want %v", order, name, got[0], got[1], got[2], want)
				}
			}
		}
		scratch := func(n *spec.Node) string {
			var sizes []string
			for _, s := range n.Scratch {
				if s.Level != "0" {
					t.Errorf("%s: scratch %s at level %s", order, s.Name, s.Level)
				}
				sizes = append(sizes, fmt.Sprintf("%s: %s%s", s.Name, s.Size, map[bool]string{true: " (item)"}[s.Item]))
			}
			return strings.Join(sizes, ", ")
		}
		tiles := "pm_tile_A: (map_team_size * 8) * (map_step + 1), pm_tile_B: map_step * (map_vector_size * 4)"
		if got, want := scratch(k.Pattern), tiles+", pm_acc: map_team_size * map_vector_size * 33 (item)"; got != want {
			t.Errorf("%s: scratch %s, want %s", order, got, want)
		}
		if got, want := scratch(k.Pattern.ItemForm(false)), tiles+", pm_acc: map_team_size * map_vector_size * 33 (item)"; got != want {
			t.Errorf("%s: scratch form's scratch %s, want %s", order, got, want)
		}
		if got := scratch(k.Pattern.ItemForm(true)); got != tiles {
			t.Errorf("%s: register form's scratch %s, want %s", order, got, tiles)
		}
		common := []string{
			"for: pm_kt in [0, ((p + map_step - 1) / map_step))",
			"const int64_t k_tile = pm_kt * map_step;",
			"pm_tile_A[pm_x * (map_step + 1) + pm_y] = i < m && k < p ? A[i * p + k] : 0.0;",
			"pm_tile_B[pm_x * (map_vector_size * 4) + pm_y] = k < p && j < n ? B[k * n + j] : 0.0;",
			"double pm_c[8][4];",
			"const int64_t pm_kn = (map_step < (p - k_tile) ? map_step : (p - k_tile));",
			"#pragma unroll 2",
			"for (int pm_kk = 0; pm_kk < pm_kn; ++pm_kk) {",
			"const int64_t i = i_tile + (pm_t * 8 + pm_r);",
			"const int64_t j = j_tile + (pm_v + map_vector_size * pm_s);",
			"const pm::TeamSlice<const double> A{pm_tile_A, (i * p + k) - ((pm_t * 8 + pm_r) * (map_step + 1) + pm_kk)};",
			"const pm::TeamSlice<const double> B{pm_tile_B, (k * n + j) - (pm_kk * (map_vector_size * 4) + (pm_v + map_vector_size * pm_s))};",
			"pm_c[pm_r][pm_s] += A[i * p + k] * B[k * n + j];",
		}
		want := map[bool][]string{
			false: append([]string{
				"pm_acc[(pm_t * map_vector_size + pm_v) * 33 + pm_r * 4 + pm_s] = i < m && j < n ? C[i * n + j] : 0.0;",
				"pm_c[pm_r][pm_s] = pm_acc[(pm_t * map_vector_size + pm_v) * 33 + pm_r * 4 + pm_s];",
				"pm_acc[(pm_t * map_vector_size + pm_v) * 33 + pm_r * 4 + pm_s] = pm_c[pm_r][pm_s];",
				"if (i < m && j < n) C[i * n + j] = pm_acc[(pm_t * map_vector_size + pm_v) * 33 + pm_r * 4 + pm_s];",
				"#pragma unroll 1",
			}, common...),
			true: append([]string{
				"double pm_c[8][4];  // a work item's micro-tile, in its registers from the first step to the store",
				"pm_c[pm_r][pm_s] = i < m && j < n ? C[i * n + j] : 0.0;",
				"  if (i < m) {",
				"      if (j < n) C[i * n + j] = pm_c[pm_r][pm_s];",
			}, common...),
		}
		for regs, lines := range want {
			var b bytes.Buffer
			PrintTree(&b, k.Pattern.ItemForm(regs), "")
			for _, w := range lines {
				if !strings.Contains(b.String(), w) {
					t.Errorf("%s: registers %v: tree lacks %q:\n%s", order, regs, w, b.String())
				}
			}
			if regs && (strings.Contains(b.String(), "pm_acc") || strings.Contains(b.String(), "#pragma unroll 1")) {
				t.Errorf("%s: the register form reads pm_acc or rolls a loop over pm_c (its elements are registers only at constant indices):\n%s", order, b.String())
			}
			if regs && strings.Count(b.String(), "double pm_c[8][4];") != 1 {
				t.Errorf("%s: the register form declares pm_c more than once:\n%s", order, b.String())
			}
		}
		var b bytes.Buffer
		PrintTree(&b, k.Pattern, "")
		for _, w := range []string{"item_state: a work item's state across the team's barriers", "  in registers (item_registers):", "  else in team scratch (its views marked item):"} {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: printed tree lacks %q:\n%s", order, w, b.String())
			}
		}
		for _, want := range []string{
			"tiled for reuse, staged: S1 accumulates over k into C[i][j]",
			"stage A[i][k] (read-only input, k.yaml:",
			"its rows padded by one",
			"stage B[k][j] (read-only input, k.yaml:",
			"the micro-tiles are a work item's state across the team's barriers (item_state), in one of two forms by the strategy",
			"in registers (strategies with item_registers: a work item one hardware thread for the whole team body, the team barrier a real barrier)",
			"in team scratch (every other strategy; on the host a team's threads and lanes run in one thread",
			"micro-tile 8 x 4, vector length 16, team size 8: on h100-sxm5-80gb, the largest micro-tile whose block (64 x 64 of the target, team 8 x 16, 50688 bytes of team scratch at step 16, the micro-tiles in team scratch between steps",
			"8 x 8 (1 teams of 256 threads",
			"step map_step = 16 with the micro-tiles in team scratch: step 16, the longest of 64, 32, 16, 8 that keeps it (step 64 (99840 bytes: 2 teams, 12%, bound by shared memory); step 32 (67072 bytes: 3 teams, 19%, bound by shared memory))",
			"with the micro-tiles in registers, vector length 32, team size 8: the micro-tiles in registers: at step 64 the largest block (64 x 128 of the target, team 8 x 32, 98816 bytes of team scratch, about 128 registers a thread) that keeps at least 25% of an SM's threads and two teams resident: 25% (2 teams, bound by registers); of equal blocks the wider lanes",
			"step map_step = 64 with the micro-tiles in registers (98816 bytes of team scratch): step 64, the longest of 64, 32, 16, 8 that some block keeps",
			"in team scratch a step also reads and writes the micro-tile once (64 accesses to map_step x 32 multiply-adds: 0.125 a multiply-add at step 16, 0.0625 at 32)",
			"sums in the reference's order",
			"legal: every dependence of the band has = on i and j",
		} {
			if !strings.Contains(k.Mapping, want) {
				t.Errorf("%s: mapping lacks %q:\n%s", order, want, k.Mapping)
			}
		}
	}
}

// A tree without item_state is its own form; ItemForm changes nothing in
// the tree it is given.
func TestItemFormOther(t *testing.T) {
	k, err := lower(t, gemmSrc("ijk", `term: "A[i * p + k] * B[k * n + j]"`))
	if err != nil {
		t.Fatal(err)
	}
	before := shape(k.Pattern)
	n := len(k.Pattern.Scratch)
	_ = k.Pattern.ItemForm(true)
	if shape(k.Pattern) != before || len(k.Pattern.Scratch) != n {
		t.Errorf("ItemForm changed the tree it was given")
	}
	plain := &spec.Node{Kind: "team", Body: []*spec.Node{{Kind: "code", Code: "x();"}}}
	if plain.ItemForm(true) != plain || plain.ItemForm(false) != plain {
		t.Errorf("a tree without item_state is not returned as it is")
	}
}

// Loops that start past 0 keep their bounds: the blocks' origins start at
// the lower bounds, the steps count the reduction loop's trip (none when it
// is empty), and the guards test the upper bounds.
func TestTileGemmBounds(t *testing.T) {
	src := program(`params: [m, n, p]
arrays: {A: [m, p], B: [p, n], C: [m, n]}`,
		loopFrom("i", "1", "m", loopFrom("j", "2", "n", loopFrom("k", "3", "p", stmt(`reads: "A[i][k], B[k][j]", accumulate: "C[i][j]", term: "A[i * p + k] * B[k * n + j]"`)))))
	k, err := lower(t, src)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	PrintTree(&b, k.Pattern, "")
	for _, want := range []string{
		"const int64_t i_tile = 1 + (league_rank / pm_tiles_j) * (map_team_size * 8);",
		"const int64_t j_tile = 2 + (league_rank % pm_tiles_j) * (map_vector_size * 4);",
		"for: pm_kt in [0, ((p - 3) > 0 ? ((p - 3) + map_step - 1) / map_step : 0))",
		"const int64_t k_tile = 3 + pm_kt * map_step;",
		"pm_tile_A[pm_x * (map_step + 1) + pm_y] = i < m && k < p ? A[i * p + k] : 0.0;",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("tree lacks %q:\n%s", want, b.String())
		}
	}
}

// What cannot be staged keeps the register tiling (i and j over the
// league, team and lanes, k sequential in each lane around a micro-tile of
// C in registers, started from C and stored once), and explain says why:
// promote: [] (no scratch), and an operand of rank 1.
func TestTileGemmRegisters(t *testing.T) {
	cases := map[string]struct{ src, why string }{
		"promote: []": {strings.Replace(gemmSrc("ijk", `term: "A[i * p + k] * B[k * n + j]"`), "arrays:", "promote: []\n  arrays:", 1),
			"k is not staged through team scratch a step at a time: promote: does not allow inputs"},
		"rank 1": {strings.Replace(strings.Replace(gemmSrc("ijk", `term: "A[i * p + k] * x[k]"`), `"A[i][k], B[k][j]"`, `"A[i][k], x[k]"`, 1), "C: [m, n]}", "C: [m, n], x: [p]}", 1),
			"k is not staged through team scratch a step at a time: x[k] (k.yaml:"},
	}
	for name, c := range cases {
		k, err := lower(t, c.src)
		if err != nil {
			t.Fatalf("%s: %v\n%s", name, err, c.src)
		}
		if got, want := shape(k.Pattern), "team [code] team_thread_for:pm_t thread_vector_for:pm_v [code]"; got != want {
			t.Fatalf("%s: tree %s, want %s\n%s", name, got, want, k.Mapping)
		}
		if tunable(k, TeamTunable) != 4 || tunable(k, VectorTunable) != 32 {
			t.Errorf("%s: team %d vector %d, want 4 x 32", name, tunable(k, TeamTunable), tunable(k, VectorTunable))
		}
		var b bytes.Buffer
		PrintTree(&b, k.Pattern, "")
		for _, want := range []string{
			"double pm_c[8][4];",
			"pm_c[pm_r][pm_s] = C[i * n + j];",
			"for (int64_t k = 0; k < p; ++k) {",
			"if (i_0 + pm_r < m && j_0 + pm_s * map_vector_size < n) {",
			"C[i * n + j] = pm_c[pm_r][pm_s];",
		} {
			if !strings.Contains(b.String(), want) {
				t.Errorf("%s: tree lacks %q:\n%s", name, want, b.String())
			}
		}
		for _, want := range []string{
			"tiled for reuse: S1 accumulates over k into C[i][j]",
			"micro-tile 8 x 4, vector length 32, team size 4: on h100-sxm5-80gb, the largest micro-tile",
			c.why,
		} {
			if !strings.Contains(k.Mapping, want) {
				t.Errorf("%s: mapping lacks %q:\n%s", name, want, k.Mapping)
			}
		}
	}
}

// A multiply written with code: (the mapper cannot write the register's
// statement) or whose target is also read otherwise keeps the band mapping.
func TestTileGemmNot(t *testing.T) {
	for name, src := range map[string]string{
		"code":         gemmSrc("ijk", `code: "C[i * n + j] += A[i * p + k] * B[k * n + j];"`),
		"target read":  strings.Replace(gemmSrc("ijk", `term: "A[i * p + k] * C[i * n + 0]"`), `reads: "A[i][k], B[k][j]"`, `reads: "A[i][k], C[i][0]"`, 1),
		"one parallel": strings.Replace(gemmSrc("ijk", `term: "A[i * p + k]"`), `accumulate: "C[i][j]"`, `accumulate: "C[i][0]"`, 1),
	} {
		k, err := lower(t, src)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.Contains(k.Mapping, "tiled") {
			t.Errorf("%s: tiled:\n%s", name, k.Mapping)
		}
	}
}
