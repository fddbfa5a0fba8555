//go:build linux

package server

import (
	"io"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// loop is an event loop (loop.go): an epoll instance, level-triggered, on
// the sockets of its connections and on the read end of a pipe that wakes
// it, and one goroutine at a time running it (run).
type loop struct {
	srv    *Server
	epfd   int
	wakeRd int // the pipe: a byte written to wakeWr wakes epoll_wait
	wakeWr int
	// waiter waits for events on epfd (loop_spin_linux.go); only the
	// goroutine running the loop uses it.
	waiter waiter

	mu       sync.Mutex
	conns    map[int32]*conn // by socket descriptor
	woken    []*conn         // to serve though epoll reported nothing (wake)
	signaled bool            // a byte is in the pipe
	gen      uint64          // the run goroutine's number; handOff starts the next
	stopping bool            // Shutdown: run returns once conns is empty
	// done: run returned (Shutdown, or an error of epoll_wait) and closed
	// the descriptors; new connections get goroutines.
	done bool

	// pending: the connections served since the end of the last pass
	// whose replies wait for the end of this one (conn.deferOut).
	pending []*conn
}

// startLoops starts the event loops of Options.EventLoops, if any. A loop
// that cannot be made (no epoll, no descriptors) is logged and left out:
// its connections get goroutines.
func (s *Server) startLoops() {
	s.loops, s.nextLoop = nil, 0
	for range s.opts.EventLoops {
		l, err := newLoop(s)
		if err != nil {
			s.opts.Logger.Warn("xstream server: no event loop, connections get goroutines", "err", err)
			break
		}
		s.loops = append(s.loops, l)
		s.wg.Add(1)
		go l.run(0)
	}
}

func newLoop(s *Server) (*loop, error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_NONBLOCK|syscall.O_CLOEXEC); err != nil {
		syscall.Close(epfd)
		return nil, os.NewSyscallError("pipe2", err)
	}
	l := &loop{srv: s, epfd: epfd, wakeRd: p[0], wakeWr: p[1], conns: map[int32]*conn{}, waiter: newWaiter(epfd)}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(p[0])}
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, p[0], &ev); err != nil {
		l.closeFDs()
		return nil, os.NewSyscallError("epoll_ctl", err)
	}
	return l, nil
}

func (l *loop) closeFDs() {
	syscall.Close(l.epfd)
	syscall.Close(l.wakeRd)
	syscall.Close(l.wakeWr)
}

// stopLoops makes the loops return once their connections have ended;
// Shutdown has told those to stop reading. The caller holds s.mu, and has
// set s.closing, so no connection is added after.
func (s *Server) stopLoops() {
	for _, l := range s.loops {
		l.mu.Lock()
		l.stopping = true
		l.signalLocked()
		l.mu.Unlock()
	}
}

// adopt takes nc out of the Go runtime's network poller for the next
// event loop, round robin: it keeps a duplicate of its descriptor and
// closes nc. It returns nc itself when there are no loops or it is not a
// TCP connection, or the duplicate cannot be made. The caller holds s.mu.
func (s *Server) adopt(nc net.Conn) (*loop, net.Conn) {
	tc, ok := nc.(*net.TCPConn)
	if len(s.loops) == 0 || !ok {
		return nil, nc
	}
	raw, err := tc.SyscallConn()
	if err != nil {
		return nil, nc
	}
	fd := -1
	var derr error
	if err := raw.Control(func(u uintptr) {
		var r uintptr
		var e syscall.Errno
		r, _, e = syscall.Syscall(syscall.SYS_FCNTL, u, syscall.F_DUPFD_CLOEXEC, 0)
		if e != 0 {
			derr = e
			return
		}
		fd = int(r)
	}); err != nil || derr != nil {
		return nil, nc
	}
	l := s.loops[s.nextLoop%len(s.loops)]
	s.nextLoop++
	lc := &loopConn{l: l, fd: fd, laddr: tc.LocalAddr(), raddr: tc.RemoteAddr()}
	tc.Close() // the duplicate keeps the socket open
	return l, lc
}

// add starts serving c, whose nc is a loopConn of l. The caller holds
// s.mu and has counted c in s.wg.
func (l *loop) add(c *conn) {
	c.begin()
	lc := c.nc.(*loopConn)
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(lc.fd)}
	l.mu.Lock()
	ok := !l.done && syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_ADD, lc.fd, &ev) == nil
	if ok {
		l.conns[int32(lc.fd)] = c
	}
	l.mu.Unlock()
	if !ok {
		l.serveElsewhere(c)
	}
}

