//go:build !linux

package xredis_test

import "os/exec"

// dieWithTest does nothing here: only Linux can tie a child's life to
// its parent's (see childproc_linux_test.go).
func dieWithTest(*exec.Cmd) {}
