package run

import "syscall"

// childAttr makes a measured program die with the runner (a SIGKILL of the
// runner leaves no program timing on the device) and puts it in a process
// group of its own, so that a signal to the runner's group (Ctrl-C, or
// timeout(1), which signals its whole group) reaches the runner alone: the
// runner then stops the program as an interruption, instead of the program
// dying of the signal first and being recorded as a crash.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}
