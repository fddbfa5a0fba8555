package server

import (
	"strconv"
	"testing"
	"time"
)

// OBJECT IDLETIME on the server's clock: what touches a key, what does
// not, the LRU clock's resolution and RESTORE's IDLETIME.

func TestObjectIdleTime(t *testing.T) {
	srv := RunT(t)
	srv.SetTime(time.Unix(1_700_000_000, 900e6)) // .9 s: the LRU clock counts whole seconds
	c := newClient(t, srv.Addr())
	c.do(t, "XADD", "k", "1-1", "f", "v")
	wantInt(t, c, 0, "OBJECT", "IDLETIME", "k")
	srv.FastForward(200 * time.Millisecond) // into the next second
	wantInt(t, c, 1, "OBJECT", "IDLETIME", "k")
	srv.FastForward(4 * time.Second)
	wantInt(t, c, 5, "OBJECT", "IDLETIME", "k")

	// Commands that do not touch the key.
	c.do(t, "XGROUP", "CREATE", "k", "g", "0")
	srv.FastForward(10 * time.Second)
	for _, args := range [][]string{
		{"OBJECT", "ENCODING", "k"}, {"OBJECT", "REFCOUNT", "k"}, {"OBJECT", "FREQ", "k"},
		{"TYPE", "k"}, {"EXISTS", "k"}, {"TTL", "k"}, {"PTTL", "k"}, {"EXPIRETIME", "k"},
		{"PEXPIRETIME", "k"}, {"MEMORY", "USAGE", "k"}, {"KEYS", "*"}, {"SCAN", "0"}, {"DBSIZE"},
		{"TOUCH", "nosuch"}, {"XLEN", "other"},
	} {
		c.do(t, args...)
		wantInt(t, c, 10, "OBJECT", "IDLETIME", "k")
	}

	// Commands that do: reads, writes (failed ones too, once they found
	// the key), TOUCH.
	c.do(t, "XLEN", "k")
	for _, args := range [][]string{
		{"XLEN", "k"}, {"XRANGE", "k", "-", "+"}, {"XREVRANGE", "k", "+", "-"},
		{"XREAD", "STREAMS", "k", "0"}, {"XINFO", "STREAM", "k"}, {"XINFO", "GROUPS", "k"},
		{"XADD", "k", "*", "f", "v"}, {"XADD", "k", "1-1", "f", "v"}, {"XDEL", "k", "9-9"},
		{"XTRIM", "k", "MAXLEN", "100"}, {"XPENDING", "k", "g"},
		{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "k", ">"}, {"XACK", "k", "g", "1-1"},
		{"XSETID", "k", "999999999999999-0"}, {"EXPIRE", "k", "1000"}, {"PERSIST", "k"},
		{"TOUCH", "nosuch", "k"},
	} {
		srv.FastForward(3 * time.Second)
		wantInt(t, c, 3, "OBJECT", "IDLETIME", "k")
		c.do(t, args...)
		wantInt(t, c, 0, "OBJECT", "IDLETIME", "k")
	}
	wantInt(t, c, 1, "TOUCH", "k", "nosuch")
	wantInt(t, c, 2, "TOUCH", "k", "k")

	// RENAME moves the key's value, touched by the look-up; COPY makes a
	// new one and looks both up.
	srv.FastForward(7 * time.Second)
	c.do(t, "RENAME", "k", "r")
	wantInt(t, c, 0, "OBJECT", "IDLETIME", "r")
	srv.FastForward(7 * time.Second)
	wantInt(t, c, 1, "COPY", "r", "d", "DB", "1")
	wantInt(t, c, 0, "OBJECT", "IDLETIME", "r")
	c.do(t, "SELECT", "1")
	wantInt(t, c, 0, "OBJECT", "IDLETIME", "d")
	srv.FastForward(2 * time.Second)
	// SWAPDB moves the stamps with the keys.
	c.do(t, "SWAPDB", "0", "1")
	c.do(t, "SELECT", "0")
	wantInt(t, c, 2, "OBJECT", "IDLETIME", "d")
	if r := c.do(t, "OBJECT", "IDLETIME", "r"); r.kind != '$' || !r.null {
		t.Fatalf("OBJECT IDLETIME of a key of the other DB: %+v", r)
	}
	c.do(t, "SELECT", "1")
	wantInt(t, c, 2, "OBJECT", "IDLETIME", "r")

	// A key made again under a name keeps no stamp of the one before.
	c.do(t, "DEL", "r")
	srv.FastForward(5 * time.Second)
	c.do(t, "XADD", "r", "1-1", "f", "v")
	wantInt(t, c, 0, "OBJECT", "IDLETIME", "r")

	// RESTORE stamps the key made, IDLETIME seconds back.
	dump := legacyDump([]int{1}, nil, 0, nil)
	c.do(t, "RESTORE", "x", "0", dump, "IDLETIME", "1000")
	wantInt(t, c, 1000, "OBJECT", "IDLETIME", "x")
	srv.FastForward(time.Second)
	wantInt(t, c, 1001, "OBJECT", "IDLETIME", "x")
	c.do(t, "RESTORE", "x", "0", dump, "REPLACE")
	wantInt(t, c, 0, "OBJECT", "IDLETIME", "x")
	// Past the start of the 24-bit clock: half its range back, as Redis.
	c.do(t, "RESTORE", "y", "0", dump, "IDLETIME", strconv.Itoa(1<<30))
	clock := lruClock(srv.now().Unix())
	wantInt(t, c, lruIdle(clock, (clock+lruMax/2)%lruMax), "OBJECT", "IDLETIME", "y")

	// A missing key is a null; the arity is checked.
	if r := c.do(t, "OBJECT", "IDLETIME", "nosuch"); r.kind != '$' || !r.null {
		t.Fatalf("OBJECT IDLETIME nosuch: %+v", r)
	}
	if r := c.do(t, "OBJECT", "IDLETIME"); r.kind != '-' || r.s != "ERR wrong number of arguments for 'object|idletime' command" {
		t.Fatalf("OBJECT IDLETIME: %+v", r)
	}
}

