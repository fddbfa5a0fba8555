package server

import (
	"errors"
	"fmt"
	"runtime/debug"
	"time"
)

// The memory of the clients' buffers. Each connection's input buffer
// grows to what its largest request needs (fill) and is dropped after a
// request of more than 256 KiB; replies past bigReply are written out
// rather than built whole (bigreply.go). Server.clientMem counts the
// bytes of the input buffers and of the reply pieces held, for all the
// clients together, against MaxClientsMemory.
//
// Once a connection dropped a buffer of freeOSBytes or more, the server's
// memory goroutine returns the freed memory to the OS at once
// (debug.FreeOSMemory: a collection, then the scavenger), at most once per
// freeOSEvery, rather than keeping it until the next collection and the
// background scavenger, which on an idle server can be minutes.

const (
	freeOSBytes = 32 << 20
	freeOSEvery = time.Second
)

// errClientsMemory is the error of a request that would take the clients'
// buffers past MaxClientsMemory.
var errClientsMemory = errors.New("clients' buffers over the limit")

// clientsMemoryMsg is the error reply of errClientsMemory.
func (s *Server) clientsMemoryMsg() string {
	return fmt.Sprintf("the buffers of all clients together would pass the limit of %d bytes (MaxClientsMemory)", s.opts.MaxClientsMemory)
}

// logClientsMemory logs that c is closed because its request or reply
// (what) would pass MaxClientsMemory.
func (s *Server) logClientsMemory(c *conn, what string) {
	s.opts.Logger.Warn("xstream server: client closed, its "+what+" would pass MaxClientsMemory",
		"client_id", c.clientID, "max_clients_memory", s.opts.MaxClientsMemory, "clients_memory", s.clientMem.Load())
}

// reserveClientMem counts n more bytes of buffers, or reports false,
// counting nothing, if that passes MaxClientsMemory.
func (s *Server) reserveClientMem(n int) bool {
	if s.clientMem.Add(int64(n)) > int64(s.opts.MaxClientsMemory) {
		s.clientMem.Add(-int64(n))
		return false
	}
	return true
}

// noteFreed tells the memory goroutine that a buffer of n bytes was
// dropped. It never waits.
func (s *Server) noteFreed(n int) {
	if n < freeOSBytes {
		return
	}
	select {
	case s.freed <- struct{}{}:
	default:
	}
}

// memoryLoop is the memory goroutine: it returns freed memory to the OS
// when told, at most once per freeOSEvery, until the server shuts down.
func (s *Server) memoryLoop() {
	defer s.wg.Done()
	for {
		select {
		case <-s.ctx.Done():
			return
		case <-s.freed:
		}
		debug.FreeOSMemory()
		t := time.NewTimer(freeOSEvery)
		select {
		case <-s.ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}
