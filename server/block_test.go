package server

import (
	"bufio"
	"net"
	"runtime"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/xstreamgo/xstream"
)

// Blocking commands, compared with a real Redis. A test waits until both
// servers report the reader blocked (Redis: INFO blocked_clients; xstream:
// Stream.Blocked) before it adds, so no outcome depends on timing.

type blockedCall struct {
	args       []string
	real, xs   chan *reply
	realC, xsC *client
}

// block sends args on new connections to both servers and returns at
// once; wait collects the replies.
func (p *pair) block(args ...string) *blockedCall {
	p.t.Helper()
	b := &blockedCall{args: args, real: make(chan *reply, 1), xs: make(chan *reply, 1)}
	b.realC, b.xsC = newClientProto(p.t, realAddr, p.proto), newClientProto(p.t, p.srv.Addr(), p.proto)
	send := func(c *client, out chan *reply) {
		r, err := c.send(args...)
		if err != nil {
			r = &reply{kind: '-', s: "client: " + err.Error()}
		}
		out <- r
	}
	go send(b.realC, b.real)
	go send(b.xsC, b.xs)
	return b
}

// wait returns when both replies came and compares them.
func (p *pair) wait(b *blockedCall) *reply {
	p.t.Helper()
	want, got := <-b.real, <-b.xs
	p.after(b.args, want)
	return p.check(b.args, want, got)
}

// waitBlocked returns once n clients are blocked on the key in both
// servers.
func (p *pair) waitBlocked(key string, n int) {
	p.t.Helper()
	deadline := time.Now().Add(time.Minute)
	want := "blocked_clients:" + itoa(n) + "\r"
	for !strings.Contains(p.real.do(p.t, "INFO", "clients").s, want) {
		if time.Now().After(deadline) {
			p.t.Fatalf("redis: %d clients never blocked", n)
		}
	}
	for {
		if s, ok := p.srv.DB(0).Lookup(key); ok && s.Blocked() == n {
			return
		}
		if time.Now().After(deadline) {
			p.t.Fatalf("xstream: %d clients never blocked on %q", n, key)
		}
		runtime.Gosched()
	}
}

func TestDiffBlockXRead(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		p.do("XADD", "s", "1-1", "a", "1")
		p.do("XADD", "t", "1-1", "b", "1")
		b := p.block("XREAD", "BLOCK", "0", "STREAMS", "s", "t", "1-1", "1-1")
		p.waitBlocked("s", 1)
		p.do("XADD", "t", "2-1", "c", "2")
		p.wait(b)

		b = p.block("XREAD", "COUNT", "1", "BLOCK", "100000", "STREAMS", "s", "1-1")
		p.waitBlocked("s", 1)
		p.do("XADD", "s", "3-1", "d", "3")
		p.wait(b)

		// A timeout with no data is a null array.
		p.do("XREAD", "BLOCK", "1", "STREAMS", "s", "$")
	})
}

func TestDiffBlockXReadGroup(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		p.do("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
		first := p.block("XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", ">")
		p.waitBlocked("s", 1)
		second := p.block("XREADGROUP", "GROUP", "g", "bob", "COUNT", "1", "BLOCK", "0", "STREAMS", "s", ">")
		p.waitBlocked("s", 2)
		p.do("XADD", "s", "1-1", "a", "1")
		p.wait(first) // first come, first served
		p.waitBlocked("s", 1)
		p.do("XADD", "s", "2-1", "b", "2")
		p.wait(second)
		p.do("XPENDING", "s", "g", "-", "+", "10")

		// NOACK while blocked.
		b := p.block("XREADGROUP", "GROUP", "g", "carol", "NOACK", "BLOCK", "0", "STREAMS", "s", ">")
		p.waitBlocked("s", 1)
		p.do("XADD", "s", "3-1", "c", "3")
		p.wait(b)
		p.do("XPENDING", "s", "g")

		// A history read never blocks.
		p.do("XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", "0")
		p.do("XREADGROUP", "GROUP", "g", "alice", "BLOCK", "1", "STREAMS", "s", ">")
		p.do("XINFO", "CONSUMERS", "s", "g")
	})
}

