package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tidwall/redcon"
	"github.com/xstreamgo/xstream"
)

// conn is one client connection. Its goroutine reads the client's
// commands, runs them in order and writes the replies, as Redis's event
// loop does for each client, with no hand-off between goroutines. Only
// while a command blocks (XREAD or XREADGROUP with BLOCK) does a second
// goroutine, the watcher, read on: it queues the commands that follow, up
// to a bound, and cancels ctx when the client goes away, so the blocked
// command ends and leaves nothing behind.
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

	fr   *frameReader
	in   []byte   // input read from fr; in[pos:] is not parsed yet
	pos  int      //
	argv [][]byte // reused for the arguments of each request
	// partial is true when the input read ends inside a RESP request
	// (frameReader.midRequest) and every whole request before it has
	// been parsed: parse waits for the rest rather than parsing the same
	// start again after every read.
	partial bool
	ahead   *requestQueue // read by the watcher while a command blocked
	readErr error         // what ended the input, once seen

	db     int
	resp   int // protocol version of the replies: 2, or 3 after HELLO 3
	authed bool
	errs   int64        // error replies written: a command failed if it grew
	calls  int64        // commands called, for the sampling of their times
	public clientPublic // what CLIENT LIST shows of it to other clients
	// replyMode is CLIENT REPLY's: replyOn, replyOff, replySkipNext (the
	// command was CLIENT REPLY SKIP) or replySkip (skip this one).
	replyMode int
	name      string
	quit      bool

	multi  bool
	dirty  bool // MULTI with a command that could not be queued
	queued [][][]byte
	// queuedBytes is the memory the queued commands hold (arguments,
	// slice headers, and 64 bytes of overhead per command), bounded by
	// MaxMultiBytes.
	queuedBytes int
	queuedWrite bool // a queued command may change a DB
	// queuedDenyOOM: a queued command is refused past MaxMemory.
	queuedDenyOOM bool
	inExec        bool

	// The DBs the commands since the last log barrier ran on (bit i: DB
	// i), and the number of changing commands, for INFO's
	// rdb_changes_since_last_save.
	touched uint16
	changes int64
	// callWrote: the DBs the command in call may have changed.
	callWrote uint16
	// writes are the replies in out, since the last log barrier, of the
	// calls that may have changed a durable DB, whose changes the barrier
	// writes (under always, syncs): those of the DBs where that fails
	// become MISCONF errors (conn.misconfWrites).
	writes []writeSpan
	// pending: the connection is in its event loop's list of those whose
	// replies wait for the end of the loop's pass (conn.deferOut).
	pending bool
	// swaps is Server.swaps at the last log barrier.
	swaps uint64

	scratch  []byte
	fields   []xstream.Field // reused by fieldArgs
	lowerBuf []byte          // reused by lower
	lastCmd  *command        // the command lookup found last, spelled lastName
	lastName string

	replyStart int // where in out the running command's reply starts
	// What of the running command's reply was written out before it
	// ended, and is held in pieces outside out (see bigreply.go); and
	// whether it was found larger than MaxReplyBytes.
	streamed, held int
	// headerLast: the running reply's header goes in front at its end
	// (rangeReply), so nothing of it may be sent before: big bulk
	// strings are gathered in out (and pieces) like the rest.
	headerLast bool

	// unblock ends the running blocked read (CLIENT UNBLOCK from another
	// client); nil when none waits. Guarded by unblockMu; unblockErr says
	// the read answers with the UNBLOCKED error rather than as timed out.
	unblockMu  sync.Mutex
	unblock    context.CancelFunc
	unblockErr bool
	// unblockSwap: SWAPDB ended the read, which waits again (swapdb.go).
	unblockSwap bool
	replyOver   bool
	memOver     bool // the reply would pass MaxClientsMemory

	cmdStart int        // where in out the reply of the command in call starts
	trk      trackState // CLIENT TRACKING and SUBSCRIBE (tracking.go)
	pushes   pushBox    // invalidations and MONITOR lines queued by other connections
	// pushesTaken: pushes moved to out count for the output limit until
	// written (outlimit.go).
	pushesTaken bool

	monitor   bool       // MONITOR ran (monitor.go)
	special   bool       // tracking, subscribed or monitor: see setSpecial
	blockFeed [][]byte   // a blocking command for MONITOR, until shown
	blockedNS int64      // ns the running command waited blocked (slowlog.go's Timing)
	mark      int64      // slowClock reading the next command's time starts from
	markSrv   bool       // mark is of the server's clock
	stamp     stampCache // the last key touchKeys stamped (idle.go)
	looked    bool       // the running command reached its keys' look-up (idle.go)
	blocked   bool       // a command waits (watch): CLIENT LIST's b
	noEvict   bool       // CLIENT NO-EVICT on: CLIENT LIST's e
}

