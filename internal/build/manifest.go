package build

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/portmatrix/portmatrix/internal/fsutil"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/toolchain"
)

// Manifest is build/manifest.json: what was built, with what, so that the run
// stage needs no compiler (a GPU host runs binaries built elsewhere).
type Manifest struct {
	Commit     string                   `json:"commit"`
	Dirty      bool                     `json:"dirty"`
	Toolchains map[string]ToolchainInfo `json:"toolchains"`
	Cells      []Entry                  `json:"cells"`
}

// ToolchainInfo is the provenance of one toolchain.
type ToolchainInfo = results.Toolchain

// Entry is one cell of the manifest.
type Entry struct {
	ID      string `json:"id"`
	Kernel  string `json:"kernel"`
	Family  string `json:"family,omitempty"` // the kernel's (spec.Kernel.Family)
	Variant string `json:"variant"`
	// Form: the variant varies its strategy's first knob only (matrix.Variant.Form).
	Form      bool   `json:"form,omitempty"`
	Strategy  string `json:"strategy"`
	Toolchain string `json:"toolchain"`
	Target    string `json:"target"`
	Binary    string `json:"binary,omitempty"` // relative to the build folder
	// DeviceOnly: Binary is the device code's object (PM_DEVICE_ONLY), not a program.
	DeviceOnly bool               `json:"device_only,omitempty"`
	Status     string             `json:"status"`
	Reason     string             `json:"reason,omitempty"`
	Seconds    float64            `json:"seconds"`
	Log        string             `json:"log,omitempty"` // relative to the build folder
	Sizes      map[string][]int64 `json:"sizes"`
	Fallbacks  []string           `json:"fallbacks,omitempty"`
	// DeviceHash identifies the device code (build.DeviceHash): cells of one
	// kernel and toolchain with the same hash run the same code.
	DeviceHash string `json:"device_hash,omitempty"`
	// Tunables are the values the program is generated with; ModelDefaults
	// the launch parameters that take the machine model's default
	// (variants/strategies.yaml); Kernels the device kernels' resources the
	// defaults are computed from (ResourcesNote: why none were recorded).
	Tunables      map[string]int64  `json:"tunables,omitempty"`
	Blocks        []int64           `json:"blocks,omitempty"` // threads per team of its team patterns (Result.Blocks)
	ModelDefaults map[string]string `json:"model_defaults,omitempty"`
	Kernels       []Kernel          `json:"kernels,omitempty"`
	ResourcesNote string            `json:"resources_note,omitempty"`
	// Space is the cell's tuning space at any size (tune.Recorded, which
	// internal/tune writes and reads): with Sizes, Tunables, Kernels and
	// DeviceHash, all the tune stage and `run -tuned` read of a cell, so
	// that they need the build folder only.
	Space json.RawMessage `json:"space,omitempty"`
	// Library is the library install the cell was built against (a
	// strategy's library:, variants/libraries.yaml); nil for others.
	Library *Library `json:"library,omitempty"`
}

// Library is what the manifest records of a cell's library install.
type Library struct {
	Name    string `json:"name"`
	Version string `json:"version"`
	Backend string `json:"backend"`
	Prefix  string `json:"prefix"`
	// Compiler is the version of the compiler the install was built with.
	Compiler string `json:"compiler,omitempty"`
}

// Info describes a toolchain for the manifest and run.json.
func Info(t *toolchain.Toolchain) ToolchainInfo {
	i := ToolchainInfo{ID: t.ID, Family: t.Family, Command: firstOf(t.Commands), Path: t.Path, Identity: t.Identity, Target: t.Target,
		Caps: t.CapNames(), Missing: t.Missing, Broken: t.Broken, Candidates: t.Candidates}
	if t.Version != nil {
		i.Version = t.Version.String()
	}
	if t.CUDA != nil {
		i.CUDA = t.CUDA.String()
	}
	return i
}

// ManifestFile is where a build folder keeps its manifest.
func ManifestFile(dir string) string { return filepath.Join(dir, "manifest.json") }

// ReadManifest reads dir/manifest.json.
func ReadManifest(dir string) (*Manifest, error) {
	b, err := os.ReadFile(ManifestFile(dir))
	if err != nil {
		return nil, err
	}
	m := &Manifest{}
	if err := json.Unmarshal(b, m); err != nil {
		return nil, fmt.Errorf("%s: corrupt build manifest (%v); remove it (or the build folder) to rebuild", ManifestFile(dir), err)
	}
	return m, nil
}

// Update merges results into dir/manifest.json: cells built now replace their
// old entries, others stay.
func Update(dir, commit string, dirty bool, tcs []*toolchain.Toolchain, results []Result) (*Manifest, error) {
	m, err := ReadManifest(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		m = &Manifest{}
	case err != nil:
		return nil, err // never replace a manifest that does not read
	}
	m.Commit, m.Dirty = commit, dirty
	if m.Toolchains == nil {
		m.Toolchains = map[string]ToolchainInfo{}
	}
	for _, t := range tcs {
		// A machine without a toolchain (a GPU host building only its CUDA
		// cells) keeps the provenance of the one that built the carried cells.
		if old, ok := m.Toolchains[t.ID]; ok && !t.Found() && old.Missing == "" {
			continue
		}
		m.Toolchains[t.ID] = Info(t)
	}
	byID := map[string]Entry{}
	for _, e := range m.Cells {
		byID[e.ID] = e
	}
	for _, r := range results {
		byID[r.Cell.ID] = entry(dir, r)
	}
	m.Cells = m.Cells[:0]
	for _, e := range byID {
		m.Cells = append(m.Cells, e)
	}
	sort.Slice(m.Cells, func(i, j int) bool { return m.Cells[i].ID < m.Cells[j].ID })
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return m, fsutil.WriteFile(ManifestFile(dir), append(b, '\n'), 0o644)
}

func entry(dir string, r Result) Entry {
	c := r.Cell
	e := Entry{ID: c.ID, Kernel: c.Kernel.Name, Family: c.Kernel.Family, Variant: c.Variant.ID, Form: c.Variant.Form(), Strategy: c.Variant.Strategy.Name,
		Toolchain: c.Toolchain.ID, Target: c.Toolchain.Target, Status: r.Status, Reason: r.Reason,
		Seconds: r.Seconds, Sizes: c.Kernel.Size.Sets, Fallbacks: c.Fallbacks, DeviceHash: r.DeviceHash,
		Tunables: cellTunables(c), Kernels: r.Kernels, ResourcesNote: r.ResourcesNote, DeviceOnly: r.DeviceOnly, Blocks: r.Blocks, Space: r.Space}
	if in := c.Library; in != nil {
		e.Library = &Library{Name: in.Name, Version: in.Version, Backend: in.Backend, Prefix: in.Prefix, Compiler: in.CompilerVersion}
	}
	if len(c.Variant.ModelDefaults) > 0 {
		e.ModelDefaults = c.Variant.ModelDefaults
	}
	if r.OK() {
		e.Binary, _ = filepath.Rel(dir, r.Binary)
	}
	if r.Log != "" {
		if _, err := os.Stat(r.Log); err == nil {
			e.Log, _ = filepath.Rel(dir, r.Log)
		}
	}
	return e
}

// Entry finds a cell by ID.
func (m *Manifest) Entry(id string) (Entry, bool) {
	for _, e := range m.Cells {
		if e.ID == id {
			return e, true
		}
	}
	return Entry{}, false
}

func firstOf(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}
