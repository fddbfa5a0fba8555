package server

import (
	"bytes"
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"
)

// client-output-buffer-limit: CONFIG GET and SET as Redis 7.0, and the
// disconnection of a client whose queued pushes pass the limit.

func TestDiffConfigOutputBufferLimit(t *testing.T) {
	p := newPair(t)
	t.Cleanup(func() {
		p.real.do(t, "CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60")
	})
	p.do("CONFIG", "GET", "client-output-buffer-limit")
	p.do("CONFIG", "SET", "client-output-buffer-limit", "pubsub 1mb 512kb 10")
	p.do("CONFIG", "GET", "client-output-buffer-limit")
	p.do("CONFIG", "SET", "client-output-buffer-limit", "replica 1mb 2mb 1 normal 5 6 7")
	p.do("CONFIG", "GET", "client-output*")
	p.do("CONFIG", "SET", "client-output-buffer-limit", "")
	for _, bad := range []string{"pubsub 1mb 512kb", "foo 1 1 1", "pubsub 1x 1 1", "pubsub 1 1 x", "pubsub 1 1 -1", "pubsub 1 1 1 normal"} {
		p.do("CONFIG", "SET", "client-output-buffer-limit", bad)
	}
	p.do("CONFIG", "GET", "client-output-buffer-limit") // unchanged by the errors
}

// limitConn is a connection whose client never reads: only other
// connections' pushes reach it, through addPush.
func limitConn(t *testing.T, srv *Server) (*conn, net.Conn) {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	c := &conn{srv: srv, nc: a, clientID: 7}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	return c, b
}

func TestOutputBufferLimit(t *testing.T) {
	var logs bytes.Buffer
	srv := New(Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	srv.SetTime(clockT0)
	line := func(n int) push { return push{kind: pushRaw, raw: bytes.Repeat([]byte("m"), n-32)} } // n bytes each
	set := func(v string) {
		t.Helper()
		c, _ := limitConn(t, srv)
		configSet(c, [][]byte{[]byte("config"), []byte("set"), []byte("client-output-buffer-limit"), []byte(v)})
		if string(c.out) != "+OK\r\n" {
			t.Fatalf("CONFIG SET %q: %q", v, c.out)
		}
	}
	closed := func(c *conn) bool { return c.ctx.Err() != nil }

	// The hard limit: 1,000 bytes.
	set("pubsub 1000 0 0")
	c, _ := limitConn(t, srv)
	for range 9 {
		c.addPush(line(100))
	}
	if closed(c) || c.pushes.bytes != 900 {
		t.Fatalf("below the hard limit: closed %v, %d bytes", closed(c), c.pushes.bytes)
	}
	c.deliverPushes() // the client's goroutine took them: the count starts again
	for range 9 {
		c.addPush(line(100))
	}
	if closed(c) {
		t.Fatal("closed for pushes it had taken")
	}
	c.addPush(line(100))
	if !closed(c) || len(c.pushes.items) != 0 || c.pushes.n.Load() != 0 {
		t.Fatalf("at the hard limit: closed %v, %d pushes kept", closed(c), len(c.pushes.items))
	}
	if n := srv.outputClosed.Load(); n != 1 || !strings.Contains(logs.String(), "overcoming of output buffer limits") || !strings.Contains(logs.String(), "queued_bytes=1000") {
		t.Fatalf("%d disconnections, log %q", n, logs.String())
	}
	c.addPush(line(100))
	if len(c.pushes.items) != 0 {
		t.Fatal("a push queued for a closed client")
	}

	// The soft limit: past 500 bytes for more than 10 s.
	set("pubsub 0 500 10")
	c, _ = limitConn(t, srv)
	for range 5 {
		c.addPush(line(100)) // reaches it: the time starts
	}
	srv.FastForward(10 * time.Second)
	c.addPush(line(100))
	if closed(c) {
		t.Fatal("closed at 10 s past the soft limit")
	}
	c.deliverPushes()
	c.addPush(line(100)) // below it: the time is forgotten
	for range 4 {
		c.addPush(line(100))
	}
	srv.FastForward(10 * time.Second)
	c.addPush(line(100))
	if closed(c) {
		t.Fatal("closed for a time at the soft limit counted from before")
	}
	srv.FastForward(time.Second)
	c.addPush(line(100))
	if !closed(c) || srv.outputClosed.Load() != 2 {
		t.Fatalf("11 s past the soft limit: closed %v", closed(c))
	}

	// No limit.
	set("pubsub 0 0 0")
	c, _ = limitConn(t, srv)
	for range 1000 {
		c.addPush(line(1000))
	}
	if closed(c) {
		t.Fatal("closed without a limit")
	}
}

// A subscriber that never reads is disconnected once the invalidations
// queued for it pass the limit; the others go on.
func TestOutputBufferLimitSubscriber(t *testing.T) {
	srv := RunT(t)
	c := newClient(t, srv.Addr())
	c.do(t, "CONFIG", "SET", "client-output-buffer-limit", "pubsub 64kb 0 0")
	sub := dialWire(t, srv.Addr())
	id := strings.TrimSuffix(strings.TrimPrefix(string(sub.do(t, "CLIENT", "ID")), ":"), "\r\n")
	sub.do(t, "SUBSCRIBE", "__redis__:invalidate")
	trk := newClient(t, srv.Addr())
	trk.do(t, "CLIENT", "TRACKING", "ON", "BCAST", "REDIRECT", id)
	key := strings.Repeat("k", 1000)
	for i := 0; strings.Contains(c.do(t, "CLIENT", "LIST").s, "id="+id+" "); i++ {
		if i > 100000 {
			t.Fatal("the subscriber was never disconnected")
		}
		c.do(t, "XADD", key+itoa(i%1000), "*", "f", "v") // a 1 KB invalidation each
	}
	if srv.outputClosed.Load() != 1 {
		t.Fatalf("%d disconnections", srv.outputClosed.Load())
	}
	wantInt(t, c, 1, "EXISTS", key+"0")
}
