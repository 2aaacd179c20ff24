// Package pipeline wires the stages (spec -> matrix -> render -> toolchain ->
// build -> run -> results -> report) for the magefile and the CLI.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/diag"
	"github.com/portmatrix/portmatrix/internal/layout"
	"github.com/portmatrix/portmatrix/internal/library"
	"github.com/portmatrix/portmatrix/internal/mapping"
	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/render"
	"github.com/portmatrix/portmatrix/internal/session"
	"github.com/portmatrix/portmatrix/internal/spec"
	"github.com/portmatrix/portmatrix/internal/suite"
	"github.com/portmatrix/portmatrix/internal/toolchain"
	"github.com/portmatrix/portmatrix/internal/tune"
)

// Config is the configuration of every stage (internal/config).
type Config = config.Config

// Sizes are explicit sizes by kernel (internal/config).
type Sizes = config.Sizes

// Project is everything loaded from the repository.
type Project struct {
	Cfg        Config
	Kernels    []*spec.Kernel
	ByName     map[string]*spec.Kernel
	Strategies []*matrix.Strategy
	Variants   []*matrix.Variant
	Spaces     *tune.Spaces // variants/tuning.yaml; nil in a project without one
	Caps       *toolchain.Table
	Toolchains []*toolchain.Toolchain
	// Libraries are variants/libraries.yaml and the installs under
	// .toolchains/libraries: what library strategies build against.
	Libraries *library.Set
	Engine    *render.Engine
	// Refused are the kernel descriptions the load refused: every other
	// kernel goes on without them (Load).
	Refused spec.Refused
	// Notes are what the size rule says of loops no size can satisfy
	// (spec.CheckSizes): said by generate and doctor, never a refusal.
	Notes diag.List

	renderOnce sync.Once
	rendered   map[string][]byte
	failed     render.Failures // programs not made for a declared reason, by source path
	renderErrs render.Errors   // programs whose templates fail, by source path
	suiteNote  sync.Once       // the quick suite's line, printed once
	leftOut    []string        // what the sample leaves out, every cell a known failure (suite.LeftOut)
}

