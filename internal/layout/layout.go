// Package layout owns the repository's layout: where the kernels, variants,
// toolchains, templates, report specs, the results history and the results folders are. It holds
// paths only and imports no package of the project, so that any package
// may name a path through it (internal/vocabulary loads names from them).
package layout

import "path/filepath"

// Paths relative to the repository root.
const (
	Templates     = "templates"                    // backends and program templates (internal/render)
	Kernels       = "templates/kernels"            // kernel descriptions (internal/spec)
	Capabilities  = "variants/capabilities.yaml"   // toolchain capabilities (internal/toolchain)
	Strategies    = "variants/strategies.yaml"     // strategies and their knobs (internal/matrix)
	KnownFailures = "variants/known-failures.yaml" // known build failures (internal/build)
	Toolchains    = "toolchains.yaml"              // compilers (internal/toolchain)
	ReportSpecs   = "templates/report"             // figures, claims, tables (internal/report)
	Results       = "results"                      // results folders (internal/results)
	BuildDir      = "build"                        // the default build folder (internal/build)
	Libraries     = "variants/libraries.yaml"      // library releases, backends, fixes (internal/library)
	// LibraryInstalls is where the installer puts each library install
	// (internal/library): LibraryPrefix under it.
	LibraryInstalls = ".toolchains/libraries"
)

// LibraryPrefix is the CMake install prefix of one library install:
// <dir>/<name>-<version>/<backend>-<toolchain>, dir being LibraryInstalls
// under the root or a folder given instead.
func LibraryPrefix(dir, name, version, backend, toolchain string) string {
	return filepath.Join(dir, name+"-"+version, backend+"-"+toolchain)
}

// Path is rel (a constant of this package) under root.
func Path(root, rel string) string { return filepath.Join(root, filepath.FromSlash(rel)) }
