package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"

	"github.com/tidwall/redcon"
)

// conn is one client connection. A reader goroutine parses commands into
// a queue and watches for the client going away; the connection's own
// goroutine runs them in order and writes the replies. So a client blocked
// in XREAD holds only its own goroutine, and its disconnection cancels the
// wait through ctx.
type conn struct {
	srv *Server
	nc  net.Conn
	// out holds the replies not yet written to nc. It is our own buffer
	// rather than a redcon.Writer, whose Buffer method copies: the
	// reply limit and the flush decision read len(out) after every
	// command.
	out      []byte
	writeErr error
	ctx      context.Context
	cancel   context.CancelFunc
	clientID int64

	db     int
	resp   int // protocol version of the replies: 2, or 3 after HELLO 3
	authed bool
	name   string
	quit   bool

	multi  bool
	dirty  bool // MULTI with a command that could not be queued
	queued [][][]byte
	// queuedBytes is the memory the queued commands hold (arguments,
	// slice headers, and 64 bytes of overhead per command), bounded by
	// MaxMultiBytes.
	queuedBytes int
	inExec      bool

	scratch []byte
}

type request struct {
	args [][]byte
	size int // memory held: see requestCost
	err  error
}

// requestCost is the memory a parsed request holds: its wire bytes (the
// arguments point into a copy of them), a slice header per argument, and
// the Command and request around them.
func requestCost(raw []byte, args [][]byte) int { return len(raw) + 24*len(args) + 64 }

// maxQueueBytes bounds the memory of the requests read ahead of the one
// running (see requestQueue), whatever MaxRequestBytes is.
const maxQueueBytes = 4 << 20

// readChunk bounds one read from the socket, so that the parser never
// holds more than one request plus readChunk bytes of parsed requests
// that are not yet in the queue.
const readChunk = 64 << 10

// requestQueue holds the commands read from a client and not yet run. The
// reader goes on reading while a command runs (or blocks), so that it sees
// the client go away, until the queued commands would cost more than max
// bytes: then it stops reading from the socket until the runner takes
// some, as Redis bounds a client's query buffer. One request is always
// let in, so that a request up to MaxRequestBytes can run.
type requestQueue struct {
	mu      sync.Mutex
	cond    sync.Cond
	items   []request
	bytes   int
	max     int
	closed  bool // the reader is done
	stopped bool // the runner is done
}

func newRequestQueue(max int) *requestQueue {
	q := &requestQueue{max: max}
	q.cond.L = &q.mu
	return q
}

// push queues r, waiting while the queue is full; false when the runner
// is gone.
func (q *requestQueue) push(r request) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) > 0 && q.bytes+r.size > q.max && !q.stopped {
		q.cond.Wait()
	}
	if q.stopped {
		return false
	}
	q.items = append(q.items, r)
	q.bytes += r.size
	q.cond.Broadcast()
	return true
}

// pop takes the next request, waiting for one; false when the reader is
// done and nothing is left.
func (q *requestQueue) pop() (request, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) == 0 && !q.closed {
		q.cond.Wait()
	}
	if len(q.items) == 0 {
		return request{}, false
	}
	r := q.items[0]
	q.items[0] = request{}
	q.items = q.items[1:]
	q.bytes -= r.size
	q.cond.Broadcast()
	return r, true
}

func (q *requestQueue) empty() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.items) == 0
}

func (q *requestQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.cond.Broadcast()
	q.mu.Unlock()
}

func (q *requestQueue) stop() {
	q.mu.Lock()
	q.stopped = true
	q.cond.Broadcast()
	q.mu.Unlock()
}

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{srv: s, nc: nc, clientID: s.nextID.Add(1), resp: 2, authed: s.opts.Password == ""}
	c.ctx, c.cancel = context.WithCancel(s.ctx)
	return c
}

// stopReading makes the reader see the end of input, so that the
// connection ends after the commands already received.
func (c *conn) stopReading() {
	if tc, ok := c.nc.(*net.TCPConn); ok {
		tc.CloseRead()
		return
	}
	c.nc.Close()
}

