package server

import (
	"fmt"

	"github.com/xstreamgo/xstream"
)

func init() {
	register("xinfo|stream", -3, xinfoStream)
	register("xinfo|groups", 3, xinfoGroups)
	register("xinfo|consumers", 4, xinfoConsumers)
	register("xinfo|help", 2, func(c *conn, args [][]byte) { c.help(xinfoHelp) })
}

var xinfoHelp = []string{
	"XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"CONSUMERS <key> <groupname>",
	"    Show consumers of <groupname>.",
	"GROUPS <key>",
	"    Show the stream consumer groups.",
	"STREAM <key> [FULL [COUNT <count>]",
	"    Show information about the stream.",
	"HELP",
	"    Prints this help.",
}

// optInt writes n, or a null when it is not known.
func (c *conn) optInt(n int64, known bool) {
	if known {
		c.int(n)
	} else {
		c.null()
	}
}

func xinfoGroups(c *conn, args [][]byte) {
	s, ok := c.lookupStream(args[2])
	if !ok {
		c.err(errNoKey)
		return
	}
	gs := s.Groups()
	c.array(len(gs))
	for _, g := range gs {
		c.groupFields(g, 6+deadLetterFieldCount(g))
		c.bulk("pending")
		c.int(g.Pending)
		c.groupProgress(g)
		c.deadLetterFields(g)
	}
}

// groupProgress writes a group's last-delivered-id, entries-read and lag,
// which XINFO GROUPS and XINFO STREAM FULL both give, in this order.
func (c *conn) groupProgress(g xstream.GroupInfo) {
	c.bulk("last-delivered-id")
	c.id(g.LastDeliveredID)
	c.bulk("entries-read")
	c.optInt(g.EntriesRead, g.EntriesReadKnown)
	c.bulk("lag")
	c.optInt(g.Lag, g.LagKnown)
}

func (c *conn) groupFields(g xstream.GroupInfo, n int) {
	c.mapLen(n)
	c.bulk("name")
	c.bulk(g.Name)
	c.bulk("consumers")
	c.int(int64(g.Consumers))
}

func xinfoConsumers(c *conn, args [][]byte) {
	s, ok := c.lookupStream(args[2])
	if !ok {
		c.err(errNoKey)
		return
	}
	cs, err := s.Consumers(string(args[3]))
	if err != nil {
		c.err(fmt.Sprintf("NOGROUP No such consumer group '%s' for key name '%s'", args[3], args[2]))
		return
	}
	c.array(len(cs))
	for _, ci := range cs {
		c.mapLen(4)
		c.bulk("name")
		c.bulk(ci.Name)
		c.bulk("pending")
		c.int(ci.Pending)
		c.bulk("idle")
		c.int(ci.Idle.Milliseconds())
		c.bulk("inactive")
		if ci.InactiveKnown {
			c.int(ci.Inactive.Milliseconds())
		} else {
			c.int(-1)
		}
	}
}

// xinfoStream serves XINFO STREAM key [FULL [COUNT count]].
func xinfoStream(c *conn, args [][]byte) {
	s, ok := c.lookupStream(args[2])
	if !ok {
		c.err(errNoKey)
		return
	}
	full, count, err := parseInfoStream(args)
	switch {
	case err != nil:
		c.fail(err)
	case !full:
		info, err := s.Info()
		if err != nil {
			c.fail(err)
			return
		}
		c.infoStream(info)
	default:
		info, err := s.InfoFull(int(min(count, 1<<31)))
		if err != nil {
			c.fail(err)
			return
		}
		c.infoStreamFull(info)
	}
}

