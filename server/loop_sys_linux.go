//go:build linux

package server

import (
	"syscall"
	"unsafe"
)

// The system calls of an event loop's goroutine.
//
// A loop's reads and writes are on non-blocking sockets and never wait,
// so they are made as raw system calls (loop_rawio_linux.go), without the
// runtime's bookkeeping of a call that may block (entersyscall,
// exitsyscall), and without the runtime's monitor (sysmon) seeing the
// goroutine in a system call. Only the wait for events (epoll_wait with
// no timeout) goes through the runtime as a blocking call, so that the
// runtime can run other goroutines on the processor meanwhile. Under the
// race detector the reads and writes are the syscall package's
// (loop_rawio_race_linux.go).

// pollEvents is epoll_wait(2) with a zero timeout: the events ready now,
// without waiting.
func pollEvents(epfd int, events []syscall.EpollEvent) (int, error) {
	r, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&events[0])), uintptr(len(events)), 0, 0, 0)
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}
