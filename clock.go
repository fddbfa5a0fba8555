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

// wallUnixMilli returns the wall time in Unix milliseconds. It is safe
// for concurrent use and does not block.
func wallUnixMilli() int64 {
	if b := wallLast.Load(); b != nil {
		if d := time.Since(b.t); d >= 0 && d < wallResync {
			return (b.unixNano + int64(d)) / int64(time.Millisecond)
		}
	}
	t := time.Now()
	wallLast.Store(&wallBase{t: t, unixNano: t.UnixNano()})
	return t.UnixMilli()
}

// idMs returns the time in milliseconds for an auto ID: from the injected
// clock when there is one, else from wallUnixMilli. A time before 1970
// counts as 0.
func (c *config) idMs() uint64 {
	var ms int64
	if c.wallClock {
		ms = wallUnixMilli()
	} else {
		ms = c.clock().UnixMilli()
	}
	return uint64(max(ms, 0))
}
