//go:build linux

package server

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
)

// loopCounts returns how many of srv's clients are served by an event
// loop and how many left theirs for a goroutine.
func loopCounts(srv *Server) (inLoop, moved int) {
	srv.mu.Lock()
	defer srv.mu.Unlock()
	for c := range srv.conns {
		lc, ok := c.nc.(*loopConn)
		if !ok {
			continue
		}
		lc.mu.Lock()
		if lc.real != nil {
			moved++
		} else {
			inLoop++
		}
		lc.mu.Unlock()
	}
	return inLoop, moved
}

// waitUntil returns once cond holds, failing the test with what after a
// minute.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); runtime.Gosched() {
		if time.Now().After(deadline) {
			t.Fatal(what)
		}
	}
}

// A client that blocks leaves the loop, which goes on serving the
// others: the XADD that serves the blocked read comes through the loop
// while the read waits (with the loop stuck in the wait, it would never be
// answered).
func TestLoopBlockedClientLeaves(t *testing.T) {
	srv := startT(t, New(Options{EventLoops: 1}))
	a, b := dialRaw(t, srv.Addr()), dialRaw(t, srv.Addr())
	a.do(t, "PING")
	b.do(t, "PING")
	if in, moved := loopCounts(srv); in != 2 || moved != 0 {
		t.Fatalf("before the block: %d clients in the loop, %d moved; want 2, 0", in, moved)
	}
	b.do(t, "XADD", "s", "1-1", "f", "v")
	if err := a.send([][]string{{"XREAD", "BLOCK", "0", "STREAMS", "s", "$"}}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the XREAD never blocked", func() bool {
		s, ok := srv.DB(0).Lookup("s")
		return ok && s.Blocked() == 1
	})
	if got := b.do(t, "XADD", "s", "2-1", "f", "w"); got.s != "2-1" {
		t.Fatalf("XADD while a client blocks: %+v", got)
	}
	r, err := a.read()
	if err != nil {
		t.Fatal(err)
	}
	if len(r.kids) != 1 || len(r.kids[0].kids) != 2 || len(r.kids[0].kids[1].kids) != 1 || r.kids[0].kids[1].kids[0].kids[0].s != "2-1" {
		t.Fatalf("XREAD BLOCK: %+v", r)
	}
	if in, moved := loopCounts(srv); in != 1 || moved != 1 {
		t.Fatalf("after the block: %d clients in the loop, %d moved; want 1, 1", in, moved)
	}
	// Both go on: the moved one on its goroutine.
	if got := a.do(t, "XLEN", "s"); got.n != 2 {
		t.Fatalf("XLEN on the moved client: %+v", got)
	}
	if got := b.do(t, "XLEN", "s"); got.n != 2 {
		t.Fatalf("XLEN in the loop: %+v", got)
	}
}

// Requests cut anywhere, one byte per segment, and pipelines of many
// requests, more than one read takes, are answered in full and in order:
// a read that found the socket drained is not repeated until the loop
// reports input, and input that comes after it is reported.
func TestLoopPartialAndPipelined(t *testing.T) {
	srv := startT(t, New(Options{EventLoops: 1}))
	a := dialRaw(t, srv.Addr())
	a.nc.(*net.TCPConn).SetNoDelay(true)
	var cmds strings.Builder
	for i := range 20 {
		cmds.WriteString(resp("XADD", "s", "*", "i", itoa(i)))
	}
	cmds.WriteString(resp("XLEN", "s"))
	in := cmds.String()
	a.nc.SetDeadline(time.Now().Add(time.Minute))
	go func() { // the replies are read below while the requests trickle in
		for i := range len(in) {
			if _, err := io.WriteString(a.nc, in[i:i+1]); err != nil {
				return
			}
		}
	}()
	for i := range 20 {
		r, err := a.read()
		if err != nil || r.kind != '$' {
			t.Fatalf("reply %d: %+v, %v", i, r, err)
		}
	}
	if r, err := a.read(); err != nil || r.n != 20 {
		t.Fatalf("XLEN after the trickled requests: %+v, %v", r, err)
	}

	// 20,000 requests in one write: several reads of the socket, and
	// replies written while more requests wait.
	var big bytes.Buffer
	for range 20000 {
		big.WriteString(resp("XLEN", "s"))
	}
	big.WriteString(resp("ECHO", "end"))
	go a.nc.Write(big.Bytes())
	for i := range 20000 {
		r, err := a.read()
		if err != nil || r.n != 20 {
			t.Fatalf("pipelined reply %d: %+v, %v", i, r, err)
		}
	}
	if r, err := a.read(); err != nil || r.s != "end" {
		t.Fatalf("last pipelined reply: %+v, %v", r, err)
	}
	if in, moved := loopCounts(srv); in != 1 || moved != 0 {
		t.Fatalf("%d clients in the loop, %d moved; want 1, 0", in, moved)
	}
}

