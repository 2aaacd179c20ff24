package run

import (
	"context"
	"os/exec"
	"time"
)

// groupWaitDelay bounds how long a stopped program's output may stay open
// after it was killed.
const groupWaitDelay = 2 * time.Second

// program is a measured program's command, in a process group of its own
// where the system has them (ownGroup), stopped when ctx ends.
func program(ctx context.Context, bin string, args ...string) *exec.Cmd {
	cmd := exec.CommandContext(ctx, bin, args...)
	ownGroup(cmd)
	cmd.WaitDelay = groupWaitDelay
	return cmd
}