// A key the Go API made, or one the DB held when the server opened it,
// was last accessed when the server first saw its DB.
func TestObjectIdleTimeUnstamped(t *testing.T) {
	dir := t.TempDir()
	at := time.Unix(1_700_000_000, 0)
	srv := RunTWith(t, Options{Dir: dir, Clock: func() time.Time { return at }})
	srv.DB(0).Stream("k")
	c := newClient(t, srv.Addr())
	srv.FastForward(30 * time.Second)
	wantInt(t, c, 30, "OBJECT", "IDLETIME", "k")
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	c = newClient(t, srv.Addr())
	srv.FastForward(5 * time.Second)
	wantInt(t, c, 5, "OBJECT", "IDLETIME", "k") // from the restart on
	c.do(t, "XLEN", "k")
	wantInt(t, c, 0, "OBJECT", "IDLETIME", "k")
}

// The 24-bit clock wraps as Redis's does.
func TestLRUIdleWraps(t *testing.T) {
	for _, tc := range []struct{ clock, stamp, want int64 }{
		{10, 3, 7}, {5, 5, 0}, {2, lruMax - 1, 3}, {0, lruMax, 0},
	} {
		if got := lruIdle(tc.clock, tc.stamp); got != tc.want {
			t.Errorf("lruIdle(%d, %d) = %d, want %d", tc.clock, tc.stamp, got, tc.want)
		}
	}
	if lruClock(1<<24+5) != 5 {
		t.Errorf("lruClock(1<<24+5) = %d", lruClock(1<<24+5))
	}
}

// The table of names stays within twice the DB's keys as keys come and
// go.
func TestAccessTablePrunes(t *testing.T) {
	srv := RunT(t)
	c := newClient(t, srv.Addr())
	for i := range 5000 {
		k := "k" + strconv.Itoa(i)
		c.do(t, "XADD", k, "1-1", "f", "v")
		c.do(t, "DEL", k)
	}
	tab := srv.access(0)
	tab.mu.RLock()
	n := len(tab.m)
	tab.mu.RUnlock()
	if n > 1024+1 {
		t.Fatalf("%d names kept for an empty DB", n)
	}
}

