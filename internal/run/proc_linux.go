package run

import (
	"context"
	"errors"
	"os/exec"
	"syscall"
	"time"
)

// childAttr makes a measured program die with the runner (a SIGKILL of the
// runner leaves no program timing on the device) and puts it in a process
// group of its own, so that a signal to the runner's group (Ctrl-C, or
// timeout(1), which signals its whole group) reaches the runner alone: the
// runner then stops the program as an interruption, instead of the program
// dying of the signal first and being recorded as a crash.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
}

// groupWaitDelay bounds how long a stopped program's output may stay open
// after its group was killed.
const groupWaitDelay = 2 * time.Second

// program is a measured program's command: in its own process group
// (childAttr), and stopped with that whole group when ctx ends (its time-out,
// an interruption), so that a child it started (a shell script's sleep, an
// MPI launcher's ranks) does not hold its output open and the run waiting.
func program(ctx context.Context, bin string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.SysProcAttr = childAttr()
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = groupWaitDelay
	return cmd
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