// run is the loop: it waits for input on any of its connections and
// serves each that has some. gen is its number: when a connection of the
// loop leaves it in the middle of its turn (handOff), a new run goroutine
// goes on with the loop, and this one with that connection only, to its
// end. It ends at Shutdown, once the loop has no connections.
func (l *loop) run(gen uint64) {
	defer l.srv.wg.Done()
	events := make([]syscall.EpollEvent, 128)
	for {
		if !l.flushPending(gen) {
			return
		}
		l.mu.Lock()
		if l.stopping && len(l.conns) == 0 {
			l.done = true
			l.closeFDs()
			l.mu.Unlock()
			return
		}
		l.mu.Unlock()
		n, err := l.waiter.wait(events)
		if err != nil {
			if err == syscall.EINTR {
				continue
			}
			// Not expected of a valid epoll descriptor and buffer.
			l.srv.opts.Logger.Error("xstream server: epoll_wait failed, the event loop's clients get goroutines", "err", err)
			l.fail()
			return
		}
		for _, ev := range events[:n] {
			if int(ev.Fd) == l.wakeRd {
				if !l.serveWoken(gen) {
					return
				}
				continue
			}
			l.mu.Lock()
			c := l.conns[ev.Fd]
			l.mu.Unlock()
			if c != nil && !l.serve(c, gen) {
				return
			}
		}
	}
}

// deferOut reports whether c, on an event loop, leaves the replies it
// gathered for the end of the loop's pass (flushPending) when it has read
// all its input, rather than write them itself: then one log barrier
// serves all the clients of the pass, as in Redis, which writes its AOF
// (and under always fdatasyncs it) once an event-loop iteration, before
// it writes the replies of all the clients it served.
func (c *conn) deferOut() bool {
	lc, ok := c.nc.(*loopConn)
	return ok && lc.real == nil
}

// pend puts c, whose turn ends with its input drained, in its loop's
// list of the connections to flush at the end of the pass, if it has
// replies or its commands ran on a DB (their log barrier is due).
func (c *conn) pend() {
	if c.pending || len(c.out) == 0 && c.touched == 0 {
		return
	}
	l := c.nc.(*loopConn).l
	c.pending = true
	l.mu.Lock()
	l.pending = append(l.pending, c)
	l.mu.Unlock()
}

// takePending returns the connections whose replies wait for the end of
// the pass, those still in the loop, and starts a new list.
func (l *loop) takePending() []*conn {
	l.mu.Lock()
	ps := l.pending
	l.pending = nil
	l.mu.Unlock()
	cs := ps[:0]
	for _, c := range ps {
		if l.connOf(c.nc.(*loopConn).sysFD()) == c { // not ended, nor left the loop (it wrote its replies itself)
			c.pending = false
			cs = append(cs, c)
		}
	}
	return cs
}

// flushPending writes the replies of the connections of the pass that
// ended (pending), before the loop waits for events again: first, once
// for all of them, the log of every durable DB their commands ran on
// (Server.logBarrier: a write per DB, and under always an fdatasync),
// then each one's replies (conn.flushAfter). A connection whose client
// does not take its replies as fast leaves the loop in its write
// (handOff): flushPending then returns false, as serve does.
func (l *loop) flushPending(gen uint64) bool {
	ps := l.takePending()
	if len(ps) == 0 {
		return true
	}
	var touched uint16
	for _, c := range ps {
		touched |= c.logDBs()
	}
	var f logFailures
	l.srv.logBarrier(&f, touched, l.srv.swaps.Load()) // a connection that saw a SWAPDB does the rest (conn.logBarrier)
	for i, c := range ps {
		c.flushAfter(&f)
		if l.current() != gen {
			// c left the loop in its write: the loop goes on on a new
			// goroutine, with the connections not flushed yet, and this
			// one with c to its end, as serve does.
			l.mu.Lock()
			l.pending = append(ps[i+1:], l.pending...)
			l.signalLocked()
			l.mu.Unlock()
			c.serveRun()
			c.end()
			l.srv.connEnded(c)
			return false
		}
		if c.writeErr != nil {
			l.remove(c.nc.(*loopConn))
			c.end()
			l.srv.connEnded(c)
		}
	}
	return true
}