// Which commands touch a key, against Redis 7.0: a key restored IDLETIME
// 1000 seconds back reads 1000 (or 1001, past a second) until a command
// touches it, and 0 (or 1) after.
func TestDiffObjectIdleTime(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		p.real.do(t, "XADD", "src", "1-1", "f", "v")
		p.real.do(t, "XGROUP", "CREATE", "src", "g", "0")
		dump := p.real.do(t, "DUMP", "src").s
		for _, args := range [][]string{
			{"OBJECT", "ENCODING", "k"}, {"OBJECT", "FREQ", "k"}, {"OBJECT", "REFCOUNT", "k"},
			{"TYPE", "k"}, {"EXISTS", "k"}, {"TTL", "k"}, {"PTTL", "k"}, {"EXPIRETIME", "k"},
			{"MEMORY", "USAGE", "k"}, {"KEYS", "*"}, {"SCAN", "0"},
			{"XLEN", "k"}, {"XRANGE", "k", "-", "+"}, {"XREVRANGE", "k", "+", "-", "COUNT", "1"},
			{"XREAD", "STREAMS", "k", "0"}, {"XINFO", "STREAM", "k"}, {"XINFO", "GROUPS", "k"},
			{"XINFO", "CONSUMERS", "k", "g"}, {"XPENDING", "k", "g"}, {"XADD", "k", "*", "f", "v"},
			{"XADD", "k", "1-1", "f", "v"}, {"XDEL", "k", "1-1"}, {"XTRIM", "k", "MAXLEN", "0"},
			{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "k", ">"}, {"XACK", "k", "g", "1-1"},
			{"XCLAIM", "k", "g", "c", "0", "1-1"}, {"XGROUP", "CREATE", "k", "g2", "$"},
			{"XSETID", "k", "5-5"}, {"EXPIRE", "k", "100"}, {"PERSIST", "k"}, {"TOUCH", "k"},
			{"DUMP", "k"}, {"COPY", "k", "k2"}, {"RENAME", "k", "k"},
		} {
			idleAfter(t, p, args, func() {
				p.do("DEL", "k", "k2")
				p.do("RESTORE", "k", "0", dump, "IDLETIME", "1000")
			}, "k")
		}
		p.do("OBJECT", "IDLETIME", "nosuch")
		p.do("OBJECT", "IDLETIME")
		p.do("OBJECT", "IDLETIME", "k", "x")
		p.do("RESTORE", "k3", "0", dump, "IDLETIME", "-1")
		p.do("RESTORE", "k3", "0", dump, "IDLETIME", "x")
		p.do("TOUCH", "k", "nosuch", "k")
		p.do("TOUCH")
		p.do("OBJECT", "FREQ", "k")
		p.do("OBJECT", "FREQ", "nosuch")
	})
}

// idleAfter runs setup, then args on both servers, and fails the test
// unless OBJECT IDLETIME of each of keys is the same on both. When a
// second passed on one side (1000 or 0 read as one more: Redis's LRU
// clock is cached at hz 10), it tries again, up to three times.
func idleAfter(t *testing.T, p *pair, args []string, setup func(), keys ...string) {
	t.Helper()
	for try := 0; ; try++ {
		setup()
		w, g := p.real.do(t, args...), p.xs.do(t, args...)
		retry := false
		for _, k := range keys {
			want, got := p.real.do(t, "OBJECT", "IDLETIME", k), p.xs.do(t, "OBJECT", "IDLETIME", k)
			if equalReplies(want, got) {
				continue
			}
			if try < 3 && want.kind == ':' && got.kind == ':' && (want.n-got.n == 1 || got.n-want.n == 1) {
				retry = true
				continue
			}
			t.Fatalf("OBJECT IDLETIME %s after %q (%v, %v):\n  redis:   %v\n  xstream: %v", k, args, w, g, want, got)
		}
		if !retry {
			return
		}
	}
}

