package server

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"strconv"
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
// connections' pushes reach it, through addPush. With pubsub it is of the
// pubsub class (a subscriber), else of the normal one.
func limitConn(t *testing.T, srv *Server, pubsub bool) (*conn, net.Conn) {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	c := &conn{srv: srv, nc: a, clientID: 7}
	c.ctx, c.cancel = context.WithCancel(context.Background())
	c.pushes.setClass(pubsub)
	return c, b
}

func TestOutputBufferLimit(t *testing.T) {
	var logs bytes.Buffer
	srv := New(Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	srv.SetTime(clockT0)
	line := func(n int) push { return push{kind: pushRaw, raw: bytes.Repeat([]byte("m"), n-32)} } // n bytes each
	set := func(v string) { t.Helper(); setBufLimits(t, srv, v) }
	closed := func(c *conn) bool { return c.ctx.Err() != nil }

	// The hard limit: 1,000 bytes.
	set("pubsub 1000 0 0")
	c, peer := limitConn(t, srv, true)
	for range 9 {
		c.addPush(line(100))
	}
	if closed(c) || c.pushes.bytes != 900 {
		t.Fatalf("below the hard limit: closed %v, %d bytes", closed(c), c.pushes.bytes)
	}
	// The client's goroutine took them: they count until written.
	c.deliverPushes()
	if c.pushes.bytes != 0 || c.pushes.taken != 9*68 { // 68 bytes of each written out
		t.Fatalf("taken: %d queued, %d taken", c.pushes.bytes, c.pushes.taken)
	}
	drain(t, c, peer)
	if c.pushes.taken != 0 {
		t.Fatalf("%d bytes still counted once written", c.pushes.taken)
	}
	for range 9 {
		c.addPush(line(100))
	}
	c.deliverPushes()
	if closed(c) {
		t.Fatal("closed below the limit")
	}
	for range 4 { // 612 taken, 400 queued
		c.addPush(line(100))
	}
	if !closed(c) || len(c.pushes.items) != 0 || c.pushes.n.Load() != 0 {
		t.Fatalf("at the hard limit: closed %v, %d pushes kept", closed(c), len(c.pushes.items))
	}
	if n := srv.outputClosed.Load(); n != 1 || !strings.Contains(logs.String(), "overcoming of output buffer limits") || !strings.Contains(logs.String(), "queued_bytes=1012") || !strings.Contains(logs.String(), "class=pubsub") {
		t.Fatalf("%d disconnections, log %q", n, logs.String())
	}
	c.addPush(line(100))
	if len(c.pushes.items) != 0 {
		t.Fatal("a push queued for a closed client")
	}

	// The soft limit: past 500 bytes for more than 10 s.
	set("pubsub 0 500 10")
	c, peer = limitConn(t, srv, true)
	for range 5 {
		c.addPush(line(100)) // reaches it: the time starts
	}
	srv.FastForward(10 * time.Second)
	c.addPush(line(100))
	if closed(c) {
		t.Fatal("closed at 10 s past the soft limit")
	}
	drain(t, c, peer)
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
	c, _ = limitConn(t, srv, true)
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

// drain has c's goroutine take its queued pushes and write them out
// (flush) while peer reads them.
func drain(t *testing.T, c *conn, peer net.Conn) {
	t.Helper()
	c.deliverPushes()
	n := len(c.out)
	read := make(chan error)
	go func() {
		_, err := io.ReadFull(peer, make([]byte, n))
		read <- err
	}()
	if err := c.flush(); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if err := <-read; err != nil {
		t.Fatalf("reading the pushes: %v", err)
	}
}

// The class of a client follows Redis's getClientType: the pubsub limit
// applies to a subscriber only, the normal one (none by default) to the
// others.
func TestOutputBufferLimitClass(t *testing.T) {
	srv := New(Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	line := push{kind: pushRaw, raw: bytes.Repeat([]byte("m"), 68)} // 100 bytes
	set := func(v string) { t.Helper(); setBufLimits(t, srv, v) }
	set("pubsub 1000 0 0")
	normal, _ := limitConn(t, srv, false)
	sub, _ := limitConn(t, srv, true)
	for range 10 {
		normal.addPush(line)
		sub.addPush(line)
	}
	if normal.ctx.Err() != nil || sub.ctx.Err() == nil {
		t.Fatalf("pubsub 1000: normal client closed %v, subscriber closed %v", normal.ctx.Err() != nil, sub.ctx.Err() != nil)
	}
	set("normal 2000 0 0")
	for range 9 {
		normal.addPush(line)
	}
	if normal.ctx.Err() != nil {
		t.Fatal("normal client closed below its limit")
	}
	normal.addPush(line)
	if normal.ctx.Err() == nil {
		t.Fatal("normal client not closed at its limit")
	}
	// A client that left its channels is of the normal class again.
	set("normal 0 0 0")
	left, _ := limitConn(t, srv, true)
	left.pushes.setClass(false)
	for range 20 {
		left.addPush(line)
	}
	if left.ctx.Err() != nil {
		t.Fatal("closed by the pubsub limit after it left its channels")
	}
}

// SUBSCRIBE, UNSUBSCRIBE and RESET set a connection's class, in RESP2 and
// RESP3; tracking and MONITOR do not make a client pubsub's.
func TestOutputBufferClassOfClients(t *testing.T) {
	srv := RunT(t)
	// run sends args and then PING, and reads up to PING's reply (PONG,
	// or pong in RESP2's Pub/Sub context), so that args has run.
	run := func(c *wireConn, args ...string) {
		t.Helper()
		c.send(t, args...)
		c.send(t, "PING")
		c.nc.SetReadDeadline(time.Now().Add(10 * time.Second)) // a failure bound, not a wait
		var got []byte
		buf := make([]byte, 4096)
		for !bytes.Contains(bytes.ToLower(got), []byte("pong\r\n")) {
			n, err := c.nc.Read(buf)
			if err != nil {
				t.Fatalf("%q: %v (read %q)", args, err, got)
			}
			got = append(got, buf[:n]...)
		}
	}
	class := func(id int64) int {
		cn := srv.clientByID(id)
		cn.pushes.mu.Lock()
		defer cn.pushes.mu.Unlock()
		return cn.pushes.class
	}
	idOf := func(c *wireConn) int64 {
		id, err := strconv.ParseInt(strings.Trim(string(c.do(t, "CLIENT", "ID")), ":\r\n"), 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return id
	}
	for _, resp3 := range []bool{false, true} {
		c := dialWire(t, srv.Addr())
		if resp3 {
			c.do(t, "HELLO", "3")
		}
		id := idOf(c)
		for _, step := range []struct {
			args []string
			want int
		}{
			{[]string{"CLIENT", "TRACKING", "ON"}, 0},
			{[]string{"SUBSCRIBE", "a"}, pubsubClass},
			{[]string{"SUBSCRIBE", "b"}, pubsubClass},
			{[]string{"UNSUBSCRIBE", "a"}, pubsubClass},
			{[]string{"UNSUBSCRIBE", "b"}, 0},
			{[]string{"SUBSCRIBE", "a"}, pubsubClass},
			{[]string{"RESET"}, 0},
		} {
			run(c, step.args...)
			if got := class(id); got != step.want {
				t.Fatalf("RESP3 %v, after %q: class %d, want %d", resp3, step.args, got, step.want)
			}
		}
	}
	m := dialWire(t, srv.Addr())
	id := idOf(m)
	m.do(t, "MONITOR")
	if got := class(id); got != 0 {
		t.Fatalf("monitor: class %d", got)
	}
}

// setBufLimits runs CONFIG SET client-output-buffer-limit v on srv.
func setBufLimits(t *testing.T, srv *Server, v string) {
	t.Helper()
	c, _ := limitConn(t, srv, false)
	configSet(c, [][]byte{[]byte("config"), []byte("set"), []byte("client-output-buffer-limit"), []byte(v)})
	if string(c.out) != "+OK\r\n" {
		t.Fatalf("CONFIG SET %q: %q", v, c.out)
	}
}