// replyFull reports whether the running command's reply has passed
// MaxReplyBytes, so that a command writing a long reply can stop early:
// run then replaces the reply with an error.
func (c *conn) replyFull() bool {
	return c.replyOver || c.replySize() > c.srv.opts.MaxReplyBytes
}

// request is a request the watcher read, with its own copy of its
// arguments.
type request struct {
	args [][]byte
	size int // memory held: the arguments, 24 bytes per argument and 64
}

// maxQueueBytes bounds the memory of the requests read ahead of the one
// running (see requestQueue), whatever MaxRequestBytes is.
const maxQueueBytes = 4 << 20

// readChunk bounds one read from the socket, so that a connection's input
// buffer holds at most one request plus readChunk bytes of requests.
const readChunk = 64 << 10

// requestQueue holds the commands the watcher read while a command
// blocked, until they run. The watcher stops reading from the socket when
// they would cost more than max bytes, as Redis bounds a client's query
// buffer, until the block ends. One request is always let in, so that a
// request up to MaxRequestBytes can run.
type requestQueue struct {
	mu      sync.Mutex
	cond    sync.Cond
	items   []request
	bytes   int
	max     int
	release bool // the block ended: push does not wait
}

func newRequestQueue(max int) *requestQueue {
	q := &requestQueue{max: max}
	q.cond.L = &q.mu
	return q
}

// push queues r, waiting while the queue is full and the block lasts.
func (q *requestQueue) push(r request) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.items) > 0 && q.bytes+r.size > q.max && !q.release {
		q.cond.Wait()
	}
	q.items = append(q.items, r)
	q.bytes += r.size
}

// pop takes the next request, if there is one. It never waits.
func (q *requestQueue) pop() (request, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.items) == 0 {
		return request{}, false
	}
	r := q.items[0]
	q.items[0] = request{}
	q.items = q.items[1:]
	q.bytes -= r.size
	return r, true
}

// setRelease lets push stop waiting (true), or makes it wait again.
func (q *requestQueue) setRelease(v bool) {
	q.mu.Lock()
	q.release = v
	q.cond.Broadcast()
	q.mu.Unlock()
}

func newConn(s *Server, nc net.Conn) *conn {
	c := &conn{srv: s, nc: nc, clientID: s.nextID.Add(1), resp: 2, authed: s.opts.Password == ""}
	c.ctx, c.cancel = context.WithCancel(s.ctx)
	c.public.init(c)
	return c
}

// stopReading makes the reader see the end of input, so that the
// connection ends after the commands already received.
func (c *conn) stopReading() {
	if tc, ok := c.nc.(interface{ CloseRead() error }); ok {
		tc.CloseRead()
		return
	}
	c.nc.Close()
}

func (c *conn) serve() {
	c.markNow()
	c.begin()
	c.serveRun()
	c.end()
}

// begin makes the connection's reader and its queue of requests read
// ahead while a command blocks.
func (c *conn) begin() {
	c.fr = newFrameReader(c.nc, frameLimits{max: c.srv.opts.MaxRequestBytes, maxArgs: c.srv.opts.MaxArgs})
	c.ahead = newRequestQueue(min(c.srv.opts.MaxRequestBytes, maxQueueBytes))
}

