package server

import (
	"strconv"
	"strings"
)

// size estimates the memory a queued push holds.
func (p *push) size() int64 {
	n := int64(32 + len(p.raw))
	for _, k := range p.keys {
		n += 16 + int64(len(k))
	}
	return n
}

// outputOver reports whether b has passed its class's limit, as Redis's
// checkClientOutputBufferLimits: the hard limit's bytes or more, or the
// soft limit's for more than its seconds, counting what is queued and
// what the owner took and has not written (b.held). b.mu is held. It
// reads the clock only past the soft limit.
func (s *Server) outputOver(b *pushBox) bool {
	l := s.outLimits.Load()[b.class]
	held := b.held()
	if l.hard > 0 && held >= l.hard {
		return true
	}
	if l.soft == 0 || held < l.soft {
		b.softSince = 0
		return false
	}
	now := s.now().UnixMilli()
	if b.softSince == 0 {
		b.softSince = now
		return false
	}
	return (now-b.softSince)/1000 > l.softSecs
}

// closeForOutput disconnects c, whose pushes passed the limit (held
// bytes), and logs it, as Redis logs "scheduled to be closed ASAP for
// overcoming of output buffer limits".
func (s *Server) closeForOutput(c *conn, class int, held int64) {
	n := s.outputClosed.Add(1)
	s.opts.Logger.Warn("xstream server: client closed for overcoming of output buffer limits",
		"id", c.clientID, "addr", c.public.addr, "class", bufClasses[class], "queued_bytes", held, "disconnections", n)
	if tc, ok := c.nc.(lingerer); ok {
		tc.SetLinger(0)
	}
	c.cancel()
	c.nc.Close()
}

// client-output-buffer-limit for the pushes queued for a client (its
// pushBox: invalidations, MONITOR lines, Pub/Sub messages), which other
// connections add to whether or not the client reads. As Redis's
// checkClientOutputBufferLimits, a client whose queue holds the hard
// limit's bytes or more, or the soft limit's for more than its seconds
// (on the server's clock), is disconnected: its queue is dropped, its
// connection closed, and the event logged. The class is Redis's
// getClientType's: pubsub (default 32mb 8mb 60) for a client subscribed
// to a channel, in RESP2 or RESP3, normal (default 0 0 0: no limit) for
// the others, monitors and tracking clients included; the client's
// goroutine sets it (pushBox.setClass) as SUBSCRIBE, UNSUBSCRIBE and
// RESET change its channels. The bytes counted are those of the pushes
// queued (estimated, push.size) and those the client's goroutine took
// into its output and has not written yet (the bytes it wrote there), so
// the client holds at most the limit. Only pushes count: replies to the
// client's own commands are bounded by MaxReplyBytes and its wait for
// them. CONFIG GET and SET client-output-buffer-limit read and set the
// three classes; the slave one has no client here. Redis 7.0 counts
// these disconnections nowhere in INFO; the log record carries their
// count.

// held returns the bytes b holds for the limit: queued, and taken and
// not written. b.mu is held.
func (b *pushBox) held() int64 { return b.bytes + b.taken }

// setClass sets b's class of client-output-buffer-limit: pubsub while
// its owner is subscribed, normal otherwise. The owner calls it.
func (b *pushBox) setClass(pubsub bool) {
	class := 0
	if pubsub {
		class = pubsubClass
	}
	b.mu.Lock()
	b.class = class
	b.mu.Unlock()
}

// written notes that the pushes c took (deliverPushes) have been written
// or dropped with its output: they no longer count for the limit.
func (c *conn) written() {
	if !c.pushesTaken {
		return
	}
	c.pushesTaken = false
	b := &c.pushes
	b.mu.Lock()
	b.taken = 0
	b.mu.Unlock()
}

// bufLimit is one class's limit: 0 bytes is none.
type bufLimit struct{ hard, soft, softSecs int64 }

// The classes of client-output-buffer-limit, in Redis's order.
var bufClasses = [...]string{"normal", "slave", "pubsub"}

const pubsubClass = 2

// defaultBufLimits are Redis's defaults.
var defaultBufLimits = [3]bufLimit{{}, {256 << 20, 64 << 20, 60}, {32 << 20, 8 << 20, 60}}

// formatBufLimits is the CONFIG GET value of limits.
func formatBufLimits(limits [3]bufLimit) string {
	var parts []string
	for i, l := range limits {
		parts = append(parts, bufClasses[i], strconv.FormatInt(l.hard, 10), strconv.FormatInt(l.soft, 10), strconv.FormatInt(l.softSecs, 10))
	}
	return strings.Join(parts, " ")
}

// bufLimitsValue is CONFIG GET's value of client-output-buffer-limit.
func (s *Server) bufLimitsValue() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return formatBufLimits(s.bufLimits)
}

// parseBufLimits reads a CONFIG SET value into a copy of cur, or returns
// Redis's reason for refusing it.
func parseBufLimits(v string, cur [3]bufLimit) ([3]bufLimit, string) {
	f := strings.Fields(v)
	if len(f)%4 != 0 {
		return cur, "Wrong number of arguments in buffer limit configuration."
	}
	for i := 0; i < len(f); i += 4 {
		class := -1
		switch strings.ToLower(f[i]) {
		case "normal":
			class = 0
		case "slave", "replica":
			class = 1
		case "pubsub":
			class = pubsubClass
		}
		if class < 0 {
			return cur, "Invalid client class specified in buffer limit configuration."
		}
		hard, err1 := ParseMemory(f[i+1])
		soft, err2 := ParseMemory(f[i+2])
		secs, err := strconv.ParseInt(f[i+3], 10, 64)
		if err1 != nil || err2 != nil || err != nil || secs < 0 {
			return cur, "Error in hard, soft or soft_seconds setting in buffer limit configuration."
		}
		cur[class] = bufLimit{hard, soft, secs}
	}
	return cur, ""
}
