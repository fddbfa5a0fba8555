package xstream

import (
	"context"
	"slices"
	"sync/atomic"
	"time"
)

// Waiting: the machinery of blocking calls. A blocked Read registers a
// waiter on every stream it reads (and on a missing name's list in a DB);
// a blocked ReadGroup ">" registers a groupWaiter that a writer serves
// directly under the stream's lock; a ShardReader registers one waiter on
// its shards and on the sharded stream's reshard list. No lock is held
// while a call waits, and a waiter is removed by the call that made it.

// Blocked returns the number of calls waiting on the stream: Read (and
// DB.Read) and ReadGroup calls blocked until an entry arrives. A call is
// counted from the moment an Add would wake it. It serves monitoring (Redis
// reports blocked_clients) and tests that must know a reader waits before
// they add. O(1).
func (s *Stream) Blocked() int {
	s.mu.RLock()
	defer s.runlock()
	return len(s.waiters.ws) + len(s.gwaiters)
}

// waiter is a blocked reader. Writers wake it with a non-blocking send;
// it then looks again. A waiter may be registered on several streams.
// Closing the DB of g ends its wait.
type waiter struct {
	ch     chan struct{}
	closed <-chan struct{}
}

func newWaiter(g *gate) *waiter { return &waiter{ch: make(chan struct{}, 1), closed: g.closing()} }

func (w *waiter) notify() {
	select {
	case w.ch <- struct{}{}:
	default:
	}
}

// waitList holds the waiters of one stream (or one missing name) in
// arrival order.
type waitList struct {
	ws []*waiter
}

func (l *waitList) add(w *waiter) { l.ws = append(l.ws, w) }

func (l *waitList) remove(w *waiter) {
	if i := slices.Index(l.ws, w); i >= 0 {
		l.ws = slices.Delete(l.ws, i, i+1)
	}
}

// wake notifies every waiter, first come first, and empties the list.
func (l *waitList) wake() {
	if len(l.ws) == 0 {
		return
	}
	for _, w := range l.ws {
		w.notify()
	}
	clear(l.ws)
	l.ws = l.ws[:0]
}

// wait blocks until w is notified, ctx is done, timer fires or the DB is
// closed (ErrClosed). It reports whether the caller should look again.
func (w *waiter) wait(ctx context.Context, timeout <-chan time.Time) (bool, error) {
	select {
	case <-w.closed:
		return false, errClosed()
	case <-w.ch:
		// An Add after ctx ended does not count: the call ends with
		// ctx's error, as if the Add had come later still.
		if err := ctx.Err(); err != nil {
			return false, err
		}
		return true, nil
	case <-ctx.Done():
		return false, ctx.Err()
	case <-timeout:
		return false, nil
	}
}

// newTimeout returns the channel that ends a wait of d (nil: no timeout)
// and a function to release its timer.
func newTimeout(d time.Duration) (<-chan time.Time, func()) {
	if d <= 0 {
		return nil, func() {}
	}
	t := time.NewTimer(d)
	return t.C, func() { t.Stop() }
}

// Blocked group readers.

const (
	waiting int32 = iota
	served
	gone
)

// groupWaiter is a ReadGroup ">" call waiting for entries. Whoever moves
// its state from waiting to served (an Add or SetGroupID serving it,
// DestroyGroup failing it, or the call itself when it finds data while
// registering on several streams) fills in the result and then signals ch.
// When the caller gives up first it moves the state to gone. A writer does
// not serve a waiter whose context has ended (done is closed), even before
// the caller woke to move it to gone: an entry added after a cancel is not
// delivered to the cancelled call.
type groupWaiter struct {
	state    atomic.Int32
	ch       chan struct{}
	done     <-chan struct{} // the call's ctx.Done()
	consumer string
	count    int
	noack    bool

	stream  int // index of the stream that served it
	entries []Entry
	err     error

	closed <-chan struct{} // closed by the DB's Close: the call gives up
}

func newGroupWaiter(ctx context.Context, g *gate, consumer string, args ReadGroupArgs) *groupWaiter {
	return &groupWaiter{ch: make(chan struct{}, 1), done: ctx.Done(), closed: g.closing(), consumer: consumer, count: args.Count, noack: args.NoAck}
}

// take moves w from waiting to served for a writer, and reports whether
// it did: not when the call gave up or was served, nor when its context
// has ended.
func (w *groupWaiter) take() bool {
	select {
	case <-w.done:
		return false
	default:
	}
	return w.state.CompareAndSwap(waiting, served)
}

// groupWait registers a waiter on one stream for one group.
type groupWait struct {
	w   *groupWaiter
	g   *group
	idx int // position of the stream in the call
}

// serveLocked delivers to a waiter that the caller moved to served.
func (s *Stream) serveLocked(gw groupWait, now int64) {
	c, _ := s.consumerLocked(gw.g, gw.w.consumer)
	s.seeConsumerLocked(gw.g, c, now)
	gw.w.entries = s.readNewLocked(gw.g, c, gw.w.count, gw.w.noack, now)
	gw.w.stream = gw.idx
	gw.w.ch <- struct{}{}
}