// serveRun reads the client's commands, runs them in order and writes
// their replies, until the connection ends (it returns true) or, on an
// event loop, until its input is drained (false): the loop calls it again
// when more comes (loop.go).
func (c *conn) serveRun() bool {
	for {
		args, err := c.next()
		if err == errWouldBlock {
			return false
		}
		if err != nil {
			if c.writeErr == nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !isNetError(err) {
				msg := err.Error()
				switch err {
				case errRequestTooLarge:
					msg = fmt.Sprintf("request larger than the limit of %d bytes", c.srv.opts.MaxRequestBytes)
				}
				if !strings.HasPrefix(msg, "Protocol error") {
					msg = "Protocol error: " + msg
				}
				if err == errClientsMemory {
					c.srv.logClientsMemory(c, "request")
					msg = c.srv.clientsMemoryMsg()
				}
				c.err("ERR " + msg)
			}
			c.flush()
			return true
		}
		c.srv.commands.Add(1)
		c.run(args)
		if c.special { // a tracking client's own invalidations follow the reply
			if c.trk.on {
				c.afterTracked(args)
			}
			if c.pushes.n.Load() != 0 {
				c.deliverPushes()
			}
		}
		if c.quit {
			c.srv.track.gone(c) // before the reply: a redirect to c is broken once QUIT is answered
			c.flush()
			return true
		}
		if c.writeErr != nil {
			return true
		}
		if len(c.out) > flushBytes {
			if c.flush() != nil {
				return true
			}
			c.markNow() // writing is not the next command's time
		}
	}
}

// end closes the connection once serveRun returned true.
func (c *conn) end() {
	c.nc.Close()
	c.cancel()
	c.releaseIn()
	c.srv.track.gone(c)
	c.unmonitor()
}

func isNetError(err error) bool {
	var ne net.Error
	return errors.As(err, &ne)
}

// next returns the next command's arguments: first those the watcher
// queued, then those parsed from the input, reading the socket when no
// whole request is buffered (after writing the replies gathered so far).
// Its error is what ended the input (io.EOF, a network or a protocol
// error), once the commands before it have run. The arguments are valid
// until the next call.
func (c *conn) next() ([][]byte, error) {
	if r, ok := c.ahead.pop(); ok {
		return r.args, nil
	}
	for c.readErr == nil {
		pos := c.pos
		args, ok, err := c.parse()
		if err != nil {
			c.readErr = err
			break
		}
		if ok {
			if len(args) > bigParseArgs || c.pos-pos > bigParseBytes {
				c.markNow() // its parse is not the command's time
			}
			return args, nil
		}
		if !c.deferOut() && c.flush() != nil {
			return nil, c.writeErr
		}
		if !c.pushes.sleep() {
			c.deliverPushes()
			continue
		}
		rerr := c.fill()
		if rerr == errWouldBlock {
			// The loop serves c again when input comes, and writes its
			// replies at the end of its pass.
			c.pend()
			return nil, rerr
		}
		if c.awake() && errors.Is(rerr, os.ErrDeadlineExceeded) {
			rerr = nil // interrupted for pushes
		}
		if c.pushes.n.Load() != 0 {
			c.deliverPushes()
		}
		c.readErr = rerr
		now := time.Now()
		c.public.active.Store(now.UnixMilli())
		c.markAt(now)
	}
	return nil, c.readErr
}

// parse returns the next whole request of the input and moves past it,
// or false when the input holds no whole request. Requests in RESP go
// into c.argv without copying (the arguments point into c.in): split in
// one pass when whole and plain (splitWhole), else parsed by redcon;
// inline ones (a line of words, as typed in telnet) are redcon's, with
// their own copies.
func (c *conn) parse() (args [][]byte, ok bool, err error) {
	for c.pos < len(c.in) {
		b := c.in[c.pos:]
		if b[0] != '*' {
			end := bytes.IndexByte(b, '\n')
			if end < 0 {
				return nil, false, nil
			}
			c.pos += end + 1
			line := b[:end+1]
			if len(bytes.Trim(line, " \r\n")) == 0 {
				continue // no words: Redis ignores it
			}
			cmd, err := redcon.Parse(line)
			if err != nil {
				return nil, false, err
			}
			return cmd.Args, true, nil
		}
		if c.partial {
			return nil, false, nil
		}
		// The request is whole (see partial) and frame.go has checked
		// its header.
		// frame.go has refused the bulk lengths ReadNextCommand would
		// mishandle (negative ones) before they reach it.
		parse := parseArray
		if c.srv.parseRequest != nil {
			parse = c.srv.parseRequest
		}
		complete, args, _, rest, err := parse(b, c.argv[:0])
		c.argv = args // keep the capacity, also of an incomplete request
		if err != nil {
			return nil, false, err
		}
		if !complete {
			return nil, false, nil
		}
		c.pos = len(c.in) - len(rest)
		if len(args) > 0 {
			return args, true, nil
		}
	}
	return nil, false, nil
}

