package report

import (
	"fmt"
	"io"
	"path/filepath"

	"github.com/portmatrix/portmatrix/internal/layout"
	"github.com/portmatrix/portmatrix/internal/machine"
	"github.com/portmatrix/portmatrix/internal/results"
	"github.com/portmatrix/portmatrix/internal/vocabulary"
)

// Folder is the report stage: it turns a results folder (the newest under results/ when dir is "")
// into figures, claims and an HTML page. It needs only the folder; an old
// folder whose run.json names no vocabulary takes the project's.
func Folder(root, dir string, log io.Writer) error {
	if dir == "" {
		latest, err := results.Latest(layout.Path(root, layout.Results))
		if err != nil {
			return err
		}
		dir = latest
	}
	if run, err := results.ReadRun(dir); err == nil && run.Status() == results.StateInterrupted {
		// A killed run may have left results.csv behind results.jsonl.
		fmt.Fprintf(log, "report: %s is an interrupted run (resume it with PM_RESUME=1)\n", dir)
		if err := results.WriteCSV(dir); err != nil {
			return err
		}
	}
	opt := Options{SpecDir: layout.Path(root, layout.ReportSpecs), Progress: log}
	// The specs are the source tree's: they may name what the folder's
	// vocabulary does not (a kernel added since), which the tree's covers.
	v, verr := vocabulary.Load(root)
	if run, err := results.ReadRun(dir); err == nil && run.Vocabulary == nil && verr != nil {
		return fmt.Errorf("%s names no vocabulary and the project does not load: %w", filepath.Join(dir, results.RunFile), verr)
	}
	opt.Vocabulary = v
	if set, err := machine.Load(filepath.Join(root, machine.Dir)); err == nil {
		opt.Machines = set // without the models, no datasheet line
	}
	if _, err := Generate(dir, opt); err != nil {
		return err
	}
	fmt.Fprintf(log, "report: %s\n", filepath.Join(dir, results.ReportFile))
	return nil
}
