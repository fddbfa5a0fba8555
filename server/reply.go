package server

import "github.com/xstreamgo/xstream"

// Replies of stream values.

func (c *conn) id(id xstream.ID) { c.out = appendID(c.out, id) }

// entry writes [id, [field, value, ...]]; an entry without fields (its
// message was deleted) has a null array in their place, as in Redis.
func (c *conn) entry(e xstream.Entry) { c.entryOf(e, 2) }

// entryOf writes e as an array of n elements: its ID and fields (nil for
// a deleted message), then the n-2 that the caller writes. In a reply
// whose header goes in front at its end, where no bulk string is sent
// apart (bigReply), it is written in one function (appendEntry).
func (c *conn) entryOf(e xstream.Entry, n int) {
	if e.Fields != nil && c.headerLast {
		c.out = appendEntry(c.out, e.ID, e.Fields, n)
		return
	}
	c.array(n)
	c.id(e.ID)
	if e.Fields == nil {
		c.nullArray()
		return
	}
	c.array(2 * len(e.Fields))
	for _, f := range e.Fields {
		c.bulk(f.Name)
		c.bulk(f.Value)
	}
}

// entries writes es as an array, stopping when the reply passes the
// output limit (run then replaces it with an error, or closes the
// connection if part of it was sent), and writing out what it gathered
// each time that passes bigReply.
func (c *conn) entries(es []xstream.Entry) {
	c.array(len(es))
	for _, e := range es {
		c.entry(e)
		if c.replyFull() {
			return
		}
		c.streamIfBig()
	}
}

func (c *conn) ids(es []xstream.Entry) {
	c.array(len(es))
	for _, e := range es {
		c.id(e.ID)
	}
}

func (c *conn) streamEntries(out []xstream.StreamEntries) {
	// A map keyed by stream in RESP3; an array of [name, entries] pairs
	// in RESP2.
	c.aggregate('%', len(out), len(out))
	for _, se := range out {
		if c.resp != 3 {
			c.array(2)
		}
		c.bulk(se.Stream)
		c.entries(se.Entries)
	}
}

// claimedStreamEntries is streamEntries for an XREADGROUP with CLAIM: each
// entry of a ">" stream (dels[i] not nil) has, after its fields, its idle
// time in milliseconds and its delivery count before the read, as Redis
// 8.4 replies; a stream read by history has the usual entries.
func (c *conn) claimedStreamEntries(out []xstream.StreamEntries, dels [][]xstream.Delivery) {
	c.aggregate('%', len(out), len(out))
	for i, se := range out {
		if c.resp != 3 {
			c.array(2)
		}
		c.bulk(se.Stream)
		if i >= len(dels) || dels[i] == nil {
			c.entries(se.Entries)
			continue
		}
		c.array(len(se.Entries))
		for k, e := range se.Entries {
			c.entryOf(e, 4)
			d := dels[i][k]
			c.int(d.Idle.Milliseconds())
			c.int(d.Deliveries)
			if c.replyFull() {
				return
			}
			c.streamIfBig()
		}
	}
}

func (c *conn) mustDB() *xstream.DB { return c.srv.db(c.db) }

// lookupStream returns the stream called by args[i], if it exists.
func (c *conn) lookupStream(name []byte) (*xstream.Stream, bool) {
	return c.mustDB().Lookup(string(name))
}