// parseArray is redcon.ReadNextCommand for a RESP request: a whole one
// of plain lengths (splitWhole), the common case, is split in one pass;
// redcon parses anything else, and says what is wrong with it.
func parseArray(packet []byte, argsbuf [][]byte) (complete bool, args [][]byte, kind redcon.Kind, leftover []byte, err error) {
	args, end := splitWhole(packet, argsbuf[:0])
	if end > 0 {
		return true, args, redcon.Redis, packet[end:], nil
	}
	return redcon.ReadNextCommand(packet, args[:0]) // with the room splitWhole made
}

// maxKeptArgs is the most argument slots a connection keeps between
// requests.
const maxKeptArgs = 1024

// inChunk is the least room fill makes for a read.
const inChunk = 16 << 10

// fill reads more input into c.in, first moving what is not parsed yet to
// its start (so the arguments of earlier requests are no longer valid) and
// growing it when full. The frame reader hands over at most one request
// beyond what is parsed, so c.in stays about the size of the largest
// request.
func (c *conn) fill() error {
	rest := len(c.in) - c.pos
	if rest == 0 && cap(c.in) > 4*readChunk {
		// Do not keep the buffer of one huge request, nor (through
		// argv's spare slots) any buffer it points into.
		c.releaseIn()
		c.argv = nil
	}
	if cap(c.argv) > maxKeptArgs {
		c.argv = nil
	}
	if c.pos > 0 {
		copy(c.in, c.in[c.pos:])
		c.in, c.pos = c.in[:rest], 0
	}
	// Room for the rest of the bulk being read, if one is, so that a
	// large argument is read into a buffer of its size rather than one
	// doubled up to it.
	need := max(inChunk, min(c.fr.bodyLeft(), c.srv.opts.MaxRequestBytes)+inChunk)
	if cap(c.in)-len(c.in) < need {
		if need < len(c.in) {
			need = len(c.in) // double a buffer of many small arguments
		}
		old := cap(c.in)
		grown := make([]byte, len(c.in), len(c.in)+need) // not slices.Grow, which copies through a temporary under -race
		copy(grown, c.in)
		if !c.srv.reserveClientMem(cap(grown) - old) {
			return errClientsMemory
		}
		c.in = grown
	}
	c.fr.lim.unauth = !c.authed
	c.publishIn()
	n, err := c.fr.Read(c.in[len(c.in):cap(c.in)])
	c.in = c.in[:len(c.in)+n]
	c.publishIn()
	c.partial = c.fr.midRequest()
	return err
}

// releaseIn drops the input buffer.
func (c *conn) releaseIn() {
	c.srv.clientMem.Add(-int64(cap(c.in)))
	c.srv.noteFreed(cap(c.in))
	c.in, c.pos = nil, 0
}

// owned returns a request holding copies of args, which point into c.in.
func owned(args [][]byte) request {
	n := 0
	for _, a := range args {
		n += len(a)
	}
	buf := make([]byte, n)
	r := request{args: make([][]byte, len(args)), size: n + 24*len(args) + 64}
	for i, a := range args {
		r.args[i] = buf[:len(a):len(a)]
		copy(r.args[i], a)
		buf = buf[len(a):]
	}
	return r
}

