package server

import (
	"maps"
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// Client-side caching (CLIENT TRACKING), as Redis 7.0 does it: a tracking
// client's reads remember which keys it may cache, and a change of such a
// key sends it an invalidation, a RESP3 push (>2 invalidate [keys]) on its
// own connection or, redirected, on another client's, which may be a RESP2
// client subscribed to __redis__:invalidate (a Pub/Sub message then). In
// BCAST mode a client hears of every change of a key under its prefixes.
// The table is the server's, over all the DBs, as Redis's is: keys are
// names, whatever the DB.
//
// A connection's goroutine owns its writes to the client: an invalidation
// for another connection is queued in that connection's pushBox, which
// its goroutine writes out after its running command (a tracking,
// subscribed or monitoring connection: conn.special) or batch of commands
// (any other), or at once when it waits for input (the queuing interrupts
// its read, see addPush). A tracking client's own invalidations follow
// the reply of the command that caused them. A command of a connection
// that does not track reads one flag of its own and, for a write, one
// atomic (tracker.users); each batch of input costs two uncontended lock
// pairs (pushBox.sleep and awake).

// tracker is a server's tracking table.
type tracker struct {
	// users counts the connections with tracking on; at 0 a change looks
	// no further.
	users atomic.Int32
	// bcast is set while a BCAST prefix has changes not yet sent.
	bcast atomic.Bool

	mu       sync.Mutex
	keys     map[string]map[int64]struct{} // key: the IDs of the clients that read it
	prefixes map[string]*bcastPrefix       // BCAST prefix: its clients and changes
	conns    map[int64]*conn               // the tracking clients and the redirect targets
}

// bcastPrefix is a BCAST prefix's clients and the keys under it changed
// since the last broadcast, each with the client that changed it last
// (for NOLOOP).
type bcastPrefix struct {
	clients map[*conn]struct{}
	changed map[string]*conn
}

// trackState is a connection's tracking state. Its owner writes it under
// tracker.mu (other goroutines read it there), and reads it unlocked.
type trackState struct {
	on, bcast, optin, optout, noloop bool
	caching                          bool // CLIENT CACHING yes/no given for the next command
	brokenRedir                      bool // the redirect target went away
	redirect                         int64
	prefixes                         []string // BCAST prefixes, sorted
	resp                             int      // the owner's protocol, for the null of a flush
	registered                       bool     // in tracker.conns
	gone                             bool     // the connection ended
	// channels are the connection's SUBSCRIBE channels (pubsub.go); only
	// __redis__:invalidate ever receives messages. Owner only.
	channels map[string]struct{}
}

// The kinds of push.
const (
	pushKeys   = iota // invalidate keys
	pushNull          // invalidate everything (a flush)
	pushBroken        // tracking-redir-broken
	pushRaw           // bytes as they are (a MONITOR line)
)

// push is an invalidation waiting in a pushBox; its receiver writes it
// in its own protocol.
type push struct {
	kind       uint8
	redirected bool     // sent to a redirect target (a Pub/Sub message in RESP2)
	nullResp   int      // pushNull: the protocol of the tracking client, whose null it is
	id         int64    // pushBroken: the redirect target that went away
	keys       []string // pushKeys
	raw        []byte   // pushRaw
}

// pushBox holds the pushes queued for a connection by other goroutines.
type pushBox struct {
	n     atomic.Int32 // len(items)
	mu    sync.Mutex
	items []push
	// bytes estimates the memory of items and taken is the bytes of the
	// pushes the owner moved to its output and has not written yet,
	// bounded together by client-output-buffer-limit (outlimit.go) of
	// the class (normal or pubsub) the owner set; softSince is when (ms,
	// the server's clock) they reached the soft limit, 0 when below; over
	// is set once the client was disconnected for passing the limit.
	bytes, taken, softSince int64
	class                   int
	over                    bool
	idle                    bool // the owner waits for input: add interrupts its read
	woken                   bool // add interrupted it
}

// addPush queues p for c. When c's goroutine waits for input, it interrupts
// the read with a past deadline, which the goroutine clears (awake). It
// never blocks.
func (c *conn) addPush(p push) {
	b := &c.pushes
	b.mu.Lock()
	if b.over {
		b.mu.Unlock()
		return
	}
	b.items = append(b.items, p)
	b.bytes += p.size()
	if c.srv.outputOver(b) {
		held, class := b.held(), b.class
		b.over, b.items, b.bytes, b.taken = true, nil, 0, 0
		b.n.Store(0)
		b.mu.Unlock()
		c.srv.closeForOutput(c, class, held)
		return
	}
	b.n.Store(int32(len(b.items)))
	if b.idle && !b.woken {
		b.woken = true
		c.nc.SetReadDeadline(pastDeadline)
	}
	b.mu.Unlock()
}

// sleep reports whether c may wait for input: false when pushes wait to
// be written. Until awake, addPush interrupts the wait.
func (b *pushBox) sleep() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.items) > 0 {
		return false
	}
	b.idle = true
	return true
}

