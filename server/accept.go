package server

import (
	"errors"
	"net"
	"syscall"
	"time"
)

// Bounds of the wait between failed accepts (see acceptLoop).
const (
	acceptDelayMin = 5 * time.Millisecond
	acceptDelayMax = time.Second
)

// acceptBackoff returns the wait after a failed accept, the wait after the
// one before having been prev (0 after an accept that succeeded): 5 ms,
// then twice as long each time, up to 1 s.
func acceptBackoff(prev time.Duration) time.Duration {
	if prev == 0 {
		return acceptDelayMin
	}
	return min(2*prev, acceptDelayMax)
}

// temporaryAcceptError reports whether an error of Accept may go away by
// itself: a lack of file descriptors (EMFILE for the process, ENFILE for
// the system) or of kernel memory, a connection reset or aborted before it
// was accepted, an interrupted call, a timeout.
func temporaryAcceptError(err error) bool {
	for _, e := range []syscall.Errno{syscall.EMFILE, syscall.ENFILE, syscall.ENOBUFS, syscall.ENOMEM,
		syscall.ECONNABORTED, syscall.ECONNRESET, syscall.EINTR, syscall.EAGAIN} {
		if errors.Is(err, e) {
			return true
		}
	}
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// fdReserve is how many file descriptors MaxClients leaves to the server
// beyond those open when it starts (its listener and, with Dir, its logs),
// Redis's CONFIG_MIN_RESERVED_FDS: for snapshots and the like.
const fdReserve = 32

// fitMaxClients lowers MaxClients to the limit on open files minus the
// files open now (on Linux) and fdReserve, as Redis does at start, and
// logs it: a server that accepted more clients than it has descriptors
// for would fail in Accept instead and leave them waiting.
func (s *Server) fitMaxClients() {
	limit, ok := openFileLimit()
	if !ok {
		return
	}
	open, _ := openFiles()
	s.fitMaxClientsTo(limit, open)
}

// fitMaxClientsTo is fitMaxClients for a limit on open files and a
// number of files open.
func (s *Server) fitMaxClientsTo(limit uint64, open int) {
	fit := max(int(min(limit, 1<<30))-open-fdReserve, 1)
	if s.opts.MaxClients <= fit {
		return
	}
	s.opts.Logger.Warn("xstream server: MaxClients lowered to fit the limit on open files (RLIMIT_NOFILE)",
		"max_clients", fit, "asked", s.opts.MaxClients, "rlimit_nofile", limit, "open_files", open, "reserve", fdReserve)
	s.opts.MaxClients = fit
}

// logRefused logs the clients refused because MaxClients were connected,
// at most once a second, with how many were refused since the last
// record.
func (s *Server) logRefused() {
	n := s.refused.Add(1)
	now := time.Now().UnixMilli()
	last := s.refusedLogged.Load()
	if now-last < 1000 || !s.refusedLogged.CompareAndSwap(last, now) {
		return
	}
	s.refused.Add(-n)
	opts, _, _ := s.settings()
	s.opts.Logger.Warn("xstream server: clients refused, MaxClients are connected", "refused", n, "max_clients", opts.MaxClients)
}