// watch starts the watcher for a command about to block and returns the
// function that stops it, which the command calls when its wait ends. The
// watcher reads and queues the commands that follow; when the input ends
// it keeps the error for next, after them, and cancels c.ctx. Stopping
// interrupts its read with a past deadline and waits for it, so the
// reader has one user at a time.
func (c *conn) watch() (stop func()) {
	c.leaveLoop() // c waits on its own goroutine, the loop on another
	// The replies of the commands before this one go out now, not after
	// the wait, as Redis writes them before it blocks the client; their
	// log first. The blocked command's DB stays noted for its own reply.
	if c.writeErr == nil && c.replyStart > 0 {
		touched := c.touched
		c.replyStart = c.logBarrier(nil, c.replyStart)
		_, c.writeErr = c.nc.Write(c.out[:c.replyStart])
		c.written() // pushes go after a reply: none is past replyStart
		c.touched = touched
		if c.writeErr != nil {
			c.cancel() // nothing more will be written: do not wait
		}
	}
	c.cmdStart -= c.replyStart
	c.writes = c.writes[:0]
	c.out = append(c.out[:0], c.out[c.replyStart:]...)
	c.replyStart = 0
	// The blocked command's arguments point into c.in and c.argv: the
	// watcher reads into copies, so that they stay as they are.
	old := cap(c.in)
	c.in, c.pos, c.argv = append([]byte(nil), c.in[c.pos:]...), 0, nil
	c.srv.clientMem.Add(int64(cap(c.in) - old))
	if c.blockFeed != nil {
		c.feedMonitors(c.blockFeed)
		c.blockFeed = nil
	}
	c.ahead.setRelease(false)
	c.srv.stats.blocked.Add(1)
	c.blocked = true
	c.publish()
	blockStart, blockSrv := c.srv.slowClock() // the wait is not the command's time
	var stopping atomic.Bool
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c.readErr == nil {
			args, ok, err := c.parse()
			if err != nil {
				c.readErr = err // answered after the queued requests
				c.discardInput(&stopping)
				return
			}
			if ok {
				c.ahead.push(owned(args))
				continue
			}
			if err := c.fill(); err != nil {
				if stopping.Load() && errors.Is(err, os.ErrDeadlineExceeded) {
					return
				}
				c.readErr = err
				// The client went away: end the wait. A protocol error
				// does not end it (Redis does not read a blocked client's
				// requests); it is answered after the commands before it.
				if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) || isNetError(err) {
					c.cancel()
					return
				}
				c.discardInput(&stopping)
			}
		}
	}()
	return func() {
		if end, srv := c.srv.slowClock(); srv == blockSrv {
			c.blockedNS += end - blockStart
		}
		c.srv.stats.blocked.Add(-1)
		c.blocked = false
		c.publish()
		stopping.Store(true)
		c.nc.SetReadDeadline(time.Unix(1, 0))
		c.ahead.setRelease(true)
		<-done
		c.nc.SetReadDeadline(time.Time{})
	}
}

// discardInput is the watcher's reading after a protocol error: nothing
// after the error will run, but the client going away must still end the
// wait, so it reads and drops the input until the read fails, and cancels
// c.ctx unless the read was ended by stopping.
func (c *conn) discardInput(stopping *atomic.Bool) {
	buf := make([]byte, 4096)
	for {
		if _, err := c.nc.Read(buf); err != nil {
			if !(stopping.Load() && errors.Is(err, os.ErrDeadlineExceeded)) {
				c.cancel()
			}
			return
		}
	}
}

// run runs one command, bounding the size of its reply.
func (c *conn) run(args [][]byte) {
	start := len(c.out)
	c.replyStart = start
	c.streamed, c.replyOver = 0, false
	if len(args) > c.srv.opts.MaxArgs {
		c.out = redcon.AppendError(c.out, fmt.Sprintf("ERR too many arguments: %d, the limit is %d", len(args), c.srv.opts.MaxArgs))
		return
	}
	skip := c.replyMode == replySkip
	c.dispatch(args)
	start = c.replyStart // moved if the command flushed before blocking
	switch {
	case c.replyMode == replySkipNext: // CLIENT REPLY SKIP: this and the next
		c.out, c.replyMode = c.out[:start], replySkip
	case skip:
		c.out = c.out[:start]
		if c.replyMode == replySkip {
			c.replyMode = replyOn
		}
	case c.replyMode == replyOff:
		c.out = c.out[:start]
	}
	if !c.replyFull() {
		c.dropWrites(len(c.out))
		return
	}
	c.out = c.out[:start]
	c.dropWrites(start)
	if c.memOver {
		c.srv.logClientsMemory(c, "reply")
		c.memOver, c.quit = false, true
		if c.streamed == 0 {
			c.err("ERR " + c.srv.clientsMemoryMsg())
		}
		return
	}
	if c.streamed > 0 {
		// Part of it went out: it cannot be replaced by an error.
		c.srv.opts.Logger.Warn("xstream server: client closed, its reply passed MaxReplyBytes after part of it was sent",
			"client_id", c.clientID, "max_reply_bytes", c.srv.opts.MaxReplyBytes)
		if c.writeErr == nil {
			c.writeErr = errReplyCut
		}
		return
	}
	c.out = redcon.AppendError(c.out, fmt.Sprintf("ERR reply exceeds the output limit of %d bytes", c.srv.opts.MaxReplyBytes))
}

// errReplyCut ends a connection whose reply passed MaxReplyBytes once part
// of it was sent.
var errReplyCut = errors.New("xstream server: reply over MaxReplyBytes after part of it was sent")

