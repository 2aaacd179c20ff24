// Package report turns a results folder (see docs/results-format.md) into
// figures, a claims table, tables and one self-contained HTML page
// (Generate; Folder is the report stage).
//
// What is drawn and what is checked is data: templates/report/figures.yaml
// lists the figures, claims.yaml the papers' headline claims, tables.yaml
// the tables (all read by reportspec), and page.html.tmpl arranges the page.
// The measurements are indexed by dataset, judged by claims, drawn by
// figures and tabulated by tables; this package runs them and owns the page,
// the cell table and a tuning folder's gap table. It only reads
// results.jsonl, run.json and build.csv; it writes figures/, claims.md,
// tables.md and report.html next to them.
package report
