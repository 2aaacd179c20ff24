// Package tables writes tables.md of a results folder from tables.yaml
// (reportspec.Tables) and the folder's measurements (dataset.Set): how long
// the run's programs took, a GB/s table per kernel, the step tables of
// composites that repeat a step, and the launch latencies with the split of
// composites' time into bandwidth and launch cost.
package tables

import (
	"fmt"

	"github.com/portmatrix/portmatrix/internal/report/dataset"
	"github.com/portmatrix/portmatrix/internal/report/reportspec"
	"github.com/portmatrix/portmatrix/internal/results"
)

// Markdown is tables.md of run runID: the timing of recs (every kernel
// record, tuning configurations included), then the tables of spec over ds.
func Markdown(runID string, spec *reportspec.Tables, ds *dataset.Set, recs []results.Record) []byte {
	tables := append(tablesMarkdown(buildTables(spec.Tables, ds)), stepTablesMarkdown(buildStepTables(spec.Steps, ds))...)
	tables = append(tables, launchMarkdown(buildLaunch(spec.Launch, ds))...)
	if t := timingMarkdown(recs); t != "" {
		tables = append([]byte(t+"\n"), tables...)
	}
	return append([]byte(fmt.Sprintf("# Tables: %s\n\n", runID)), tables...)
}
