//go:build !linux

package run

import "os/exec"

func ownGroup(*exec.Cmd) {}

func killedFromOutside(error) bool { return false }
