package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/tune"
)

// GapInputs is what explaining a gap needs beyond tuning.jsonl: the
// device's machine model, the registers of each tuned binary's kernels, and
// the league a configuration launches. Any of them may be missing; the
// reason then says what it could not compute.
type GapInputs struct {
	// Model is the machine model of a row's device (by the name the GPU
	// reports), or nil.
	Model func(device string) *machine.Model
	// Resources are the kernels the build recorded, by build key (the
	// tuned binary's content hash): only the binary that was measured.
	Resources map[string][]machine.Resources
	// League is the largest league of the cell's team launches at cfg.
	League func(cell string, size int64, cfg tune.Config) (int64, bool)
	// RowLength is the mean non-zeros per row of the cell's sparse matrix
	// at size: the vector lanes of a row's reduction.
	RowLength func(cell string, size int64) (float64, bool)
}

// TailBar is the difference in a launch's idle last wave (the share of a
// wave's resident teams it leaves empty) below which the occupancy model
// does not tell two configurations apart.
const TailBar = 0.05

// launchModel is what the occupancy model says of one configuration.
type launchModel struct {
	threads  int
	occ      machine.Occupancy
	league   int64 // 0: unknown
	resident int64 // teams the GPU holds at once: blocks per SM x SMs
}

// waves is league / resident, and the share of the last wave left idle.
func (l launchModel) waves() (waves, idle float64) {
	if l.league <= 0 || l.resident <= 0 {
		return 0, 0
	}
	waves = float64(l.league) / float64(l.resident)
	full := math.Ceil(waves)
	return waves, (full - waves) / full
}

// Reason explains, by the occupancy model, why the default is not the
// best: the tunables that differ (default vs best) and, for each launch,
// resident blocks per SM, theoretical occupancy and the league's waves of
// resident teams. Where the model gives both the same occupancy and a
// last-wave idle share within TailBar, it says the model does not separate
// them.
func (r TuningRow) Reason(in GapInputs) string {
	if r.Default == nil || r.Best == nil {
		return ""
	}
	def, best := r.Default.Config, r.Best.Config
	var diff []string
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		seen := map[string]bool{}
		for _, c := range []tune.Config{def, best} {
			for k := range c {
				if !seen[k] {
					seen[k] = true
					if !yield(k) {
						return
					}
				}
			}
		}
	}) {
		if d, b := def[name], best[name]; d != b {
			diff = append(diff, fmt.Sprintf("%s %d vs %d", name, d, b))
		}
	}
	if len(diff) == 0 {
		return "same configuration"
	}
	parts := []string{"default vs best: " + strings.Join(diff, ", ")}
	var m *machine.Model
	if in.Model != nil {
		m = in.Model(r.DeviceName)
	}
	if m == nil || m.Kind != machine.KindGPU {
		return strings.Join(append(parts, "no GPU machine model for the device: no occupancy"), "; ")
	}
	regs, recorded := registers(in.Resources[r.BuildKey])
	separated, undecided := false, false // undecided: the occupancy depends on registers not recorded
	if recorded {
		d := r.launch(m, in, def, regs)
		b := r.launch(m, in, best, regs)
		occ := occupancyText(d, b)
		if separated = d.occ.Fraction != b.occ.Fraction; separated {
			occ += favours(d.occ.Fraction < b.occ.Fraction)
		}
		parts = append(parts, fmt.Sprintf("registers %d", regs), occ)
		if d.league > 0 && b.league > 0 {
			dw, di := d.waves()
			bw, bi := b.waves()
			waves := fmt.Sprintf("league %d vs %d teams, %s vs %s waves of %d vs %d resident (last wave %.0f%% vs %.0f%% idle)",
				d.league, b.league, waveText(dw), waveText(bw), d.resident, b.resident, 100*di, 100*bi)
			if math.Abs(di-bi) >= TailBar {
				separated, waves = true, waves+favours(bi < di)
			}
			parts = append(parts, waves)
		}
	} else {
		// Not the registers of the measured binary: say for which counts
		// the model separates the two blocks at all.
		scan, someRegisters := registerScan(m, threads(def), threads(best))
		parts = append(parts, scan)
		undecided = someRegisters
		if in.League != nil {
			ld, okd := in.League(r.Cell, r.Size, def)
			lb, okb := in.League(r.Cell, r.Size, best)
			if okd && okb {
				parts = append(parts, fmt.Sprintf("league %d vs %d teams (its waves need the registers)", ld, lb))
			}
		}
	}
	if lanes, differ := r.laneText(in); lanes != "" {
		parts = append(parts, lanes)
		separated = separated || differ
	}
	if !separated && !undecided {
		parts = append(parts, "the occupancy model does not separate them")
	}
	return strings.Join(parts, "; ")
}