// Load reads kernels, variants, capabilities, toolchains and templates, and
// reports every problem of every file at once.
//
// A kernel description with a problem (a field, its sizes, its mapping, its
// tunables' bounds) is refused, not the project: the project of the other
// kernels comes back, with p.Refused, printed to the log. The error is then
// the refusals of the kernels the selection names (every kernel when
// PM_KERNELS is not given), which a stage reports after doing its work for
// the others (withProject); a selection of refused kernels only has nothing
// to do: p is nil. Any other problem stops the load, the refusals listed
// with it.
func Load(ctx context.Context, cfg Config) (*Project, error) {
	cfg.Defaults()
	p := &Project{Cfg: cfg}
	var errs []string
	add := func(err error) {
		if err != nil {
			errs = append(errs, err.Error())
		}
	}
	failed := func() error {
		all := errs
		if len(p.Refused) > 0 {
			all = append([]string{p.Refused.Error()}, errs...)
		}
		return fmt.Errorf("%s", strings.Join(all, "\n"))
	}
	var err error
	p.Kernels, err = loadKernels(p.Cfg.Root)
	if !errors.As(err, &p.Refused) {
		add(err)
	}
	p.Caps, err = toolchain.LoadTable(p.path(layout.Capabilities))
	add(err)
	p.Toolchains, err = toolchain.Load(toolchainsFile(p.Cfg), absRoot(cfg.Root))
	add(err)
	p.Libraries, err = loadLibraries(p.Cfg.Root, p.Toolchains)
	add(err)
	p.Libraries.Catalog.AddCapabilities(p.Caps) // a strategy may require a library's version gate
	p.Strategies, err = matrix.Load(p.path(layout.Strategies), p.Caps)
	add(err)
	add(checkLibraryRefs(p.Strategies, p.Libraries.Catalog))
	p.Engine, err = render.Load(p.path(layout.Templates))
	add(err)
	devices, err := toolchain.HarnessDevices(p.path("harness"))
	add(err)
	add(matrix.CheckDevices(p.Strategies, devices))
	add(toolchain.CheckDevices(p.Toolchains, devices))
	if len(errs) > 0 {
		return nil, failed()
	}
	p.Variants = matrix.Variants(p.Strategies)
	add(p.checkFilters())
	var kernelNames []string
	for _, k := range p.Kernels {
		kernelNames = append(kernelNames, k.Name)
	}
	// A strategy may name a refused kernel: it is known, only not loaded.
	add(matrix.CheckKernels(p.Strategies, append(kernelNames, p.Refused.Names()...)))
	add(matrix.CheckVendors(p.Strategies, p.Kernels))
	p.Notes, err = spec.CheckSizes(p.Kernels, matrix.TunableValues(p.Strategies))
	p.Kernels, err = p.Refused.Take(p.Kernels, err)
	add(err)
	add(p.Engine.CheckStrategies(p.Strategies))
	if _, err := os.Stat(p.path(tune.File)); err == nil {
		if p.Spaces, err = tune.Load(p.path(tune.File)); err == nil {
			// tuning.yaml may scope a refused kernel: it is known, only not loaded.
			sp := *p.Spaces
			sp.Kernels = maps.Clone(sp.Kernels)
			for _, name := range p.Refused.Names() {
				delete(sp.Kernels, name)
			}
			err = sp.Check(p.Kernels, p.Strategies)
			p.Kernels, err = p.Refused.Take(p.Kernels, err)
		}
		add(err)
	}
	if len(errs) > 0 {
		return nil, failed()
	}
	p.ByName = spec.ByName(p.Kernels)
	p.Notes = slices.DeleteFunc(p.Notes, func(e diag.Error) bool {
		return p.ByName[strings.TrimSuffix(filepath.Base(e.Pos.File), ".yaml")] == nil
	})
	refusedErr := p.selectLoaded()
	if len(cfg.Kernels) > 0 && len(p.Cfg.Kernels) == 0 {
		return nil, refusedErr // only refused kernels selected: nothing to do
	}
	toolchain.Discover(ctx, p.Toolchains, p.Caps, probe)
	return p, refusedErr
}

// selectLoaded prints the refused kernel descriptions and narrows the
// selection to the kernels that loaded, so that no stage takes a refused
// kernel's cells (an earlier build's binaries among them); it returns the
// refusals the selection names.
func (p *Project) selectLoaded() error {
	if len(p.Refused) == 0 {
		return nil
	}
	selected := p.Refused.Of(p.Cfg.Kernels)
	fmt.Fprintf(p.Cfg.Log, "load: %d kernel descriptions refused (%s), the other kernels go on:\n%s\n",
		len(p.Refused), strings.Join(p.Refused.Names(), ", "), p.Refused)
	if len(p.Cfg.Kernels) == 0 {
		if s := p.Cfg.Sample(); s != "" {
			p.Cfg.Suite = s // the sample the whole project would have had
		}
		for _, k := range p.Kernels {
			p.Cfg.Kernels = append(p.Cfg.Kernels, k.Name)
		}
	} else {
		p.Cfg.Kernels = slices.DeleteFunc(slices.Clone(p.Cfg.Kernels), func(name string) bool { return slices.Contains(p.Refused.Names(), name) })
	}
	return selected.Err()
}

// loadKernels is mapping.LoadKernels; a variable so that the bad-input tests,
// which load one tree again and again, lower its loop kernels once.
var loadKernels = mapping.LoadKernels

// probe is toolchain.ExecProbe; a variable so that the tests, which load
// trees again and again, ask each compiler its version once.
var probe toolchain.Probe = toolchain.ExecProbe

func absRoot(root string) string {
	a, err := filepath.Abs(root)
	if err != nil {
		return root
	}
	return a
}

func (p *Project) path(rel string) string { return layout.Path(p.Cfg.Root, rel) }

