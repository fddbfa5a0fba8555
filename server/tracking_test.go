package server

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// An invalidation reaches a tracking client that waits for input, without
// it sending anything: the queuing interrupts its read.
func TestTrackingPushWakesIdleClient(t *testing.T) {
	srv := RunT(t)
	tr, w := dialWire(t, srv.Addr()), dialWire(t, srv.Addr())
	tr.do(t, "HELLO", "3")
	expectWire(t, tr, "+OK\r\n", "CLIENT", "TRACKING", "ON")
	expectWire(t, tr, ":0\r\n", "XLEN", "s")
	expectWire(t, w, "$3\r\n1-1\r\n", "XADD", "s", "1-1", "f", "v")
	if got := string(tr.push(t)); got != ">2\r\n$10\r\ninvalidate\r\n*1\r\n$1\r\ns\r\n" {
		t.Fatalf("push: %q", got)
	}
	// The key is no longer tracked: a second change sends nothing, and
	// the next reply comes alone.
	expectWire(t, w, "$3\r\n2-1\r\n", "XADD", "s", "2-1", "f", "v")
	expectWire(t, tr, ":2\r\n", "XLEN", "s")
}

// A RESP2 redirect target subscribed to __redis__:invalidate gets the
// message while it waits.
func TestTrackingRedirectWakesSubscriber(t *testing.T) {
	srv := RunT(t)
	tr, w, r := dialWire(t, srv.Addr()), dialWire(t, srv.Addr()), dialWire(t, srv.Addr())
	id := r.do(t, "CLIENT", "ID")
	expectWire(t, r, "*3\r\n$9\r\nsubscribe\r\n$20\r\n__redis__:invalidate\r\n:1\r\n", "SUBSCRIBE", "__redis__:invalidate")
	expectWire(t, tr, "+OK\r\n", "CLIENT", "TRACKING", "ON", "REDIRECT", string(id[1:len(id)-2]))
	expectWire(t, tr, ":0\r\n", "XLEN", "k")
	expectWire(t, w, ":0\r\n", "DEL", "k") // nothing deleted: no message
	expectWire(t, w, "$3\r\n1-1\r\n", "XADD", "k", "1-1", "f", "v")
	if got := string(r.push(t)); got != "*3\r\n$7\r\nmessage\r\n$20\r\n__redis__:invalidate\r\n*1\r\n$1\r\nk\r\n" {
		t.Fatalf("message: %q", got)
	}
	// Other commands are refused in the Pub/Sub context, and change nothing.
	expectWire(t, r, "-ERR Can't execute 'xadd': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n", "XADD", "k", "2-1", "f", "v")
	expectWire(t, w, ":1\r\n", "XLEN", "k")
}

// Tracking clients, writers and connections that come and go, at once:
// for the race detector, and every client's invalidations stay whole
// frames among its replies.
func TestTrackingConcurrent(t *testing.T) {
	srv := RunT(t)
	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := dialWire(t, srv.Addr())
			c.do(t, "HELLO", "3")
			opt := []string{"CLIENT", "TRACKING", "ON"}
			if i%2 == 1 {
				opt = append(opt, "BCAST", "PREFIX", "k")
			}
			c.do(t, opt...)
			for j := range 200 {
				key := fmt.Sprintf("k%d", j%5)
				c.do(t, "XLEN", key)
				c.do(t, "XADD", key, "*", "f", "v")
				if j%50 == 0 {
					c.do(t, "FLUSHALL")
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range 20 {
			c := dialWire(t, srv.Addr())
			c.do(t, "CLIENT", "TRACKING", "ON")
			c.do(t, "XLEN", "k1")
			c.nc.Close()
		}
	}()
	wg.Wait()
}

func expectWire(t *testing.T, c *wireConn, want string, args ...string) {
	t.Helper()
	if got := string(c.do(t, args...)); got != want {
		t.Fatalf("%q: got %q, want %q", args, got, want)
	}
}

// A key removed because it expired is invalidated as changed by no
// client, whether a command finds it expired or the active cycle does.
func TestTrackingExpiredKeys(t *testing.T) {
	srv := RunT(t)
	srv.SetTime(clockT0)
	tr, w := dialWire(t, srv.Addr()), dialWire(t, srv.Addr())
	tr.do(t, "HELLO", "3")
	expectWire(t, tr, "+OK\r\n", "CLIENT", "TRACKING", "ON")
	for _, k := range []string{"lazy", "cycled"} {
		expectWire(t, w, "$3\r\n1-1\r\n", "XADD", k, "1-1", "f", "v")
		expectWire(t, w, ":1\r\n", "PEXPIRE", k, "100")
		expectWire(t, tr, ":1\r\n", "XLEN", k)
	}
	srv.FastForward(101 * time.Millisecond)
	expectWire(t, w, ":0\r\n", "EXISTS", "lazy") // found expired, removed
	if got := string(tr.push(t)); got != ">2\r\n$10\r\ninvalidate\r\n*1\r\n$4\r\nlazy\r\n" {
		t.Fatalf("push for the lazily expired key: %q", got)
	}
	// The server's own loop may run the cycle first: either way one
	// invalidation of the key comes.
	srv.expireCycle(time.Now().Add(time.Minute))
	if got := string(tr.push(t)); got != ">2\r\n$10\r\ninvalidate\r\n*1\r\n$6\r\ncycled\r\n" {
		t.Fatalf("push for the key the cycle removed: %q", got)
	}
	expectWire(t, tr, ":0\r\n", "XLEN", "cycled")
}
