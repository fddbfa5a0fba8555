package server

import "github.com/xstreamgo/xstream"

// Replies of stream values.

func (c *conn) id(id xstream.ID) {
	c.scratch = id.AppendText(c.scratch[:0])
	c.bulkBytes(c.scratch)
}

// entry writes [id, [field, value, ...]]; an entry without fields (its
// message was deleted) has a null array in their place, as in Redis.
func (c *conn) entry(e xstream.Entry) {
	c.array(2)
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

func (c *conn) mustDB() *xstream.DB { return c.srv.dbs[c.db] }

// lookupStream returns the stream called by args[i], if it exists.
func (c *conn) lookupStream(name []byte) (*xstream.Stream, bool) {
	return c.mustDB().Lookup(string(name))
}
