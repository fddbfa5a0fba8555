//go:build linux && !race

package server

import (
	"syscall"
	"unsafe"
)

// rawRead is read(2) on a non-blocking descriptor, as a raw system call
// (see loop_sys_linux.go). It returns -1 with the error, as syscall.Read.
func rawRead(fd int, p []byte) (int, error) { return rawIO(syscall.SYS_READ, fd, p) }

// rawWrite is write(2) on a non-blocking descriptor, as a raw system
// call. It returns -1 with the error, as syscall.Write.
func rawWrite(fd int, p []byte) (int, error) { return rawIO(syscall.SYS_WRITE, fd, p) }

func rawIO(trap uintptr, fd int, p []byte) (int, error) {
	var b unsafe.Pointer
	if len(p) > 0 {
		b = unsafe.Pointer(&p[0])
	}
	r, _, e := syscall.RawSyscall(trap, uintptr(fd), uintptr(b), uintptr(len(p)))
	if e != 0 {
		return -1, e
	}
	return int(r), nil
}
