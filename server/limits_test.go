package server

import (
	"bufio"
	"bytes"
	"net"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/tidwall/redcon"
	"time"
)

// feedConn is a net.Conn whose input is head followed by rep repeated
// until total bytes, made as they are read so that the test holds none of
// it; then reads wait for Close. Replies are counted and dropped.
type feedConn struct {
	head, rep []byte
	total     int

	mu      sync.Mutex
	read    int
	written int
	record  bool         // keep what is written in out
	out     bytes.Buffer // with record
	closed  bool
	done    chan struct{}
	expired bool          // a past read deadline is set
	wake    chan struct{} // closed when a past read deadline is set
}

func newFeedConn(head, rep string, total int) *feedConn {
	return &feedConn{head: []byte(head), rep: []byte(rep), total: total}
}

func (f *feedConn) Read(p []byte) (int, error) {
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return 0, net.ErrClosed
	}
	if f.read >= f.total {
		if f.expired {
			f.mu.Unlock()
			return 0, os.ErrDeadlineExceeded
		}
		if f.wake == nil {
			f.wake = make(chan struct{})
		}
		wake := f.wake
		f.mu.Unlock()
		select {
		case <-f.done:
			return 0, net.ErrClosed
		case <-wake:
			return 0, os.ErrDeadlineExceeded
		}
	}
	n := 0
	for n < len(p) && f.read < f.total {
		var src []byte
		if f.read < len(f.head) {
			src = f.head[f.read:]
		} else {
			off := (f.read - len(f.head)) % len(f.rep)
			src = f.rep[off:]
		}
		k := copy(p[n:min(len(p), n+f.total-f.read)], src)
		n += k
		f.read += k
	}
	f.mu.Unlock()
	return n, nil
}

func (f *feedConn) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closed {
		return 0, net.ErrClosed
	}
	f.written += len(p)
	if f.record {
		f.out.Write(p)
	}
	return len(p), nil
}

func (f *feedConn) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.closed {
		f.closed = true
		close(f.done)
	}
	return nil
}

func (f *feedConn) bytesRead() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.read
}

func (f *feedConn) LocalAddr() net.Addr         { return &net.TCPAddr{} }
func (f *feedConn) RemoteAddr() net.Addr        { return &net.TCPAddr{} }
func (f *feedConn) SetDeadline(time.Time) error { return nil }

// SetReadDeadline supports what the server does: a past deadline to end
// a read, and the zero time to clear it.
func (f *feedConn) SetReadDeadline(t time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.expired = !t.IsZero() && !t.After(time.Now())
	if f.expired && f.wake != nil {
		close(f.wake)
		f.wake = nil
	}
	return nil
}
func (f *feedConn) SetWriteDeadline(time.Time) error { return nil }

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// startConn serves a connection of srv on nc in a new goroutine and
// returns a channel closed when serve returns.
func startConn(srv *Server, nc net.Conn) <-chan struct{} {
	c := newConn(srv, nc)
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.serve()
	}()
	return done
}

// serveFeed runs a connection of a new Server on f in a synctest bubble, waits
// until every goroutine is blocked, and returns the heap growth then.
func serveFeed(t *testing.T, opts Options, f *feedConn) (growth int64) {
	synctest.Test(t, func(t *testing.T) {
		f.done = make(chan struct{}) // in the bubble, so that waiting on it is blocking
		srv := New(opts)
		before := heapInUse()
		done := startConn(srv, f)
		synctest.Wait()
		growth = int64(heapInUse()) - int64(before)
		f.Close()
		srv.cancel()
		<-done
	})
	return growth
}

// A client blocked in XREAD that goes on sending requests makes the
// server read ahead only a bounded amount, counted as the memory the
// parsed requests hold, not their wire bytes; then it stops reading.
func TestReadAheadIsBounded(t *testing.T) {
	const empty = "*1\r\n$0\r\n\r\n"
	f := newFeedConn("*6\r\n$5\r\nXREAD\r\n$5\r\nBLOCK\r\n$1\r\n0\r\n$7\r\nSTREAMS\r\n$1\r\ns\r\n$1\r\n$\r\n", empty, 64<<20)
	growth := serveFeed(t, Options{MaxRequestBytes: 8 << 20}, f)
	t.Logf("read %d bytes, heap grew %d bytes", f.bytesRead(), growth)
	if read := f.bytesRead(); read >= f.total {
		t.Fatalf("the server read all %d bytes behind a blocked command", read)
	}
	if growth > 12<<20 {
		t.Fatalf("the heap grew %d bytes behind a blocked command", growth)
	}
}

// resp encodes a command as a RESP array of bulk strings.
func resp(args ...string) string {
	s := "*" + itoa(len(args)) + "\r\n"
	for _, a := range args {
		s += "$" + itoa(len(a)) + "\r\n" + a + "\r\n"
	}
	return s
}

// A transaction queues commands only up to MaxMultiBytes: the memory a
// client can make the server hold with MULTI is bounded.
func TestMultiQueueIsBounded(t *testing.T) {
	xadd := resp("XADD", "s", "*", "f", strings.Repeat("v", 1<<10))
	f := newFeedConn(resp("MULTI"), xadd, 32<<20)
	growth := serveFeed(t, Options{MaxMultiBytes: 1 << 20}, f)
	t.Logf("read %d bytes, heap grew %d bytes", f.bytesRead(), growth)
	if growth > 8<<20 {
		t.Fatalf("the heap grew %d bytes with a transaction limited to 1 MiB", growth)
	}
}

