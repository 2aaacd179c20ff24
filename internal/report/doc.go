// Package report turns a results folder (see docs/results-format.md) into
// figures, a claims table and one self-contained HTML page, and compares two
// runs.
//
// What is drawn and what is checked is data: templates/report/figures.yaml
// lists the figures, templates/report/claims.yaml the papers' headline
// claims, and templates/report/page.html.tmpl arranges the page. The package
// only reads results.jsonl, results.csv, run.json and build.csv; it writes
// figures/, claims.md and report.html next to them.
package report