// checkFilters rejects names that select nothing, listing what exists.
func (p *Project) checkFilters() error {
	var ks, vs, ts []string
	for _, k := range p.Kernels {
		ks = append(ks, k.Name)
	}
	ks = append(ks, p.Refused.Names()...)
	for _, v := range p.Variants {
		vs = append(vs, v.ID)
	}
	for _, s := range p.Strategies {
		if !slices.Contains(vs, s.Name) {
			vs = append(vs, s.Name)
		}
	}
	for _, t := range p.Toolchains {
		ts = append(ts, t.ID)
	}
	return p.Cfg.CheckSelection(ks, vs, ts, spec.SizeSets)
}

// notFor says why a variant does not apply to a kernel: a pattern its backend
// does not lower, a program not made for a declared reason, or a template
// that fails (an error: Generate and Check fail, doctor says "error").
func (p *Project) notFor(k *spec.Kernel, v *matrix.Variant) string {
	if why := p.applies(k, v); why != "" {
		return why
	}
	p.renderAll()
	path := matrix.SourcePath(k, v)
	if e, bad := p.renderErrs[path]; bad {
		return "template error: " + e.Error()
	}
	return p.failed[path]
}

func (p *Project) applies(k *spec.Kernel, v *matrix.Variant) string {
	return matrix.Applies(k, v, p.ByName, p.Engine.Missing)
}

// Jobs is every (kernel, variant) whose patterns the backend lowers, whatever
// the toolchains: generated/ holds them all (but those that do not render),
// so that it does not depend on the machine.
func (p *Project) Jobs() []render.Job {
	var jobs []render.Job
	for _, k := range p.Kernels {
		for _, v := range p.Variants {
			if p.applies(k, v) == "" {
				jobs = append(jobs, render.Job{Kernel: k, Variant: v})
			}
		}
	}
	return jobs
}

func (p *Project) renderAll() {
	p.renderOnce.Do(func() { p.rendered, p.failed, p.renderErrs = p.Engine.All(p.Jobs(), p.ByName) })
}

// Render renders every job in memory. A program not made for a declared
// reason is left out (its cells are off with the reason, see
// RenderFailures); the error lists every program whose templates fail,
// positioned at the template line (the files of the others are returned).
func (p *Project) Render() (map[string][]byte, error) {
	p.renderAll()
	files := make(map[string][]byte, len(p.rendered))
	for k, v := range p.rendered {
		files[k] = v
	}
	return files, p.renderErrs.Err()
}

// RenderFailures are the programs that did not render, by source path, with
// the reason their cells are off.
func (p *Project) RenderFailures() render.Failures {
	p.renderAll()
	return p.failed
}

// Cells is the selected part of the matrix.
func (p *Project) Cells() []*matrix.Cell {
	all := matrix.Expand(p.Kernels, p.Variants, p.Toolchains, p.Caps, p.notFor, session.GPU(p.Cfg), p.Libraries)
	var out []*matrix.Cell
	for _, c := range all {
		if p.selected(c) {
			out = append(out, c)
		}
	}
	// Known failures' cells are avoided by a sample; the build stage reports a bad list.
	known, _ := build.LoadKnown(p.path(build.KnownFile))
	p.leftOut = suite.LeftOutOf(out, p.Cfg.Sample(), known)
	return suite.Cells(out, p.Cfg.Sample(), known, p.Cfg.SizeSet, func(line string) {
		p.suiteNote.Do(func() { fmt.Fprintln(p.Cfg.Log, line) })
	})
}

func (p *Project) selected(c *matrix.Cell) bool {
	return p.Cfg.Picks(c.Kernel.Name, c.Variant.ID, c.Variant.Strategy.Name, c.Toolchain.ID)
}

// Sizes are the sizes a kernel runs at under the config.
func (p *Project) Sizes(k *spec.Kernel) []int64 {
	if s := p.Cfg.Sizes.For(k.Name); len(s) > 0 {
		return s
	}
	return k.Size.Sets[p.Cfg.SizeSet]
}