// awake ends the wait of sleep, clearing the deadline of an interruption;
// it reports whether there was one.
func (c *conn) awake() bool {
	b := &c.pushes
	b.mu.Lock()
	defer b.mu.Unlock()
	b.idle = false
	if !b.woken {
		return false
	}
	b.woken = false
	c.nc.SetReadDeadline(noDeadline)
	return true
}

// deliverPushes writes the queued pushes to c.out, in c's protocol: a
// RESP3 push, a Pub/Sub message for a RESP2 redirect target subscribed
// to __redis__:invalidate, or nothing for another RESP2 client, which
// cannot receive them. The bytes it wrote count for the output limit
// until flush has written them (conn.written).
func (c *conn) deliverPushes() {
	b := &c.pushes
	b.mu.Lock()
	items := b.items
	b.items, b.bytes = nil, 0
	b.n.Store(0)
	b.mu.Unlock()
	start := len(c.out)
	for _, p := range items {
		c.out = c.appendPush(c.out, p)
	}
	if n := len(c.out) - start; n > 0 {
		b.mu.Lock()
		b.taken += int64(n)
		b.mu.Unlock()
		c.pushesTaken = true
	}
}

const invalidateChannel = "__redis__:invalidate"

// appendPush appends p as c receives it (see deliverPushes).
func (c *conn) appendPush(out []byte, p push) []byte {
	if p.kind == pushRaw {
		return append(out, p.raw...)
	}
	if p.kind == pushBroken {
		if c.resp < 3 {
			return out
		}
		out = append(out, ">2\r\n$21\r\ntracking-redir-broken\r\n:"...)
		out = strconv.AppendInt(out, p.id, 10)
		return append(out, '\r', '\n')
	}
	switch {
	case c.resp >= 3:
		out = append(out, ">2\r\n$10\r\ninvalidate\r\n"...)
	case p.redirected && len(c.trk.channels) > 0:
		// Redis sends it to a client subscribed to any channel.
		out = append(out, "*3\r\n$7\r\nmessage\r\n$20\r\n"+invalidateChannel+"\r\n"...)
	default:
		return out
	}
	if p.kind == pushNull {
		if p.nullResp >= 3 {
			return append(out, "_\r\n"...)
		}
		return append(out, "$-1\r\n"...)
	}
	out = append(out, '*')
	out = strconv.AppendInt(out, int64(len(p.keys)), 10)
	out = append(out, '\r', '\n')
	for _, k := range p.keys {
		out = appendBulk(out, k)
	}
	return out
}

// register records c (a tracking client or a redirect target) by its ID;
// it reports false when c's connection has ended. t.mu is held.
func (t *tracker) registerLocked(c *conn) bool {
	if c.trk.gone {
		return false
	}
	if !c.trk.registered {
		if t.conns == nil {
			t.conns = map[int64]*conn{}
			t.keys = map[string]map[int64]struct{}{}
			t.prefixes = map[string]*bcastPrefix{}
		}
		t.conns[c.clientID] = c
		c.trk.registered = true
	}
	return true
}

