package report

// The names results use. Figure and claim files may only name these, so that
// a typo is an error instead of a silently empty figure.
var (
	knownKernels = []string{"axpby", "cgsolve", "dot", "spmv"}

	knownVariants = []string{
		"serial", "omp-host",
		"kk-omp-a", "kk-omp-a-wo-num-teams", "kk-omp-b", "kk-omp-b-wo-num-teams",
		"omp-raw", "omp-lambda", "omp-class",
		"kk-cuda-3lvl", "kk-cuda-2lvl",
		"kk-ompx", "kk-ompx-shfl", "kk-ompx-opt", "direct-ompx",
		"kk-ompx-warp", "direct-ompx-warp", // beyond 000: warp-only vector reductions
	}

	knownFamilies = []string{"gcc", "llvm", "nvcc", "nvhpc", "rocm"}
)

// sizeLabel is the default x-axis label of a kernel.
func sizeLabel(kernel string) string {
	switch kernel {
	case "spmv", "cgsolve":
		return "N (grid elements per dimension, rows = (N+1)^3)"
	default:
		return "vector length n"
	}
}
