package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/portmatrix/portmatrix/internal/layout"
	"github.com/portmatrix/portmatrix/internal/library"
	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// Libraries is the libraries stage: it finds the toolchains (toolchains.yaml
// or PM_TOOLCHAINS_FILE) and installs the selected libraries for them
// (library.InstallAll) into .toolchains/libraries; the kernels and templates
// are not read.
func Libraries(ctx context.Context, cfg Config) error {
	cfg.Defaults()
	caps, err := toolchain.LoadTable(layout.Path(cfg.Root, layout.Capabilities))
	if err != nil {
		return err
	}
	tcs, err := toolchain.Load(toolchainsFile(cfg), absRoot(cfg.Root))
	if err != nil {
		return err
	}
	cat, err := library.Load(layout.Path(cfg.Root, layout.Libraries), toolchainIDs(tcs))
	if err != nil {
		return err
	}
	toolchain.Discover(ctx, tcs, caps, probe)
	_, err = library.InstallAll(ctx, cat, tcs, library.Options{Deps: cfg.Deps, Dir: library.Dir(absRoot(cfg.Root), ""),
		Only: cfg.Libraries, Log: cfg.Log, RunGPU: cfg.GPU == "1"})
	return err
}

// toolchainsFile is the toolchains file a configuration reads:
// PM_TOOLCHAINS_FILE, else the tree's toolchains.yaml.
func toolchainsFile(cfg Config) string {
	if cfg.ToolchainsFile != "" {
		return cfg.ToolchainsFile
	}
	return layout.Path(cfg.Root, layout.Toolchains)
}

func toolchainIDs(tcs []*toolchain.Toolchain) []string {
	var out []string
	for _, t := range tcs {
		out = append(out, t.ID)
	}
	return out
}

// doctorLibraries lists each library install doctor knows of: version,
// backend, compiler and prefix, or why there is none and how to install it.
func doctorLibraries(set *library.Set, tcs []*toolchain.Toolchain, w io.Writer) {
	sts := set.Statuses(tcs)
	if len(sts) == 0 {
		return
	}
	fmt.Fprintln(w, "libraries:")
	for _, st := range sts {
		id := library.ID(st.Library.Name, st.Backend, st.Toolchain)
		if in := st.Install; in != nil {
			fmt.Fprintf(w, "  %-32s installed %s %s, backend %s, %s %s, %s\n", id, in.Name, in.Version, in.Backend, in.Compiler, in.CompilerVersion, in.Prefix)
			continue
		}
		fmt.Fprintf(w, "  %-32s missing: %s\n", id, st.Why)
	}
}

// loadLibraries reads variants/libraries.yaml (a tree without one has no
// libraries) with the installs under .toolchains/libraries.
func loadLibraries(root string, tcs []*toolchain.Toolchain) (*library.Set, error) {
	file := layout.Path(root, layout.Libraries)
	set := &library.Set{Catalog: &library.Catalog{File: file}, Dir: library.Dir(absRoot(root), "")}
	if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
		return set, nil
	}
	cat, err := library.Load(file, toolchainIDs(tcs))
	if cat != nil {
		set.Catalog = cat
	}
	return set, err
}

// checkLibraryRefs reports a strategy's library: that names no library or
// backend of variants/libraries.yaml.
func checkLibraryRefs(strategies []*matrix.Strategy, cat *library.Catalog) error {
	var errs []error
	for _, s := range strategies {
		if ref := s.Library; ref != nil {
			errs = append(errs, cat.CheckRef(ref.Name, ref.Backend, ref.Pos))
		}
	}
	return errors.Join(errs...)
}

// catalog is the project's library catalog, or nil.
func (p *Project) catalog() *library.Catalog {
	if p.Libraries == nil {
		return nil
	}
	return p.Libraries.Catalog
}
