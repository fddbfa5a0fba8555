package server

import (
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

// xreadGeneric serves XREAD and XREADGROUP, parsing as Redis's
// xreadCommand does. A blocked call waits on the connection's context,
// which ends when the client disconnects or the server shuts down.
func xreadGeneric(c *conn, args [][]byte, isGroup bool) {
	var (
		count           int64
		block           = int64(-1)
		group, consumer []byte
		noack           bool
		claim           bool
		minIdle         int64
		streamsArg      int
	)
loop:
	for i := 1; i < len(args); i++ {
		more := len(args) - i - 1
		switch {
		case is(args[i], "block") && more > 0:
			i++
			v, ok := parseLL(args[i])
			if !ok {
				c.err("ERR timeout is not an integer or out of range")
				return
			}
			if v < 0 {
				c.err("ERR timeout is negative")
				return
			}
			block = v
		case is(args[i], "count") && more > 0:
			i++
			v, ok := c.intArg(args[i], "")
			if !ok {
				return
			}
			count = max(v, 0)
		case is(args[i], "streams") && more > 0:
			streamsArg = i + 1
			if (len(args)-streamsArg)%2 != 0 {
				c.err("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.")
				return
			}
			break loop
		case is(args[i], "group") && more >= 2:
			if !isGroup {
				c.err("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.")
				return
			}
			group, consumer = args[i+1], args[i+2]
			i += 2
		case is(args[i], "claim") && more > 0:
			if !isGroup {
				c.err("ERR The CLAIM option is only supported by XREADGROUP. You called XREAD instead.")
				return
			}
			i++
			v, ok := parseLL(args[i])
			if !ok {
				c.err("ERR min-idle-time is not an integer or out of range")
				return
			}
			if v < 0 {
				c.err("ERR min-idle-time must be a positive integer")
				return
			}
			claim, minIdle = true, v
		case is(args[i], "noack"):
			if !isGroup {
				c.err("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")
				return
			}
			noack = true
		default:
			c.err(errSyntax)
			return
		}
	}
	if streamsArg == 0 {
		c.err(errSyntax)
		return
	}
	if isGroup && group == nil {
		c.err("ERR Missing GROUP option for XREADGROUP")
		return
	}
	n := (len(args) - streamsArg) / 2
	pairs := make([]string, 0, 2*n)
	for k := range n {
		key, idArg := args[streamsArg+k], args[streamsArg+n+k]
		if isGroup {
			s, ok := c.lookupStream(key)
			if !ok || !hasGroup(s, string(group)) {
				c.err(fmt.Sprintf("NOGROUP No such key '%s' or consumer group '%s' in XREADGROUP with GROUP option", key, group))
				return
			}
		}
		var id string
		switch string(idArg) {
		case "$":
			if isGroup {
				c.err("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.")
				return
			}
			id = "$"
		case ">":
			if !isGroup {
				c.err("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")
				return
			}
			id = ">"
		case "+":
			if !isGroup { // Redis 7.4: the last entry
				id = "+"
				break
			}
			fallthrough
		default:
			p, ok := parseStrictID(idArg)
			if !ok {
				c.err(errInvalidID)
				return
			}
			id = p.String()
			if isGroup && p == xstream.MaxID() {
				id = ">" // Redis marks ">" with the largest ID, so it reads as ">"
			}
		}
		pairs = append(pairs, string(key), id)
	}
	var wait time.Duration
	switch {
	case block < 0 || c.inExec:
	case block == 0:
		wait = xstream.BlockForever
	default:
		wait = time.Duration(block) * time.Millisecond
	}
	cnt := int(min(count, 1<<31))
	var dels [][]xstream.Delivery // of a read with CLAIM
	read := func(wait time.Duration) ([]xstream.StreamEntries, error) {
		if claim {
			var out []xstream.StreamEntries
			var err error
			out, dels, err = c.mustDB().ReadGroupDeliveries(c.ctx, string(group), string(consumer), xstream.ReadGroupArgs{Count: cnt, Block: wait, NoAck: noack, Claim: true, ClaimMinIdle: time.Duration(min(minIdle, math.MaxInt64/int64(time.Millisecond))) * time.Millisecond}, pairs...)
			return out, err
		}
		if isGroup {
			return c.mustDB().ReadGroup(c.ctx, string(group), string(consumer), xstream.ReadGroupArgs{Count: cnt, Block: wait, NoAck: noack}, pairs...)
		}
		return c.mustDB().Read(c.ctx, xstream.ReadArgs{Count: cnt, Block: wait}, pairs...)
	}
	// A read that finds entries does not block: try it without waiting
	// first, so only a read that waits pays for the watcher. "$" names the
	// last ID at the time of the call, so a read with it must not be
	// split in two (and it never finds entries at once).
	tryFirst := wait != 0
	for i := 1; i < len(pairs); i += 2 {
		if pairs[i] == "$" {
			tryFirst = false
		}
	}
	var out []xstream.StreamEntries
	var err error
	if tryFirst || wait == 0 {
		out, err = read(0)
	}
	if wait != 0 && err == nil && len(out) == 0 {
		stop := c.watch()
		out, err = read(wait)
		stop()
	}
	switch {
	case err == nil:
	case c.ctx.Err() != nil:
		c.nullArray()
		return
	case errors.Is(err, xstream.ErrNoStream):
		c.err("UNBLOCKED the stream key no longer exists")
		return
	case errors.Is(err, xstream.ErrNoGroup):
		c.err("NOGROUP the consumer group this client was blocked on no longer exists")
		return
	default:
		c.err("ERR " + err.Error())
		return
	}
	if len(out) == 0 {
		c.nullArray()
		return
	}
	if claim {
		c.claimedStreamEntries(out, dels)
		return
	}
	c.streamEntries(out)
}
