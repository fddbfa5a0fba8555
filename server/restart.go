package server

import (
	"context"
	"errors"
)

// Restart stops the server, as Close does, if it is running, then starts
// it again on the same address (Addr), as miniredis's Restart does after
// Close. The data stays: an in-memory server keeps its DBs as they are; a
// durable one (Options.Dir) closes its DBs, which writes and syncs their
// logs, and opens them again from disk, as a server process started anew
// on the directory would, so a test sees what a real restart keeps. The
// clock (SetTime, FastForward) and the failures injected (SetError,
// FailNext, FailCommand) stay as they were.
//
// The clients' connections are closed (blocked reads reply as if their
// timeout had passed); a client that reconnects, as go-redis does on its
// next command, finds the data again. Restart blocks until the server
// listens again; it fails if it was never started, if closing the durable
// DBs fails (the server then stays closed), or as Start fails (the address
// taken meanwhile, a DB that cannot be opened), leaving it closed. Safe
// for concurrent use; Start, Shutdown, Close and Restart wait for one
// another.
func (s *Server) Restart() error {
	s.life.Lock()
	defer s.life.Unlock()
	addr := s.Addr()
	if addr == "" {
		return errors.New("xstream server: Restart of a server never started")
	}
	if err := s.closeLocked(); err != nil {
		return err
	}
	s.mu.Lock()
	s.closing, s.ln = false, nil
	s.mu.Unlock()
	s.closeErr, s.loaded = nil, 0
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s.startLocked(addr)
}