// A command past MaxMultiBytes gets an error, and EXEC then aborts the
// transaction without running any of it.
func TestMultiLimitAbortsExec(t *testing.T) {
	srv := RunTWith(t, Options{MaxMultiBytes: 3 << 10})
	c := newClient(t, srv.Addr())
	v := strings.Repeat("v", 1<<10)
	expect(t, c, `+"OK"`, "MULTI")
	expect(t, c, `+"QUEUED"`, "XADD", "s", "1-1", "f", v)
	expect(t, c, `+"QUEUED"`, "XADD", "s", "2-1", "f", v)
	expect(t, c, `-"ERR transaction larger than the limit of 3072 bytes"`, "XADD", "s", "3-1", "f", v)
	expect(t, c, `-"EXECABORT Transaction discarded because of previous errors."`, "EXEC")
	expect(t, c, `:0`, "EXISTS", "s")
	// The next transaction starts from nothing.
	expect(t, c, `+"OK"`, "MULTI")
	expect(t, c, `+"QUEUED"`, "XADD", "s", "1-1", "f", v)
	expect(t, c, `+"QUEUED"`, "XADD", "s", "2-1", "f", v)
	expect(t, c, `[$"1-1" $"2-1"]`, "EXEC")
}

// A client past MaxClients gets Redis's error and is disconnected; the
// clients already connected go on.
func TestMaxClients(t *testing.T) {
	srv := RunTWith(t, Options{MaxClients: 2})
	a, b := newClient(t, srv.Addr()), newClient(t, srv.Addr())
	expect(t, a, `+"PONG"`, "PING")
	expect(t, b, `+"PONG"`, "PING")
	nc, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	rd := bufio.NewReader(nc)
	r, err := readReply(rd)
	if err != nil || r.String() != `-"ERR max number of clients reached"` {
		t.Fatalf("third client: %v, %v", r, err)
	}
	if _, err := readReply(rd); err == nil {
		t.Fatal("the connection stayed open past MaxClients")
	}
	expect(t, a, `+"PONG"`, "PING")
}

// Bulk and multibulk lengths Redis refuses are refused as soon as their
// header arrives, with Redis's error, and the connection closes; the
// requests before them are answered.
func TestBulkLengthRefused(t *testing.T) {
	srv := RunT(t)
	for _, tc := range []struct{ in, want string }{
		{"*1\r\n$536870913\r\n", `-"ERR Protocol error: invalid bulk length"`},
		{"*1\r\n$-1\r\n", `-"ERR Protocol error: invalid bulk length"`},
		{"*1\r\n$abc\r\n", `-"ERR Protocol error: invalid bulk length"`},
		{"*2147483648\r\n", `-"ERR Protocol error: invalid multibulk length"`},
		// Past MaxArgs (1,048,576 by default), refused at the header.
		{"*2147483647\r\n" + strings.Repeat("$1\r\nx\r\n", 1000), `-"ERR Protocol error: invalid multibulk length"`},
		{"*1048577\r\n", `-"ERR Protocol error: invalid multibulk length"`},
	} {
		expectRefused(t, srv.Addr(), tc.in, tc.want)
	}
	expectRefused(t, srv.Addr(), resp("PING")+"*1\r\n$536870913\r\n", `+"PONG"`, `-"ERR Protocol error: invalid bulk length"`)
}

// expectRefused sends in on a new connection to addr, expects the replies
// want, the last an error, and then the connection to be closed.
func expectRefused(t *testing.T, addr, in string, want ...string) {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	go nc.Write([]byte(in)) // the server may close before it read all
	rd := bufio.NewReader(nc)
	for i, w := range want {
		r, err := readReply(rd)
		if err != nil || r.String() != w {
			t.Fatalf("%.80q: reply %d is %v, %v; want %s", in, i+1, r, err, w)
		}
	}
	if r, err := readReply(rd); err == nil {
		t.Fatalf("%.80q: the connection stayed open (then %v)", in, r)
	}
}

// A long pipeline of requests that straddle the reads keeps the parser's
// buffer about the size of one request.
func TestPipelineBufferIsBounded(t *testing.T) {
	ping := resp("ECHO", strings.Repeat("x", 1000))
	f := newFeedConn("", ping, 32<<20)
	growth := serveFeed(t, Options{}, f)
	t.Logf("read %d bytes, heap grew %d bytes", f.bytesRead(), growth)
	if f.bytesRead() != f.total {
		t.Fatalf("read %d of %d bytes", f.bytesRead(), f.total)
	}
	if growth > 4<<20 {
		t.Fatalf("the heap grew %d bytes over a pipeline of small requests", growth)
	}
}

// A request read in many pieces is parsed once, when it is whole, not
// again after every read: its cost is linear in its size. The arguments
// of the *N header are refused before any of them is read.
func TestBigRequestParsedOnce(t *testing.T) {
	parses := 0
	req := bigRequest([]string{"XDEL", "missing"}, 100_000, idArg) // 1.2 MB, 19 reads of 64 KiB
	f := &memConn{rep: req, left: 2 * len(req), keep: true}
	srv := New(Options{})
	defer srv.cancel()
	srv.parseRequest = func(packet []byte, argsbuf [][]byte) (bool, [][]byte, redcon.Kind, []byte, error) {
		parses++
		return parseArray(packet, argsbuf)
	}
	newConn(srv, f).serve()
	if f.out.String() != ":0\r\n:0\r\n" || parses != 2 {
		t.Fatalf("two requests of %d bytes: replies %q, %d parses", len(req), f.out.String(), parses)
	}
}
