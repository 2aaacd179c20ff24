package run

import "syscall"

// childAttr makes a measured program die with the runner: a SIGKILL of the
// runner leaves no program timing on the device.
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
