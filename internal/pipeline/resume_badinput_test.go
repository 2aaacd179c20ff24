package pipeline

import (
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/session"
)

// finishedRun makes ROOT/results/old a finished run of kernel and variant
// (reps 2), measured by the run stage from a build folder of fake programs
// of axpby/serial and dot/omp-host: the folder a resumption with another
// selection finds.
func finishedRun(kernel, variant string) func(root string) {
	return func(root string) {
		dir := filepath.Join(root, "build")
		os.MkdirAll(filepath.Join(dir, "gcc-host"), 0o755)
		prog := "#!/bin/sh\necho \"{\\\"kind\\\":\\\"kernel\\\",\\\"size\\\":$2,\\\"reps\\\":1,\\\"median_s\\\":0.001,\\\"verified\\\":true}\"\n"
		m := build.Manifest{Toolchains: map[string]build.ToolchainInfo{"gcc-host": {ID: "gcc-host", Family: "gcc", Target: "host"}}}
		for _, c := range [][2]string{{"axpby", "serial"}, {"dot", "omp-host"}} {
			bin := "gcc-host/" + c[0] + "." + c[1]
			os.WriteFile(filepath.Join(dir, bin), []byte(prog), 0o755)
			m.Cells = append(m.Cells, build.Entry{ID: c[0] + "." + c[1] + ".gcc-host", Kernel: c[0], Variant: c[1], Strategy: c[1],
				Toolchain: "gcc-host", Target: "host", Binary: bin, Status: build.Built, Sizes: map[string][]int64{"ci": {5}}})
		}
		b, _ := json.Marshal(m)
		os.WriteFile(build.ManifestFile(dir), b, 0o644)
		cfg := config.Config{Root: root, Kernels: []string{kernel}, Variants: []string{variant}, Reps: 2, GPU: "0",
			Out: filepath.Join(root, "results", "old"), Log: io.Discard}
		if _, err := session.Run(context.Background(), cfg); err != nil {
			panic(err)
		}
	}
}
