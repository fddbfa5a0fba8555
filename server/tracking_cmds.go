package server

import (
	"slices"
	"strings"
	"time"
)

// CLIENT TRACKING, CACHING, GETREDIR and TRACKINGINFO, and the SUBSCRIBE
// and UNSUBSCRIBE a RESP2 redirect target needs for __redis__:invalidate
// (there is no PUBLISH: no other channel ever has a message).

var (
	pastDeadline = time.Unix(1, 0)
	noDeadline   time.Time
)

func init() {
	for name, spec := range trackingSpecs {
		commandSpecs[name] = spec
	}
	for name, d := range trackingDocs {
		commandDocsData[name] = d
	}
	register("client|tracking", -3, clientTracking)
	register("client|caching", 3, clientCaching)
	register("client|getredir", 2, func(c *conn, args [][]byte) {
		if c.trk.on {
			c.int(c.trk.redirect)
		} else {
			c.int(-1)
		}
	})
	register("client|trackinginfo", 2, clientTrackingInfo)
	register("subscribe", -2, subscribe)
	register("unsubscribe", -1, unsubscribe)
}

// clientTracking answers CLIENT TRACKING ON|OFF [REDIRECT id] [PREFIX p
// ...] [BCAST] [OPTIN] [OPTOUT] [NOLOOP], with Redis 7.0's checks in its
// order. Turning it on again replaces the options but adds to the
// prefixes. O(number of prefixes) (BCAST: times the client's prefixes).
func clientTracking(c *conn, args [][]byte) {
	var (
		redir                        int64
		bcast, optin, optout, noloop bool
		prefixes                     []string
		t                            = &c.srv.track
		target                       *conn
	)
	for j := 3; j < len(args); j++ {
		more := j < len(args)-1
		switch {
		case is(args[j], "redirect") && more:
			j++
			if redir != 0 {
				c.err("ERR A client can only redirect to a single other client")
				return
			}
			n, ok := c.intArg(args[j], "")
			if !ok {
				return
			}
			if target = c.srv.clientByID(n); target == nil {
				c.err("ERR The client ID you want redirect to does not exist")
				return
			}
			redir = n
		case is(args[j], "bcast"):
			bcast = true
		case is(args[j], "optin"):
			optin = true
		case is(args[j], "optout"):
			optout = true
		case is(args[j], "noloop"):
			noloop = true
		case is(args[j], "prefix") && more:
			j++
			prefixes = append(prefixes, string(args[j]))
		default:
			c.err(errSyntax)
			return
		}
	}
	switch {
	case is(args[2], "off"):
		t.mu.Lock()
		t.disableLocked(c)
		t.mu.Unlock()
		c.setSpecial()
		c.ok()
		return
	case !is(args[2], "on"):
		c.err(errSyntax)
		return
	}
	switch {
	case !bcast && len(prefixes) > 0:
		c.err("ERR PREFIX option requires BCAST mode to be enabled")
		return
	case c.trk.on && c.trk.bcast != bcast:
		c.err("ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode.")
		return
	case bcast && (optin || optout):
		c.err("ERR OPTIN and OPTOUT are not compatible with BCAST")
		return
	case optin && optout:
		c.err("ERR You can't specify both OPTIN mode and OPTOUT mode")
		return
	case optin && c.trk.optout || optout && c.trk.optin:
		c.err("ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode.")
		return
	}
	if bcast && !c.prefixesFree(prefixes) {
		return
	}
	if bcast && len(prefixes) == 0 {
		prefixes = []string{""}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if redir != 0 && !t.registerLocked(target) {
		c.err("ERR The client ID you want redirect to does not exist") // it went away meanwhile
		return
	}
	t.registerLocked(c)
	if !c.trk.on {
		t.users.Add(1)
	}
	c.trk.on, c.trk.bcast, c.trk.optin, c.trk.optout, c.trk.noloop = true, bcast, optin, optout, noloop
	c.trk.brokenRedir, c.trk.redirect, c.trk.resp = false, redir, c.resp
	for _, p := range prefixes {
		bp := t.prefixes[p]
		if bp == nil {
			bp = &bcastPrefix{clients: map[*conn]struct{}{}, changed: map[string]*conn{}}
			t.prefixes[p] = bp
		}
		bp.clients[c] = struct{}{}
		if i, found := slices.BinarySearch(c.trk.prefixes, p); !found {
			c.trk.prefixes = slices.Insert(c.trk.prefixes, i, p)
		}
	}
	c.setSpecial()
	c.ok()
}

// prefixesFree reports whether no two of the prefixes, nor one of them and
// one c already has, would both match a key, writing Redis's error if
// not.
func (c *conn) prefixesFree(prefixes []string) bool {
	overlap := func(a, b string) bool { return strings.HasPrefix(a, b) || strings.HasPrefix(b, a) }
	for i, p := range prefixes {
		for _, q := range c.trk.prefixes {
			if overlap(p, q) {
				c.err("ERR Prefix '" + p + "' overlaps with an existing prefix '" + q + "'. Prefixes for a single client must not overlap.")
				return false
			}
		}
		for _, q := range prefixes[i+1:] {
			if overlap(p, q) {
				c.err("ERR Prefix '" + p + "' overlaps with another provided prefix '" + q + "'. Prefixes for a single client must not overlap.")
				return false
			}
		}
	}
	return true
}

// clientCaching answers CLIENT CACHING YES|NO: whether the next command's
// keys are tracked, in OPTIN (YES) or OPTOUT (NO) mode.
func clientCaching(c *conn, args [][]byte) {
	if !c.trk.on {
		c.err("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled")
		return
	}
	switch {
	case is(args[2], "yes"):
		if !c.trk.optin {
			c.err("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")
			return
		}
	case is(args[2], "no"):
		if !c.trk.optout {
			c.err("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
			return
		}
	default:
		c.err(errSyntax)
		return
	}
	c.trk.caching = true
	c.ok()
}

// clientTrackingInfo answers CLIENT TRACKINGINFO: flags, redirect and
// prefixes, as Redis 7.0.
func clientTrackingInfo(c *conn, args [][]byte) {
	t := &c.srv.track
	t.mu.Lock()
	broken := c.trk.brokenRedir // set by the goroutine of a change
	t.mu.Unlock()
	flags := []string{"off"}
	if c.trk.on {
		flags[0] = "on"
	}
	for _, f := range []struct {
		on   bool
		name string
	}{
		{c.trk.bcast, "bcast"},
		{c.trk.optin, "optin"},
		{c.trk.optin && c.trk.caching, "caching-yes"},
		{c.trk.optout, "optout"},
		{c.trk.optout && c.trk.caching, "caching-no"},
		{c.trk.noloop, "noloop"},
		{broken, "broken_redirect"},
	} {
		if f.on {
			flags = append(flags, f.name)
		}
	}
	c.mapLen(3)
	c.bulk("flags")
	c.setLen(len(flags))
	for _, f := range flags {
		c.bulk(f)
	}
	c.bulk("redirect")
	if c.trk.on {
		c.int(c.trk.redirect)
	} else {
		c.int(-1)
	}
	c.bulk("prefixes")
	c.array(len(c.trk.prefixes))
	for _, p := range c.trk.prefixes {
		c.bulk(p)
	}
}

// clientByID returns the connected client of the given ID, nil if none.
// O(clients).
func (s *Server) clientByID(id int64) *conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if c.clientID == id {
			return c
		}
	}
	return nil
}

