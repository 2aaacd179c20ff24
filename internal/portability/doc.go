// Package portability computes the field's performance-portability measures
// from a results folder: application and architectural efficiency per
// variant, problem and platform; Pennycook, Sewall and Lee's PP metric over
// a named platform set, per variant and per strategy; Harrell and Kitson's
// code divergence of a strategy's generated programs; the data of cascade
// plots and navigation charts (Sewall et al.); and a CSV in the P3 Analysis
// Library's layout. See docs/portability.md.
//
// A platform is a (device, toolchain) pair (Platform.Name); a problem is a
// kernel at one size; an application is a variant, or a strategy taking its
// best variant on each platform.
package portability
