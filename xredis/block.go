package xredis

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/redis/rueidis"
)

// Blocking reads. Each blocking command runs on a connection of its own
// (rueidis keeps a pool of them for blocking commands) with a BLOCK of at
// most one slice, in a loop that ends when the command returns entries,
// the read's deadline passes or the read is stopped: by its context, or
// because another command of the same read got entries first.

// blockCmd is one blocking command of a read: build makes it with a BLOCK
// of ms milliseconds; key is one of its keys (it routes CLIENT UNBLOCK to
// the command's node).
type blockCmd struct {
	key   string
	build func(ms int64) rueidis.Completed
}

// unblockGrace bounds how long a stopped command may take to end once it
// was asked to (by CLIENT UNBLOCK); after that its connection is closed.
const unblockGrace = time.Second

func isCtxErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}

// block runs cmds at once until one returns a reply that is not nil, an
// error, ctx is done or deadline (zero: none) passes, then stops the
// others. It returns each command's reply (nil for none) and the error
// that ended the wait: ctx.Err(), or a command's error. exact (for
// XREADGROUP, whose replies change the group) stops a command with CLIENT
// UNBLOCK and reads its reply, so that a reply that was on its way is not
// lost; otherwise (XREAD) a stopped command is simply cancelled.
func (b *base) block(ctx context.Context, cmds []blockCmd, deadline time.Time, exact bool) ([]*rueidis.RedisMessage, error) {
	if exact {
		return b.blockExact(ctx, cmds, deadline)
	}
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type res struct {
		k   int
		m   *rueidis.RedisMessage
		err error
	}
	ch := make(chan res, len(cmds))
	for k := range cmds {
		go func() {
			for {
				ms, ok := b.blockMs(deadline)
				if !ok {
					ch <- res{k: k}
					return
				}
				m, err := b.c.Do(gctx, cmds[k].build(ms)).ToMessage()
				switch {
				case err == nil:
					ch <- res{k, &m, nil}
					return
				case !rueidis.IsRedisNil(err):
					ch <- res{k, nil, err}
					return
				case gctx.Err() != nil:
					ch <- res{k, nil, gctx.Err()}
					return
				}
			}
		}()
	}
	out := make([]*rueidis.RedisMessage, len(cmds))
	var firstErr error
	data := false
	for range cmds {
		r := <-ch
		switch {
		case r.m != nil:
			out[r.k], data = r.m, true
			cancel()
		case r.err != nil && !isCtxErr(r.err) && firstErr == nil:
			firstErr = r.err
			cancel()
		}
	}
	switch {
	case data:
		return out, nil
	case ctx.Err() != nil:
		return out, ctx.Err()
	}
	return out, firstErr
}

// exactWaiter is one command of blockExact.
type exactWaiter struct {
	cmd  blockCmd
	dc   rueidis.DedicatedClient
	put  func() // puts dc back in the pool
	id   int64  // the connection's client ID; -1 if unknown
	done chan struct{}

	mu       sync.Mutex
	stopped  bool
	inflight bool // a blocking command is on the connection
	pooled   bool // redirected: the slices go through the client (see run)

	m         *rueidis.RedisMessage
	err       error
	closed    bool // the connection's state is not known: close it
	closeOnce sync.Once
}

func (b *base) blockExact(ctx context.Context, cmds []blockCmd, deadline time.Time) ([]*rueidis.RedisMessage, error) {
	// lastResort ends the commands whose server did not answer in time
	// after they were stopped.
	lastResort, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	ws := make([]*exactWaiter, len(cmds))
	notify := make(chan int, len(cmds))
	for k := range cmds {
		w := &exactWaiter{cmd: cmds[k], id: -1, done: make(chan struct{})}
		w.dc, w.put = b.c.Dedicate()
		ws[k] = w
		go func() {
			w.run(ctx, lastResort, b, deadline)
			close(w.done)
			notify <- k
		}()
	}
	left := len(ws)
	ended := false
	for left > 0 && !ended {
		select {
		case k := <-notify:
			left--
			ended = ws[k].m != nil || ws[k].err != nil
		case <-ctx.Done():
			ended = true
		}
	}
	var wg sync.WaitGroup
	for _, w := range ws {
		wg.Go(func() {
			b.stop(w, lastResort)
			select {
			case <-w.done:
			case <-time.After(unblockGrace):
				w.close()
				cancel()
				<-w.done
			}
			w.release()
		})
	}
	wg.Wait()
	out := make([]*rueidis.RedisMessage, len(ws))
	var firstErr error
	data := false
	for k, w := range ws {
		out[k] = w.m
		data = data || w.m != nil
		if w.err != nil && !isCtxErr(w.err) && firstErr == nil {
			firstErr = sortFailure(w.err)
		}
	}
	switch {
	case data:
		return out, nil
	case ctx.Err() != nil:
		return out, ctx.Err()
	}
	return out, firstErr
}

// redirectedSlice bounds the BLOCK of a command that a cluster
// redirected: such a command cannot be unblocked, so a stop waits for it
// (well within unblockGrace).
const redirectedSlice = 100 * time.Millisecond

