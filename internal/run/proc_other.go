//go:build !linux

package run

import (
	"context"
	"os/exec"
	"syscall"
	"time"
)

const groupWaitDelay = 2 * time.Second

func childAttr() *syscall.SysProcAttr { return nil }

func killedFromOutside(error) bool { return false }

// program is a measured program's command, stopped when ctx ends.
func program(ctx context.Context, bin string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.WaitDelay = groupWaitDelay
	return cmd
}
