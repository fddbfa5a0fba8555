package kredis_test

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes a redis-server the tests start get SIGKILL when the
// test process dies, so that a killed test binary leaves none behind.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
