package server

import (
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tidwall/redcon"
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
// duration is step times the readings it makes (its end, and one more
// for XADD *'s ID), whatever the time it really took.
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

// add moves the clock d, as a test does between readings; with a step
// of 0 the clock moves only so.
func (s *steppingClock) add(d time.Duration) {
	s.mu.Lock()
	s.now = s.now.Add(d)
	s.mu.Unlock()
}

// A call's time runs from the mark to its end, less what it waited
// blocked; the end is the next call's mark. A duration across a change of
// clock (a test's first SetTime) counts as 0.
func TestSlowlogTimeCall(t *testing.T) {
	clk := &steppingClock{now: time.Unix(1700000000, 0)} // step 0: moved by add only
	srv := New(Options{Clock: clk.read})
	c := &conn{srv: srv}
	args := [][]byte{[]byte("XLEN"), []byte("s")}
	took := func(d time.Duration) time.Duration { // as call measures it
		start, srvClock := c.mark, c.markSrv
		clk.add(d)
		return c.timeCall(start, srvClock)
	}
	c.markNow()
	c.slowEnd(took(9*time.Millisecond), commands["xlen"], args) // Redis's default threshold: 10 ms
	c.slowEnd(took(15*time.Millisecond), commands["xlen"], args)
	c.blockedNS = int64(20 * time.Millisecond)
	c.slowEnd(took(25*time.Millisecond), commands["xread"], args)
	if c.blockedNS != 0 {
		t.Fatalf("blockedNS %d after the call, want 0", c.blockedNS)
	}
	l := &srv.slow
	if len(l.entries) != 1 || l.entries[0].usec != 15000 || l.entries[0].unix != 1700000000 {
		t.Fatalf("entries %+v, want one of 15000 µs", l.entries)
	}
	if d := took(time.Millisecond); d != time.Millisecond {
		t.Fatalf("took %v, want 1ms", d)
	}

	plain := New(Options{})
	c = &conn{srv: plain}
	c.markNow()
	if c.markSrv {
		t.Fatal("the mark of a server without a test clock is of the server's clock")
	}
	start := c.mark
	plain.SetTime(time.Unix(1800000000, 0))
	if d := c.timeCall(start, false); d != 0 || !c.markSrv {
		t.Fatalf("across SetTime: %v (mark of the server's clock %v), want 0 (true)", d, c.markSrv)
	}
}

// The time a client takes to send its next request is not its command's:
// the mark is set when input has been read.
func TestSlowlogWaitNotTimed(t *testing.T) {
	clk := &steppingClock{now: time.Unix(1700000000, 0)} // step 0: moved by add only
	srv := RunTWith(t, Options{Clock: clk.read})
	c := dialWire(t, srv.Addr())
	expectWire(t, c, "+OK\r\n", "CONFIG", "SET", "slowlog-log-slower-than", "1000")
	expectWire(t, c, "+PONG\r\n", "PING")
	clk.add(time.Second) // the client waits
	expectWire(t, c, "+PONG\r\n", "PING")
	expectWire(t, c, ":0\r\n", "SLOWLOG", "LEN")
}

// A large request is timed from the end of its parse, as Redis times a
// command from its call; a small one's parse counts (slowlog.go's
// Timing). The test's parser moves the clock as a slow parse would.
func TestSlowlogBigParseNotTimed(t *testing.T) {
	clk := &steppingClock{now: time.Unix(1700000000, 0)} // step 0: moved by add only
	srv := New(Options{Clock: clk.read})
	srv.parseRequest = func(packet []byte, argsbuf [][]byte) (bool, [][]byte, redcon.Kind, []byte, error) {
		clk.add(20 * time.Millisecond)
		return parseArray(packet, argsbuf)
	}
	startT(t, srv)
	c := dialWire(t, srv.Addr())
	big := []string{"XADD", "s", "*"}
	for i := range bigParseArgs / 2 {
		big = append(big, "f"+itoa(i), "v")
	}
	if got := c.do(t, big...); got[0] != '$' {
		t.Fatalf("XADD of %d arguments: %q", len(big), got)
	}
	expectWire(t, c, ":0\r\n", "SLOWLOG", "LEN")
	expectWire(t, c, ":1\r\n", "XLEN", "s") // 20 ms of parse: logged
	if got := string(c.do(t, "SLOWLOG", "GET")); !strings.Contains(got, "$4\r\nXLEN\r\n") || strings.Contains(got, "XADD") {
		t.Fatalf("SLOWLOG GET %q, want only the XLEN", got)
	}
}

// INFO commandstats times every call (with the slow log's clock): five
// XLENs of one step of the test's clock each are 5 steps.
func TestCommandstatsEveryCall(t *testing.T) {
	clk := &steppingClock{now: time.Unix(1700000000, 0), step: 3 * time.Millisecond}
	srv := RunTWith(t, Options{Clock: clk.read})
	c := dialWire(t, srv.Addr())
	for range 5 {
		expectWire(t, c, ":0\r\n", "XLEN", "s")
	}
	info := string(c.do(t, "INFO", "commandstats"))
	if want := "cmdstat_xlen:calls=5,usec=15000,usec_per_call=3000.00,"; !strings.Contains(info, want) {
		t.Fatalf("INFO commandstats %q, want %q", info, want)
	}
}
