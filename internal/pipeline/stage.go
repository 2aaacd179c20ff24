package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/report"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/run"
)

// Stages lists the stage names Stage knows.
var Stages = []string{"generate", "check", "doctor", "build", "run", "report", "all", "merge"}

// Stage runs one named stage (or all of them) with cfg.
func Stage(ctx context.Context, name string, cfg Config) error {
	p, err := Load(ctx, cfg)
	if err != nil {
		return err
	}
	switch name {
	case "generate":
		return Generate(p)
	case "check":
		return Check(p)
	case "doctor":
		Doctor(p, p.Cfg.Log)
		return nil
	case "build":
		_, err := Build(ctx, p)
		return err
	case "run":
		_, err := Run(ctx, p)
		return err
	case "report":
		return Report(p, p.Cfg.Out)
	case "all":
		return All(ctx, p)
	case "merge":
		if p.Cfg.Out == "" {
			return fmt.Errorf("merge needs -out <folder>")
		}
		return Merge(p.Cfg.Out, p.Cfg.Inputs)
	}
	return fmt.Errorf("unknown stage %q (known: %s)", name, strings.Join(Stages, ", "))
}

// All generates, builds, runs and reports.
func All(ctx context.Context, p *Project) error {
	t0 := time.Now()
	if err := Generate(p); err != nil {
		return err
	}
	if _, err := Build(ctx, p); err != nil {
		return err
	}
	dir, err := Run(ctx, p)
	if err != nil {
		return err
	}
	if err := Report(p, dir); err != nil {
		return err
	}
	fmt.Fprintf(p.Cfg.Log, "all: took %s; results in %s\n", time.Since(t0).Round(time.Millisecond), dir)
	return nil
}

// Build compiles every selected cell that is on and updates build/manifest.json.
func Build(ctx context.Context, p *Project) ([]build.Result, error) {
	t0 := time.Now()
	cells := p.Cells()
	res, err := build.Run(ctx, cells, build.Options{Root: p.Cfg.Root, Dir: p.Cfg.BuildDir, Jobs: p.Cfg.Jobs, Log: p.Cfg.Log})
	if err != nil {
		return res, err
	}
	for _, t := range p.Toolchains {
		if t.GPU() && p.builtWith(res, t.ID) {
			if err := build.Bundle(p.Cfg.BuildDir, t); err != nil {
				return res, err
			}
		}
	}
	commit, dirty := gitCommit(p.Cfg.Root)
	if _, err := build.Update(p.Cfg.BuildDir, commit, dirty, p.Toolchains, res); err != nil {
		return res, err
	}
	counts := map[string]int{}
	for _, r := range res {
		counts[r.Status]++
	}
	fmt.Fprintf(p.Cfg.Log, "build: %d cells: %d built, %d cached, %d failed, %d skipped; took %s\n", len(res),
		counts[build.Built], counts[build.Cached], counts[build.Failed], counts[build.Skipped], time.Since(t0).Round(time.Millisecond))
	for _, r := range res {
		if r.Status == build.Failed {
			fmt.Fprintf(p.Cfg.Log, "  FAILED %s: %s (log: %s)\n", r.Cell.ID, r.Reason, r.Log)
		}
		if r.Status == build.Skipped && strings.HasPrefix(r.Reason, "cannot render") {
			fmt.Fprintf(p.Cfg.Log, "  OFF %s: %s\n", r.Cell.ID, r.Reason)
		}
	}
	return res, nil
}