// subscribe answers SUBSCRIBE channel...: the client joins the channels.
// A channel only has messages when it is __redis__:invalidate and the
// client is a redirect target of tracking.
func subscribe(c *conn, args [][]byte) {
	if c.trk.channels == nil {
		c.trk.channels = map[string]struct{}{}
	}
	for _, ch := range args[1:] {
		c.trk.channels[string(ch)] = struct{}{}
		c.pubsubReply("subscribe", ch, false)
	}
	c.setSpecial()
}

// unsubscribe answers UNSUBSCRIBE [channel...]: the client leaves the
// channels, or all of them (in no order) without any.
func unsubscribe(c *conn, args [][]byte) {
	chans := args[1:]
	if len(chans) == 0 {
		for ch := range c.trk.channels {
			chans = append(chans, []byte(ch))
		}
		if len(chans) == 0 {
			c.pubsubReply("unsubscribe", nil, true)
			return
		}
	}
	for _, ch := range chans {
		delete(c.trk.channels, string(ch))
		c.pubsubReply("unsubscribe", ch, false)
	}
	c.setSpecial()
}

// pubsubReply writes a (un)subscribe confirmation: kind, the channel (a
// null when none) and the client's count of channels, as a push in RESP3.
func (c *conn) pubsubReply(kind string, ch []byte, null bool) {
	if c.resp >= 3 {
		c.out = append(c.out, ">3\r\n"...)
	} else {
		c.array(3)
	}
	c.bulk(kind)
	if null {
		c.null()
	} else {
		c.bulkBytes(ch)
	}
	c.int(int64(len(c.trk.channels)))
}

