package portability

import (
	"bytes"
	"encoding/csv"
	"strconv"
)

// P3 export files of a folder: applications are variants, or strategies
// (each platform's best variant).
const (
	P3File         = "p3.csv"
	P3StrategyFile = "p3-strategy.csv"
)

// P3Header is the columns of the P3 CSVs: first those the P3 Analysis
// Library reads (problem, platform, application, fom, "app eff", "arch
// eff"), then ours. fom is the median time in seconds (lower is better:
// p3analysis.metrics.application_efficiency(df, foms="lower")). A row
// whose application did not run there (failed verification, not built,
// compiles but not run) has no fom and efficiencies 0, the library's "did
// not run"; "arch eff" is empty where the kernel has no minimum traffic or
// the device no roofline.
var P3Header = []string{"problem", "platform", "application", "fom", "app eff", "arch eff",
	"kernel", "size", "strategy", "variant", "device", "toolchain", "status", "reason", "platform_set",
	"fom_lo", "fom_hi", "app_eff_lo", "app_eff_hi", "arch_eff_lo", "arch_eff_hi",
	"arch_eff_datasheet", "arch_eff_datasheet_lo", "arch_eff_datasheet_hi",
	"gbps_min", "gbps_min_lo", "gbps_min_hi", "roofline_gbps", "datasheet_gbps"}

// P3CSV writes the scores of one level as a P3 CSV: a row per (problem,
// platform of the set, application), so that the library's pp() over one
// problem's rows is our PP over the set.
func (a *Analysis) P3CSV(level string) []byte {
	platforms := map[string]Platform{}
	for _, p := range a.Platforms {
		platforms[p.Name()] = p
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.Write(P3Header)
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }
	opt := func(i *Interval) [3]string {
		if i == nil {
			return [3]string{}
		}
		return [3]string{num(i.V), num(i.Lo), num(i.Hi)}
	}
	for _, s := range a.Scores {
		if s.Level != level {
			continue
		}
		for _, o := range s.On {
			p := platforms[o.Platform]
			row := map[string]string{
				"problem": s.Problem.String(), "platform": o.Platform, "application": s.Application,
				"kernel": s.Problem.Kernel, "size": strconv.FormatInt(s.Problem.Size, 10),
				"strategy": s.Strategy, "variant": o.Variant, "device": p.Device, "toolchain": p.Toolchain,
				"status": o.Status, "reason": o.Reason, "platform_set": s.Set, "app eff": "0", "arch eff": "0",
			}
			if e := o.Eff; e != nil {
				arch, sheet := opt(e.Arch), opt(e.Datasheet)
				for k, v := range map[string]string{
					"fom": num(e.Seconds), "fom_lo": num(e.Lo), "fom_hi": num(e.Hi),
					"app eff": num(e.App.V), "app_eff_lo": num(e.App.Lo), "app_eff_hi": num(e.App.Hi),
					"arch eff": arch[0], "arch_eff_lo": arch[1], "arch_eff_hi": arch[2],
					"arch_eff_datasheet": sheet[0], "arch_eff_datasheet_lo": sheet[1], "arch_eff_datasheet_hi": sheet[2],
				} {
					row[k] = v
				}
				if g := e.GBpsMin; g.V > 0 {
					row["gbps_min"], row["gbps_min_lo"], row["gbps_min_hi"] = num(g.V), num(g.Lo), num(g.Hi)
				}
				if e.Roof > 0 {
					row["roofline_gbps"] = num(e.Roof)
				}
				if e.Sheet > 0 {
					row["datasheet_gbps"] = num(e.Sheet)
				}
			}
			line := make([]string, len(P3Header))
			for i, c := range P3Header {
				line[i] = row[c]
			}
			w.Write(line)
		}
	}
	w.Flush()
	return buf.Bytes()
}
