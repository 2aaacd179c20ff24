// Package signals stops the pipeline cleanly however it is started: the
// CLI, the compiled magefile, and mage.go under `go run`.
//
// `go run` itself ignores SIGINT (it expects the terminal to send it to the
// whole process group, as Ctrl-C does) and dies on SIGTERM without passing
// it on. So mage.go asks the kernel for a SIGTERM when its parent dies, and
// passes SIGINT and SIGTERM on to its children (the compiled magefile) as
// SIGTERM; the stages take SIGTERM like SIGINT: the context is cancelled,
// the program being measured is stopped, and run.json says "interrupted".
// SIGINT sent to the go command alone (not to its process group, as a
// terminal's Ctrl-C sends it) is swallowed by go run and seen by no process
// below it: nothing can pass it on; SIGTERM can be sent instead.
package signals

import (
	"context"
	"os"
	"os/signal"
	"syscall"
)

// Context is ctx cancelled by SIGINT or SIGTERM; the process also receives
// SIGTERM when its parent dies (Linux).
func Context(ctx context.Context) (context.Context, context.CancelFunc) {
	DieWithParent()
	return signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
}

// Forward passes SIGINT and SIGTERM received by this process on to its
// children as SIGTERM, for as long as the process lives (mage.go: mage
// runs the compiled magefile as a child and does not pass signals on).
func Forward() {
	DieWithParent()
	ch := make(chan os.Signal, 4)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		for range ch {
			for _, pid := range children(os.Getpid()) {
				syscall.Kill(pid, syscall.SIGTERM)
			}
		}
	}()
}
