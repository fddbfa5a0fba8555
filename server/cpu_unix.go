//go:build unix

package server

import (
	"syscall"
	"time"
)

// cpuTimes returns the CPU time the process spent in the kernel and in
// user space.
func cpuTimes() (sys, user time.Duration) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0
	}
	return time.Duration(ru.Stime.Nano()), time.Duration(ru.Utime.Nano())
}