// serveGroupWaitersLocked serves blocked readers in arrival order, each as
// far as its group has entries to deliver. Add and SetGroupID call it. Without blocked readers it costs nothing.
func (s *Stream) serveGroupWaitersLocked() {
	if len(s.gwaiters) == 0 {
		return
	}
	now := int64(-1)
	kept := s.gwaiters[:0]
	for _, gw := range s.gwaiters {
		if gw.w.state.Load() != waiting {
			continue
		}
		if !s.hasNewLocked(gw.g) {
			kept = append(kept, gw)
			continue
		}
		if !gw.w.take() {
			continue
		}
		if now < 0 {
			now = s.nowMs()
		}
		s.serveLocked(gw, now)
	}
	clear(s.gwaiters[len(kept):])
	s.gwaiters = kept
}

// failGroupWaitersLocked ends the waits of readers of g (every group when
// g is nil) with err.
func (s *Stream) failGroupWaitersLocked(g *group, err error) {
	kept := s.gwaiters[:0]
	for _, gw := range s.gwaiters {
		if g != nil && gw.g != g {
			kept = append(kept, gw)
			continue
		}
		if gw.w.take() {
			gw.w.err = err
			gw.w.stream = gw.idx
			gw.w.ch <- struct{}{}
		}
	}
	clear(s.gwaiters[len(kept):])
	s.gwaiters = kept
}

func (s *Stream) removeGroupWaiter(w *groupWaiter) {
	s.mu.Lock()
	defer s.unlock()
	kept := s.gwaiters[:0]
	for _, gw := range s.gwaiters {
		if gw.w != w {
			kept = append(kept, gw)
		}
	}
	clear(s.gwaiters[len(kept):])
	s.gwaiters = kept
}

// await waits until w is served, ctx is done, block passes or the DB is
// closed, then takes w off the streams it was registered on. It returns
// ctx.Err() when the context ended the wait before w was served, and
// ErrClosed when Close did; the result of a served w is in w.entries and
// w.err.
func (w *groupWaiter) await(ctx context.Context, block time.Duration, streams []*Stream) error {
	timeout, stop := newTimeout(block)
	defer stop()
	var err error
	received := false
	select {
	case <-w.ch:
		received = true
	case <-ctx.Done():
		err = ctx.Err()
	case <-w.closed:
		err = errClosed()
	case <-timeout:
	}
	if !received && !w.state.CompareAndSwap(waiting, gone) {
		<-w.ch // served meanwhile: its result counts
		received = true
	}
	for _, s := range streams {
		if s != nil {
			s.removeGroupWaiter(w)
		}
	}
	if received {
		return nil
	}
	return err
}

// readLoop runs pass until it returns records or an error, or once when
// block is 0. When pass finds nothing and w is not nil, it registers w and
// returns the streams it registered w with and true; false means a record
// came in meanwhile and pass runs again. readLoop waits with no lock held
// and leaves no goroutine behind.
func (ss *ShardedStream) readLoop(ctx context.Context, block time.Duration,
	pass func(w *waiter, streams []*Stream) ([]Record, []*Stream, bool, error)) ([]Record, error) {
	var (
		w       *waiter
		timeout <-chan time.Time
		streams []*Stream
	)
	stop := func() {}
	if block != 0 {
		w = newWaiter(ss.cfg.gate)
		timeout, stop = newTimeout(block)
	}
	defer stop()
	for {
		ss.expireNow()
		recs, regs, waiting, err := pass(w, streams[:0])
		streams = regs
		if err != nil {
			return nil, err
		}
		if len(recs) > 0 || w == nil {
			return recs, nil
		}
		if !waiting {
			continue
		}
		again, err := w.wait(ctx, timeout)
		ss.unregisterWaiter(w, streams)
		if !again {
			return nil, err
		}
	}
}

// registerLocked registers w with the streams of shards and with the
// stream's reshard waiters. fresh, called under a shard's stream lock,
// says whether the shard has something to read: then registerLocked
// registers nothing and reports false. The caller holds ss.mu.
func (ss *ShardedStream) registerLocked(w *waiter, shards []*shard, fresh func(*shard) bool, streams []*Stream) ([]*Stream, bool) {
	for _, sh := range shards {
		s := sh.s
		s.mu.Lock()
		f := fresh(sh)
		if !f {
			s.waiters.add(w)
		}
		s.unlock()
		if f {
			ss.unregisterWaiter(w, streams)
			return streams[:0], false
		}
		streams = append(streams, s)
	}
	ss.waitMu.Lock()
	ss.waiters.add(w)
	ss.waitMu.Unlock()
	return streams, true
}

// unregisterWaiter removes w from the waiters of the streams and of the
// sharded stream.
func (ss *ShardedStream) unregisterWaiter(w *waiter, streams []*Stream) {
	for _, s := range streams {
		s.mu.Lock()
		s.waiters.remove(w)
		s.unlock()
	}
	ss.waitMu.Lock()
	ss.waiters.remove(w)
	ss.waitMu.Unlock()
	select { // drop a wake-up that came after the last look
	case <-w.ch:
	default:
	}
}
