// Package reportspec reads what the report draws, judges and tabulates:
// templates/report/claims.yaml (the papers' claims), figures.yaml (the
// figures) and tables.yaml (the tables of tables.md), one parser each. Every
// problem of a file is reported at once, positioned (internal/diag), and
// every name is checked against the project's vocabulary.
package reportspec
