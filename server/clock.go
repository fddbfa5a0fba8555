package server

import (
	"sync/atomic"
	"time"
)

// The server's clock, which tests move with SetTime and FastForward.
//
// Every time the streams use comes from Server.now: auto IDs (XADD *),
// idle times (XPENDING, XINFO CONSUMERS, XCLAIM and XAUTOCLAIM
// min-idle-time), the seen and active times of XINFO CONSUMERS, and the
// retention of sharded streams made through Server.DB, the expiry of keys
// and the LRU clock of OBJECT IDLETIME (idle.go). The DBs take
// Server.now as their clock (xstream.WithClock), so moving it moves them
// all at once, with nothing for the test to build. LASTSAVE, INFO's
// uptime and the timeouts of blocked reads stay on the wall clock: they
// measure the server itself, not the data.

// clockState is a setting of the clock; it is never changed once
// published.
type clockState struct {
	fixed  bool      // SetTime was called: the time is at, plus offset
	at     time.Time // the time SetTime gave
	offset time.Duration
}

// clock holds the clock's setting; nil is the base clock unmoved.
type clock struct{ st atomic.Pointer[clockState] }

// SetTime stops the server's clock at t: from now on every time the
// streams use (auto IDs, idle times, seen and active times, retention) is
// t, until the next SetTime, or t plus what FastForward adds. As with
// miniredis's SetTime, the clock then stands still; moving it back is
// allowed (auto IDs stay increasing, idle times do not go below 0). It
// replaces the clock of Options.Clock. Safe for concurrent use, O(1).
func (s *Server) SetTime(t time.Time) {
	s.clock.st.Store(&clockState{fixed: true, at: t})
	s.tickLRU()
}

// FastForward moves the server's clock d forward (back for a negative
// d): the time SetTime set, or else the base clock (Options.Clock or the
// wall clock, which goes on running) plus every d given so far. Unlike
// miniredis's FastForward, which ages only key TTLs, it moves every time
// the streams use: a pending entry delivered before FastForward(time.Hour)
// is an hour idler after it, for XPENDING, XINFO CONSUMERS, XCLAIM and
// XAUTOCLAIM alike, and XADD * gives IDs an hour later. Safe for
// concurrent use, O(1).
func (s *Server) FastForward(d time.Duration) {
	for {
		old := s.clock.st.Load()
		next := &clockState{offset: d}
		if old != nil {
			next.fixed, next.at, next.offset = old.fixed, old.at, old.offset+d
		}
		if s.clock.st.CompareAndSwap(old, next) {
			s.tickLRU()
			return
		}
	}
}

// now returns the time of the streams: the clock of SetTime and
// FastForward, else Options.Clock, else the wall clock. It is the DBs'
// clock. Safe for concurrent use, O(1).
func (s *Server) now() time.Time {
	st := s.clock.st.Load()
	if st != nil && st.fixed {
		return st.at.Add(st.offset)
	}
	var t time.Time
	if s.opts.Clock != nil {
		t = s.opts.Clock()
	} else {
		t = time.Now()
	}
	if st != nil {
		t = t.Add(st.offset)
	}
	return t
}
