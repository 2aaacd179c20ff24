package pipeline

import (
	"fmt"
	"io"
	"strings"

	"github.com/portmatrix/portmatrix/internal/matrix"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// Doctor prints the toolchains found and why each cell is on or off.
func Doctor(p *Project, w io.Writer) {
	fmt.Fprintln(w, "toolchains:")
	for _, t := range p.Toolchains {
		status := "found " + t.Path + " " + t.Family + " " + t.VersionString()
		if t.CUDA != nil {
			status += " (ptxas " + t.CUDA.String() + ")"
		}
		if !t.Found() {
			status = "missing: " + t.Missing
		}
		fmt.Fprintf(w, "  %-14s target %-6s %s\n", t.ID, t.Target, status)
		if t.Found() {
			fmt.Fprintf(w, "  %-14s capabilities: %s\n", "", strings.Join(t.CapNames(), ", "))
		}
		if t.Broken != "" {
			fmt.Fprintf(w, "  %-14s BROKEN: %s\n", "", t.Broken)
		}
	}
	doctorLibraries(p.Libraries, p.Toolchains, w)
	cells := p.Cells()
	on, run := 0, 0
	fmt.Fprintln(w, "cells:")
	for _, c := range cells {
		state := "off"
		switch {
		case p.templateFails(c):
			state = "error" // not a reason: a template to fix (generate and check fail)
		case c.Runnable:
			state, on, run = "run", on+1, run+1
		case c.On:
			state, on = "build", on+1
		}
		line := fmt.Sprintf("  %-5s %s", state, c.ID)
		if c.Reason != "" {
			line += ": " + c.Reason
		}
		if !c.On {
			fmt.Fprintln(w, line)
			continue
		}
		if len(c.Fallbacks) > 0 {
			line += " [fallback: " + strings.Join(c.Fallbacks, "; ") + "]"
		}
		if why := toolchain.NotRun(c.Toolchain.Target); why != "" {
			line += " (" + why + ")"
		} else if c.On && !c.Runnable {
			line += " (no GPU here: built, not run)"
		}
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "%d cells: %d build, %d run here, %d off\n", len(cells), on, run, len(cells)-on)
	if len(p.Refused) > 0 {
		fmt.Fprintf(w, "refused kernel descriptions (no cells; the other kernels go on): %s\n%s\n", strings.Join(p.Refused.Names(), ", "), p.Refused)
	}
	if len(p.Notes) > 0 {
		fmt.Fprintln(w, "size rule notes (loops no size can give a remainder; not refused):")
		for _, n := range p.Notes {
			fmt.Fprintf(w, "  %s\n", n)
		}
	}
}

// templateFails reports whether the cell's program fails to render.
func (p *Project) templateFails(c *matrix.Cell) bool {
	p.renderAll()
	_, bad := p.renderErrs[matrix.SourcePath(c.Kernel, c.Variant)]
	return bad
}