// flushBytes is how many bytes of replies a connection gathers before it
// writes them while more pipelined commands wait.
const flushBytes = 64 << 10

// flush writes the gathered replies to the client, after the log of the
// commands they answer (logBarrier). After a write error, or an error of
// the log, it writes nothing more and returns that error.
func (c *conn) flush() error { return c.flushAfter(nil) }

// flushAfter is flush; f, when not nil, is the log barrier an event loop
// made for the replies of all the connections it served in a pass
// (loop.flushPending), this one among them.
func (c *conn) flushAfter(f *logFailures) error {
	if c.srv.track.bcast.Load() {
		c.srv.track.broadcast()
	}
	if c.pushes.n.Load() != 0 {
		c.deliverPushes()
	}
	if c.writeErr == nil && len(c.out) > 0 {
		n := c.logBarrier(f, len(c.out))
		c.publishOut(n)
		_, c.writeErr = c.nc.Write(c.out[:n])
	}
	c.written()
	c.writes = c.writes[:0]
	if cap(c.out) > 4*flushBytes {
		c.srv.noteFreed(cap(c.out))
		c.out = nil // do not keep the buffer of one huge reply
	} else {
		c.out = c.out[:0]
	}
	c.publishOut(0)
	return c.writeErr
}

// logBarrier writes to the OS the log of every durable DB the commands
// since the last barrier ran on (DB.Flush), before their replies, which
// are c.out[:upTo], go out, as Redis writes its AOF before it replies: a
// reply never acknowledges a change that a crash of the process could
// lose, nor shows one (a read may see another client's change that its
// own barrier has not written yet). Under always it syncs them instead
// (DB.Sync), as Redis fdatasyncs its AOF before it replies: the server
// opens its DBs WithDeferredSync, so a change is on disk only once a
// barrier synced it, one fdatasync for all the commands before it (and,
// on an event loop, for all the clients the loop served in a pass). Once
// pushes are among the replies, it does so for every DB (logDBs). f, when not nil, is
// the barrier that the event loop made for this connection among others
// (loop.flushPending): it does only the DBs f has not done.
//
// It returns where the replies end, moved when the barrier failed: a
// call that may have changed a DB whose log could not be written (under
// always, synced) then answers Redis's MISCONF error instead
// (misconfWrites), its change in doubt, and the connection goes on.
// Under always a read never returns a change that is not on disk (the
// core fails it). Under everysec and no the DB keeps the change in doubt
// and writes it once the disk is back (reads show it, as Redis's do):
// the MISCONF reply, unlike the reply the change would have had, does
// not acknowledge what a kill -9 could lose, and unlike a closed
// connection it does not make a client send the command again. Later
// writes get MISCONF (refuseWrite) until the log is written again.
//
// A SWAPDB since the writes (their DB indexes are those they ran on)
// makes every DB whose log failed count against every write.
func (c *conn) logBarrier(f *logFailures, upTo int) int {
	if c.changes != 0 {
		c.srv.changes.Add(c.changes)
		c.changes = 0
	}
	touched := c.logDBs()
	c.touched = 0
	if !c.srv.durable {
		return upTo
	}
	if f == nil {
		f = new(logFailures)
	}
	seen := c.swaps
	c.swaps = c.srv.logBarrier(f, touched, seen)
	return c.misconfWrites(f, upTo, c.swaps != seen)
}

// logDBs returns the DBs whose log the barrier before c's replies
// covers: those its commands since the last barrier ran on, and every DB
// once pushes (invalidations, MONITOR lines) are among the replies: they
// may tell of changes made on any.
func (c *conn) logDBs() uint16 {
	if c.pushesTaken {
		return allDBs
	}
	return c.touched
}

// logFailures is what a log barrier did: the DBs whose log it wrote
// (under always, synced), those where that failed, and the errors.
type logFailures struct {
	done uint16
	dbs  uint16
	errs [numDBs]error
}

