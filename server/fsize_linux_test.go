package server

import (
	"os/signal"
	"syscall"
)

// limitFileSize makes writes past n bytes of any file of this process
// fail with EFBIG ("file too large"), as a full disk makes them fail.
func limitFileSize(n int64) error {
	signal.Ignore(syscall.SIGXFSZ) // the write fails instead of killing the process
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		return err
	}
	lim.Cur = uint64(n)
	return syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim)
}

// limitOpenFiles lowers this process's soft limit on open files to n.
func limitOpenFiles(n uint64) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return err
	}
	lim.Cur = n
	return syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim)
}
