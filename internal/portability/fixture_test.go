package portability

// The hand-computed fixture of the tests: one problem, two measured
// platforms A and B of device "dev X", a platform C that only compiles,
// strategy s1 of variants v1 and v2, strategy s2 of variant w.
//
// Times (median [95% interval], seconds; no bootstrap replicates, so the
// best time is taken as exact and the variant's interval carried):
//
//	     A                 B
//	v1   1.0 [0.9, 1.25]   4.0 [4.0, 5.0]
//	v2   2.0 [1.6, 2.5]    2.0 [2.0, 2.0]
//	w    4.0 [4.0, 4.0]    failed verification
//
// Application efficiency = best time on the platform / time (capped at 1):
//
//	A (best v1 = 1.0): v1 1 [1/1.25, min(1, 1/0.9)] = 1 [0.8, 1]
//	                   v2 0.5 [1/2.5, 1/1.6] = 0.5 [0.4, 0.625];  w 0.25 [0.25, 0.25]
//	B (best v2 = 2.0): v1 0.5 [2/5, 2/4] = 0.5 [0.4, 0.5];  v2 1 [1, 1];  w 0
//
// PP over H = {A, B}, the harmonic mean 2 / (1/e_A + 1/e_B):
//
//	v1: 2/(1 + 2) = 2/3;     lo 2/(1.25 + 2.5) = 8/15;  hi 2/(1 + 2) = 2/3
//	v2: 2/(2 + 1) = 2/3;     lo 2/(2.5 + 1) = 4/7;      hi 2/(1.6 + 1) = 10/13
//	w:  0 (fails on B)
//	s1 (v1 on A, v2 on B): 2/(1 + 1) = 1;  lo 2/(1.25 + 1) = 8/9;  hi 1
//	s2: 0
//
// Architectural efficiency: bytes_min 4e9 B, roofline of dev X 8 GB/s,
// datasheet 10 GB/s. v1 on A: 4 GB/s [4/1.25, 4/0.9] = 4 [3.2, 4.444];
// v2 on B: 2 GB/s [2, 2]. s1's arch PP = 2/(8/4 + 8/2) = 2/6 = 1/3, its
// datasheet PP = 2/(10/4 + 10/2) = 2/7.5 = 4/15.
//
// Variant u of strategy s3 failed to build with tcA and was skipped by
// tcB: PP 0, as the library's "did not run".
//
// With C in H every PP is 0 (nothing runs there).

const (
	devX = "dev X"
	gb   = 1e9
)

var (
	fixProblem = Problem{"k", 100}
	platA      = Platform{Device: devX, Toolchain: "tcA", Status: Measured}
	platB      = Platform{Device: devX, Toolchain: "tcB", Status: Measured}
	platC      = Platform{Device: "gfx90a", Toolchain: "tcC", Status: CompilesNotRun, Reason: "no AMD GPU"}
)

func fixMeasurement(p Platform, strategy, variant string, s, lo, hi float64) Measurement {
	return Measurement{Problem: fixProblem, Platform: p.Name(), Device: p.Device, Strategy: strategy, Variant: variant,
		OK: s > 0, Seconds: s, Lo: lo, Hi: hi, BytesMin: 4 * gb}
}

func fixture() Input {
	return Input{
		Platforms: []Platform{platA, platB, platC},
		Rooflines: map[string]float64{devX: 8},
		Measurements: []Measurement{
			fixMeasurement(platA, "s1", "v1", 1, 0.9, 1.25),
			fixMeasurement(platA, "s1", "v2", 2, 1.6, 2.5),
			fixMeasurement(platA, "s2", "w", 4, 4, 4),
			fixMeasurement(platB, "s1", "v1", 4, 4, 5),
			fixMeasurement(platB, "s1", "v2", 2, 2, 2),
			fixMeasurement(platB, "s2", "w", 0, 0, 0), // failed verification
		},
		Builds: []Build{
			{Kernel: "k", Strategy: "s3", Variant: "u", Toolchain: "tcA", Status: "failed", Reason: "internal compiler error"},
			{Kernel: "k", Strategy: "s3", Variant: "u", Toolchain: "tcB", Status: "skipped", Reason: "missing a capability"},
			{Kernel: "k", Strategy: "s1", Variant: "v1", Toolchain: "tcC", Status: "built"},
		},
	}
}

var fixOptions = Options{Datasheet: map[string]float64{devX: 10}}
