package portability

import (
	"sort"
)

// Regroup makes coarser platforms of in's (device, toolchain) pairs: of
// names the group each belongs to ("" leaves it out). Each (problem, group,
// variant) keeps its fastest verified measurement, i.e. every variant at its
// best toolchain there (a failed one only where none verified). A group is
// measured when any of its pairs is; one of only compiling pairs keeps
// that status and the first reason. Build rows are kept (they name
// toolchains; a group has none, so what never ran in a group reads "no
// cell").
func Regroup(in Input, of func(Platform) string) Input {
	out := Input{Rooflines: in.Rooflines, Builds: in.Builds}
	group := map[string]string{} // pair name -> group
	groups := map[string]*Platform{}
	var order []string
	for _, p := range in.Platforms {
		g := of(p)
		if g == "" {
			continue
		}
		group[p.Name()] = g
		gp := groups[g]
		if gp == nil {
			gp = &Platform{Label: g, Device: p.Device, Status: p.Status, Reason: p.Reason}
			groups[g] = gp
			order = append(order, g)
		}
		if p.Status == Measured {
			gp.Status, gp.Reason = Measured, ""
		}
	}
	type key struct {
		problem           Problem
		platform, variant string
	}
	best := map[key]int{}
	for _, m := range in.Measurements {
		g := group[m.Platform]
		if g == "" {
			continue
		}
		m.Platform = g
		k := key{m.Problem, g, m.Variant}
		i, ok := best[k]
		switch {
		case !ok:
			best[k] = len(out.Measurements)
			out.Measurements = append(out.Measurements, m)
		case m.OK && (!out.Measurements[i].OK || m.Seconds < out.Measurements[i].Seconds):
			out.Measurements[i] = m
		}
	}
	for _, g := range order {
		out.Platforms = append(out.Platforms, *groups[g])
	}
	sort.Slice(out.Platforms, func(i, j int) bool { return out.Platforms[i].Name() < out.Platforms[j].Name() })
	return out
}

// Merge joins inputs of several folders (one platform each, or several):
// measurements in order, the first of a (problem, platform, variant) kept;
// platforms by name, measured over compiling; each device's best roofline;
// every build row.
func Merge(ins ...Input) Input {
	out := Input{Rooflines: map[string]float64{}}
	type key struct {
		problem           Problem
		platform, variant string
	}
	seen := map[key]bool{}
	plat := map[string]int{}
	for _, in := range ins {
		for _, m := range in.Measurements {
			k := key{m.Problem, m.Platform, m.Variant}
			if !seen[k] {
				seen[k] = true
				out.Measurements = append(out.Measurements, m)
			}
		}
		for _, p := range in.Platforms {
			i, ok := plat[p.Name()]
			switch {
			case !ok:
				plat[p.Name()] = len(out.Platforms)
				out.Platforms = append(out.Platforms, p)
			case p.Status == Measured:
				out.Platforms[i] = p
			}
		}
		for d, r := range in.Rooflines {
			out.Rooflines[d] = max(out.Rooflines[d], r)
		}
		out.Builds = append(out.Builds, in.Builds...)
	}
	sort.Slice(out.Platforms, func(i, j int) bool { return out.Platforms[i].Name() < out.Platforms[j].Name() })
	return out
}
