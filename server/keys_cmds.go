package server

import (
	"strconv"
	"strings"
	"time"

	"github.com/xstreamgo/xstream"
)

// Commands about keys and databases.

func init() {
	register("select", 2, func(c *conn, args [][]byte) {
		n, ok := c.intArg(args[1], "")
		if !ok {
			return
		}
		if n < 0 || n >= numDBs {
			c.err("ERR DB index is out of range")
			return
		}
		c.db = int(n)
		c.public.changed(c)
		c.ok()
	})
	register("del", -2, func(c *conn, args [][]byte) {
		names := make([]string, len(args)-1)
		for i, a := range args[1:] {
			names[i] = string(a)
		}
		n, err := c.mustDB().Remove(names...)
		if err != nil {
			c.fail(err)
			return
		}
		c.int(int64(n))
	})
	register("unlink", -2, commands["del"].fn)
	register("exists", -2, func(c *conn, args [][]byte) {
		n := 0
		for _, a := range args[1:] {
			if _, ok := c.lookupStream(a); ok {
				n++
			}
		}
		c.int(int64(n))
	})
	// TOUCH key...: as EXISTS, and call stamps the keys (idle.go).
	register("touch", -2, commands["exists"].fn)
	register("type", 2, func(c *conn, args [][]byte) {
		if _, ok := c.lookupStream(args[1]); ok {
			c.simple("stream")
		} else {
			c.simple("none")
		}
	})
	register("object|encoding", 3, func(c *conn, args [][]byte) {
		if _, ok := c.lookupStream(args[2]); ok {
			c.bulk("stream")
		} else {
			c.null()
		}
	})
	register("object|refcount", 3, func(c *conn, args [][]byte) {
		if _, ok := c.lookupStream(args[2]); ok {
			c.int(1)
		} else {
			c.null()
		}
	})
	// No LFU policy here (maxmemory-policy is noeviction): OBJECT FREQ
	// answers as Redis does then.
	register("object|freq", 3, func(c *conn, args [][]byte) {
		if _, ok := c.lookupStream(args[2]); ok {
			c.err("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
		} else {
			c.null()
		}
	})
	// MEMORY USAGE key [SAMPLES n]: the bytes of the stream's storage
	// (xstream.StreamStats.Bytes), its whole, whatever SAMPLES says.
	register("memory|usage", -3, func(c *conn, args [][]byte) {
		for i := 3; i < len(args); i++ {
			if !is(args[i], "samples") || i+1 >= len(args) {
				c.err(errSyntax)
				return
			}
			i++
			if _, ok := c.intArg(args[i], ""); !ok {
				return
			}
		}
		if s, ok := c.lookupStream(args[2]); ok {
			c.int(s.Stats().Bytes)
		} else {
			c.null()
		}
	})
	register("keys", 2, func(c *conn, args [][]byte) {
		keys := c.matchKeys(string(args[1]))
		c.array(len(keys))
		for _, k := range keys {
			c.bulk(k)
		}
	})
	register("scan", -2, scan)
	register("dbsize", 1, func(c *conn, args [][]byte) { c.int(int64(c.mustDB().Len())) })
	register("flushdb", -1, func(c *conn, args [][]byte) {
		if !c.flushArgs(args) {
			return
		}
		db := c.mustDB()
		if _, err := db.Remove(db.Names("")...); err != nil {
			c.fail(err)
			return
		}
		c.srv.access(c.db).avgTTL.Store(0) // as Redis's emptyData
		c.ok()
	})
	register("flushall", -1, func(c *conn, args [][]byte) {
		if !c.flushArgs(args) {
			return
		}
		c.noteWrites(allDBs)
		for i := range c.srv.dbs {
			db := c.srv.db(i)
			if _, err := db.Remove(db.Names("")...); err != nil {
				c.fail(err)
				return
			}
			c.srv.access(i).avgTTL.Store(0)
		}
		c.ok()
	})
	register("info", -1, info)
}

func (c *conn) flushArgs(args [][]byte) bool {
	if len(args) > 2 || (len(args) == 2 && !is(args[1], "sync") && !is(args[1], "async")) {
		c.err(errSyntax)
		return false
	}
	return true
}

// matchKeys returns the keys of the connection's DB that match pattern
// and have not expired (KEYS and SCAN skip an expired key, as Redis's do).
func (c *conn) matchKeys(pattern string) []string {
	db := c.mustDB()
	all := db.Names("")
	expiring := db.Expiring() > 0
	if pattern == "*" && !expiring {
		return all
	}
	now := c.srv.now()
	out := all[:0]
	for _, k := range all {
		if !globMatch(pattern, k) {
			continue
		}
		if expiring {
			if s, ok := db.Lookup(k); !ok || expired(s, now) {
				continue
			}
		}
		out = append(out, k)
	}
	return out
}

// expired tells whether s's expiry has passed at now (to the
// millisecond: a key is still there at its expiry time, as in Redis).
func expired(s *xstream.Stream, now time.Time) bool {
	at, ok := s.ExpiresAt()
	return ok && at.UnixMilli() < now.UnixMilli()
}

// scan returns every matching key in one call, with cursor 0: a full
// iteration, as SCAN allows.
func scan(c *conn, args [][]byte) {
	if _, err := strconv.ParseUint(string(args[1]), 10, 64); err != nil {
		c.err("ERR invalid cursor")
		return
	}
	pattern, typ := "*", ""
	for i := 2; i < len(args); i += 2 {
		if i+1 >= len(args) {
			c.err(errSyntax)
			return
		}
		switch {
		case is(args[i], "match"):
			pattern = string(args[i+1])
		case is(args[i], "count"):
			n, ok := c.intArg(args[i+1], "")
			if !ok {
				return
			}
			if n < 1 {
				c.err(errSyntax)
				return
			}
		case is(args[i], "type"):
			typ = strings.ToLower(string(args[i+1]))
		default:
			c.err(errSyntax)
			return
		}
	}
	var keys []string
	if typ == "" || typ == "stream" {
		keys = c.matchKeys(pattern)
	}
	c.array(2)
	c.bulk("0")
	c.array(len(keys))
	for _, k := range keys {
		c.bulk(k)
	}
}
