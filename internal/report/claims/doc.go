// Package claims judges the papers' claims (reportspec.Claim) against the
// measurements of a results folder (dataset.Set): the ratios of GB/s of
// numerator and denominator series, their 95% bootstrap intervals, the
// aggregate and the verdict; as published and tuned (each side at its best
// configuration); and claims.md, which shows them.
package claims
