package server

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/xstreamgo/xstream"
)

func init() {
	register("xread", -4, func(c *conn, args [][]byte) { xreadGeneric(c, args, false) })
	register("xreadgroup", -7, func(c *conn, args [][]byte) { xreadGeneric(c, args, true) })
}

// readCmd is a parsed XREAD or XREADGROUP.
type readCmd struct {
	group, consumer string
	isGroup         bool
	groupGiven      bool                  // GROUP was given (the name may be "")
	args            xstream.ReadGroupArgs // Count, Block, NoAck, Claim, ClaimMinIdle
	pairs           []string              // key, ID, key, ID, ...
}

// xreadGeneric serves XREAD and XREADGROUP, parsing as Redis's
// xreadCommand does. A blocked call waits on the connection's context,
// which ends when the client disconnects or the server shuts down.
func xreadGeneric(c *conn, args [][]byte, isGroup bool) {
	r, err := c.parseRead(args, isGroup)
	if err != nil {
		c.fail(err)
		return
	}
	out, dels, err := c.runRead(r)
	c.readReply(r, out, dels, err)
}

// parseRead parses the options, then the streams and their IDs, checking
// for XREADGROUP that every stream has the group.
func (c *conn) parseRead(args [][]byte, isGroup bool) (readCmd, error) {
	r := readCmd{isGroup: isGroup}
	block, streamsArg, err := r.parseOptions(args)
	if err != nil {
		return r, err
	}
	switch {
	case block < 0 || c.inExec:
	case block == 0:
		r.args.Block = xstream.BlockForever
	default:
		r.args.Block = time.Duration(block) * time.Millisecond
	}
	n := (len(args) - streamsArg) / 2
	r.pairs = make([]string, 0, 2*n)
	for k := range n {
		key := args[streamsArg+k]
		err := error(nil)
		if isGroup {
			if s, ok := c.lookupStream(key); !ok || !hasGroup(s, r.group) {
				err = replyError(fmt.Sprintf("NOGROUP No such key '%s' or consumer group '%s' in XREADGROUP with GROUP option", key, r.group))
			}
		}
		id := ""
		if err == nil {
			id, err = readID(args[streamsArg+n+k], isGroup)
		}
		if err != nil {
			// Redis looks each key up before it checks the key's group
			// and ID: the keys up to this one were touched.
			clock := c.srv.lru.Load()
			for _, k := range args[streamsArg : streamsArg+k+1] {
				c.touchKey(k, clock)
			}
			return r, err
		}
		r.pairs = append(r.pairs, string(key), id)
	}
	c.lookedUp()
	return r, nil
}

// parseOptions parses the options before STREAMS. It returns the BLOCK
// milliseconds (-1: none) and the index of the first key.
func (r *readCmd) parseOptions(args [][]byte) (block int64, streamsArg int, err error) {
	block = -1
	onlyGroup := func(opt string) error {
		return replyError("ERR The " + opt + " option is only supported by XREADGROUP. You called XREAD instead.")
	}
loop:
	for i := 1; i < len(args); i++ {
		more := len(args) - i - 1
		switch {
		case is(args[i], "block") && more > 0:
			i++
			v, ok := parseLL(args[i])
			if !ok {
				return 0, 0, replyError("ERR timeout is not an integer or out of range")
			}
			if v < 0 {
				return 0, 0, replyError("ERR timeout is negative")
			}
			block = v
		case is(args[i], "count") && more > 0:
			i++
			v, err := intArg(args[i], "")
			if err != nil {
				return 0, 0, err
			}
			r.args.Count = int(min(max(v, 0), 1<<31))
		case is(args[i], "streams") && more > 0:
			streamsArg = i + 1
			if (len(args)-streamsArg)%2 != 0 {
				return 0, 0, replyError("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.")
			}
			break loop
		case is(args[i], "group") && more >= 2:
			if !r.isGroup {
				return 0, 0, onlyGroup("GROUP")
			}
			r.group, r.consumer, r.groupGiven = string(args[i+1]), string(args[i+2]), true
			i += 2
		case is(args[i], "claim") && more > 0:
			if !r.isGroup {
				return 0, 0, onlyGroup("CLAIM")
			}
			i++
			v, ok := parseLL(args[i])
			if !ok {
				return 0, 0, replyError("ERR min-idle-time is not an integer or out of range")
			}
			if v < 0 {
				return 0, 0, replyError("ERR min-idle-time must be a positive integer")
			}
			r.args.Claim = true
			r.args.ClaimMinIdle = time.Duration(min(v, math.MaxInt64/int64(time.Millisecond))) * time.Millisecond
		case is(args[i], "noack"):
			if !r.isGroup {
				return 0, 0, onlyGroup("NOACK")
			}
			r.args.NoAck = true
		default:
			return 0, 0, replyError(errSyntax)
		}
	}
	if streamsArg == 0 {
		return 0, 0, replyError(errSyntax)
	}
	if r.isGroup && !r.groupGiven {
		return 0, 0, replyError("ERR Missing GROUP option for XREADGROUP")
	}
	return block, streamsArg, nil
}