// A client that does not read its replies leaves the loop once the
// socket takes no more, and the loop serves the others meanwhile; its
// replies all come once it reads.
func TestLoopSlowReaderLeaves(t *testing.T) {
	srv := startT(t, New(Options{EventLoops: 1}))
	slow, b := dialRaw(t, srv.Addr()), dialRaw(t, srv.Addr())
	value := strings.Repeat("x", 1000)
	for i := range 100 {
		b.do(t, "XADD", "s", fmt.Sprintf("%d-1", i+1), "f", value)
	}
	// 400 replies of 100 KB: more than the sockets' buffers hold.
	const n = 400
	var req strings.Builder
	for range n {
		req.WriteString(resp("XRANGE", "s", "-", "+"))
	}
	slow.nc.SetDeadline(time.Now().Add(time.Minute))
	go io.WriteString(slow.nc, req.String())
	waitUntil(t, "the client that does not read never left the loop", func() bool {
		_, moved := loopCounts(srv)
		return moved == 1
	})
	if got := b.do(t, "XLEN", "s"); got.n != 100 {
		t.Fatalf("XLEN in the loop while a client does not read: %+v", got)
	}
	for i := range n {
		r, err := slow.read()
		if err != nil || len(r.kids) != 100 || r.kids[99].kids[0].s != "100-1" {
			t.Fatalf("reply %d of the slow reader: %v", i, err)
		}
	}
}

// Pushes reach a client of the loop that sends nothing: an invalidation
// for a RESP3 tracking client wakes the loop for it.
func TestLoopPushWakes(t *testing.T) {
	srv := startT(t, New(Options{EventLoops: 1}))
	a, b := dialRaw(t, srv.Addr()), dialRaw(t, srv.Addr())
	a.do(t, "HELLO", "3")
	a.do(t, "CLIENT", "TRACKING", "ON")
	b.do(t, "XADD", "s", "1-1", "f", "v")
	a.do(t, "XLEN", "s")
	b.do(t, "XADD", "s", "2-1", "f", "v")
	r, err := a.read()
	if err != nil || r.kind != '>' || len(r.kids) != 2 || r.kids[0].s != "invalidate" || r.kids[1].kids[0].s != "s" {
		t.Fatalf("push: %+v, %v", r, err)
	}
	if in, moved := loopCounts(srv); in != 2 || moved != 0 {
		t.Fatalf("%d clients in the loop, %d moved; want 2, 0", in, moved)
	}
}

// CLIENT KILL from a client of the loop ends another client of the
// same loop, and shutdown ends the loop's clients: Close returns and
// their reads see the end.
func TestLoopKillAndClose(t *testing.T) {
	srv := New(Options{EventLoops: 1})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	a, b, c := dialRaw(t, srv.Addr()), dialRaw(t, srv.Addr()), dialRaw(t, srv.Addr())
	id := b.do(t, "CLIENT", "ID").n
	c.do(t, "PING")
	if got := a.do(t, "CLIENT", "KILL", "ID", itoa(int(id))); got.n != 1 {
		t.Fatalf("CLIENT KILL: %+v", got)
	}
	b.nc.SetDeadline(time.Now().Add(time.Minute))
	if _, err := b.rd.ReadByte(); err == nil {
		t.Fatal("the killed client read a byte")
	}
	// The socket is closed before the client is forgotten.
	waitUntil(t, "the killed client is still counted", func() bool {
		in, moved := loopCounts(srv)
		return in == 2 && moved == 0
	})
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*rawConn{a, c} {
		r.nc.SetDeadline(time.Now().Add(time.Minute))
		if _, err := r.rd.ReadByte(); err != io.EOF {
			t.Fatalf("a client after Close read: %v, want EOF", err)
		}
	}
	if n := len(srv.loops); n != 1 {
		t.Fatalf("%d loops, want 1", n)
	}
	srv.loops[0].mu.Lock()
	done := srv.loops[0].done
	srv.loops[0].mu.Unlock()
	if !done {
		t.Fatal("the loop still runs after Close")
	}
}