// fail ends the loop after an error of epoll: its connections, and those
// added after, get goroutines.
func (l *loop) fail() {
	l.mu.Lock()
	cs := l.conns
	l.conns = map[int32]*conn{}
	l.done = true
	l.closeFDs()
	l.mu.Unlock()
	for _, c := range cs {
		l.serveElsewhere(c)
	}
}

// serveElsewhere moves c out of the loop to a goroutine of its own.
func (l *loop) serveElsewhere(c *conn) {
	c.nc.(*loopConn).move()
	go func() {
		c.serveRun()
		c.end()
		l.srv.connEnded(c)
	}()
}

func (l *loop) current() uint64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.gen
}

// serveWoken empties the pipe and serves the connections woken. It
// returns false when this goroutine no longer runs the loop. It takes the
// connections out of l.woken one at a time, so that those it has not
// served when one leaves the loop are left there for the goroutine that
// runs the loop next (handOff): epoll may report nothing for them.
func (l *loop) serveWoken(gen uint64) bool {
	var b [64]byte
	for {
		if _, err := syscall.Read(l.wakeRd, b[:]); err != nil {
			break // EAGAIN: empty
		}
	}
	l.mu.Lock()
	n := len(l.woken) // those woken later signal again
	l.signaled = false
	l.mu.Unlock()
	for range n {
		l.mu.Lock()
		c := l.woken[0] // only the goroutine running the loop takes them
		l.woken[0] = nil
		l.woken = l.woken[1:]
		if len(l.woken) == 0 {
			l.woken = nil
		}
		l.mu.Unlock()
		if l.connOf(c.nc.(*loopConn).sysFD()) == c && !l.serve(c, gen) {
			return false
		}
	}
	return true
}

// serve gives c its turn: it runs c's commands until its input is drained
// or it ends. It returns false when c left the loop during the turn
// (handOff): this goroutine then served c to its end and no longer runs
// the loop.
func (l *loop) serve(c *conn, gen uint64) bool {
	lc := c.nc.(*loopConn)
	lc.ready, lc.turn = true, 0
	c.awake() // a push may have woken it
	ended := c.serveRun()
	if l.current() != gen { // c left the loop: serveRun ran it to its end
		c.end()
		l.srv.connEnded(c)
		return false
	}
	if ended {
		l.remove(lc)
		c.end()
		l.srv.connEnded(c)
	}
	return true
}

// remove takes lc out of the loop and closes its descriptor.
func (l *loop) remove(lc *loopConn) {
	l.mu.Lock()
	delete(l.conns, int32(lc.fd))
	l.mu.Unlock()
	lc.mu.Lock()
	syscall.Close(lc.fd) // also takes it out of epoll
	lc.fd = -1
	lc.closed.Store(true)
	lc.mu.Unlock()
}

// handOff moves lc, whose turn runs on this goroutine, out of the loop to
// a connection of the Go runtime's poller, and starts a new goroutine for
// the loop: this one goes on with lc's connection only.
func (l *loop) handOff(lc *loopConn) {
	l.mu.Lock()
	delete(l.conns, int32(lc.fd))
	l.mu.Unlock()
	syscall.EpollCtl(l.epfd, syscall.EPOLL_CTL_DEL, lc.fd, nil)
	lc.move()
	l.mu.Lock()
	l.gen++
	gen := l.gen
	if len(l.woken) > 0 { // the rest of a batch of serveWoken
		l.signalLocked()
	}
	l.mu.Unlock()
	l.srv.wg.Add(1) // c's count keeps it above 0: no Wait has returned
	go l.run(gen)
}

// wake has the loop serve c though its socket has no input (a push, a
// close). Safe for concurrent use; it never blocks.
func (l *loop) wake(c *conn) {
	l.mu.Lock()
	l.woken = append(l.woken, c)
	l.signalLocked()
	l.mu.Unlock()
}

func (l *loop) signalLocked() {
	if !l.signaled && !l.done {
		l.signaled = true
		syscall.Write(l.wakeWr, []byte{0})
	}
}

// leaveLoop moves c out of its event loop, if it is in one, before it
// waits (see handOff).
func (c *conn) leaveLoop() {
	if lc, ok := c.nc.(*loopConn); ok && lc.real == nil && lc.fd >= 0 {
		lc.l.handOff(lc)
	}
}

