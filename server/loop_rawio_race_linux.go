//go:build linux && race

package server

import "syscall"

// Under the race detector the loop's reads and writes go through the
// syscall package, whose Read and Write tell the detector that a write to
// a descriptor happens before a read that follows it (a client's request
// and the server's read of it, a reply and the client's read): with raw
// system calls the detector would report, as races, accesses that the
// socket orders.

// rawRead is syscall.Read.
func rawRead(fd int, p []byte) (int, error) { return syscall.Read(fd, p) }

// rawWrite is syscall.Write.
func rawWrite(fd int, p []byte) (int, error) { return syscall.Write(fd, p) }