// logBarrier writes the log of each durable DB of touched that f has not
// done yet to the OS (DB.Flush), or under always makes it durable
// (DB.Sync), noting in f where that failed. Each is one write (and
// fdatasync) at most, for all the changes made before. touched names DBs
// by their index when swaps (Server.swaps) was seen: once a SWAPDB may
// have moved them since, or does while it works, it does every DB. It
// returns the swaps it covered.
func (s *Server) logBarrier(f *logFailures, touched uint16, seen uint64) uint64 {
	if !s.durable {
		return seen
	}
	for {
		n := s.swaps.Load()
		if n != seen {
			touched = allDBs
		}
		for m := touched &^ f.done; m != 0; m &= m - 1 {
			i := bits.TrailingZeros16(m)
			f.done |= 1 << i
			if err := s.barrierLog(i); err != nil {
				f.dbs |= 1 << i
				f.errs[i] = err
			}
		}
		if s.swaps.Load() == n {
			return n
		}
		seen, f.done = n, 0 // the DBs done may have moved
	}
}

// writeSpan is the reply, c.out[start:end], of a call that may have
// changed the DBs of dbs (see conn.writes).
type writeSpan struct {
	start, end int
	dbs        uint16
}

// noteReply notes the reply of the call ending, from start in c.out, as
// one that a barrier that fails turns into MISCONF (writes).
func (c *conn) noteReply(start int) {
	if len(c.out) > start {
		c.writes = append(c.writes, writeSpan{start, len(c.out), c.callWrote})
	}
}

// dropWrites forgets the writes whose reply was cut off c.out, now n
// bytes long.
func (c *conn) dropWrites(n int) {
	for len(c.writes) > 0 && c.writes[len(c.writes)-1].end > n {
		c.writes = c.writes[:len(c.writes)-1]
	}
}

// misconfWrites replaces in c.out[:upTo], after barrier f, the reply of
// each call in writes that may have changed a DB whose log could not be
// written (under always, synced) by Redis's MISCONF error: no reply
// acknowledges a change that the policy does not keep yet, and the change
// is in doubt, as for a call that fails (see xstream.DB.Err). After a
// SWAPDB (swapped) a write's DB indexes may no longer be the DB's: then
// every DB whose log failed counts against every write. It forgets those writes (the replies
// up to upTo are about to go out), moves the offsets into c.out that
// follow what it replaced (replyStart, cmdStart, the writes after upTo),
// and returns where c.out[:upTo] ends now.
func (c *conn) misconfWrites(f *logFailures, upTo int, swapped bool) int {
	ws := c.writes
	k := 0 // the writes up to upTo: ws[:k]
	for k < len(ws) && ws[k].end <= upTo {
		k++
	}
	var out []byte
	prev, delta := 0, 0
	for _, w := range ws[:k] {
		failed := w.dbs & f.dbs
		if swapped && f.dbs != 0 {
			failed = f.dbs
		}
		if failed == 0 {
			continue
		}
		if out == nil {
			out = make([]byte, 0, len(c.out))
		}
		out = append(out, c.out[prev:w.start]...)
		msg := misconf(f.errs[bits.TrailingZeros16(failed)])
		n := len(out)
		out = redcon.AppendError(out, msg)
		c.srv.stats.countError(msg)
		d := len(out) - n - (w.end - w.start)
		if c.replyStart >= w.end {
			c.replyStart += d
		}
		if c.cmdStart >= w.end {
			c.cmdStart += d
		}
		delta += d
		prev = w.end
	}
	c.writes = append(ws[:0], ws[k:]...)
	if out == nil {
		return upTo
	}
	c.out = append(out, c.out[prev:]...)
	for i := range c.writes {
		c.writes[i].start += delta
		c.writes[i].end += delta
	}
	return upTo + delta
}

// Reply helpers.

func (c *conn) ok() { c.out = append(c.out, "+OK\r\n"...) }
func (c *conn) err(msg string) {
	c.out = redcon.AppendError(c.out, msg) // replaces CR and LF by spaces
	c.errs++
	c.srv.stats.countError(msg)
}
func (c *conn) int(n int64) { c.out = appendHeader(c.out, ':', n) }
func (c *conn) array(n int) { c.out = appendHeader(c.out, '*', int64(n)) }
func (c *conn) bulk(s string) {
	if len(s) >= bigReply && !c.headerLast {
		c.bigBulkString(s)
		return
	}
	c.out = appendBulk(c.out, s)
}
func (c *conn) simple(s string) { c.out = redcon.AppendString(c.out, s) }
func (c *conn) bulkBytes(b []byte) {
	if len(b) >= bigReply && !c.headerLast {
		c.bigBulk(b)
		return
	}
	c.out = appendBulk(c.out, b)
}

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
	c.out = appendHeader(c.out, kind, int64(n))
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
