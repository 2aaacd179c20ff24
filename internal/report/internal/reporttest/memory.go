package reporttest

import "github.com/portmatrix/portmatrix/internal/results"

// MemResults is an in-memory run: spmv on one LLVM toolchain and nvcc. Each
// measurement has five repetitions within 1% of its median.
func MemResults() *results.Folder {
	rec := func(variant, tc string, size int64, gbps float64) results.Record {
		t := 1 / gbps
		return results.Record{Kind: "kernel", Cell: "spmv." + variant + "." + tc, Kernel: "spmv", Variant: variant,
			Toolchain: tc, Size: size, GBps: gbps, MedianS: t, Bytes: 1e9, Verified: true, Clock: results.ClockHost,
			TimesS: []float64{t * 0.99, t, t * 1.01, t * 0.995, t * 1.005}}
	}
	return &results.Folder{
		Run: results.Run{ID: "mem", Toolchains: []results.Toolchain{
			{ID: "clang19-sm90", Family: "llvm", Target: "sm_90"},
			{ID: "clang19-host", Family: "llvm", Target: "host"},
			{ID: "nvcc-sm90", Family: "nvcc", Target: "sm_90"},
		}},
		Kernel: []results.Record{
			rec("kk-cuda-3lvl", "nvcc-sm90", 32, 1800), rec("kk-cuda-3lvl", "nvcc-sm90", 64, 2000),
			rec("omp-raw", "clang19-sm90", 32, 1200), rec("omp-raw", "clang19-sm90", 64, 1400),
			rec("kk-omp-b", "clang19-sm90", 32, 900), rec("kk-omp-b", "clang19-sm90", 64, 1000),
			rec("omp-raw", "clang19-host", 64, 20),
			rec("kk-omp-a", "clang19-sm90", 64, 5000), // a newer failure replaces it
			{Kind: "kernel", Cell: "spmv.kk-omp-a.clang19-sm90", Kernel: "spmv", Variant: "kk-omp-a",
				Toolchain: "clang19-sm90", Size: 64, GBps: 5000, Verified: false},
		},
	}
}