func TestDiffBlockGroupDestroyed(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		p.do("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
		b := p.block("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
		p.waitBlocked("s", 1)
		p.do("XGROUP", "DESTROY", "s", "g")
		p.wait(b)

		p.do("XGROUP", "CREATE", "s", "g", "$")
		b = p.block("XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">")
		p.waitBlocked("s", 1)
		p.do("DEL", "s")
		p.wait(b)
	})
}

// A client that disconnects while blocked leaves nothing behind: its
// read is no longer waiting, and the next reader gets the next entry.
func TestBlockedClientDisconnects(t *testing.T) {
	srv := RunT(t)
	c := newClient(t, srv.Addr())
	c.do(t, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
	s, _ := srv.DB(0).Lookup("s")
	for range 3 {
		gone := newClient(t, srv.Addr())
		done := make(chan struct{})
		go func() {
			gone.send("XREADGROUP", "GROUP", "g", "gone", "BLOCK", "0", "STREAMS", "s", ">")
			close(done)
		}()
		for s.Blocked() != 1 {
			runtime.Gosched()
		}
		gone.rc.Conn.Close()
		<-done
		for s.Blocked() != 0 {
			runtime.Gosched()
		}
	}
	c.do(t, "XADD", "s", "1-1", "f", "v")
	if r := c.do(t, "XPENDING", "s", "g"); r.kids[0].n != 0 {
		t.Fatalf("a disconnected reader took an entry: %v", r)
	}
	r := c.do(t, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
	if got := r.String(); got != `[[$"s" [[$"1-1" [$"f" $"v"]]]]]` {
		t.Fatalf("XREADGROUP: %s", got)
	}
}

// A client that pipelines many commands behind a blocked read and then
// disconnects is still noticed: the reader goes on reading while the read
// blocks.
func TestBlockedClientWithPipelineDisconnects(t *testing.T) {
	srv := RunT(t)
	c := newClient(t, srv.Addr())
	c.do(t, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
	s, _ := srv.DB(0).Lookup("s")
	nc, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	req := "XREADGROUP GROUP g gone BLOCK 0 STREAMS s >\r\n" + strings.Repeat("PING\r\n", 500)
	if _, err := nc.Write([]byte(req)); err != nil {
		t.Fatal(err)
	}
	for s.Blocked() != 1 {
		runtime.Gosched()
	}
	nc.Close()
	for s.Blocked() != 0 {
		runtime.Gosched()
	}
}

// Commands pipelined behind a blocked read run after it, in order, once
// it is served; and a connection blocks and wakes many times in a row
// (the watcher that reads during each block hands the connection back).
func TestPipelineBehindBlockedReads(t *testing.T) {
	srv := RunT(t)
	c := newClient(t, srv.Addr())
	c.do(t, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
	s, _ := srv.DB(0).Lookup("s")
	nc, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	rd := bufio.NewReader(nc)
	for round := 1; round <= 5; round++ {
		id := itoa(round) + "-1"
		req := "XREADGROUP GROUP g w BLOCK 0 STREAMS s >\r\nPING\r\nECHO " + id + "\r\nXLEN s\r\n"
		if _, err := nc.Write([]byte(req)); err != nil {
			t.Fatal(err)
		}
		for s.Blocked() != 1 {
			runtime.Gosched()
		}
		c.do(t, "XADD", "s", id, "f", "v")
		want := []string{`[[$"s" [[$"` + id + `" [$"f" $"v"]]]]]`, `+"PONG"`, `$"` + id + `"`, ":" + itoa(round)}
		for _, w := range want {
			r, err := readReply(rd)
			if err != nil {
				t.Fatal(err)
			}
			if got := r.String(); got != w {
				t.Fatalf("round %d: got %s, want %s", round, got, w)
			}
		}
	}
	// A read with BLOCK that finds entries at once does not wait.
	c.do(t, "XADD", "s", "9-1", "f", "v")
	if _, err := nc.Write([]byte("XREADGROUP GROUP g w BLOCK 0 STREAMS s >\r\nPING\r\n")); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{`[[$"s" [[$"9-1" [$"f" $"v"]]]]]`, `+"PONG"`} {
		r, err := readReply(rd)
		if err != nil || r.String() != w {
			t.Fatalf("got %v (%v), want %s", r, err, w)
		}
	}
}

// blockedFeed runs a connection of a new server, with a stream "s" of one
// entry, on input in a synctest bubble. Once every goroutine is blocked it
// calls check with the stream and what was written so far, then adds an
// entry, and once all are blocked again calls check once more.
func blockedFeed(t *testing.T, input string, check func(t *testing.T, s *xstream.Stream, written string, added bool)) {
	synctest.Test(t, func(t *testing.T) {
		f := newFeedConn(input, "-", len(input))
		f.record = true
		f.done = make(chan struct{})
		srv := New(Options{})
		s := srv.DB(0).Stream("s")
		s.Add(xstream.AddArgs{ID: "1-1"}, xstream.Field{Name: "f", Value: "v"})
		done := startConn(srv, f)
		written := func() string {
			f.mu.Lock()
			defer f.mu.Unlock()
			return f.out.String()
		}
		synctest.Wait()
		check(t, s, written(), false)
		s.Add(xstream.AddArgs{ID: "2-1"}, xstream.Field{Name: "f", Value: "v"})
		synctest.Wait()
		check(t, s, written(), true)
		f.Close()
		srv.cancel()
		<-done
	})
}

// The replies of commands pipelined before a blocking read go out before
// it blocks, as with Redis.
func TestRepliesBeforeBlockGoOut(t *testing.T) {
	// In RESP, so that the requests reach the connection together.
	in := resp("PING") + resp("ECHO", "x") + resp("XREAD", "BLOCK", "0", "STREAMS", "s", "$") + resp("PING")
	blockedFeed(t, in, func(t *testing.T, s *xstream.Stream, written string, added bool) {
		want := "+PONG\r\n$1\r\nx\r\n"
		if added {
			want += "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n+PONG\r\n"
		} else if s.Blocked() != 1 {
			t.Fatalf("the read is not blocked")
		}
		if written != want {
			t.Fatalf("written %q, want %q", written, want)
		}
	})
}

// A malformed request pipelined behind a blocked read does not end the
// read (Redis does not read a blocked client's requests); it is answered
// once the read is served, and the connection closes.
func TestProtocolErrorBehindBlockedRead(t *testing.T) {
	in := resp("XREAD", "BLOCK", "0", "STREAMS", "s", "$") + resp("PING") + "*1\r\n$x\r\n"
	blockedFeed(t, in, func(t *testing.T, s *xstream.Stream, written string, added bool) {
		want := ""
		if added {
			want = "*1\r\n*2\r\n$1\r\ns\r\n*1\r\n*2\r\n$3\r\n2-1\r\n*2\r\n$1\r\nf\r\n$1\r\nv\r\n+PONG\r\n-ERR Protocol error: invalid bulk length\r\n"
		} else if s.Blocked() != 1 {
			t.Fatalf("the read no longer waits")
		}
		if written != want {
			t.Fatalf("written %q, want %q", written, want)
		}
	})
}

// After a malformed request behind a blocked read, the connection still
// notices its client going away, which ends the read.
func TestDisconnectAfterProtocolErrorEndsBlock(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		in := resp("XREAD", "BLOCK", "0", "STREAMS", "s", "$") + "*1\r\n$x\r\n"
		f := newFeedConn(in, "-", len(in))
		f.done = make(chan struct{})
		srv := New(Options{})
		s := srv.DB(0).Stream("s")
		done := startConn(srv, f)
		synctest.Wait()
		if s.Blocked() != 1 {
			t.Fatal("the read is not blocked")
		}
		f.Close()
		<-done // serve returns: the read ended
		if s.Blocked() != 0 {
			t.Fatal("the read is still registered")
		}
		srv.cancel()
	})
}