// readID turns one ID argument of XREAD or XREADGROUP into the core's
// form, refusing the special IDs that mean nothing in the command.
func readID(b []byte, isGroup bool) (string, error) {
	switch string(b) {
	case "$":
		if isGroup {
			return "", replyError("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.")
		}
		return "$", nil
	case ">":
		if !isGroup {
			return "", replyError("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")
		}
		return ">", nil
	case "+":
		if !isGroup { // Redis 7.4: the last entry
			return "+", nil
		}
	}
	p, ok := parseStrictID(b)
	if !ok {
		return "", replyError(errInvalidID)
	}
	if isGroup && p == xstream.MaxID() {
		return ">", nil // Redis marks ">" with the largest ID, so it reads as ">"
	}
	return p.String(), nil
}

// runRead runs the read. A read that finds entries does not block: it is
// tried without waiting first, so only a read that waits pays for the
// watcher of the connection. "$" names the last ID at the time of the
// call, so a read with it must not be split in two (and it never finds
// entries at once).
func (c *conn) runRead(r readCmd) (out []xstream.StreamEntries, dels [][]xstream.Delivery, err error) {
	read := func(ctx context.Context, db *xstream.DB, wait time.Duration) ([]xstream.StreamEntries, error) {
		args := r.args
		args.Block = wait
		switch {
		case args.Claim && wait == 0:
			var out []xstream.StreamEntries
			var err error
			out, dels, err = db.ReadGroupDeliveries(ctx, r.group, r.consumer, args, r.pairs...)
			return out, err
		case args.Claim:
			// The read without waiting found nothing to claim; the wait
			// is for new entries only (ReadGroupDeliveries), so it does
			// not claim again entries that aged since.
			args.Claim, args.ClaimMinIdle = false, 0
			out, err := db.ReadGroup(ctx, r.group, r.consumer, args, r.pairs...)
			dels = make([][]xstream.Delivery, len(out))
			for i, se := range out {
				dels[i] = make([]xstream.Delivery, len(se.Entries))
			}
			return out, err
		case r.isGroup:
			return db.ReadGroup(ctx, r.group, r.consumer, args, r.pairs...)
		}
		return db.Read(ctx, xstream.ReadArgs{Count: args.Count, Block: wait}, r.pairs...)
	}
	wait := r.args.Block
	tryFirst := wait != 0
	for i := 1; i < len(r.pairs); i += 2 {
		if r.pairs[i] == "$" {
			tryFirst = false
		}
	}
	if tryFirst || wait == 0 {
		out, err = read(c.ctx, c.mustDB(), 0)
	}
	if wait != 0 && err == nil && len(out) == 0 {
		// Its keys were looked up before it waits (call stamps them again
		// when it ends).
		for i := 0; i < len(r.pairs); i += 2 {
			c.touchKey([]byte(r.pairs[i]), c.srv.lru.Load())
		}
		// The read can be ended (CLIENT UNBLOCK, SWAPDB) from before it
		// counts as blocked; a SWAPDB since its DB was taken counts as
		// one that came once it waited.
		db := c.mustDB()
		// "$" means the last ID of each stream now, when the read
		// blocks: resolved at once, so that entries added before a
		// SWAPDB's wake-up gets this goroutine to wait again still
		// come after it (under load the wake-up can come after them).
		r.pairs = resolveLast(db, r.pairs)
		ctx, cancel := c.armRead()
		stop := c.watch()
		if h := c.srv.blockedHook.Load(); h != nil {
			(*h)(c)
		}
		if c.mustDB() != db {
			c.endBlockedRead(func() { c.unblockSwap = true })
		}
		until := time.Now().Add(wait)
		for {
			out, err = read(ctx, db, wait)
			swapped := c.disarmRead() && errors.Is(err, context.Canceled) && c.ctx.Err() == nil
			cancel()
			if !swapped {
				break
			}
			// SWAPDB swapped its DB: as in Redis 7.0, it waits on the
			// keys of the DB now at its index, for entries after the IDs
			// it waited for ("$" as it stood), and is served at once if
			// they are there.
			ctx, cancel = c.armRead()
			next := c.mustDB()
			out, err = nil, nil
			if r.isGroup {
				err = groupsMoved(next, r.pairs, r.group)
			}
			timedOut := false // then a null reply
			if wait != xstream.BlockForever {
				wait = time.Until(until)
				timedOut = wait <= 0
			}
			if err != nil || timedOut {
				c.disarmRead()
				cancel()
				break
			}
			db = next
		}
		stop()
	}
	return out, dels, err
}

