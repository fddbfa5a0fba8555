package server

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// SLOWLOG, as Redis 7.0: every command that runs (but EXEC, whose
// commands are logged one by one) and takes slowlog-log-slower-than
// microseconds or more, the time it waited blocked left out, is logged,
// newest first, up to slowlog-max-len entries (trimmed at the next entry).
// An entry holds an ID, the unix time, the microseconds, the arguments
// (at most 32, the last standing for those left out, and 128 bytes of
// each; AUTH's redacted), and the client's address and name. Its unix
// time comes from the server's clock (SetTime, FastForward,
// Options.Clock); its duration as Timing (below) says.
//
// Timing: a command's time runs from a mark to one clock reading when it
// returns, and that reading is the next command's mark: one reading a
// command (53-60 ns on the VM measured, against 91-101 for time.Now:
// BenchmarkClock/slowClock), with no goroutine ticking a clock. A mark is also set when input has been read
// (fill), after a large request was parsed, and after replies were
// written, so that neither waiting for the client nor writing to it
// counts. What lies between two commands of a batch (parsing the next
// one, MULTI's queueing) counts towards the next; it is below a
// microsecond for the requests of usual sizes. The time a command waited
// blocked is left out. The same durations feed INFO commandstats, exact
// for every call. They come from the monotonic clock, or from the
// server's clock once a test injected or moved it (Options.Clock,
// SetTime, FastForward). A negative threshold turns the log off.

const (
	// The most arguments and bytes of each that an entry keeps.
	slowMaxArgs  = 32
	slowMaxBytes = 128
	// A request of more arguments or bytes than these is timed from the
	// end of its parse, as Redis times a command from its call.
	bigParseArgs  = 1024
	bigParseBytes = 64 << 10
)

// slowlog is a server's slow log and its clocks.
type slowlog struct {
	threshold atomic.Int64 // µs, slowlog-log-slower-than; <0: off
	maxLen    atomic.Int64 // slowlog-max-len

	mu      sync.Mutex
	entries []slowEntry // oldest first
	nextID  int64
}

// slowEntry is an entry of the log.
type slowEntry struct {
	id, unix, usec int64
	args           []string
	addr, name     string
}

func (l *slowlog) init() {
	l.threshold.Store(10000)
	l.maxLen.Store(128)
}

func init() {
	for name, spec := range slowlogSpecs {
		commandSpecs[name] = spec
	}
	commandDocsData["slowlog|get"] = docSpec{
		history: [][2]string{{"4.0.0", "Added client IP address, port and name to the reply."}},
		args:    [][]docNode{{{key: "name", str: "count"}, {key: "type", str: "integer"}, {key: "flags", flags: []string{"optional"}}}},
	}
	register("slowlog|get", -2, slowlogGet)
	register("slowlog|len", 2, func(c *conn, args [][]byte) {
		l := &c.srv.slow
		l.mu.Lock()
		n := len(l.entries)
		l.mu.Unlock()
		c.int(int64(n))
	})
	register("slowlog|reset", 2, func(c *conn, args [][]byte) {
		l := &c.srv.slow
		l.mu.Lock()
		l.entries = nil
		l.mu.Unlock()
		c.ok()
	})
	register("slowlog|help", 2, func(c *conn, args [][]byte) { c.help(slowlogHelp) })
}

var slowlogHelp = []string{
	"SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"GET [<count>]",
	"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
	"    Entries are made of:",
	"    id, timestamp, time in microseconds, arguments array, client IP and port,",
	"    client name",
	"LEN",
	"    Return the length of the slowlog.",
	"RESET",
	"    Reset the slowlog.",
	"HELP",
	"    Prints this help.",
}

