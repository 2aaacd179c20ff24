package session

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/portmatrix/portmatrix/internal/build"
	"github.com/portmatrix/portmatrix/internal/config"
	"github.com/portmatrix/portmatrix/internal/host"
	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/run"
	"github.com/portmatrix/portmatrix/internal/suite"
)

// stage is what the run and the tune stages share, made once by openStage:
// the build folder they read (its manifest, checked against the selection,
// and project.json), the machine they run on, the results folder they write
// and the options every program of theirs runs with.
type stage struct {
	cfg  config.Config
	m    *build.Manifest
	info BuildInfo
	mach host.Info
	gpu  bool // GPU cells run here
}

// openStage reads the build folder of cfg for a stage that runs its programs.
func openStage(cfg config.Config) (*stage, error) {
	cfg.Defaults()
	m, err := build.ReadManifest(cfg.BuildDir)
	if err != nil {
		return nil, fmt.Errorf("no build manifest in %s (run the build stage first): %w", cfg.BuildDir, err)
	}
	if err := checkManifestFilters(cfg, m); err != nil {
		return nil, err
	}
	info, err := readBuildInfo(cfg.BuildDir)
	if err != nil {
		return nil, err
	}
	return &stage{cfg: cfg, m: m, info: info, mach: Machine(cfg), gpu: GPU(cfg)}, nil
}

// folder is the results folder the stage writes: PM_OUT, else a new folder
// of results/ named by the time, the host and suffix.
func (s *stage) folder(suffix string) (string, error) {
	if s.cfg.Out != "" {
		return s.cfg.Out, nil
	}
	return results.NewFolder(filepath.Join(s.cfg.Root, results.RunsDir), time.Now(), s.mach.Machine.Hostname+suffix)
}

// model is the machine model of the GPU here (the papers' launch defaults,
// docs/machines.md), and a note where none matched.
func (s *stage) model() (*machine.Model, string) {
	return run.Model(s.cfg.BuildDir, s.cfg.Root, s.mach.GPUName(), s.cfg.Log)
}

// options are what every program of the stage runs with: the measuring
// protocol of the knobs, the GPU's name and the host threads.
func (s *stage) options() run.Options {
	c := s.cfg
	return run.Options{BuildDir: c.BuildDir, Reps: c.Reps, Warmup: c.Warmup, RepSeconds: c.RepSeconds,
		Timeout: time.Duration(c.Timeout) * time.Second, FlushL2: c.FlushL2, HostFlushL2: hostFlush(c), DeviceName: s.mach.GPUName(), Threads: hostThreads(c)}
}

// hostFlush is the --flush-l2 of host programs where it is not PM_FLUSH_L2's:
// the quick sample, unless PM_FLUSH_L2 says otherwise, runs them with warm
// caches ("off"). A flush evicts a buffer of twice the last-level cache
// before every call, which on a machine whose reported cache is hundreds of
// MiB costs seconds per measurement, more than the quick sample's sizes take
// to measure; its summary says that the caches were warm.
func hostFlush(c config.Config) string {
	if c.FlushL2 == "" && c.Sample() == suite.Quick {
		return "off"
	}
	return ""
}

// provenance is run.json of a folder the stage writes into dir from the
// build m (the stage's, or the run's sample of it).
func (s *stage) provenance(m *build.Manifest, dir string, started time.Time, recs []results.Record) results.Run {
	return provenance(s.cfg, m, s.info, s.mach, dir, started, recs)
}