// armRead makes the context of a blocked read's wait, which
// endBlockedRead ends, and clears the marks of how it was ended.
func (c *conn) armRead() (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(c.ctx)
	c.unblockMu.Lock()
	c.unblock, c.unblockErr, c.unblockSwap = cancel, false, false
	c.unblockMu.Unlock()
	return ctx, cancel
}

// disarmRead takes the read's context off c after its wait, and reports
// whether SWAPDB ended it.
func (c *conn) disarmRead() (swapped bool) {
	c.unblockMu.Lock()
	defer c.unblockMu.Unlock()
	c.unblock = nil
	return c.unblockSwap
}

// groupsMoved is what Redis 7.0 does, at a SWAPDB, to an XREADGROUP
// blocked on the keys of pairs (key, ID, ...): each key was a stream of
// the DB swapped out; one missing from db, the DB swapped in, ends the
// read with ErrNoStream (Redis's UNBLOCKED), one without the group with
// ErrNoGroup (NOGROUP). It returns nil when every key has the group: the
// read then waits on them in db, served at once if they have entries
// past the group's last delivered. The keys are looked at in order
// (Redis's order is that of its table of blocked keys). O(k log n).
func groupsMoved(db *xstream.DB, pairs []string, group string) error {
	for i := 0; i < len(pairs); i += 2 {
		s, ok := db.Lookup(pairs[i])
		switch {
		case !ok:
			return xstream.ErrNoStream
		case !hasGroup(s, group):
			return xstream.ErrNoGroup
		}
	}
	return nil
}

// resolveLast returns pairs (key, ID, ...) with each "$" replaced by the
// last ID of its stream in db (0-0 for a missing one).
func resolveLast(db *xstream.DB, pairs []string) []string {
	out := append([]string(nil), pairs...)
	for i := 1; i < len(out); i += 2 {
		if out[i] != "$" {
			continue
		}
		out[i] = "0-0"
		if s, ok := db.Lookup(out[i-1]); ok {
			out[i] = s.LastID().String()
		}
	}
	return out
}

// swapWake ends c's blocked XREAD or XREADGROUP, if it waits on DB a or
// b, so that it waits again on the DB SWAPDB put at its index. It reports whether it
// did.
func (c *conn) swapWake(a, b int) bool {
	c.public.mu.Lock()
	db := c.public.db
	c.public.mu.Unlock()
	if db != a && db != b {
		return false
	}
	return c.endBlockedRead(func() { c.unblockSwap = true })
}

// unblockRead ends c's blocked read, as CLIENT UNBLOCK: it answers as
// timed out, or with the UNBLOCKED error (withErr). It reports whether c
// was blocked.
func (c *conn) unblockRead(withErr bool) bool {
	return c.endBlockedRead(func() { c.unblockErr = withErr })
}

// endBlockedRead ends c's blocked read, if there is one, after mark has
// said under unblockMu how the read is to answer. It reports whether c
// was blocked.
func (c *conn) endBlockedRead(mark func()) bool {
	c.unblockMu.Lock()
	defer c.unblockMu.Unlock()
	if c.unblock == nil {
		return false
	}
	mark()
	c.unblock()
	c.unblock = nil
	return true
}

// readReply writes the reply of a read: its entries, a null array when it
// found none or its client went away, or the error that ended a blocked
// read.
func (c *conn) readReply(r readCmd, out []xstream.StreamEntries, dels [][]xstream.Delivery, err error) {
	switch {
	case err == nil:
	case c.ctx.Err() != nil:
		c.nullArray()
		return
	case errors.Is(err, context.Canceled): // CLIENT UNBLOCK
		c.unblockMu.Lock()
		withErr := c.unblockErr
		c.unblockMu.Unlock()
		if withErr {
			c.err("UNBLOCKED client unblocked via CLIENT UNBLOCK")
		} else {
			c.nullArray()
		}
		return
	case errors.Is(err, xstream.ErrNoStream):
		c.err("UNBLOCKED the stream key no longer exists")
		return
	case errors.Is(err, xstream.ErrNoGroup):
		c.err("NOGROUP the consumer group this client was blocked on no longer exists")
		return
	default:
		c.fail(err)
		return
	}
	switch {
	case len(out) == 0:
		c.nullArray()
	case r.args.Claim:
		c.claimedStreamEntries(out, dels)
	default:
		c.streamEntries(out)
	}
}
