//go:build !linux

package run

import "syscall"

func childAttr() *syscall.SysProcAttr { return nil }

func killedFromOutside(error) bool { return false }