// Run runs the built cells of the selection that can run here, writing a new
// results folder, and returns its path.
func Run(ctx context.Context, p *Project, runID ...string) (string, error) {
	m, err := build.ReadManifest(p.Cfg.BuildDir)
	if err != nil {
		return "", fmt.Errorf("no build manifest in %s (run the build stage first): %w", p.Cfg.BuildDir, err)
	}
	gpu := p.Cfg.GPU || GPUPresent()
	dir := p.Cfg.Out
	if dir == "" {
		host, _ := os.Hostname()
		dir = filepath.Join(p.Cfg.Root, "results", time.Now().UTC().Format("20060102-150405")+"-"+slug(host))
	}
	w, err := results.Create(dir)
	if err != nil {
		return "", err
	}
	started := time.Now().UTC()
	var jobs []run.Job
	var rows []results.BuildRow
	byKernel := p.ByName
	for _, e := range m.Cells {
		if !p.selectedEntry(e) {
			continue
		}
		row := results.BuildRow{Cell: e.ID, Kernel: e.Kernel, Variant: e.Variant, Toolchain: e.Toolchain,
			Status: e.Status, Reason: e.Reason, Seconds: e.Seconds}
		if e.Log != "" {
			row.Log = filepath.ToSlash(filepath.Join("logs", "build", e.ID+".log"))
			copyFile(filepath.Join(p.Cfg.BuildDir, e.Log), filepath.Join(dir, row.Log))
		}
		if e.Binary != "" {
			switch {
			case e.Target != "host" && !gpu:
				row.Reason = "built; not run: no GPU here"
			default:
				sizes := e.Sizes[p.Cfg.SizeSet]
				if len(p.Cfg.Sizes) > 0 {
					sizes = p.Cfg.Sizes
				} else if k := byKernel[e.Kernel]; k != nil {
					sizes = p.Sizes(k)
				}
				jobs = append(jobs, run.Job{Entry: e, Sizes: sizes})
			}
		}
		rows = append(rows, row)
	}
	if err := results.WriteBuildCSV(dir, rows); err != nil {
		return dir, err
	}
	// Provenance first, so that a run stopped midway still says what ran it.
	if err := results.WriteJSON(dir, "run.json", p.provenance(m, dir, started, gpu)); err != nil {
		return dir, err
	}
	fmt.Fprintf(p.Cfg.Log, "run: %d cells to run into %s\n", len(jobs), dir)
	runErr := run.Cells(ctx, jobs, run.Options{BuildDir: p.Cfg.BuildDir, Reps: p.Cfg.Reps, Warmup: p.Cfg.Warmup,
		Timeout: time.Duration(p.Cfg.Timeout) * time.Second, CopyBytes: p.copyBytes, DeviceName: gpuName(), Log: p.Cfg.Log}, w)
	closeErr := w.Close()
	info := p.provenance(m, dir, started, gpu)
	if err := results.WriteJSON(dir, "run.json", info); err != nil && runErr == nil {
		runErr = err
	}
	if runErr == nil {
		runErr = closeErr
	}
	summarize(p, w.Records())
	return dir, runErr
}

func (p *Project) builtWith(res []build.Result, tc string) bool {
	for _, r := range res {
		if r.OK() && r.Cell.Toolchain.ID == tc {
			return true
		}
	}
	return false
}

func summarize(p *Project, recs []results.Record) {
	ok, bad := 0, 0
	for _, r := range recs {
		if r.Str("kind") != "kernel" {
			continue
		}
		if r.Bool("verified") {
			ok++
			continue
		}
		bad++
		fmt.Fprintf(p.Cfg.Log, "  NOT VERIFIED %s size %d: %s\n", r.Str("cell"), int64(r.Num("size")), r.Str("error"))
	}
	fmt.Fprintf(p.Cfg.Log, "run: %d measurements verified, %d not\n", ok, bad)
}

func (p *Project) copyBytes(target string) int64 {
	if p.Cfg.CopyBytes > 0 {
		return p.Cfg.CopyBytes
	}
	if target == "host" {
		return 64 << 20
	}
	return 1 << 30
}

func (p *Project) selectedEntry(e build.Entry) bool {
	return p.picks(e.Kernel, e.Variant, e.Strategy, e.Toolchain)
}

// Report turns a results folder (the newest under results/ when dir is "")
// into figures, claims and an HTML page.
func Report(p *Project, dir string) error {
	if dir == "" {
		latest, err := Latest(filepath.Join(p.Cfg.Root, "results"))
		if err != nil {
			return err
		}
		dir = latest
	}
	sum, err := report.Generate(dir, report.Options{SpecDir: filepath.Join(p.Cfg.Root, "templates", "report"), Progress: p.Cfg.Log})
	if err != nil {
		return err
	}
	_ = sum
	fmt.Fprintf(p.Cfg.Log, "report: %s\n", filepath.Join(dir, "report.html"))
	return nil
}

// Latest returns the newest results folder (by name, which starts with the time).
func Latest(root string) (string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return "", err
	}
	var dirs []string
	for _, e := range entries {
		if e.IsDir() {
			if _, err := os.Stat(filepath.Join(root, e.Name(), "results.jsonl")); err == nil {
				dirs = append(dirs, e.Name())
			}
		}
	}
	if len(dirs) == 0 {
		return "", fmt.Errorf("no results folder under %s", root)
	}
	sort.Strings(dirs)
	return filepath.Join(root, dirs[len(dirs)-1]), nil
}

func slug(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-' {
			b.WriteRune(r)
		}
	}
	if b.Len() == 0 {
		return "host"
	}
	return b.String()
}

func copyFile(src, dst string) {
	b, err := os.ReadFile(src)
	if err != nil {
		return
	}
	os.MkdirAll(filepath.Dir(dst), 0o755)
	os.WriteFile(dst, b, 0o644)
}

func gitCommit(root string) (string, bool) {
	if c := os.Getenv("PM_COMMIT"); c != "" {
		return c, false
	}
	out, err := exec.Command("git", "-C", root, "rev-parse", "HEAD").Output()
	if err != nil {
		return "", false
	}
	st, _ := exec.Command("git", "-C", root, "status", "--porcelain", "--untracked-files=no").Output()
	return strings.TrimSpace(string(out)), len(strings.TrimSpace(string(st))) > 0
}

