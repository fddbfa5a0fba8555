package xstream

import (
	"sync"
	"sync/atomic"
)

// The gate of a DB: what every call on its streams and sharded streams
// looks at first. After Close every call fails with ErrClosed and every
// blocked call returns it; while the log of a durable DB cannot be
// written, every call that would change the DB fails with the log's error
// (ErrLogFailed) before it changes anything, as Redis refuses writes with
// MISCONF. The journal (journal.go) sets and clears the failing state; a
// Stream made by NewStream and a ShardedStream made by NewShardedStream
// have no gate.

const (
	gateClosed  = 1 << iota // Close began
	gateFailing             // the log fails: changes are refused
)

// gate is shared by every object of one DB. Its state sits apart from the
// journal's lock, which every commit writes: the calls that read it on
// their hot path do not share that cache line.
type gate struct {
	state atomic.Uint32
	j     *journal // nil in memory

	closeOnce sync.Once
	done      chan struct{} // closed by Close: ends every wait
}

func newGate() *gate { return &gate{done: make(chan struct{})} }

// write returns nil when a call may change the DB, else ErrClosed or the
// log's error. A nil gate always lets the call through. O(1): one atomic
// load when the DB is open and its log works.
func (g *gate) write() error {
	if g == nil {
		return nil
	}
	if st := g.state.Load(); st != 0 {
		return g.refused(st)
	}
	return nil
}

// read returns ErrClosed once the DB is closed, else nil.
func (g *gate) read() error {
	if g == nil || g.state.Load()&gateClosed == 0 {
		return nil
	}
	return errClosed()
}

func (g *gate) refused(st uint32) error {
	if st&gateClosed != 0 {
		return errClosed()
	}
	if g.j != nil {
		if err := g.j.failed(); err != nil {
			return err
		}
	}
	return nil // the log recovered meanwhile
}

func errClosed() error { return errorf(ErrClosed, "the DB is closed") }

// setFailing records whether the log fails. The journal calls it under
// its lock.
func (g *gate) setFailing(on bool) {
	if g == nil {
		return
	}
	if on {
		g.state.Or(gateFailing)
	} else {
		g.state.And(^uint32(gateFailing))
	}
}

// close makes every later call fail with ErrClosed and ends every wait.
// It reports whether it was the first close.
func (g *gate) close() bool {
	first := false
	g.closeOnce.Do(func() {
		g.state.Or(gateClosed)
		close(g.done)
		first = true
	})
	return first
}

// closing returns the channel that Close closes (nil for no gate: a wait
// on it never ends).
func (g *gate) closing() <-chan struct{} {
	if g == nil {
		return nil
	}
	return g.done
}