// No loops: EventLoops below 0, as 0 without the tests' default, gives
// each client its goroutine.
func TestLoopNone(t *testing.T) {
	srv := startT(t, New(Options{EventLoops: -1}))
	a := dialRaw(t, srv.Addr())
	if got := a.do(t, "PING"); got.s != "PONG" {
		t.Fatalf("PING: %+v", got)
	}
	if in, moved := loopCounts(srv); in != 0 || moved != 0 || len(srv.loops) != 0 {
		t.Fatalf("%d loops, %d clients in one, %d moved; want none", len(srv.loops), in, moved)
	}
}

// pairedLoopConn returns a loopConn, outside any loop, on one end of a
// non-blocking socket pair, and the other end.
func pairedLoopConn(t *testing.T) (*loopConn, int) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Close(fds[0])
		syscall.Close(fds[1])
	})
	return &loopConn{fd: fds[0], ready: true}, fds[1]
}

// After a read that did not fill its buffer, Read returns errWouldBlock
// without reading the socket until the loop reports input (ready), even
// when input came in between; a read that fills the buffer reads again.
func TestLoopConnReadSkipsDrainedSocket(t *testing.T) {
	lc, peer := pairedLoopConn(t)
	fds := [2]int{lc.fd, peer}
	buf := make([]byte, 4)
	syscall.Write(fds[1], []byte("abcdef"))
	if n, err := lc.Read(buf); n != 4 || err != nil || string(buf) != "abcd" {
		t.Fatalf("full read: %d %v %q", n, err, buf[:n])
	}
	if n, err := lc.Read(buf); n != 2 || err != nil || string(buf[:2]) != "ef" {
		t.Fatalf("read after a full one: %d %v %q", n, err, buf[:n])
	}
	syscall.Write(fds[1], []byte("gh"))
	if n, err := lc.Read(buf); n != 0 || err != errWouldBlock {
		t.Fatalf("read after a short one: %d %v, want errWouldBlock", n, err)
	}
	lc.ready = true // what the loop does when epoll reports the socket
	if n, err := lc.Read(buf); n != 2 || err != nil || string(buf[:2]) != "gh" {
		t.Fatalf("read once reported: %d %v %q", n, err, buf[:n])
	}
	lc.ready = true // a report without input: the read finds nothing
	if n, err := lc.Read(buf); n != 0 || err != errWouldBlock {
		t.Fatalf("read of an empty socket: %d %v, want errWouldBlock", n, err)
	}
	syscall.Shutdown(fds[1], syscall.SHUT_WR)
	lc.ready = true
	if n, err := lc.Read(buf); n != 0 || err != io.EOF {
		t.Fatalf("read at the end: %d %v, want EOF", n, err)
	}
}

