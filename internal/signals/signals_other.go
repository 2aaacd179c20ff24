//go:build !linux

package signals

// DieWithParent does nothing where the kernel offers no parent-death signal.
func DieWithParent() {}

func children(pid int) []int { return nil }
