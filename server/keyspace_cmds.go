package server

import (
	"errors"
	"math"

	"github.com/xstreamgo/xstream"
)

// Commands that move keys: RENAME, RENAMENX and COPY.

func init() {
	register("rename", 3, func(c *conn, args [][]byte) {
		if _, ok := c.rename(args, true); ok {
			c.ok()
		}
	})
	register("renamenx", 3, func(c *conn, args [][]byte) {
		if renamed, ok := c.rename(args, false); ok {
			c.int(int64(b2i(renamed)))
		}
	})
	register("copy", -3, copyCmd)
}

// copyCmd is COPY source destination [DB destination-db] [REPLACE], with
// Redis 7.0's order of checks.
func copyCmd(c *conn, args [][]byte) {
	dbID, replace := int64(c.db), false
	for i := 3; i < len(args); i++ {
		switch {
		case is(args[i], "replace"):
			replace = true
		case is(args[i], "db") && i+1 < len(args):
			i++
			n, ok := parseLL(args[i])
			if !ok {
				c.err(errNotInt)
				return
			}
			if n < math.MinInt32 || n > math.MaxInt32 { // getIntFromObjectOrReply's range
				c.err("ERR value is out of range, value must between -2147483648 and 2147483647")
				return
			}
			if n < 0 || n >= numDBs { // checked as it is read, before what follows
				c.err("ERR DB index is out of range")
				return
			}
			dbID = n
		default:
			c.err(errSyntax)
			return
		}
	}
	src, dst := string(args[1]), string(args[2])
	if int(dbID) == c.db && src == dst {
		c.err("ERR source and destination objects are the same")
		return
	}
	to := c.srv.db(int(dbID))
	// The destination may have expired in its DB (lazy expiry there).
	c.srv.track.invalidate(nil, to.RemoveExpired(c.srv.now(), dst), true)
	bit := uint16(1) << dbID
	c.noteWrites(bit)
	copied, err := c.mustDB().Copy(src, to, dst, replace)
	// Redis looks both keys up, and a copy made is as new.
	clock := c.srv.lru.Load()
	c.touchKey(args[1], clock)
	c.srv.access(int(dbID)).touch(args[2], clock)
	switch {
	case errors.Is(err, xstream.ErrNoStream):
		c.int(0)
	case err != nil:
		c.fail(err)
	default:
		c.int(int64(b2i(copied)))
	}
}

// rename renames the key args[1] to args[2] in the connection's DB
// (xstream.DB.Rename): ok is false when it replied with an error.
func (c *conn) rename(args [][]byte, replace bool) (renamed, ok bool) {
	renamed, err := c.mustDB().Rename(string(args[1]), string(args[2]), replace)
	switch {
	case errors.Is(err, xstream.ErrNoStream):
		c.err(errNoKey)
		return false, false
	case err != nil:
		c.fail(err)
		return false, false
	}
	return renamed, true
}