// parseInfoStream parses XINFO STREAM's FULL and COUNT (10 by default,
// and for a negative count).
func parseInfoStream(args [][]byte) (full bool, count int64, err error) {
	count = 10
	syntax := replyError(fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%s'. Try XINFO HELP.", args[1]))
	if len(args) == 3 {
		return false, count, nil
	}
	if !is(args[3], "full") {
		return false, 0, syntax
	}
	if len(args) == 4 {
		return true, count, nil
	}
	if len(args) != 6 || !is(args[4], "count") {
		return false, 0, syntax
	}
	if count, err = intArg(args[5], ""); err != nil {
		return false, 0, err
	}
	if count < 0 {
		count = 10
	}
	return true, count, nil
}

// infoStream writes the reply of XINFO STREAM without FULL.
func (c *conn) infoStream(info xstream.StreamInfo) {
	c.mapLen(10 + idmpPairs(info))
	c.streamHead(info)
	c.bulk("groups")
	c.int(int64(info.Groups))
	c.bulk("first-entry")
	c.optEntry(info.FirstEntry)
	c.bulk("last-entry")
	c.optEntry(info.LastEntry)
}

// infoStreamFull writes the reply of XINFO STREAM FULL.
func (c *conn) infoStreamFull(info xstream.StreamInfo) {
	c.mapLen(9 + idmpPairs(info))
	c.streamHead(info)
	c.bulk("entries")
	c.entries(info.Entries)
	c.bulk("groups")
	c.array(len(info.GroupDetails))
	for _, g := range info.GroupDetails {
		c.groupDetail(g)
	}
}

// groupDetail writes one group of XINFO STREAM FULL, with its PEL and its
// consumers. Redis 8.8's nacked-count is shown when the group has entries
// given back by XNACK: other groups keep Redis 7.0's seven fields, which
// older clients parse (see idmpPairs).
func (c *conn) groupDetail(g xstream.GroupDetail) {
	if g.Nacked > 0 {
		c.mapLen(8)
	} else {
		c.mapLen(7)
	}
	c.bulk("name")
	c.bulk(g.Name)
	c.groupProgress(g.GroupInfo)
	c.bulk("pel-count")
	c.int(g.Pending)
	if g.Nacked > 0 {
		c.bulk("nacked-count") // Redis 8.8
		c.int(g.Nacked)
	}
	c.bulk("pending")
	c.array(len(g.PEL))
	for _, p := range g.PEL {
		c.array(4)
		c.id(p.ID)
		c.bulk(p.Consumer)
		c.int(c.deliveryTime(p))
		c.int(p.Deliveries)
	}
	c.bulk("consumers")
	c.array(len(g.Consumers))
	for _, cd := range g.Consumers {
		c.consumerDetail(cd)
	}
}

// consumerDetail writes one consumer of XINFO STREAM FULL, with its PEL.
func (c *conn) consumerDetail(cd xstream.ConsumerDetail) {
	c.mapLen(5)
	c.bulk("name")
	c.bulk(cd.Name)
	c.bulk("seen-time")
	c.int(cd.SeenTime.UnixMilli())
	c.bulk("active-time")
	if cd.ActiveTime.IsZero() {
		c.int(-1)
	} else {
		c.int(cd.ActiveTime.UnixMilli())
	}
	c.bulk("pel-count")
	c.int(cd.Pending)
	c.bulk("pending")
	c.array(len(cd.PEL))
	for _, p := range cd.PEL {
		c.array(3)
		c.id(p.ID)
		c.int(c.deliveryTime(p))
		c.int(p.Deliveries)
	}
}

// deliveryTime is the Unix ms of an entry's last delivery, from its idle
// time; 0 for an entry given back by XNACK, as Redis 8.8 shows it.
func (c *conn) deliveryTime(p xstream.PendingEntry) int64 {
	if p.Idle == xstream.NackIdle {
		return 0
	}
	return c.srv.now().UnixMilli() - p.Idle.Milliseconds()
}

// streamHead writes the fields XINFO STREAM gives first, with FULL or
// not: Redis 7's, then the six IDMP fields of Redis 8.6.
func (c *conn) streamHead(info xstream.StreamInfo) {
	c.bulk("length")
	c.int(info.Length)
	c.bulk("radix-tree-keys")
	c.int(int64(info.RadixTreeKeys))
	c.bulk("radix-tree-nodes")
	c.int(int64(info.RadixTreeKeys) + 1)
	c.bulk("last-generated-id")
	c.id(info.LastGeneratedID)
	c.bulk("max-deleted-entry-id")
	c.id(info.MaxDeletedEntryID)
	c.bulk("entries-added")
	c.int(info.EntriesAdded)
	c.bulk("recorded-first-entry-id")
	c.id(info.RecordedFirstEntryID)
	c.idmpFields(info)
}

func (c *conn) optEntry(e *xstream.Entry) {
	if e == nil {
		c.null()
		return
	}
	c.entry(*e)
}