// laneText is the share of vector lanes a row's reduction keeps busy at
// the default's and the best's vector_size: a row of L non-zeros takes
// ceil(L / v) passes of v lanes. differ: by TailBar or more.
func (r TuningRow) laneText(in GapInputs) (string, bool) {
	vd, okd := r.Default.Config["vector_size"]
	vb, okb := r.Best.Config["vector_size"]
	if !okd || !okb || vd == vb || in.RowLength == nil {
		return "", false
	}
	l, ok := in.RowLength(r.Cell, r.Size)
	if !ok || l <= 0 {
		return "", false
	}
	busy := func(v int64) float64 { return l / (math.Ceil(l/float64(v)) * float64(v)) }
	bd, bb := busy(vd), busy(vb)
	text := fmt.Sprintf("rows of %.1f non-zeros keep %.0f%% vs %.0f%% of the vector lanes busy", l, 100*bd, 100*bb)
	if math.Abs(bd-bb) < TailBar {
		return text, false
	}
	return text + favours(bb > bd), true
}

// favours says which side a difference the model sees is on.
func favours(best bool) string {
	if best {
		return " (the model favours the best)"
	}
	return " (the model favours the default)"
}

func (r TuningRow) launch(m *machine.Model, in GapInputs, c tune.Config, regs int) launchModel {
	l := launchModel{threads: threads(c)}
	l.occ, _ = m.Occupancy(machine.Launch{BlockThreads: l.threads, Registers: regs})
	l.resident = int64(l.occ.BlocksPerSM) * m.GPU.SMCount
	if in.League != nil {
		if n, ok := in.League(r.Cell, r.Size, c); ok {
			l.league = n
		}
	}
	return l
}

// threads is a configuration's block: team_size x vector_size (1 where
// the cell has none).
func threads(c tune.Config) int {
	t := int64(1)
	for _, name := range []string{"team_size", "vector_size"} {
		if v, ok := c[name]; ok {
			t *= v
		}
	}
	return int(t)
}

// registers is the largest register count of the team kernels (the
// binding one when several could be the launch).
func registers(ks []machine.Resources) (int, bool) {
	team := machine.TeamKernels(ks)
	if len(team) == 0 {
		return 0, false
	}
	n := 0
	for _, k := range team {
		n = max(n, k.Registers)
	}
	return n, true
}

func occupancyText(d, b launchModel) string {
	one := func(l launchModel) string {
		if l.occ.BlocksPerSM == 0 {
			return fmt.Sprintf("no block of %d threads (%s)", l.threads, l.occ.Limiter)
		}
		return fmt.Sprintf("%.0f%% (%d blocks of %d threads per SM, %s-bound)", 100*l.occ.Fraction, l.occ.BlocksPerSM, l.threads, l.occ.Limiter)
	}
	if d.threads == b.threads {
		return "occupancy " + one(d) + " both"
	}
	return "occupancy " + one(d) + " vs " + one(b)
}

func waveText(w float64) string {
	if w < 10 {
		return fmt.Sprintf("%.2f", w)
	}
	return fmt.Sprintf("%.0f", w)
}

// registerScan says, when the tuned binary's registers are not recorded,
// at which register counts the model gives blocks of a and b threads a
// different occupancy (some: at some count they differ).
func registerScan(m *machine.Model, a, b int) (string, bool) {
	if a == b {
		return fmt.Sprintf("the same %d-thread block (registers not recorded for the tuned binary)", a), false
	}
	var differ [][2]int // ranges of register counts
	for regs := 0; regs <= int(m.GPU.MaxRegistersPerThread); regs++ {
		oa, ea := m.Occupancy(machine.Launch{BlockThreads: a, Registers: regs})
		ob, eb := m.Occupancy(machine.Launch{BlockThreads: b, Registers: regs})
		if ea != nil || eb != nil || oa.Fraction == ob.Fraction {
			continue
		}
		if n := len(differ); n > 0 && differ[n-1][1] == regs-1 {
			differ[n-1][1] = regs
		} else {
			differ = append(differ, [2]int{regs, regs})
		}
	}
	if len(differ) == 0 {
		return fmt.Sprintf("blocks of %d vs %d threads have the same occupancy at any register count (registers not recorded for the tuned binary)", a, b), false
	}
	var rs []string
	for _, d := range differ {
		if d[0] == d[1] {
			rs = append(rs, fmt.Sprint(d[0]))
		} else {
			rs = append(rs, fmt.Sprintf("%d-%d", d[0], d[1]))
		}
	}
	return fmt.Sprintf("blocks of %d vs %d threads differ in occupancy only at %s registers per thread (registers not recorded for the tuned binary)", a, b, strings.Join(rs, ", ")), true
}
