package server

import (
	"fmt"

	"github.com/xstreamgo/xstream"
)

// XGROUPCFG: the dead-letter policy of a consumer group, which Redis does
// not have (see xstream.DeadLetterPolicy):
//
//	XGROUPCFG key group MAXDELIVER n DEADLETTER stream   set it (n >= 1)
//	XGROUPCFG key group MAXDELIVER 0                      remove it
//
// The options may come in any order. It replies +OK. XINFO GROUPS then
// lists max-deliveries, dead-letter-stream and dead-lettered for a group
// with a policy or dead letters, after Redis's fields.

func init() {
	register("xgroupcfg", -5, xgroupcfg)
}

func xgroupcfg(c *conn, args [][]byte) {
	var p xstream.DeadLetterPolicy
	max, hasMax, hasDead := int64(0), false, false
	for i := 3; i < len(args); i += 2 {
		if i+1 >= len(args) {
			c.err(errSyntax)
			return
		}
		switch {
		case is(args[i], "maxdeliver") && !hasMax:
			n, ok := c.intArg(args[i+1], "")
			if !ok {
				return
			}
			if n < 0 {
				c.err("ERR MAXDELIVER must be >= 0 (0 removes the dead-letter policy)")
				return
			}
			max, hasMax = n, true
		case is(args[i], "deadletter") && !hasDead:
			p.Stream, hasDead = string(args[i+1]), true
		default:
			c.err(errSyntax)
			return
		}
	}
	switch {
	case !hasMax:
		c.err("ERR XGROUPCFG needs MAXDELIVER")
		return
	case max == 0 && hasDead:
		c.err("ERR MAXDELIVER 0 removes the dead-letter policy: DEADLETTER goes with a MAXDELIVER of 1 or more")
		return
	case max > 0 && !hasDead:
		c.err("ERR MAXDELIVER needs DEADLETTER, the name of the dead-letter stream")
		return
	}
	if max > 0 {
		p.MaxDeliveries = max
	}
	s, ok := c.lookupStream(args[1])
	if !ok {
		c.err(errNoKey)
		return
	}
	if !hasGroup(s, string(args[2])) {
		c.err(fmt.Sprintf("NOGROUP No such consumer group '%s' for key name '%s'", args[2], args[1]))
		return
	}
	if err := s.SetDeadLetterPolicy(string(args[2]), p); err != nil {
		c.fail(err)
		return
	}
	c.ok()
}

// deadLetterFieldCount is how many fields XINFO GROUPS adds for g: three
// for a group with a dead-letter policy or dead letters, none for any
// other group, whose reply stays Redis's.
func deadLetterFieldCount(g xstream.GroupInfo) int {
	if g.DeadLetter == (xstream.DeadLetterPolicy{}) && g.DeadLettered == 0 {
		return 0
	}
	return 3
}

// deadLetterFields writes those fields: max-deliveries,
// dead-letter-stream, dead-lettered.
func (c *conn) deadLetterFields(g xstream.GroupInfo) {
	if deadLetterFieldCount(g) == 0 {
		return
	}
	c.bulk("max-deliveries")
	c.int(g.DeadLetter.MaxDeliveries)
	c.bulk("dead-letter-stream")
	c.bulk(g.DeadLetter.Stream)
	c.bulk("dead-lettered")
	c.int(g.DeadLettered)
}
