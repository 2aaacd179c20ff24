//go:build race

package depend

// The race detector slows the random programs about tenfold: fewer of them.
const raceEnabled = true
