// Package planted holds the planted-variant corpus (planted_test.go): the
// generated sources of the CPU backends and of the OpenMP-target host
// fallback, each mutated into known-wrong variants (off-by-one, missing
// reduction clause, wrong accumulator start, skipped elements, dropped
// vector tail, overrun, wrong league stride, output not written after the
// first call, result scaled by 1+1e-9), built with g++ and run through the
// harness, which must refuse every one of them with the right error while
// the unmutated sources verify.
package planted