// gone forgets c, whose connection ended: its redirecting clients see a
// broken redirect at their next invalidation. Its IDs in the key table go
// lazily, when the keys change, as in Redis.
func (t *tracker) gone(c *conn) {
	t.mu.Lock()
	c.trk.gone = true
	if c.trk.registered {
		delete(t.conns, c.clientID)
	}
	t.disableLocked(c)
	t.mu.Unlock()
}

// disableLocked turns c's tracking off (CLIENT TRACKING OFF, RESET, the
// end of the connection). t.mu is held.
func (t *tracker) disableLocked(c *conn) {
	for _, p := range c.trk.prefixes {
		bp := t.prefixes[p]
		delete(bp.clients, c)
		if len(bp.clients) == 0 {
			delete(t.prefixes, p)
		}
	}
	if c.trk.on {
		t.users.Add(-1)
	}
	channels, resp, registered, gone := c.trk.channels, c.trk.resp, c.trk.registered, c.trk.gone
	c.trk = trackState{channels: channels, resp: resp, registered: registered, gone: gone}
}

// remember records the keys of a read command run by c, a tracking client
// not in BCAST mode, as Redis's trackingRememberKeys: in OPTIN mode only
// after CLIENT CACHING yes, in OPTOUT mode unless CLIENT CACHING no.
func (c *conn) remember(cmd *command, args [][]byte) {
	if c.trk.optin != c.trk.caching || c.trk.optout && c.trk.caching {
		return
	}
	keys := keysOf(cmd, args)
	if len(keys) == 0 {
		return
	}
	t := &c.srv.track
	t.mu.Lock()
	for _, k := range keys {
		ids := t.keys[string(k)]
		if ids == nil {
			ids = map[int64]struct{}{}
			t.keys[string(k)] = ids
		}
		ids[c.clientID] = struct{}{}
	}
	t.mu.Unlock()
}

// keysOf returns the keys of args by cmd's key specification, as Redis's
// getKeysFromCommand: for XREAD and XREADGROUP the first half of the
// arguments after STREAMS (none when they are odd in number).
func keysOf(cmd *command, args [][]byte) [][]byte {
	var keys [][]byte
	for _, ks := range cmd.spec.specs {
		start := ks.index
		if ks.keyword != "" {
			start = streamsArg(args, ks.from)
			if start < 0 {
				continue
			}
		}
		if start >= len(args) {
			continue
		}
		end := start // lastkey 0: the first key only
		if ks.lastkey < 0 {
			end = len(args) + ks.lastkey
		}
		if ks.limit > 1 {
			n := end - start + 1
			if n%ks.limit != 0 {
				continue
			}
			end = start + n/ks.limit - 1
		}
		keys = append(keys, args[start:end+1]...)
	}
	return keys
}

// streamsArg returns the index after XREAD's (or XREADGROUP's) STREAMS,
// looked for from argument from on, past the values of the other options
// (as Redis's xreadGetKeys); -1 without one.
func streamsArg(args [][]byte, from int) int {
	for i := from; i < len(args); i++ {
		switch {
		case is(args[i], "block"), is(args[i], "count"):
			i++
		case is(args[i], "group"):
			i += 2
		case is(args[i], "streams"):
			return i + 1
		}
	}
	return -1
}

// invalidate sends the invalidations of the keys w changed (w nil: no
// client's change). A tracking client hears of a key once, after which
// the key is no longer tracked for it; NOLOOP clients do not hear of their
// own changes. What goes to w itself is queued, written after its reply
// (see conn.run); what w receives as another client's redirect target is
// written at once, before (before true) or after its reply, by the place
// of the change in the command in Redis. BCAST changes are gathered and
// sent when w flushes its replies (broadcast).
func (t *tracker) invalidate(w *conn, keys []string, before bool) {
	if t.users.Load() == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, k := range keys {
		for p, bp := range t.prefixes {
			if strings.HasPrefix(k, p) {
				bp.changed[k] = w
				t.bcast.Store(true)
			}
		}
		ids := t.keys[k]
		if ids == nil {
			continue
		}
		delete(t.keys, k)
		for _, id := range sortedIDs(ids) {
			target := t.conns[id]
			if target == nil || !target.trk.on || target.trk.bcast || target.trk.noloop && target == w {
				continue
			}
			t.sendLocked(w, target, push{kind: pushKeys, keys: []string{k}}, before)
		}
	}
}