// A turn of the loop reads at most turnBytes from one client: then Read
// returns errWouldBlock with input left, which the next turn reads.
func TestLoopConnTurnBound(t *testing.T) {
	lc, peer := pairedLoopConn(t)
	fds := [2]int{lc.fd, peer}
	in := bytes.Repeat([]byte("x"), turnBytes+10000)
	for off := 0; off < len(in); {
		n, err := syscall.Write(fds[1], in[off:])
		if err != nil {
			t.Fatal(err)
		}
		off += n
	}
	buf := make([]byte, 1000)
	got := 0
	for {
		n, err := lc.Read(buf)
		if err == errWouldBlock {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got += n
	}
	if got < turnBytes || got >= len(in) {
		t.Fatalf("one turn read %d bytes of %d; want %d up to less than all", got, len(in), turnBytes)
	}
	lc.ready, lc.turn = true, 0 // the next turn
	for got < len(in) {
		n, err := lc.Read(buf)
		if err != nil {
			t.Fatalf("the next turn, at %d of %d: %v", got, len(in), err)
		}
		got += n
	}
}

// connOfLoop returns srv's connection of client id, failing the test
// unless it is served by loop l.
func connOfLoop(t *testing.T, srv *Server, id int64, l *loop) *conn {
	t.Helper()
	c := srv.clientByID(id)
	if c == nil {
		t.Fatalf("no client %d", id)
	}
	if lc, ok := c.nc.(*loopConn); !ok || lc.l != l {
		t.Fatalf("client %d is not in the loop", id)
	}
	return c
}

// Two clients woken while their loop is busy are served in one batch:
// when the first leaves the loop during its turn (its MONITOR line does
// not fit its socket), the second is still served by the goroutine that
// goes on with the loop. The loop is held up in a CLIENT LIST of a third
// client, waiting for the server's lock the test holds; the MONITOR line
// comes from a client of a second loop. (The second client's wake-up, a
// CLIENT KILL's close, was lost: it stayed connected.)
func TestLoopWokenBatchHandOff(t *testing.T) {
	srv := startT(t, New(Options{EventLoops: 2}))
	l0 := srv.loops[0]
	var raws [5]*rawConn // on loops 0, 1, 0, 1, 0: round robin
	var ids [5]int64
	for i := range raws {
		raws[i] = dialRaw(t, srv.Addr())
		ids[i] = raws[i].do(t, "CLIENT", "ID").n
	}
	mon, pub, victim, busy := raws[0], raws[1], raws[2], raws[4]
	mon.nc.(*net.TCPConn).SetReadBuffer(4096)
	if got := mon.do(t, "MONITOR"); got.s != "OK" {
		t.Fatalf("MONITOR: %+v", got)
	}
	connOfLoop(t, srv, ids[0], l0)
	victimC := connOfLoop(t, srv, ids[2], l0)
	busyC := connOfLoop(t, srv, ids[4], l0)
	connOfLoop(t, srv, ids[1], srv.loops[1])
	woken := func() int {
		l0.mu.Lock()
		defer l0.mu.Unlock()
		return len(l0.woken)
	}

	srv.mu.Lock()
	locked := true
	defer func() {
		if locked {
			srv.mu.Unlock()
		}
	}()
	if err := busy.send([][]string{{"CLIENT", "LIST"}}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the CLIENT LIST never started", func() bool {
		cmd := busyC.public.cmd.Load()
		return cmd != nil && cmd.name == "client|list"
	})
	// 16 MB: more than the monitor's socket takes.
	if err := pub.send([][]string{{"XADD", "s", "*", "f", strings.Repeat("m", 16<<20)}}); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the MONITOR line never woke the loop", func() bool { return woken() == 1 })
	victimC.nc.Close() // what CLIENT KILL does
	if n := woken(); n != 2 {
		t.Fatalf("%d clients woken, want 2", n)
	}
	srv.mu.Unlock()
	locked = false

	victim.nc.SetDeadline(time.Now().Add(time.Minute))
	if _, err := victim.rd.ReadByte(); err != io.EOF {
		t.Fatalf("the closed client read: %v, want EOF", err)
	}
	if r, err := busy.read(); err != nil || r.kind != '$' {
		t.Fatalf("CLIENT LIST: %+v, %v", r, err)
	}
}

