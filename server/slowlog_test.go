package server

import (
	"strings"
	"sync"
	"testing"
	"time"
)

func TestDiffSlowlog(t *testing.T) {
	long := strings.Repeat("x", 130)
	many := strings.Repeat(" a", 40)
	trackScript(t, "T W", `
T CONFIG GET slowlog-log-slower-than
T CONFIG GET slowlog-max-len
T CONFIG SET slowlog-log-slower-than 0
W SETNAME
W CLIENT SETNAME wname
W XADD s 1-1 f v
W AUTH x
W HELLO 2 AUTH default secret
W MULTI
W XLEN s
W EXEC
W XLEN s
W ECHO `+long+`
W XADD s 2-1 f`+many+` v
W XADD s 3-1 f`+many[:60]+`
T SLOWLOG LEN
T SLOWLOG GET 3
T SLOWLOG GET
T SLOWLOG GET -1
T SLOWLOG GET -2
T SLOWLOG GET x
T SLOWLOG GET 0
T SLOWLOG GET 1 2
T SlowLog Get 1 2
T SLOWLOG HELP
T SLOWLOG LEN x
T SLOWLOG RESET
T SLOWLOG LEN
T CONFIG SET slowlog-max-len 2
T SLOWLOG LEN
T PING
T SLOWLOG GET -1
T CONFIG SET slowlog-max-len -1
T CONFIG SET slowlog-max-len x
T CONFIG SET slowlog-log-slower-than x
T CONFIG SET slowlog-log-slower-than -5
T CONFIG SET slowlog-log-slower-than 1 slowlog-log-slower-than 2
T PING
T SLOWLOG LEN
T CONFIG SET slowlog-log-slower-than -1
T SLOWLOG RESET
T PING
T SLOWLOG LEN
T CONFIG SET slowlog-log-slower-than 0
T CONFIG SET slowlog-max-len 0
T PING
T SLOWLOG LEN
T SLOWLOG FOO
T CONFIG SET slowlog-log-slower-than 10000 slowlog-max-len 128
`)
}

// steppingClock is a clock that moves step at each reading: a command's
// duration is step times the readings it makes (two for the log, one
// more for XADD *'s ID), whatever the time it really took.
type steppingClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func (s *steppingClock) read() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.now = s.now.Add(s.step)
	return s.now
}

// In precise mode (a threshold below 10 ms) a command is timed by the
// server's clock: XADD * reads it once more than XLEN, and is the one past
// the threshold.
func TestSlowlogThreshold(t *testing.T) {
	clk := &steppingClock{now: time.Unix(1700000000, 0), step: 3 * time.Millisecond}
	srv := RunTWith(t, Options{Clock: clk.read})
	c := dialWire(t, srv.Addr())
	expectWire(t, c, "+OK\r\n", "CONFIG", "SET", "slowlog-log-slower-than", "5000")
	expectWire(t, c, "+OK\r\n", "SLOWLOG", "RESET") // CONFIG SET itself reads the clock twice: 3000 µs
	expectWire(t, c, ":0\r\n", "XLEN", "s")
	id := string(c.do(t, "XADD", "s", "*", "f", "v"))
	expectWire(t, c, ":1\r\n", "SLOWLOG", "LEN")
	got := string(c.do(t, "SLOWLOG", "GET"))
	addr := c.nc.LocalAddr().String()
	id = strings.TrimSuffix(id[strings.Index(id, "\n")+1:], "\r\n")
	want := "*1\r\n*6\r\n:0\r\n:" + strings.Split(got, "\r\n")[3][1:] + "\r\n:6000\r\n*5\r\n$4\r\nXADD\r\n$1\r\ns\r\n$1\r\n*\r\n$1\r\nf\r\n$1\r\nv\r\n$" + itoa(len(addr)) + "\r\n" + addr + "\r\n$0\r\n\r\n"
	if got != want {
		t.Fatalf("SLOWLOG GET:\n got %q\nwant %q (entry of %s)", got, want, id)
	}
}

// An entry's time is the server's clock; its fields as Redis gives them.
func TestSlowlogEntryFixedClock(t *testing.T) {
	srv := RunT(t)
	srv.SetTime(time.Unix(1700000000, 0))
	c := dialWire(t, srv.Addr())
	expectWire(t, c, "+OK\r\n", "CONFIG", "SET", "slowlog-log-slower-than", "0", "slowlog-max-len", "1")
	expectWire(t, c, "+OK\r\n", "CLIENT", "SETNAME", "me")
	expectWire(t, c, "$2\r\nhi\r\n", "ECHO", "hi")
	addr := c.nc.LocalAddr().String()
	expectWire(t, c, "*1\r\n*6\r\n:2\r\n:1700000000\r\n:0\r\n*2\r\n$4\r\nECHO\r\n$2\r\nhi\r\n$"+itoa(len(addr))+"\r\n"+addr+"\r\n$2\r\nme\r\n", "SLOWLOG", "GET")
}

// In coarse mode (from 10 ms) the duration is read from the coarse clock
// the ticker sets: the test sets it as a tick would.
func TestSlowlogCoarse(t *testing.T) {
	srv := New(Options{})
	srv.SetTime(time.Unix(1700000000, 0))
	c := &conn{srv: srv}
	l := &srv.slow
	l.coarse.Store(1_000_000)
	th := l.threshold.Load() // Redis's default, 10000
	args := [][]byte{[]byte("XLEN"), []byte("s")}
	took := func(us int64) int64 { // as call measures it
		start := srv.slowNow(th)
		l.coarse.Store(start + us)
		return srv.slowNow(th) - start
	}
	c.slowEnd(th, took(9000), commands["xlen"], args)
	c.slowEnd(th, took(15000), commands["xlen"], args)
	// A blocked command's wait is left out.
	c.blockedUS = 20000
	c.slowEnd(th, took(25000), commands["xread"], args)
	if len(l.entries) != 1 || l.entries[0].usec != 15000 || l.entries[0].unix != 1700000000 {
		t.Fatalf("entries %+v, want one of 15000 µs", l.entries)
	}
}

// The ticker of the coarse clock runs while a connection is busy and
// stops when none is; an idle server does not tick.
func TestSlowlogTickerStops(t *testing.T) {
	srv := RunT(t)
	c := dialWire(t, srv.Addr())
	expectWire(t, c, "+PONG\r\n", "PING")
	srv.slow.wg.Wait() // returns once the ticker found no busy connection
	if srv.slow.ticking.Load() || srv.slow.busy.Load() != 0 {
		t.Fatalf("ticking %v, busy %d", srv.slow.ticking.Load(), srv.slow.busy.Load())
	}
	// A command starts it again, with a fresh clock (the monotonic one:
	// the server's clock, which a test sets, does not move it).
	srv.SetTime(time.Unix(1800000000, 0))
	before := monoMicro()
	expectWire(t, c, "+PONG\r\n", "PING")
	if got := srv.slow.coarse.Load(); got < before || got > monoMicro() {
		t.Fatalf("coarse clock %d, not between %d and now", got, before)
	}
}