// A command rejected on its arguments touches its keys only when Redis
// looked them up before it found the fault: most check their options,
// counts, times and IDs first (XADD, XRANGE, XTRIM, XREAD's options,
// XPENDING, XGROUP CREATE's and SETID's options, XSETID, the EXPIRE
// family), some look the key up first (XDEL, XACK, the IDs of XREAD,
// RESTORE's BUSYKEY).
func TestDiffObjectIdleTimeRejected(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		p.real.do(t, "XADD", "src", "1-1", "f", "v")
		p.real.do(t, "XGROUP", "CREATE", "src", "g", "0")
		p.real.do(t, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "src", ">")
		dump := p.real.do(t, "DUMP", "src").s
		setup := func() {
			p.do("DEL", "k", "k2", "k3")
			p.do("RESTORE", "k", "0", dump, "IDLETIME", "1000")
			p.do("RESTORE", "k2", "0", dump, "IDLETIME", "1000")
		}
		for _, args := range [][]string{
			{"XADD", "k", "MAXLEN", "x", "*", "f", "v"}, {"XADD", "k", "*", "f"}, {"XADD", "k", "bad", "f", "v"},
			{"XADD", "k", "0-0", "f", "v"}, {"XADD", "k", "MAXLEN", "10", "LIMIT", "10", "*", "f", "v"},
			{"XADD", "k", "MAXLEN", "~", "10", "LIMIT", "x", "*", "f", "v"}, {"XADD", "k", "FOO", "*", "f", "v"},
			{"XADD", "k", "MINID", "bad", "*", "f", "v"}, {"XADD", "k", "MAXLEN", "-1", "*", "f", "v"},
			{"XADD", "k", "1-1", "f", "v"},
			{"XRANGE", "k", "x", "+"}, {"XRANGE", "k", "-", "+", "COUNT", "x"}, {"XRANGE", "k", "(", "+"},
			{"XRANGE", "k", "-", "+", "COUNT"}, {"XRANGE", "k", "-", "+", "FOO", "1"}, {"XREVRANGE", "k", "+", "x"},
			{"XRANGE", "k", "(+", "+"}, {"XRANGE", "k", "-", "+", "COUNT", "0"},
			{"XDEL", "k", "bad"}, {"XTRIM", "k", "MAXLEN", "x"}, {"XTRIM", "k", "FOO", "1"}, {"XTRIM", "k", "MINID", "bad"},
			{"XREAD", "STREAMS", "k", "bad"}, {"XREAD", "COUNT", "x", "STREAMS", "k", "0"}, {"XREAD", "STREAMS", "k", "k", "0"},
			{"XREAD", "BLOCK", "x", "STREAMS", "k", "0"}, {"XREAD", "STREAMS", "k", ">"},
			{"XREAD", "STREAMS", "k", "k2", "bad", "0"}, {"XREAD", "STREAMS", "k", "k2", "0", "bad"},
			{"XREAD", "STREAMS", "k", "k2", "0", ">"}, {"XREAD", "GROUP", "g", "c", "STREAMS", "k", "0"},
			{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "k", "bad"}, {"XREADGROUP", "GROUP", "nosuch", "c", "STREAMS", "k", ">"},
			{"XREADGROUP", "GROUP", "g", "c", "COUNT", "x", "STREAMS", "k", ">"}, {"XREADGROUP", "GROUP", "g", "c", "STREAMS", "k", "k", ">"},
			{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "k", "k3", "k2", ">", ">", ">"},
			{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "k", "k2", "$", ">"},
			{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "k", "k2", ">", "bad"},
			{"XACK", "k", "g", "bad"}, {"XACK", "k", "nosuch", "1-1"},
			{"XPENDING", "k", "g", "-", "+", "x"}, {"XPENDING", "k", "g", "IDLE", "x", "-", "+", "10"}, {"XPENDING", "k", "nosuch"},
			{"XPENDING", "k", "g", "bad", "+", "10"}, {"XPENDING", "k", "g", "-", "+"},
			{"XCLAIM", "k", "g", "c", "x", "1-1"}, {"XCLAIM", "k", "g", "c", "0", "bad"}, {"XCLAIM", "k", "nosuch", "c", "0", "1-1"},
			{"XCLAIM", "k", "g", "c", "0", "1-1", "IDLE", "x"}, {"XCLAIM", "k", "g", "c", "0", "1-1", "FOO"},
			{"XAUTOCLAIM", "k", "g", "c", "0", "bad"}, {"XAUTOCLAIM", "k", "g", "c", "x", "0"}, {"XAUTOCLAIM", "k", "g", "c", "0", "0", "COUNT", "0"},
			{"XAUTOCLAIM", "k", "nosuch", "c", "0", "0"},
			{"XGROUP", "CREATE", "k", "g", "0"}, {"XGROUP", "CREATE", "k", "g2", "bad"}, {"XGROUP", "CREATE", "k", "g2", "0", "ENTRIESREAD", "x"},
			{"XGROUP", "CREATE", "k", "g2", "0", "FOO"}, {"XGROUP", "CREATE", "k", "g2", "0", "MKSTREAM", "ENTRIESREAD", "1", "x"},
			{"XGROUP", "SETID", "k", "g", "bad"}, {"XGROUP", "SETID", "k", "nosuch", "0"}, {"XGROUP", "SETID", "k", "g", "0", "ENTRIESREAD", "x"},
			{"XGROUP", "SETID", "k", "g", "0", "FOO", "1"}, {"XGROUP", "DESTROY", "k", "nosuch"},
			{"XGROUP", "CREATECONSUMER", "k", "nosuch", "c"}, {"XGROUP", "DELCONSUMER", "k", "nosuch", "c"},
			{"XINFO", "STREAM", "k", "FULL", "COUNT", "x"}, {"XINFO", "STREAM", "k", "FOO"}, {"XINFO", "CONSUMERS", "k", "nosuch"},
			{"XSETID", "k", "bad"}, {"XSETID", "k", "0-1"}, {"XSETID", "k", "5-5", "ENTRIESADDED", "x"},
			{"XSETID", "k", "5-5", "ENTRIESADDED", "0", "MAXDELETEDID", "1-1"}, {"XSETID", "k", "5-5", "FOO"},
			{"XSETID", "k", "5-5", "MAXDELETEDID", "6-6"},
			{"EXPIRE", "k", "x"}, {"EXPIRE", "k", "100", "FOO"}, {"EXPIRE", "k", "100", "NX", "XX"}, {"EXPIRE", "k", "100", "GT", "LT"},
			{"EXPIRE", "k", "100", "GT"}, {"PEXPIRE", "k", "x"}, {"EXPIREAT", "k", "x"}, {"PEXPIREAT", "k", "100000000000000", "FOO"},
			{"EXPIRE", "k", "99999999999999999"}, {"PEXPIRE", "k", "9223372036854775807"},
			{"COPY", "k", "k3", "DB", "x"}, {"COPY", "k", "k3", "FOO"}, {"COPY", "k", "k"}, {"COPY", "k", "k3", "DB", "99"},
			{"COPY", "k", "k2"}, {"RENAMENX", "k", "k"}, {"RENAMENX", "k", "k2"},
			{"RESTORE", "k", "0", dump}, {"RESTORE", "k", "x", dump}, {"RESTORE", "k", "0", "bad"},
			{"RESTORE", "k", "0", "bad", "REPLACE"}, {"RESTORE", "k", "0", dump, "FOO"},
			{"OBJECT", "ENCODING", "k"}, {"MEMORY", "USAGE", "k", "SAMPLES", "x"},
		} {
			idleAfter(t, p, args, setup, "k", "k2")
		}
	})
}