func (c *conn) serve() {
	q := newRequestQueue(min(c.srv.opts.MaxRequestBytes, maxQueueBytes))
	readerDone := make(chan struct{})
	go func() {
		defer close(readerDone)
		defer q.close()
		defer c.cancel()
		rd := redcon.NewReader(newFrameReader(c.nc, c.srv.opts.MaxRequestBytes))
		for {
			cmd, err := rd.ReadCommand()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
					var ne net.Error
					if !errors.As(err, &ne) {
						q.push(request{err: err})
					}
				}
				return
			}
			if !q.push(request{args: cmd.Args, size: requestCost(cmd.Raw, cmd.Args)}) {
				return
			}
		}
	}()
	for {
		req, ok := q.pop()
		if !ok {
			break
		}
		if req.err != nil {
			msg := req.err.Error()
			if req.err == errRequestTooLarge {
				msg = fmt.Sprintf("request larger than the limit of %d bytes", c.srv.opts.MaxRequestBytes)
			}
			if !strings.HasPrefix(msg, "Protocol error") {
				msg = "Protocol error: " + msg
			}
			c.out = redcon.AppendError(c.out, "ERR "+msg)
			c.flush()
			break
		}
		c.srv.commands.Add(1)
		c.run(req.args)
		if c.quit {
			c.flush()
			break
		}
		if q.empty() || len(c.out) > flushBytes {
			if c.flush() != nil {
				break
			}
		}
	}
	c.nc.Close()
	c.cancel()
	q.stop()
	<-readerDone
}

// run runs one command, bounding the size of its reply.
func (c *conn) run(args [][]byte) {
	start := len(c.out)
	if len(args) > c.srv.opts.MaxArgs {
		c.out = redcon.AppendError(c.out, fmt.Sprintf("ERR too many arguments: %d, the limit is %d", len(args), c.srv.opts.MaxArgs))
		return
	}
	c.dispatch(args)
	if size := len(c.out) - start; size > c.srv.opts.MaxReplyBytes {
		c.out = c.out[:start]
		c.out = redcon.AppendError(c.out, fmt.Sprintf("ERR reply of %d bytes exceeds the output limit of %d bytes", size, c.srv.opts.MaxReplyBytes))
	}
}

// flushBytes is how many bytes of replies a connection gathers before it
// writes them while more pipelined commands wait.
const flushBytes = 64 << 10

// flush writes the gathered replies to the client. After a write error
// it writes nothing more and returns that error.
func (c *conn) flush() error {
	if c.writeErr == nil && len(c.out) > 0 {
		_, c.writeErr = c.nc.Write(c.out)
	}
	if cap(c.out) > 4*flushBytes {
		c.out = nil // do not keep the buffer of one huge reply
	} else {
		c.out = c.out[:0]
	}
	return c.writeErr
}

// Reply helpers.

func (c *conn) ok() { c.out = append(c.out, "+OK\r\n"...) }
func (c *conn) err(msg string) {
	c.out = redcon.AppendError(c.out, msg) // replaces CR and LF by spaces
}
func (c *conn) int(n int64)        { c.out = redcon.AppendInt(c.out, n) }
func (c *conn) array(n int)        { c.out = redcon.AppendArray(c.out, n) }
func (c *conn) bulk(s string)      { c.out = redcon.AppendBulkString(c.out, s) }
func (c *conn) simple(s string)    { c.out = redcon.AppendString(c.out, s) }
func (c *conn) bulkBytes(b []byte) { c.out = redcon.AppendBulk(c.out, b) }

// null writes a null bulk string: $-1 in RESP2, _ in RESP3.
func (c *conn) null() {
	if c.resp == 3 {
		c.out = append(c.out, "_\r\n"...)
		return
	}
	c.out = append(c.out, "$-1\r\n"...)
}

// nullArray writes a null array: *-1 in RESP2, _ in RESP3.
func (c *conn) nullArray() {
	if c.resp == 3 {
		c.out = append(c.out, "_\r\n"...)
		return
	}
	c.out = append(c.out, "*-1\r\n"...)
}

// mapLen starts a map of n pairs: %n in RESP3, a flat array of 2n
// elements in RESP2.
func (c *conn) mapLen(n int) { c.aggregate('%', n, 2*n) }

// setLen starts a set of n elements: ~n in RESP3, an array in RESP2.
func (c *conn) setLen(n int) { c.aggregate('~', n, n) }

func (c *conn) aggregate(kind byte, n, resp2 int) {
	if c.resp != 3 {
		c.array(resp2)
		return
	}
	c.out = append(c.out, kind)
	c.out = strconv.AppendInt(c.out, int64(n), 10)
	c.out = append(c.out, '\r', '\n')
}

// verbatim writes text as a verbatim string of format txt in RESP3, a
// bulk string in RESP2.
func (c *conn) verbatim(text string) {
	if c.resp != 3 {
		c.bulk(text)
		return
	}
	c.out = append(c.out, '=')
	c.out = strconv.AppendInt(c.out, int64(len(text)+4), 10)
	c.out = append(c.out, "\r\ntxt:"...)
	c.out = append(c.out, text...)
	c.out = append(c.out, '\r', '\n')
}
