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
// Options.Clock), and so do durations in precise mode (below); the coarse
// clock ticks by the process's monotonic clock, which a test's clock
// does not move.
//
// Timing: a clock read costs 100 to 300 ns on the VMs measured, as much as
// a PING, so a command is not timed with two reads unless the threshold
// asks for it. Below coarseBelow (10 ms) it is (precise mode, as when
// logging every command with 0). From coarseBelow on, which Redis's
// default of 10 ms is, a command reads a coarse clock instead, an atomic
// that a ticker sets every tick (1 ms) while some connection runs
// commands (busy): a command pays two atomic loads, a duration is known
// to a tick, and an idle server does not tick. A negative threshold turns
// the log off: one atomic load.

const (
	slowTick    = time.Millisecond
	coarseBelow = 10 * slowTick / time.Microsecond // µs
	// The most arguments and bytes of each that an entry keeps.
	slowMaxArgs  = 32
	slowMaxBytes = 128
)

// slowlog is a server's slow log and its clocks.
type slowlog struct {
	threshold atomic.Int64 // µs, slowlog-log-slower-than; <0: off
	maxLen    atomic.Int64 // slowlog-max-len

	coarse  atomic.Int64 // µs of the monotonic clock (monoMicro) at the last tick
	busy    atomic.Int32 // connections running commands
	ticking atomic.Bool
	wg      sync.WaitGroup // the ticker

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

// monoStart is the origin of monoMicro.
var monoStart = time.Now()

// monoMicro is the process's monotonic clock in µs.
func monoMicro() int64 { return time.Since(monoStart).Microseconds() }

// slowNow returns the time in µs by the clock of threshold th: the
// server's clock in precise mode, the coarse clock from coarseBelow on.
func (s *Server) slowNow(th int64) int64 {
	if th < int64(coarseBelow) {
		return s.now().UnixMicro()
	}
	return s.slow.coarse.Load()
}

// slowBusy notes that c runs commands (true) or waits (for input, or
// blocked), starting the ticker of the coarse clock when the log needs it
// and none ticks. A few atomic operations.
func (c *conn) slowBusy(busy bool) {
	l := &c.srv.slow
	if !busy {
		l.busy.Add(-1)
		return
	}
	l.busy.Add(1)
	c.srv.startTicker()
}

// startTicker starts the ticker of the coarse clock when the threshold is
// coarse, a connection is busy and none ticks.
func (s *Server) startTicker() {
	l := &s.slow
	if l.threshold.Load() >= int64(coarseBelow) && l.busy.Load() > 0 && !l.ticking.Load() && l.ticking.CompareAndSwap(false, true) {
		l.coarse.Store(monoMicro())
		l.wg.Add(1)
		go s.tick(s.ctx.Done())
	}
}

// tick sets the coarse clock every slowTick while a connection is busy,
// and returns at the first tick that finds none, or at shutdown (done).
func (s *Server) tick(done <-chan struct{}) {
	l := &s.slow
	defer l.wg.Done()
	t := time.NewTicker(slowTick)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-done:
			l.ticking.Store(false)
			return
		}
		l.coarse.Store(monoMicro())
		if l.busy.Load() == 0 {
			l.ticking.Store(false)
			// A connection that got busy since may have seen ticking
			// still true: go on for it, unless it started a ticker.
			if l.busy.Load() == 0 || !l.ticking.CompareAndSwap(false, true) {
				return
			}
		}
	}
}

// slowEnd logs cmd, which took elapsed µs (by slowNow(th)), when that,
// less what it waited blocked, is the threshold or more (as it is now:
// CONFIG SET's own change counts).
func (c *conn) slowEnd(th, elapsed int64, cmd *command, args [][]byte) {
	d := elapsed - c.blockedUS
	c.blockedUS = 0
	if now := c.srv.slow.threshold.Load(); now < 0 || d < now || cmd.skipSlowlog {
		return
	}
	e := slowEntry{unix: c.srv.now().Unix(), usec: d, addr: c.public.addr, name: c.name, args: slowArgs(args)}
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

// setBusy moves c in or out of the busy connections, once each way.
func (c *conn) setBusy(busy bool) {
	if c.busy != busy {
		c.busy = busy
		c.slowBusy(busy)
	}
}