// Without a Redis to compare with: a command rejected on its arguments
// before its look-up leaves the key's stamp; one rejected after it (a bad
// ID of XDELEX, XACKDEL, XDEL) stamps it. XDELEX and XACKDEL (Redis 8.2)
// read their options before the key.
func TestObjectIdleTimeRejected(t *testing.T) {
	srv := RunT(t)
	srv.SetTime(time.Unix(1_700_000_000, 0))
	c := newClient(t, srv.Addr())
	c.do(t, "XADD", "k", "1-1", "f", "v")
	c.do(t, "XGROUP", "CREATE", "k", "g", "0")
	srv.FastForward(10 * time.Second)
	for _, args := range [][]string{
		{"XADD", "k", "bad", "f", "v"}, {"XRANGE", "k", "x", "+"}, {"XTRIM", "k", "MAXLEN", "x"},
		{"XREAD", "COUNT", "x", "STREAMS", "k", "0"}, {"XPENDING", "k", "g", "-", "+", "x"},
		{"XSETID", "k", "bad"}, {"EXPIRE", "k", "x"}, {"XDELEX", "k", "FOO", "IDS", "1", "1-1"},
		{"XACKDEL", "k", "g", "FOO", "IDS", "1", "1-1"}, {"XGROUP", "SETID", "k", "g", "0", "ENTRIESREAD", "x"},
	} {
		if r := c.do(t, args...); r.kind != '-' {
			t.Fatalf("%q: %v, want an error", args, r)
		}
		wantInt(t, c, 10, "OBJECT", "IDLETIME", "k")
	}
	c.do(t, "XLEN", "k")
	for _, args := range [][]string{
		{"XDELEX", "k", "IDS", "1", "bad"}, {"XACKDEL", "k", "g", "IDS", "1", "bad"}, {"XDEL", "k", "bad"},
		{"XREAD", "STREAMS", "k", "bad"},
	} {
		srv.FastForward(4 * time.Second)
		wantInt(t, c, 4, "OBJECT", "IDLETIME", "k")
		if r := c.do(t, args...); r.kind != '-' {
			t.Fatalf("%q: %v, want an error", args, r)
		}
		wantInt(t, c, 0, "OBJECT", "IDLETIME", "k")
	}
}