// A client leaving the loop closes its descriptor holding its loopConn's
// lock: another goroutine holding it (CLIENT KILL's close, a push's
// deadline, Shutdown's CloseRead, all of which use the number) never sees
// the number of a closed descriptor, which another socket may have got.
// The test holds the lock while the client blocks (and leaves the loop),
// until the leaving waits for the lock, and then looks at the descriptor.
func TestLoopLeaveClosesUnderLock(t *testing.T) {
	srv := startT(t, New(Options{EventLoops: 1}))
	a := dialRaw(t, srv.Addr())
	id := a.do(t, "CLIENT", "ID").n
	a.do(t, "XADD", "s", "1-1", "f", "v")
	lc := connOfLoop(t, srv, id, srv.loops[0]).nc.(*loopConn)
	lc.mu.Lock()
	locked := true
	defer func() {
		if locked {
			lc.mu.Unlock()
		}
	}()
	if err := a.send([][]string{{"XREAD", "BLOCK", "0", "STREAMS", "s", "$"}}); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1<<20)
	waitUntil(t, "the client never started leaving the loop", func() bool {
		st := string(buf[:runtime.Stack(buf, true)])
		for _, g := range strings.Split(st, "\n\n") {
			if strings.Contains(g, "(*loopConn).move") && strings.Contains(g, "sync.(*Mutex).Lock") {
				return true
			}
		}
		return false
	})
	fd := lc.fd
	if fd < 0 {
		t.Fatal("the descriptor is gone while the test holds the lock")
	}
	if _, _, e := syscall.Syscall(syscall.SYS_FCNTL, uintptr(fd), syscall.F_GETFD, 0); e != 0 {
		t.Fatalf("descriptor %d is closed (%v) while its loopConn's lock is held and names it", fd, e)
	}
	lc.mu.Unlock()
	locked = false
	waitUntil(t, "the XREAD never blocked", func() bool {
		s, ok := srv.DB(0).Lookup("s")
		return ok && s.Blocked() == 1
	})
	b := dialRaw(t, srv.Addr())
	b.do(t, "XADD", "s", "2-1", "f", "v")
	if r, err := a.read(); err != nil || len(r.kids) != 1 {
		t.Fatalf("XREAD BLOCK after leaving the loop: %+v, %v", r, err)
	}
}

// Every way out of a loop closes its descriptors: the clients' sockets
// (QUIT, CLIENT KILL, the client closing, a protocol error, leaving the
// loop for a blocked read or a reply the client does not read, Shutdown
// meanwhile), the epoll instance and the pipe. The process holds as many
// descriptors after the server's Shutdown as before its Start.
func TestLoopNoDescriptorLeft(t *testing.T) {
	// The runtime's poller keeps its descriptors once made: make them.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	before, ok := openFiles()
	if !ok {
		t.Skip("no /proc/self/fd")
	}
	srv := New(Options{EventLoops: 2})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	dial := func() *rawConn {
		nc, err := net.Dial("tcp", srv.Addr())
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, nc)
		return &rawConn{nc: nc, rd: bufio.NewReader(nc)}
	}
	admin := dial()
	admin.do(t, "XADD", "s", "1-1", "f", strings.Repeat("x", 100000))
	quit := dial()
	quit.do(t, "QUIT")
	killed := dial()
	id := killed.do(t, "CLIENT", "ID").n
	admin.do(t, "CLIENT", "KILL", "ID", itoa(int(id)))
	gone := dial()
	gone.do(t, "PING")
	gone.nc.Close()
	bad := dial()
	bad.send([][]string{{"PING"}})
	io.WriteString(bad.nc, "*1\r\n$x\r\n")
	blocked := dial()
	blocked.send([][]string{{"XREAD", "BLOCK", "0", "STREAMS", "s", "$"}})
	slow := dial()
	var req strings.Builder
	for range 200 {
		req.WriteString(resp("XRANGE", "s", "-", "+"))
	}
	go io.WriteString(slow.nc, req.String())
	waitUntil(t, "the clients never left the loop", func() bool {
		_, moved := loopCounts(srv)
		return moved == 2
	})
	for _, r := range []*rawConn{quit, killed, bad} {
		r.nc.SetDeadline(time.Now().Add(time.Minute))
		io.Copy(io.Discard, r.nc)
	}
	// Shutdown with its context ended closes the clients at once: the
	// one that does not read is not waited for.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := srv.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Shutdown: %v, want %v", err, context.Canceled)
	}
	for _, nc := range conns {
		nc.Close()
	}
	if after, _ := openFiles(); after != before {
		t.Fatalf("%d descriptors open after Shutdown, %d before Start", after, before)
	}
}