// isRedirect reports whether err is a cluster's MOVED or ASK: the
// command did not run.
func isRedirect(err error) bool {
	re, ok := rueidis.IsRedisErr(err)
	if !ok {
		return false
	}
	_, moved := re.IsMoved()
	_, ask := re.IsAsk()
	return moved || ask
}

// run learns the connection's client ID and then sends the command, one
// slice after another, until it returns a reply or an error, the deadline
// passes or the waiter is stopped.
//
// A dedicated connection stays on the node it was given, so a MOVED or
// ASK (the slot is migrating, or has moved and the client's map is not yet
// refreshed) is not followed on it. The command then goes through the
// client itself, which follows the redirection, in slices of at most
// redirectedSlice that a stop waits for rather than unblocks.
func (w *exactWaiter) run(ctx, lastResort context.Context, b *base, deadline time.Time) {
	var res []rueidis.RedisResult
	if b.cluster {
		// A dedicated connection of a cluster goes to the node of its
		// first command's key.
		res = w.dc.DoMulti(ctx, b.c.B().Arbitrary("CLIENT", "ID").Build(), b.c.B().Arbitrary("EXISTS").Keys(w.cmd.key).Build())
	} else {
		res = w.dc.DoMulti(ctx, b.c.B().Arbitrary("CLIENT", "ID").Build())
	}
	if id, err := res[0].AsInt64(); err == nil {
		w.id = id
	} else if !isRedisErr(err) {
		w.err = err
		w.closed = true
		return
	}
	for {
		w.mu.Lock()
		ms, ok := b.blockMs(deadline)
		if w.stopped || !ok || ctx.Err() != nil {
			w.mu.Unlock()
			return
		}
		w.inflight = true
		pooled := w.pooled
		w.mu.Unlock()
		var m rueidis.RedisMessage
		var err error
		if pooled {
			ms = min(ms, redirectedSlice.Milliseconds())
			m, err = b.c.Do(lastResort, w.cmd.build(ms)).ToMessage()
		} else {
			m, err = w.dc.Do(lastResort, w.cmd.build(ms)).ToMessage()
		}
		w.mu.Lock()
		w.inflight = false
		if err != nil && !pooled && isRedirect(err) {
			w.pooled = true
			w.mu.Unlock()
			continue
		}
		w.mu.Unlock()
		switch {
		case err == nil:
			w.m = &m
			return
		case !rueidis.IsRedisNil(err):
			w.mu.Lock()
			if !w.stopped { // else the error is that of the stop
				w.err = err
			}
			w.closed = w.closed || !isRedisErr(err)
			w.mu.Unlock()
			return
		}
	}
}

// stop ends w's wait: it marks w stopped and, when a command is blocked
// on its connection, sends CLIENT UNBLOCK for it (which makes Redis
// answer nil, unless it answered already) until the command ends, or
// closes the connection when that cannot be done.
func (b *base) stop(w *exactWaiter, ctx context.Context) {
	w.mu.Lock()
	w.stopped = true
	inflight, pooled := w.inflight, w.pooled
	w.mu.Unlock()
	if !inflight || pooled {
		return // nothing to unblock, or a short slice the caller waits for
	}
	if w.id < 0 {
		w.close()
		return
	}
	ctx, cancel := context.WithTimeout(ctx, unblockGrace)
	defer cancel()
	pause := 100 * time.Microsecond
	for {
		unblock := b.c.B().Arbitrary("CLIENT", "UNBLOCK").Args(itoa(w.id)).Build()
		var r rueidis.RedisResult
		if b.cluster {
			r = b.c.DoMulti(ctx, unblock, b.c.B().Arbitrary("EXISTS").Keys(w.cmd.key).Build())[0]
		} else {
			r = b.c.Do(ctx, unblock)
		}
		n, err := r.AsInt64()
		if err != nil {
			w.close() // a server without CLIENT UNBLOCK, or no answer
			return
		}
		if n == 1 {
			return // the command now ends with a nil reply
		}
		// Not blocked: its command has not reached the server yet, or
		// its reply is on the way.
		select {
		case <-w.done:
			return
		case <-time.After(pause):
			pause = min(2*pause, 10*time.Millisecond)
		case <-ctx.Done():
			w.close()
			return
		}
	}
}

func (w *exactWaiter) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	w.closeOnce.Do(w.dc.Close)
}

// release puts the connection back in the pool, or closes it when its
// state is not known.
func (w *exactWaiter) release() {
	w.mu.Lock()
	closed := w.closed
	w.mu.Unlock()
	if closed {
		w.closeOnce.Do(w.dc.Close)
	} else {
		w.put()
	}
}

// graceCtx returns a context that ends unblockGrace after ctx does: for
// a command with effects that was sent, so that its reply is read.
func graceCtx(ctx context.Context) (context.Context, func()) {
	if ctx.Done() == nil {
		return ctx, func() {} // never done (and rueidis's fastest path)
	}
	c, cancel := context.WithCancel(context.WithoutCancel(ctx))
	stop := context.AfterFunc(ctx, func() {
		t := time.AfterFunc(unblockGrace, cancel)
		context.AfterFunc(c, func() { t.Stop() })
	})
	return c, func() {
		stop()
		cancel()
	}
}
