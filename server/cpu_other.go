//go:build !unix

package server

import "time"

// cpuTimes is not measured here.
func cpuTimes() (sys, user time.Duration) { return 0, 0 }