// loopConn is the net.Conn of a connection of an event loop: reads and
// writes are system calls on its non-blocking socket, made by the loop's
// goroutine, and never wait. Once moved out of the loop (handOff), every
// method is real's, a connection of the Go runtime's poller.
type loopConn struct {
	l *loop
	// fd is the socket, -1 once closed or moved. Only the goroutine
	// serving the connection closes or moves it, holding mu; others use
	// it holding mu.
	fd     int
	ready  bool        // epoll reported input since a read found the socket drained
	turn   int         // bytes read in this turn of the loop (see turnBytes)
	closed atomic.Bool // Close was called: reads and writes fail
	laddr  net.Addr
	raddr  net.Addr

	mu sync.Mutex
	// real is the connection once moved; set by the serving goroutine,
	// holding mu.
	real net.Conn
	// The deadlines and linger set while in the loop, for real.
	rdl, wdl time.Time
	linger   *int
}

// turnBytes bounds what one turn of the loop reads from a client, so that
// a client that never stops sending does not keep the loop from the
// others: past it, the turn ends with the socket unread, and the
// level-triggered epoll reports it again at once.
const turnBytes = readChunk

// Read reads what the socket holds, or returns errWouldBlock when it holds
// nothing: at once, without a system call, after a read that did not
// fill p, until the loop sees input again (the loop's epoll is
// level-triggered, so input that came after that read is reported); and
// also once the turn has read turnBytes.
func (lc *loopConn) Read(p []byte) (int, error) {
	if lc.real != nil {
		return lc.real.Read(p)
	}
	if lc.closed.Load() {
		return 0, lc.opError("read", net.ErrClosed)
	}
	if !lc.ready || lc.turn >= turnBytes {
		return 0, errWouldBlock
	}
	for {
		n, err := rawRead(lc.fd, p)
		switch {
		case err == syscall.EINTR:
			continue
		case err == syscall.EAGAIN:
			lc.ready = false
			return 0, errWouldBlock
		case err != nil:
			return 0, lc.opError("read", os.NewSyscallError("read", err))
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		if n < len(p) {
			lc.ready = false
		}
		lc.turn += n
		return n, nil
	}
}

// Write writes p. When the socket takes only part of it (the client does
// not read as fast), the connection leaves the loop (handOff) and Write
// waits for the rest to be written as a connection goroutine does.
func (lc *loopConn) Write(p []byte) (int, error) {
	if lc.real != nil {
		return lc.real.Write(p)
	}
	if lc.closed.Load() {
		return 0, lc.opError("write", net.ErrClosed)
	}
	n := 0
	for n < len(p) {
		m, err := rawWrite(lc.fd, p[n:])
		if m > 0 {
			n += m
		}
		switch {
		case err == nil, err == syscall.EINTR:
		case err == syscall.EAGAIN:
			lc.l.handOff(lc)
			m, err := lc.real.Write(p[n:])
			return n + m, err
		default:
			return n, lc.opError("write", os.NewSyscallError("write", err))
		}
	}
	return n, nil
}

func (lc *loopConn) opError(op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Source: lc.laddr, Addr: lc.raddr, Err: err}
}

// move makes real, a connection of the Go runtime's poller on the socket,
// and closes fd; a deadline, linger or Close set before apply to real.
// When real cannot be made (no descriptors), the connection is closed.
// It holds mu from before it closes fd, so that no other goroutine uses
// the number once closed (another socket may get it at once).
func (lc *loopConn) move() {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	f := os.NewFile(uintptr(lc.fd), "")
	real, err := net.FileConn(f) // a duplicate of fd
	f.Close()
	lc.fd = -1
	if err != nil {
		lc.l.srv.opts.Logger.Warn("xstream server: client closed, it could not leave the event loop", "err", err)
		real = closedConn{lc}
	}
	lc.real = real
	if lc.linger != nil {
		if tc, ok := real.(*net.TCPConn); ok {
			tc.SetLinger(*lc.linger)
		}
	}
	real.SetReadDeadline(lc.rdl)
	real.SetWriteDeadline(lc.wdl)
	if lc.closed.Load() {
		real.Close()
	}
}

// Close makes the reads and writes fail. Another goroutine's Close wakes
// the loop, which then ends the connection.
func (lc *loopConn) Close() error {
	lc.mu.Lock()
	if r := lc.real; r != nil {
		lc.mu.Unlock()
		return r.Close()
	}
	defer lc.mu.Unlock()
	if lc.fd < 0 || lc.closed.Swap(true) {
		return nil
	}
	c := lc.l.connOf(lc.fd)
	if c != nil {
		lc.l.wake(c)
	}
	return nil
}

