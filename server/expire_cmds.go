package server

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/xstreamgo/xstream"
)

// Key expiry: EXPIRE, PEXPIRE, EXPIREAT, PEXPIREAT (with NX, XX, GT and
// LT), TTL, PTTL, EXPIRETIME, PEXPIRETIME and PERSIST, as Redis 7.0 has
// them. The expiry time is the stream's (xstream.DB.SetExpiry), kept
// through the log and snapshots of a durable server. Times are the
// server's clock (Server.now: SetTime and FastForward move it). An
// expired key goes when a command names it (expireKeys, which dispatch
// calls before each command) or when the active cycle finds it
// (expireLoop); until then DBSIZE still counts it, as Redis's does.

func init() {
	register("expire", -3, func(c *conn, args [][]byte) { c.expire(args, time.Second, false) })
	register("pexpire", -3, func(c *conn, args [][]byte) { c.expire(args, time.Millisecond, false) })
	register("expireat", -3, func(c *conn, args [][]byte) { c.expire(args, time.Second, true) })
	register("pexpireat", -3, func(c *conn, args [][]byte) { c.expire(args, time.Millisecond, true) })
	register("ttl", 2, func(c *conn, args [][]byte) { c.ttl(args[1], false, false) })
	register("pttl", 2, func(c *conn, args [][]byte) { c.ttl(args[1], true, false) })
	register("expiretime", 2, func(c *conn, args [][]byte) { c.ttl(args[1], false, true) })
	register("pexpiretime", 2, func(c *conn, args [][]byte) { c.ttl(args[1], true, true) })
	register("persist", 2, func(c *conn, args [][]byte) {
		// Checked and cleared at once (two PERSISTs: one answers 1); 0
		// for a missing key too.
		set, err := c.mustDB().SetExpiryIf(string(args[1]), time.Time{}, xstream.ExpiryXX)
		c.int(int64(b2i(set && err == nil))) // err: removed meanwhile
	})
}

// The conditions of EXPIRE and friends (Redis 7.0).
const (
	expireNX = 1 << iota // only when the key has no expiry
	expireXX             // only when it has one
	expireGT             // only later than the current one (none is infinite)
	expireLT             // only earlier than the current one
)

// expire is EXPIRE (unit a second, at false), PEXPIRE (a millisecond),
// EXPIREAT and PEXPIREAT (at: an absolute Unix time), in Redis's order of
// checks: the options, then the time, then the key.
func (c *conn) expire(args [][]byte, unit time.Duration, at bool) {
	flags := 0
	for _, a := range args[3:] {
		switch {
		case is(a, "nx"):
			flags |= expireNX
		case is(a, "xx"):
			flags |= expireXX
		case is(a, "gt"):
			flags |= expireGT
		case is(a, "lt"):
			flags |= expireLT
		default:
			c.err(fmt.Sprintf("ERR Unsupported option %s", a))
			return
		}
	}
	if flags&expireNX != 0 && flags&(expireXX|expireGT|expireLT) != 0 {
		c.err("ERR NX and XX, GT or LT options at the same time are not compatible")
		return
	}
	if flags&expireGT != 0 && flags&expireLT != 0 {
		c.err("ERR GT and LT options at the same time are not compatible")
		return
	}
	when, ok := parseLL(args[2])
	if !ok {
		c.err(errNotInt)
		return
	}
	badTime := func() {
		c.err(fmt.Sprintf("ERR invalid expire time in '%s' command", strings.ToLower(string(args[0]))))
	}
	if unit == time.Second {
		if when > math.MaxInt64/1000 || when < math.MinInt64/1000 {
			badTime()
			return
		}
		when *= 1000
	}
	now := c.srv.now().UnixMilli()
	if !at {
		if when > math.MaxInt64-now {
			badTime()
			return
		}
		when += now
	}
	c.lookedUp()
	// The condition is checked as the expiry is set, or as the key is
	// removed, under the DB's lock: of two EXPIRE NX at once, one
	// answers 1. A missing key (ErrNoStream) answers 0.
	var cond xstream.ExpiryCond
	for _, f := range [...]struct {
		flag int
		cond xstream.ExpiryCond
	}{{expireNX, xstream.ExpiryNX}, {expireXX, xstream.ExpiryXX}, {expireGT, xstream.ExpiryGT}, {expireLT, xstream.ExpiryLT}} {
		if flags&f.flag != 0 {
			cond |= f.cond
		}
	}
	db, name := c.mustDB(), string(args[1])
	if when <= now {
		// Already past: the key goes now, as in Redis.
		removed, err := db.RemoveIfExpiry(name, time.UnixMilli(when), cond)
		c.int(int64(b2i(removed && err == nil)))
		return
	}
	set, err := db.SetExpiryIf(name, time.UnixMilli(when), cond)
	c.int(int64(b2i(set && err == nil)))
}

// ttl is TTL and PTTL (abs false: the time left, at least 0) and
// EXPIRETIME and PEXPIRETIME (abs: the Unix time), in milliseconds with
// ms and else in seconds, rounded as Redis does; -2 for a missing key,
// -1 for one without an expiry.
func (c *conn) ttl(key []byte, ms, abs bool) {
	s, ok := c.lookupStream(key)
	if !ok {
		c.int(-2)
		return
	}
	at, ok := s.ExpiresAt()
	if !ok {
		c.int(-1)
		return
	}
	v := at.UnixMilli()
	if !abs {
		v = max(v-c.srv.now().UnixMilli(), 0)
	}
	if !ms {
		v = (v + 500) / 1000
	}
	c.int(v)
}

// expireKeys removes the keys of args (those cmd's key specs name, in the
// connection's DB) that have expired, before cmd runs: Redis's lazy
// expiry. Without an expiring key in the DB it costs an atomic load.
func (c *conn) expireKeys(cmd *command, args [][]byte) {
	db := c.mustDB()
	if db.Expiring() == 0 || cmd.spec == nil || len(cmd.spec.specs) == 0 {
		return
	}
	names := keyNames(cmd.spec.specs, args)
	if len(names) > 0 {
		// Redis signals an expired key as changed by no client.
		c.srv.track.invalidate(nil, db.RemoveExpired(c.srv.now(), names...), true)
	}
}

// keyNames returns the keys that specs find in args.
func keyNames(specs []keySpec, args [][]byte) []string {
	var names []string
	eachKey(specs, args, func(k []byte) { names = append(names, string(k)) })
	return names
}

// eachKey calls fn with each key that specs find in args, in order.
func eachKey(specs []keySpec, args [][]byte, fn func(k []byte)) {
	for _, ks := range specs {
		first := ks.index
		if ks.keyword != "" {
			first = 0
			for i := ks.from; i < len(args); i++ {
				if len(args[i]) == len(ks.keyword) && is(args[i], ks.keyword) {
					first = i + 1
					break
				}
			}
			if first == 0 {
				continue
			}
		}
		if first <= 0 || first >= len(args) {
			continue
		}
		last := first + ks.lastkey
		switch {
		case ks.lastkey < 0:
			last = len(args) + ks.lastkey
			if ks.limit > 1 {
				last = first + (len(args)-first)/ks.limit - 1
			}
		case ks.lastkey == 0:
			last = first
		}
		for i := first; i <= min(last, len(args)-1); i++ {
			fn(args[i])
		}
	}
}