// Generate renders all jobs and writes generated/, removing stale files.
// When a template fails for any program, nothing is written or removed: the
// error lists every failing program, and generated/ stays the last complete
// rendering, so that a template edit never leaves it half of one state and
// half of another, nor deletes the sources of the programs it broke.
//
// A refused kernel's sources are kept as they are (keepRefused): fixing its
// description gives them back, and nothing is lost meanwhile.
func Generate(p *Project) error { return generate(p, true) }

// generate is Generate; listOff lists the programs not made (all, sampling,
// says so in the build's one line of cells that are off instead).
func generate(p *Project, listOff bool) error {
	files, err := p.Render()
	if err != nil {
		reportRenderFailures(p)
		return p.renderError("generate", "; nothing written, generated/ left as it was")
	}
	kept, err := p.keepRefused(files)
	if err != nil {
		return err
	}
	written, removed, err := render.Write(p.Cfg.Root, files)
	if err != nil {
		return err
	}
	fmt.Fprintf(p.Cfg.Log, "generate: %d sources, %d written, %d removed\n", len(files)-kept, len(written), len(removed))
	if kept > 0 {
		fmt.Fprintf(p.Cfg.Log, "  kept %d sources of refused kernels (%s) as they were\n", kept, strings.Join(p.Refused.Names(), ", "))
	}
	for _, n := range p.Notes {
		fmt.Fprintf(p.Cfg.Log, "  %s\n", n)
	}
	if listOff {
		reportRenderFailures(p)
	}
	for _, w := range written {
		fmt.Fprintf(p.Cfg.Log, "  wrote %s\n", w)
	}
	for _, r := range removed {
		fmt.Fprintf(p.Cfg.Log, "  removed %s\n", r)
	}
	return nil
}

// Check fails when a template fails or generated/ differs from what the
// templates render.
func Check(p *Project) error {
	files, err := p.Render()
	if err != nil {
		return p.renderError("check", "")
	}
	if _, err := p.keepRefused(files); err != nil {
		return err
	}
	if stale := render.Stale(p.Cfg.Root, files); len(stale) > 0 {
		return fmt.Errorf("generated/ is stale (run: go run mage.go generate):\n  %s", strings.Join(stale, "\n  "))
	}
	return nil
}

// keepRefused adds to files the sources generated/ holds for each refused
// kernel, as they are, so that writing files removes none of them and
// checking it finds them fresh: a refused kernel's error is the load's to
// report. It returns how many it added.
func (p *Project) keepRefused(files map[string][]byte) (int, error) {
	n := 0
	for _, name := range p.Refused.Names() {
		dir := filepath.Join(p.Cfg.Root, "generated", name)
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				if os.IsNotExist(err) {
					return nil
				}
				return err
			}
			b, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			rel, err := filepath.Rel(p.Cfg.Root, path)
			if err != nil {
				return err
			}
			if _, ok := files[filepath.ToSlash(rel)]; !ok {
				files[filepath.ToSlash(rel)] = b
				n++
			}
			return nil
		})
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// Templates returns the hash input of every template and description file,
// by path, sorted, for run.json.
func (p *Project) Templates() map[string][]byte {
	out := map[string][]byte{}
	for path, src := range p.Engine.Files {
		out[path] = src
	}
	for _, k := range p.Kernels {
		if src, err := os.ReadFile(k.File); err == nil {
			out[k.File] = src
		}
	}
	return out
}

// renderError is the error of a stage when templates fail: how many
// programs, then each one's positioned error, one a line; nil when none.
func (p *Project) renderError(stage, more string) error {
	p.renderAll()
	if err := p.renderErrs.Err(); err != nil {
		return fmt.Errorf("%s: %d programs failed to render%s:\n%w", stage, len(p.renderErrs), more, err)
	}
	return nil
}

// reportRenderFailures lists the programs not made for a declared reason:
// their cells are off with that reason.
func reportRenderFailures(p *Project) {
	for _, path := range slices.Sorted(maps.Keys(p.failed)) {
		fmt.Fprintf(p.Cfg.Log, "  off %s: %s\n", path, p.failed[path])
	}
}