// sortedIDs returns the IDs in the order Redis's radix tree of IDs keeps
// them: by their bytes in memory, little-endian.
func sortedIDs(ids map[int64]struct{}) []int64 {
	out := make([]int64, 0, len(ids))
	for id := range ids {
		out = append(out, id)
	}
	slices.SortFunc(out, func(a, b int64) int {
		x, y := bits.ReverseBytes64(uint64(a)), bits.ReverseBytes64(uint64(b))
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	return out
}

// sendLocked sends p, an invalidation for the tracking client target, to
// it or to its redirect target, as Redis's sendTrackingMessage, in the
// course of w's command (w nil: of none). t.mu is held.
func (t *tracker) sendLocked(w, target *conn, p push, before bool) {
	dest := target
	if target.trk.redirect != 0 {
		dest = t.conns[target.trk.redirect]
		if dest == nil {
			target.trk.brokenRedir = true
			target.addPush(push{kind: pushBroken, id: target.trk.redirect})
			return
		}
		p.redirected = true
	}
	if dest == w && target != w {
		w.pushNow(p, before)
		return
	}
	dest.addPush(p)
}

// pushNow writes p into w's replies, before or after the reply of the
// running command. w's goroutine calls it.
func (w *conn) pushNow(p push, before bool) {
	if !before {
		w.out = w.appendPush(w.out, p)
		return
	}
	start := w.cmdStart
	tail := append([]byte(nil), w.out[start:]...)
	w.out = append(w.appendPush(w.out[:start], p), tail...)
}

// flushed sends the null invalidation of a flush (FLUSHDB, FLUSHALL) to
// every tracking client, and forgets the tracked keys, as Redis's
// trackingInvalidateKeysOnFlush; w's own goes after its reply, a
// redirected one w receives before it.
func (t *tracker) flushed(w *conn) {
	if t.users.Load() == 0 {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, id := range sortedIDs(t.connIDs()) {
		c := t.conns[id]
		if c.trk.on {
			t.sendLocked(w, c, push{kind: pushNull, nullResp: c.trk.resp}, true)
		}
	}
	clear(t.keys)
}

func (t *tracker) connIDs() map[int64]struct{} {
	ids := make(map[int64]struct{}, len(t.conns))
	for id := range t.conns {
		ids[id] = struct{}{}
	}
	return ids
}

// broadcast sends the BCAST changes gathered since the last one: to each
// client of a prefix, the changed keys under it (sorted), less those it
// changed itself when it is NOLOOP, as Redis does before it sleeps.
func (t *tracker) broadcast() {
	if !t.bcast.Swap(false) {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, p := range slices.Sorted(maps.Keys(t.prefixes)) {
		bp := t.prefixes[p]
		if len(bp.changed) == 0 {
			continue
		}
		keys := slices.Sorted(maps.Keys(bp.changed))
		for _, id := range sortedIDs(bp.ids()) {
			c := t.conns[id]
			mine := keys
			if c.trk.noloop {
				mine = nil
				for _, k := range keys {
					if bp.changed[k] != c {
						mine = append(mine, k)
					}
				}
				if len(mine) == 0 {
					continue
				}
			}
			t.sendLocked(nil, c, push{kind: pushKeys, keys: mine}, false)
		}
		clear(bp.changed)
	}
}

func (bp *bcastPrefix) ids() map[int64]struct{} {
	ids := make(map[int64]struct{}, len(bp.clients))
	for c := range bp.clients {
		ids[c.clientID] = struct{}{}
	}
	return ids
}
