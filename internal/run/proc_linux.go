package run

import (
	"errors"
	"os/exec"
	"syscall"
)

// ownGroup puts a measured program in a process group of its own and makes
// it die with the runner (a SIGKILL of the runner leaves no program timing
// on the device): a signal to the runner's group (Ctrl-C, or timeout(1),
// which signals its whole group) reaches the runner alone, which then stops
// the program as an interruption instead of the program dying of the signal
// first and being recorded as a crash. Stopping the program (its time-out,
// an interruption) kills that whole group, so that a child it started (a
// shell script's sleep, an MPI launcher's ranks) does not hold its output
// open and the run waiting.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// killedFromOutside reports whether the program died of a signal only ever
// sent from outside (SIGTERM, SIGINT, SIGHUP). Slurm's scancel sends it to
// every process of the job, the program as well as the runner, so the program
// can die of it before the runner's own handler has cancelled the run.
func killedFromOutside(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	if !ok || !ws.Signaled() {
		return false
	}
	switch ws.Signal() {
	case syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP:
		return true
	}
	return false
}
