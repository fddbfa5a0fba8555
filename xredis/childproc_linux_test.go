package xredis_test

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes the child cmd starts get SIGKILL when the test
// process dies, so that a test binary killed by -timeout or a signal,
// whose cleanups do not run, leaves no redis-server behind.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