// slowlogGet answers SLOWLOG GET [count]: the newest count entries (10
// by default, all with -1). O(count).
func slowlogGet(c *conn, args [][]byte) {
	if len(args) > 3 {
		c.err(fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%s'. Try SLOWLOG HELP.", args[1]))
		return
	}
	count := int64(10)
	if len(args) == 3 {
		n, ok := parseLL(args[2])
		if !ok || n < -1 {
			c.err("ERR count should be greater than or equal to -1")
			return
		}
		count = n
	}
	l := &c.srv.slow
	l.mu.Lock()
	n := int64(len(l.entries))
	if count == -1 || count > n {
		count = n
	}
	picked := make([]slowEntry, count)
	for i := range picked {
		picked[i] = l.entries[n-1-int64(i)]
	}
	l.mu.Unlock()
	c.array(len(picked))
	for _, e := range picked {
		c.array(6)
		c.int(e.id)
		c.int(e.unix)
		c.int(e.usec)
		c.array(len(e.args))
		for _, a := range e.args {
			c.bulk(a)
		}
		c.bulk(e.addr)
		c.bulk(e.name)
	}
}

// monoStart is the origin of the monotonic readings of slowClock.
var monoStart = time.Now()

// slowClock reads the clock of command durations, in ns: the monotonic
// clock, or the server's clock (srv true) once a test injected it or set
// or moved it. A duration is only taken between two readings of the same
// clock.
func (s *Server) slowClock() (ns int64, srv bool) {
	if s.monoDurations() {
		return int64(time.Since(monoStart)), false
	}
	return s.now().UnixNano(), true
}

// monoDurations reports whether durations go by the monotonic clock: no
// test injected the server's clock, nor set or moved it.
func (s *Server) monoDurations() bool { return s.opts.Clock == nil && s.clock.st.Load() == nil }

// markAt sets the mark the next command's time starts from at t, a
// time.Now reading the caller has anyway, or at a fresh reading of
// slowClock when the server's clock is in use.
func (c *conn) markAt(t time.Time) {
	if c.srv.monoDurations() {
		c.mark, c.markSrv = int64(t.Sub(monoStart)), false
		return
	}
	c.mark, c.markSrv = c.srv.slowClock()
}

// markNow sets the mark at a fresh reading of slowClock.
func (c *conn) markNow() { c.mark, c.markSrv = c.srv.slowClock() }

// timeCall ends the time of a call that started at the mark start (of
// slowClock's clock srv): it sets the mark to now and returns the call's
// duration in ns, less what it waited blocked; 0 when the clock changed
// in between (a test's first SetTime).
func (c *conn) timeCall(start int64, srv bool) time.Duration {
	now, nowSrv := c.srv.slowClock()
	c.mark, c.markSrv = now, nowSrv
	d := now - start - c.blockedNS
	c.blockedNS = 0
	if nowSrv != srv || d < 0 {
		return 0
	}
	return time.Duration(d)
}

// slowEnd logs cmd, which took d, when its µs are the threshold or more
// (as it is now: CONFIG SET's own change counts).
func (c *conn) slowEnd(d time.Duration, cmd *command, args [][]byte) {
	us := d.Microseconds()
	if th := c.srv.slow.threshold.Load(); th < 0 || us < th || cmd.skipSlowlog {
		return
	}
	e := slowEntry{unix: c.srv.now().Unix(), usec: us, addr: c.public.addr, name: c.name, args: slowArgs(args)}
	l := &c.srv.slow
	l.mu.Lock()
	e.id = l.nextID
	l.nextID++
	l.entries = append(l.entries, e)
	if over := int64(len(l.entries)) - l.maxLen.Load(); over > 0 {
		l.entries = append(l.entries[:0], l.entries[over:]...)
	}
	l.mu.Unlock()
}

// slowArgs returns the arguments an entry keeps, as Redis's
// slowlogCreateEntry.
func slowArgs(args [][]byte) []string {
	n := min(len(args), slowMaxArgs)
	out := make([]string, n)
	red := redactedFrom(args)
	for i := range n {
		a := args[i]
		switch {
		case i == slowMaxArgs-1 && len(args) > slowMaxArgs:
			out[i] = "... (" + strconv.Itoa(len(args)-slowMaxArgs+1) + " more arguments)"
		case i >= red.start && i < red.end:
			out[i] = "(redacted)"
		case len(a) > slowMaxBytes:
			out[i] = string(a[:slowMaxBytes]) + "... (" + strconv.Itoa(len(a)-slowMaxBytes) + " more bytes)"
		default:
			out[i] = string(a)
		}
	}
	return out
}

var slowlogSpecs = map[string]*commandSpec{
	"slowlog": {
		summary:    "A container for slow log commands",
		since:      "2.2.12",
		group:      "server",
		complexity: "Depends on subcommand.",
		acl:        "@slow",
	},
	"slowlog|get": {
		summary:    "Get the slow log's entries",
		since:      "2.2.12",
		group:      "server",
		complexity: "O(N) where N is the number of entries returned",
		flags:      "admin loading stale",
		acl:        "@admin @slow @dangerous",
		tips:       "request_policy:all_nodes nondeterministic_output",
	},
	"slowlog|len": {
		summary:    "Get the slow log's length",
		since:      "2.2.12",
		group:      "server",
		complexity: "O(1)",
		flags:      "admin loading stale",
		acl:        "@admin @slow @dangerous",
		tips:       "request_policy:all_nodes response_policy:agg_sum nondeterministic_output",
	},
	"slowlog|reset": {
		summary:    "Clear all entries from the slow log",
		since:      "2.2.12",
		group:      "server",
		complexity: "O(N) where N is the number of entries in the slowlog",
		flags:      "admin loading stale",
		acl:        "@admin @slow @dangerous",
		tips:       "request_policy:all_nodes response_policy:all_succeeded",
	},
	"slowlog|help": {
		summary:    "Show helpful text about the different subcommands",
		since:      "6.2.0",
		group:      "server",
		complexity: "O(1)",
		flags:      "loading stale",
		acl:        "@slow",
	},
}
