package server

import (
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
)

// MONITOR, as Redis 7.0: every command that runs (not those refused
// before they run, nor the admin commands) is shown to the monitoring
// clients as a status line, after it ran (a blocking command: when it
// blocks), the commands of an EXEC before the EXEC:
//
//	+1700000000.123456 [0 127.0.0.1:50000] "XADD" "s" "*" "f" "v"
//
// with the time of the server's clock (SetTime moves it), the DB after the
// command, the client's address, and each argument quoted as Redis's
// sdscatrepr does; the arguments of AUTH and HELLO's AUTH are shown as
// "(redacted)". A monitoring client keeps running commands, but none that
// reads or writes keys ("Replica can't interact with the keyspace"), and
// a second MONITOR gets no reply. Without monitors, a command pays one
// atomic load (monitors.n).

// monitors is the server's monitoring clients.
type monitors struct {
	n     atomic.Int32 // len(conns)
	mu    sync.Mutex
	conns []*conn // in the order of their MONITOR
}

func init() {
	commandSpecs["monitor"] = &commandSpec{
		summary: "Listen for all requests received by the server in real time",
		since:   "1.0.0",
		group:   "server",
		flags:   "admin noscript loading stale",
		acl:     "@admin @slow @dangerous",
	}
	register("monitor", 1, func(c *conn, args [][]byte) {
		if c.monitor {
			return // Redis ignores it, with no reply
		}
		if c.inExec {
			c.err("ERR MONITOR isn't allowed for DENY BLOCKING client")
			return
		}
		m := &c.srv.mon
		m.mu.Lock()
		m.conns = append(m.conns, c)
		m.n.Store(int32(len(m.conns)))
		m.mu.Unlock()
		c.monitor = true
		c.ok()
	})
}

// unmonitor takes c out of the monitors (RESET, the end of the
// connection). O(monitors).
func (c *conn) unmonitor() {
	if !c.monitor {
		return
	}
	c.monitor = false
	m := &c.srv.mon
	m.mu.Lock()
	m.conns = slices.DeleteFunc(m.conns, func(o *conn) bool { return o == c })
	m.n.Store(int32(len(m.conns)))
	m.mu.Unlock()
}

// monitorRefused writes Redis's error for a monitoring client's command on
// keys, and reports true.
func (c *conn) monitorRefused(cmd *command) bool {
	if !cmd.write && !cmd.readonly {
		return false
	}
	c.err("ERR Replica can't interact with the keyspace")
	return true
}

// feedMonitors shows args, the command c ran, to the monitors: c's own
// line goes after its reply, the others' are queued for them (pushBox).
// O(len(args) + monitors).
func (c *conn) feedMonitors(args [][]byte) {
	line := c.monitorLine(args)
	m := &c.srv.mon
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, o := range m.conns {
		if o == c {
			c.out = append(c.out, line...)
		} else {
			o.addPush(push{kind: pushRaw, raw: line})
		}
	}
}

// monitorLine formats the line of args.
func (c *conn) monitorLine(args [][]byte) []byte {
	now := c.srv.now().UnixMicro()
	b := make([]byte, 0, 64+16*len(args))
	b = append(b, '+')
	b = strconv.AppendInt(b, now/1e6, 10)
	b = append(b, '.')
	usec := strconv.AppendInt(nil, 1e6+now%1e6, 10) // six digits after a 1
	b = append(b, usec[1:]...)
	b = append(b, " ["...)
	b = strconv.AppendInt(b, int64(c.db), 10)
	b = append(b, ' ')
	b = append(b, c.public.addr...)
	b = append(b, "] "...)
	redactFrom := redactedFrom(args)
	for i, a := range args {
		if i > 0 {
			b = append(b, ' ')
		}
		if i >= redactFrom.start && i < redactFrom.end {
			b = append(b, `"(redacted)"`...)
			continue
		}
		b = appendRepr(b, a)
	}
	return append(b, '\r', '\n')
}

// span is the arguments [start, end) MONITOR redacts.
type span struct{ start, end int }

// redactedFrom returns the arguments Redis redacts: all of AUTH's, and
// the two after HELLO's AUTH.
func redactedFrom(args [][]byte) span {
	switch {
	case is(args[0], "auth"):
		return span{1, len(args)}
	case is(args[0], "hello"):
		for i := 2; i+2 < len(args); i++ {
			if is(args[i], "auth") {
				return span{i + 1, i + 3}
			}
		}
	}
	return span{}
}

// appendRepr appends s quoted as Redis's sdscatrepr: "\\", "\"", \n, \r,
// \t, \a and \b escaped, other unprintable bytes as \xHH.
func appendRepr(b, s []byte) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	for _, ch := range s {
		switch ch {
		case '\\', '"':
			b = append(b, '\\', ch)
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\a':
			b = append(b, '\\', 'a')
		case '\b':
			b = append(b, '\\', 'b')
		default:
			if ch < 0x20 || ch >= 0x7f {
				b = append(b, '\\', 'x', hex[ch>>4], hex[ch&15])
			} else {
				b = append(b, ch)
			}
		}
	}
	return append(b, '"')
}
