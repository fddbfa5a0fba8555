package server

import (
	"time"
)

// RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME s]
// [FREQ f], for the DUMP payloads of streams (rdb.go), with Redis 7.0's
// order of checks and its errors. A payload of another type is "Bad data
// format": only streams exist here. IDLETIME sets the key's idle time
// (OBJECT IDLETIME, idle.go); FREQ is checked and has no effect, as
// under Redis's policies that are not LFU.

func init() {
	register("restore", -4, func(c *conn, args [][]byte) {
		replace, absTTL, idle, freq := false, false, false, false
		idleSecs := int64(0)
		for i := 4; i < len(args); i++ {
			more := len(args) - i - 1
			switch {
			case is(args[i], "replace"):
				replace = true
			case is(args[i], "absttl"):
				absTTL = true
			case is(args[i], "idletime") && more >= 1 && !freq:
				i++
				v, ok := parseLL(args[i])
				if !ok {
					c.err(errNotInt)
					return
				}
				if v < 0 {
					c.err("ERR Invalid IDLETIME value, must be >= 0")
					return
				}
				idle, idleSecs = true, v
			case is(args[i], "freq") && more >= 1 && !idle:
				i++
				v, ok := parseLL(args[i])
				if !ok {
					c.err(errNotInt)
					return
				}
				if v < 0 || v > 255 {
					c.err("ERR Invalid FREQ value, must be >= 0 and <= 255")
					return
				}
				freq = true
			default:
				c.err(errSyntax)
				return
			}
		}
		db, name := c.mustDB(), string(args[1])
		if _, ok := db.Lookup(name); ok && !replace {
			c.touchKey(args[1], c.srv.lru.Load()) // Redis's lookupKeyWrite
			c.err("BUSYKEY Target key name already exists.")
			return
		}
		ttl, ok := parseLL(args[2])
		if !ok {
			c.err(errNotInt)
			return
		}
		if ttl < 0 {
			c.err("ERR Invalid TTL value, must be >= 0")
			return
		}
		obj, ok := verifyDump(args[3])
		if !ok {
			c.err("ERR DUMP payload version or checksum are wrong")
			return
		}
		img, err := decodeStreamDump(obj)
		if err != nil {
			c.err("ERR Bad data format")
			return
		}
		now := c.srv.now().UnixMilli()
		if ttl != 0 && !absTTL {
			ttl += now
		}
		if ttl != 0 && ttl <= now {
			// Already expired: the key goes (with REPLACE), nothing is
			// made, as in Redis.
			if replace {
				if _, err := db.Remove(name); err != nil {
					c.fail(err)
					return
				}
			}
			c.ok()
			return
		}
		if ttl != 0 {
			img.ExpiresAt = time.UnixMilli(ttl)
		}
		if _, err := db.Restore(name, img, true); err != nil {
			c.err("ERR Bad data format")
			return
		}
		c.srv.stampKey(c.db, name, idleSecs)
		c.ok()
	})
}