// subscribed reports whether c is in RESP2's Pub/Sub context, where only
// (UN)SUBSCRIBE, PING, QUIT and RESET run.
func (c *conn) subscribed() bool { return len(c.trk.channels) > 0 && c.resp < 3 }

// pubsubRefused writes Redis's error for a command outside the Pub/Sub
// context and reports true.
func (c *conn) pubsubRefused(cmd *command) bool {
	switch cmd.name {
	case "subscribe", "unsubscribe", "ping", "quit", "reset":
		return false
	}
	c.err("ERR Can't execute '" + cmd.name + "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
	return true
}

// resetTracking is RESET's part: tracking off, no channels.
func (c *conn) resetTracking() {
	t := &c.srv.track
	t.mu.Lock()
	t.disableLocked(c)
	c.trk.channels = nil
	t.mu.Unlock()
	c.setSpecial()
}

// trackWrite runs cmd, a command that may change keys, while clients
// track keys, and sends the invalidations of the keys it changed: by
// Redis 7.0's rules, those a successful XADD added to, XDEL, XTRIM,
// XDELEX or XACKDEL deleted from, DEL deleted, XGROUP CREATE MKSTREAM
// created; RENAME's (and a RENAMENX that renamed) two keys, COPY's and
// RESTORE's destination, and the key of an EXPIRE-family command or
// PERSIST that answered 1; everything on FLUSHDB and FLUSHALL. Group
// commands and SWAPDB change no key Redis signals; keys that expire are
// signalled where they are removed (expireKeys, the expiry cycle).
func (c *conn) trackWrite(cmd *command, args [][]byte) {
	var existed []string
	switch cmd.name {
	case "del", "unlink":
		for _, a := range args[1:] {
			if _, ok := c.lookupStream(a); ok && !slices.Contains(existed, string(a)) {
				existed = append(existed, string(a))
			}
		}
	case "xgroup|create":
		if _, ok := c.lookupStream(args[2]); ok {
			existed = []string{string(args[2])}
		}
	}
	cmd.fn(c, args)
	reply := c.out[c.cmdStart:]
	t := &c.srv.track
	switch cmd.name {
	case "xadd":
		if len(reply) > 0 && reply[0] == '$' && reply[1] != '-' {
			t.invalidate(c, []string{string(args[1])}, false)
		}
	case "xdel", "xtrim":
		if len(reply) > 1 && reply[0] == ':' && reply[1] != '0' {
			t.invalidate(c, []string{string(args[1])}, true)
		}
	case "xdelex", "xackdel":
		if len(reply) > 0 && reply[0] == '*' && strings.Contains(string(reply), ":1\r\n") {
			t.invalidate(c, []string{string(args[1])}, true)
		}
	case "del", "unlink":
		t.invalidate(c, existed, true)
	case "xgroup|create":
		if existed == nil && string(reply) == "+OK\r\n" {
			t.invalidate(c, []string{string(args[2])}, true)
		}
	case "rename", "renamenx":
		if string(reply) == "+OK\r\n" || string(reply) == ":1\r\n" {
			t.invalidate(c, []string{string(args[1]), string(args[2])}, true)
		}
	case "copy":
		if string(reply) == ":1\r\n" {
			t.invalidate(c, []string{string(args[2])}, true)
		}
	case "restore":
		if string(reply) == "+OK\r\n" {
			t.invalidate(c, []string{string(args[1])}, true)
		}
	case "expire", "pexpire", "expireat", "pexpireat", "persist":
		if string(reply) == ":1\r\n" {
			t.invalidate(c, []string{string(args[1])}, true)
		}
	case "flushdb", "flushall":
		if string(reply) == "+OK\r\n" {
			t.flushed(c)
		}
	}
}

// afterTracked is what follows a command of a tracking client: CLIENT
// CACHING's word lasts one command (a transaction, and the CLIENT
// commands, keep it), and a flush's null is in the client's protocol.
func (c *conn) afterTracked(args [][]byte) {
	if c.trk.caching && !c.multi && !is(args[0], "client") {
		c.trk.caching = false
	}
	if c.trk.resp != c.resp {
		t := &c.srv.track
		t.mu.Lock()
		c.trk.resp = c.resp
		t.mu.Unlock()
	}
}

// setSpecial notes whether c tracks keys, is subscribed or monitors: only
// then do its commands look at those states (admit) and write the pushes
// queued for it right after each reply. Another connection's pushes wait
// for the end of its batch of commands (next, flush).
func (c *conn) setSpecial() {
	c.special = c.trk.on || len(c.trk.channels) > 0 || c.monitor
	c.pushes.setClass(len(c.trk.channels) > 0)
	c.publish()
}
