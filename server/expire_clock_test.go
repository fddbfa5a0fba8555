package server

import (
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Expiry as the server's clock moves (SetTime, FastForward): lazy
// removal by the commands that name a key, the active cycle, and
// restarts.

var clockT0 = time.UnixMilli(1_700_000_000_000)

// want sends args and fails the test unless the reply is an integer n.
func wantInt(t *testing.T, c *client, n int64, args ...string) {
	t.Helper()
	if r := c.do(t, args...); r.kind != ':' || r.n != n {
		t.Fatalf("%q: %+v, want :%d", args, r, n)
	}
}

func TestExpireClock(t *testing.T) {
	srv := RunT(t)
	srv.expirePaused.Store(true) // only the commands remove keys here
	srv.SetTime(clockT0)
	c := newClient(t, srv.Addr())
	c.do(t, "XADD", "k", "1-1", "f", "v")
	wantInt(t, c, 1, "PEXPIRE", "k", "1500")
	wantInt(t, c, 1500, "PTTL", "k")
	wantInt(t, c, 2, "TTL", "k") // rounded as Redis does
	wantInt(t, c, clockT0.UnixMilli()+1500, "PEXPIRETIME", "k")
	srv.FastForward(time.Second)
	wantInt(t, c, 500, "PTTL", "k")
	wantInt(t, c, 1, "TTL", "k")
	srv.FastForward(500 * time.Millisecond)
	wantInt(t, c, 0, "PTTL", "k") // still there at its expiry time
	wantInt(t, c, 1, "DBSIZE")
	srv.FastForward(time.Millisecond)
	wantInt(t, c, 1, "DBSIZE") // counted until something removes it, as in Redis
	wantInt(t, c, 0, "EXISTS", "k")
	wantInt(t, c, 0, "DBSIZE")
	wantInt(t, c, -2, "PTTL", "k")

	// Every command that names the key removes it once expired.
	for _, args := range [][]string{
		{"TYPE", "k"},
		{"XLEN", "k"},
		{"XRANGE", "k", "-", "+"},
		{"XREAD", "STREAMS", "k", "0"},
		{"XADD", "k", "2-1", "f", "v"}, // a new stream: 2-1 after nothing
		{"XINFO", "STREAM", "k"},
		{"RENAME", "k", "other"},
	} {
		c.do(t, "DEL", "k", "other")
		c.do(t, "XADD", "k", "1-1", "f", "v")
		wantInt(t, c, 1, "PEXPIRE", "k", "10")
		srv.FastForward(11 * time.Millisecond)
		before := c.do(t, "DBSIZE").n
		r := c.do(t, args...)
		switch args[0] {
		case "TYPE":
			if r.s != "none" {
				t.Fatalf("TYPE of an expired key: %+v", r)
			}
		case "XLEN":
			if r.n != 0 {
				t.Fatalf("XLEN of an expired key: %+v", r)
			}
		case "XRANGE":
			if len(r.kids) != 0 {
				t.Fatalf("XRANGE of an expired key: %+v", r)
			}
		case "XREAD":
			if !r.null {
				t.Fatalf("XREAD of an expired key: %+v", r)
			}
		case "XADD":
			if r.s != "2-1" {
				t.Fatalf("XADD on an expired key: %+v", r)
			}
			wantInt(t, c, -1, "PTTL", "k") // the new stream has no expiry
			continue
		case "XINFO", "RENAME":
			if r.kind != '-' || !strings.Contains(r.s, "no such key") {
				t.Fatalf("%s of an expired key: %+v", args[0], r)
			}
		}
		if before != 1 {
			t.Fatalf("DBSIZE %d before %s", before, args[0])
		}
		wantInt(t, c, 0, "DBSIZE")
	}
}

// KEYS and SCAN do not list an expired key; SCAN removes it.
func TestExpireKeysScan(t *testing.T) {
	srv := RunT(t)
	srv.expirePaused.Store(true) // only the commands remove keys here
	srv.SetTime(clockT0)
	c := newClient(t, srv.Addr())
	c.do(t, "XADD", "a", "1-1", "f", "v")
	c.do(t, "XADD", "b", "1-1", "f", "v")
	wantInt(t, c, 1, "PEXPIRE", "a", "10")
	srv.FastForward(11 * time.Millisecond)
	if r := c.do(t, "KEYS", "*"); len(r.kids) != 1 || r.kids[0].s != "b" {
		t.Fatalf("KEYS *: %+v", r)
	}
	if r := c.do(t, "SCAN", "0"); len(r.kids) != 2 || len(r.kids[1].kids) != 1 || r.kids[1].kids[0].s != "b" {
		t.Fatalf("SCAN 0: %+v", r)
	}
}

// The active cycle removes expired keys nobody names, in every DB, and
// INFO keyspace counts the keys with an expiry.
func TestExpireActiveCycle(t *testing.T) {
	srv := RunT(t)
	srv.SetTime(clockT0)
	c := newClient(t, srv.Addr())
	for _, db := range []string{"0", "3"} {
		c.do(t, "SELECT", db)
		for i := range 50 {
			k := "k" + itoa(i)
			c.do(t, "XADD", k, "1-1", "f", "v")
			if i < 45 {
				wantInt(t, c, 1, "PEXPIRE", k, "100")
			}
		}
	}
	info := c.do(t, "INFO", "keyspace").s
	for _, line := range []string{"db0:keys=50,expires=45,", "db3:keys=50,expires=45,"} {
		if !strings.Contains(info, line) {
			t.Fatalf("INFO keyspace %q lacks %q", info, line)
		}
	}
	if n := srv.expireCycle(time.Now().Add(time.Minute)); n != 0 {
		t.Fatalf("the cycle removed %d keys before their time", n)
	}
	srv.FastForward(101 * time.Millisecond)
	// The server's own loop may run a cycle meanwhile: what counts is
	// that none is left after this one.
	srv.expireCycle(time.Now().Add(time.Minute))
	info = c.do(t, "INFO", "keyspace").s
	for _, line := range []string{"db0:keys=5,expires=0,", "db3:keys=5,expires=0,"} {
		if !strings.Contains(info, line) {
			t.Fatalf("INFO keyspace %q lacks %q", info, line)
		}
	}
}

// The background cycle runs by itself, and Close waits for it to end.
func TestExpireLoopRuns(t *testing.T) {
	srv := RunT(t)
	srv.SetTime(clockT0)
	c := newClient(t, srv.Addr())
	c.do(t, "XADD", "k", "1-1", "f", "v")
	wantInt(t, c, 1, "PEXPIRE", "k", "1")
	srv.FastForward(time.Second)
	deadline := time.Now().Add(time.Minute)
	for srv.DB(0).Len() != 0 { // nothing names k: only the loop removes it
		if time.Now().After(deadline) {
			t.Fatal("the active cycle never removed the expired key")
		}
		runtime.Gosched()
	}
	before := runtime.NumGoroutine()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if after := runtime.NumGoroutine(); after >= before {
		t.Fatalf("%d goroutines before Close, %d after", before, after)
	}
}

// A durable server keeps expiries across a restart.
func TestExpireRestart(t *testing.T) {
	srv := RunTDir(t, t.TempDir())
	srv.expirePaused.Store(true) // only the commands remove keys here
	srv.SetTime(clockT0)
	c := newClient(t, srv.Addr())
	c.do(t, "XADD", "k", "1-1", "f", "v")
	c.do(t, "XADD", "p", "1-1", "f", "v")
	wantInt(t, c, 1, "PEXPIRE", "k", "5000")
	wantInt(t, c, 1, "PEXPIRE", "p", "5000")
	wantInt(t, c, 1, "PERSIST", "p")
	c.do(t, "RENAME", "k", "r")
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	c = newClient(t, srv.Addr())
	wantInt(t, c, 5000, "PTTL", "r")
	wantInt(t, c, -1, "PTTL", "p")
	srv.FastForward(5001 * time.Millisecond)
	wantInt(t, c, 0, "EXISTS", "r")
}

// A blocked XREADGROUP on a key the active cycle removes ends with
// UNBLOCKED, as Redis's does.
func TestExpireCycleUnblocks(t *testing.T) {
	srv := RunT(t)
	srv.SetTime(clockT0)
	c := newClient(t, srv.Addr())
	c.do(t, "XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
	wantInt(t, c, 1, "PEXPIRE", "s", "100")
	reader := newClient(t, srv.Addr())
	done := make(chan *reply, 1)
	go func() {
		r, err := reader.send("XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">")
		if err != nil {
			r = &reply{kind: '-', s: err.Error()}
		}
		done <- r
	}()
	deadline := time.Now().Add(time.Minute)
	for {
		if s, ok := srv.DB(0).Lookup("s"); ok && s.Blocked() == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the reader never blocked")
		}
		runtime.Gosched()
	}
	srv.FastForward(101 * time.Millisecond)
	srv.expireCycle(time.Now().Add(time.Minute)) // or the server's own loop, meanwhile
	if n := srv.DB(0).Len(); n != 0 {
		t.Fatalf("%d keys left after the cycle", n)
	}
	if r := <-done; r.kind != '-' || r.s != "UNBLOCKED the stream key no longer exists" {
		t.Fatalf("the blocked reader got %+v", r)
	}
}

// INFO keyspace's avg_ttl is Redis's running estimate from the active
// cycle's samples: the first sample's average TTL, then 98% of the
// estimate and 2% of each sample's; 0 once the DB has nothing to expire,
// and after FLUSHDB.
func TestAvgTTL(t *testing.T) {
	srv := RunT(t)
	srv.expirePaused.Store(true) // the test runs the cycle itself
	srv.SetTime(clockT0)
	c := newClient(t, srv.Addr())
	avg := func() int64 {
		t.Helper()
		m := regexp.MustCompile(`db0:keys=\d+,expires=\d+,avg_ttl=(\d+)\r`).FindStringSubmatch(c.do(t, "INFO", "keyspace").s)
		if m == nil {
			return -1 // no line: an empty DB
		}
		n, _ := strconv.ParseInt(m[1], 10, 64)
		return n
	}
	cycle := func() { srv.expireCycle(time.Now().Add(time.Hour)) }
	c.do(t, "XADD", "a", "1-1", "f", "v")
	c.do(t, "XADD", "b", "1-1", "f", "v")
	c.do(t, "XADD", "keep", "1-1", "f", "v")
	if got := avg(); got != 0 {
		t.Fatalf("avg_ttl before any cycle: %d", got)
	}
	wantInt(t, c, 1, "PEXPIRE", "a", "10000")
	wantInt(t, c, 1, "PEXPIRE", "b", "30000")
	cycle()
	want := int64(20000)/50*49 + 20000/50 // the first sample, as Redis takes it
	if got := avg(); got != want {
		t.Fatalf("avg_ttl after one cycle: %d, want %d", got, want)
	}
	srv.FastForward(5 * time.Second) // now 5 s and 25 s left: 15 s on average
	cycle()
	want = want/50*49 + 15000/50
	if got := avg(); got != want {
		t.Fatalf("avg_ttl after two cycles: %d, want %d", got, want)
	}
	// a has expired: the sample keeps b, 19 s left, and as half of it
	// expired the cycle samples again (b alone), as Redis's does.
	srv.FastForward(6 * time.Second)
	cycle()
	want = want/50*49 + 19000/50
	want = want/50*49 + 19000/50
	if got := avg(); got != want {
		t.Fatalf("avg_ttl after a expired: %d, want %d", got, want)
	}
	wantInt(t, c, 2, "DBSIZE")
	wantInt(t, c, 1, "PERSIST", "b")
	if got := avg(); got != want {
		t.Fatalf("avg_ttl before the cycle sees no expiring key: %d, want %d", got, want)
	}
	cycle()
	if got := avg(); got != 0 {
		t.Fatalf("avg_ttl with nothing to expire: %d", got)
	}
	wantInt(t, c, 1, "PEXPIRE", "b", "1000")
	cycle()
	if got := avg(); got == 0 {
		t.Fatal("avg_ttl stays 0")
	}
	c.do(t, "FLUSHDB")
	c.do(t, "XADD", "a", "1-1", "f", "v")
	if got := avg(); got != 0 {
		t.Fatalf("avg_ttl after FLUSHDB: %d", got)
	}
}

// EXPIRE NX and PERSIST check and set at once, and EXPIRE NX with a time
// past checks and removes the key at once: of many clients at once, one
// answers 1 (in the last step, half send a time past, half a time to come:
// Redis runs them one after the other, and the first leaves the key gone
// or with an expiry for the others).
func TestExpireConditionAtomic(t *testing.T) {
	srv := RunT(t)
	const clients = 16
	var cs [clients]*client
	for i := range cs {
		cs[i] = newClient(t, srv.Addr())
	}
	for round := range 200 {
		key := "k" + strconv.Itoa(round)
		cs[0].do(t, "XADD", key, "1-1", "f", "v")
		for _, args := range [][]string{{"EXPIRE", key, "", "NX"}, {"PERSIST", key}, {"EXPIRE", key, "past", "NX"}} {
			ones := make(chan int64, clients)
			for i, c := range cs {
				go func() {
					a := append([]string(nil), args...)
					switch {
					case a[0] == "EXPIRE" && a[2] == "past" && i%2 == 0:
						a[2] = "-1"
					case a[0] == "EXPIRE":
						a[2] = strconv.Itoa(1000 + i)
					}
					r, err := c.send(a...)
					if err != nil {
						ones <- -1
						return
					}
					ones <- r.n
				}()
			}
			sum := int64(0)
			for range clients {
				sum += <-ones
			}
			if sum != 1 {
				t.Fatalf("round %d: %q answered 1 to %d clients", round, args[0], sum)
			}
		}
	}
}