// Provenance is run.json.
type Provenance struct {
	ID          string                `json:"id"`
	Started     string                `json:"started"`
	Finished    string                `json:"finished"`
	Commit      string                `json:"commit"`
	Dirty       bool                  `json:"dirty"`
	BuildCommit string                `json:"build_commit"`
	Host        Host                  `json:"host"`
	GPUs        []GPU                 `json:"gpus"`
	Toolchains  []build.ToolchainInfo `json:"toolchains"`
	Templates   map[string]string     `json:"templates"`
	SizeSet     string                `json:"sizes"`
	Reps        int                   `json:"reps"`
	Warmup      int                   `json:"warmup"`
	Cells       map[string]int        `json:"cells"`
	MergedFrom  []string              `json:"merged_from,omitempty"`
}

// Host describes the machine that ran.
type Host struct {
	Hostname string `json:"hostname"`
	OS       string `json:"os"`
	Arch     string `json:"arch"`
	CPU      string `json:"cpu"`
	Cores    int    `json:"cores"`
}

// MiB is a memory size; it reads a number or a quoted number.
type MiB int

// UnmarshalJSON accepts 81559 and "81559".
func (m *MiB) UnmarshalJSON(b []byte) error {
	v, err := strconv.Atoi(strings.Trim(string(b), `"`))
	*m = MiB(v)
	return err
}

// GPU is one line of nvidia-smi.
type GPU struct {
	Name      string `json:"name"`
	Driver    string `json:"driver"`
	MemoryMiB MiB    `json:"memory_mib"`
}

func (p *Project) provenance(m *build.Manifest, dir string, started time.Time, gpu bool) Provenance {
	host, _ := os.Hostname()
	commit, dirty := gitCommit(p.Cfg.Root)
	if commit == "" {
		commit, dirty = m.Commit, m.Dirty
	}
	pr := Provenance{ID: filepath.Base(dir), Started: started.Format(time.RFC3339), Finished: time.Now().UTC().Format(time.RFC3339),
		Commit: commit, Dirty: dirty, BuildCommit: m.Commit,
		Host: Host{Hostname: host, OS: runtime.GOOS, Arch: runtime.GOARCH, CPU: cpuModel(), Cores: runtime.NumCPU()},
		GPUs: gpus(), Templates: map[string]string{}, SizeSet: p.Cfg.SizeSet, Reps: p.Cfg.Reps, Warmup: p.Cfg.Warmup,
		Cells: map[string]int{}}
	for _, id := range SortedKeys(m.Toolchains) {
		pr.Toolchains = append(pr.Toolchains, m.Toolchains[id])
	}
	for path, src := range p.Templates() {
		sum := sha256.Sum256(src)
		rel, err := filepath.Rel(p.Cfg.Root, path)
		if err != nil {
			rel = path
		}
		pr.Templates[filepath.ToSlash(rel)] = hex.EncodeToString(sum[:])
	}
	recs, _ := results.ReadJSONL(dir)
	for _, e := range m.Cells {
		if p.selectedEntry(e) {
			pr.Cells["total"]++
			pr.Cells[e.Status]++
		}
	}
	countRuns(pr.Cells, recs)
	return pr
}

func gpuName() string {
	if g := gpus(); len(g) > 0 {
		return g[0].Name
	}
	return ""
}

// countRuns adds to cells: ran (cells with a measurement), verified (cells
// whose every measurement verified), and the measurements either way.
func countRuns(cells map[string]int, recs []results.Record) {
	ok := map[string]bool{}
	for _, r := range recs {
		if r.Str("kind") != "kernel" {
			continue
		}
		cell := r.Str("cell")
		if _, seen := ok[cell]; !seen {
			ok[cell] = true
		}
		if r.Bool("verified") {
			cells["verified_measurements"]++
		} else {
			ok[cell] = false
			cells["failed_measurements"]++
		}
	}
	cells["ran"] = len(ok)
	for _, v := range ok {
		if v {
			cells["verified"]++
		}
	}
}

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "model name") {
			if i := strings.Index(line, ":"); i >= 0 {
				return strings.TrimSpace(line[i+1:])
			}
		}
	}
	return ""
}

func gpus() []GPU {
	out, err := exec.Command("nvidia-smi", "--query-gpu=name,driver_version,memory.total", "--format=csv,noheader,nounits").Output()
	if err != nil {
		return nil
	}
	var list []GPU
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		f := strings.Split(line, ", ")
		if len(f) == 3 {
			mib, _ := strconv.Atoi(strings.TrimSpace(f[2]))
			list = append(list, GPU{Name: f[0], Driver: f[1], MemoryMiB: MiB(mib)})
		}
	}
	return list
}