// connOf returns the connection of fd, nil if none.
func (l *loop) connOf(fd int) *conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.conns[int32(fd)]
}

// CloseRead shuts down the reading side of the socket, as
// net.TCPConn.CloseRead: the reads see the end of the input after what
// the socket holds.
func (lc *loopConn) CloseRead() error {
	lc.mu.Lock()
	if r := lc.real; r != nil {
		lc.mu.Unlock()
		if tc, ok := r.(interface{ CloseRead() error }); ok {
			return tc.CloseRead()
		}
		return r.Close()
	}
	defer lc.mu.Unlock()
	if lc.fd < 0 {
		return nil
	}
	err := syscall.Shutdown(lc.fd, syscall.SHUT_RD)
	if c := lc.l.connOf(lc.fd); c != nil {
		lc.l.wake(c)
	}
	if err != nil {
		return lc.opError("close", os.NewSyscallError("shutdown", err))
	}
	return nil
}

// SetLinger is net.TCPConn.SetLinger.
func (lc *loopConn) SetLinger(sec int) error {
	lc.mu.Lock()
	if r := lc.real; r != nil {
		lc.mu.Unlock()
		if tc, ok := r.(*net.TCPConn); ok {
			return tc.SetLinger(sec)
		}
		return nil
	}
	defer lc.mu.Unlock()
	lc.linger = &sec
	if lc.fd < 0 {
		return nil
	}
	l := syscall.Linger{Onoff: 1, Linger: int32(sec)}
	if sec < 0 {
		l = syscall.Linger{}
	}
	return os.NewSyscallError("setsockopt", syscall.SetsockoptLinger(lc.fd, syscall.SOL_SOCKET, syscall.SO_LINGER, &l))
}

func (lc *loopConn) LocalAddr() net.Addr  { return lc.laddr }
func (lc *loopConn) RemoteAddr() net.Addr { return lc.raddr }

// SetReadDeadline is net.Conn's. In the loop, reads never wait, so a
// deadline only matters as an interruption: one in the past (pushes for
// the connection, conn.addPush) wakes the loop for it.
func (lc *loopConn) SetReadDeadline(t time.Time) error {
	lc.mu.Lock()
	if r := lc.real; r != nil {
		lc.mu.Unlock()
		return r.SetReadDeadline(t)
	}
	defer lc.mu.Unlock()
	lc.rdl = t
	if lc.fd >= 0 && !t.IsZero() && time.Until(t) <= 0 {
		if c := lc.l.connOf(lc.fd); c != nil {
			lc.l.wake(c)
		}
	}
	return nil
}

// SetWriteDeadline is net.Conn's: in the loop, writes never wait, and a
// deadline applies once the connection left it.
func (lc *loopConn) SetWriteDeadline(t time.Time) error {
	lc.mu.Lock()
	if r := lc.real; r != nil {
		lc.mu.Unlock()
		return r.SetWriteDeadline(t)
	}
	lc.wdl = t
	lc.mu.Unlock()
	return nil
}

// SetDeadline is net.Conn's.
func (lc *loopConn) SetDeadline(t time.Time) error {
	lc.SetReadDeadline(t)
	return lc.SetWriteDeadline(t)
}

// sysFD returns the socket's descriptor, for CLIENT LIST; -1 once moved.
func (lc *loopConn) sysFD() int {
	lc.mu.Lock()
	defer lc.mu.Unlock()
	return lc.fd
}

// closedConn is the connection of a loopConn that could not be moved: it
// is closed.
type closedConn struct{ lc *loopConn }

func (c closedConn) Read([]byte) (int, error)  { return 0, c.lc.opError("read", net.ErrClosed) }
func (c closedConn) Write([]byte) (int, error) { return 0, c.lc.opError("write", net.ErrClosed) }
func (c closedConn) Close() error              { return nil }
func (c closedConn) LocalAddr() net.Addr       { return c.lc.laddr }
func (c closedConn) RemoteAddr() net.Addr      { return c.lc.raddr }
func (c closedConn) SetDeadline(time.Time) error {
	return nil
}
func (c closedConn) SetReadDeadline(time.Time) error  { return nil }
func (c closedConn) SetWriteDeadline(time.Time) error { return nil }
