package xstream

import (
	"sync/atomic"
	"time"
)

// Wall clock for auto IDs.
//
// time.Now reads two clocks, the wall clock and the monotonic one. An
// auto ID needs the wall time only, and Add is hot, so the default clock
// takes a time.Now reading every wallResync and in between adds the
// monotonic time elapsed since that reading (time.Since reads one clock,
// at about half the cost). The result is time.Now().UnixMilli() except
// for a short while after the system clock is stepped: a step is seen
// within wallResync. Auto IDs stay increasing whatever the clock does.

const wallResync = 10 * time.Millisecond

// wallBase is a time.Now reading; it is never changed once published.
type wallBase struct {
	t        time.Time // with its monotonic reading
	unixNano int64
}

var wallLast atomic.Pointer[wallBase]

// idMs returns the time in milliseconds for an auto ID: from the injected
// clock when there is one, else the wall time (see wallResync). A time
// before 1970 counts as 0. It is safe for concurrent use and does not
// block.
//
// The wall clock's common case, a reading within wallResync of the
// last time.Now one, is written out here rather than in a function of its
// own: Add calls idMs for every auto ID, and this is one call less.
func (c *config) idMs() uint64 {
	if c.wallClock {
		if b := wallLast.Load(); b != nil {
			if d := time.Since(b.t); d >= 0 && d < wallResync {
				if ns := b.unixNano + int64(d); ns > 0 {
					return uint64(ns) / uint64(time.Millisecond) // unsigned: fewer instructions
				}
				return 0
			}
		}
		return uint64(max(wallResyncMilli(), 0))
	}
	return uint64(max(c.clock().UnixMilli(), 0))
}

// wallResyncMilli takes a time.Now reading, publishes it as the base of
// the readings to come and returns it in Unix milliseconds.
func wallResyncMilli() int64 {
	t := time.Now()
	wallLast.Store(&wallBase{t: t, unixNano: t.UnixNano()})
	return t.UnixMilli()
}
