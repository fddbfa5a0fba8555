package xstream

import "sync"

// collector gathers entries under a stream's lock and then builds the
// returned []Entry with three allocations in all: one string holding every
// name and value, one []Field and one []Entry.
type collector struct {
	ids   []ID
	nf    []int32 // number of fields of each entry
	spans []span  // name, value, name, value… into buf
	buf   []byte
	tmp   []fieldSpan

	mastBlk   *block // block whose master names are in mastSpans
	mastSpans []span
}

var collectors = sync.Pool{New: func() any { return new(collector) }}

func getCollector() *collector { return collectors.Get().(*collector) }

func putCollector(c *collector) {
	if cap(c.buf) > 1<<20 || cap(c.spans) > 1<<16 {
		return // let an unusually large one go
	}
	c.reset()
	collectors.Put(c)
}

func (c *collector) reset() {
	c.ids, c.nf, c.spans, c.buf, c.tmp = c.ids[:0], c.nf[:0], c.spans[:0], c.buf[:0], c.tmp[:0]
	c.mastBlk, c.mastSpans = nil, c.mastSpans[:0]
}

// copySpan copies d[sp] to buf and returns its span in buf.
func (c *collector) copySpan(d []byte, sp span) span {
	out := span{int32(len(c.buf)), sp.len}
	c.buf = append(c.buf, d[sp.off:sp.off+sp.len]...)
	return out
}

// add records the entry whose body starts at body in b.
func (c *collector) add(b *block, id ID, flags byte, body int) {
	c.ids = append(c.ids, id)
	c.tmp = b.decodeFields(flags, body, c.tmp[:0])
	c.nf = append(c.nf, int32(len(c.tmp)))
	same := flags&flagSame != 0
	if same && c.mastBlk != b {
		c.mastBlk, c.mastSpans = b, c.mastSpans[:0]
		for _, f := range c.tmp {
			c.mastSpans = append(c.mastSpans, c.copySpan(b.data, f.name))
		}
	}
	for k, f := range c.tmp {
		var name span
		if same {
			name = c.mastSpans[k]
		} else {
			name = c.copySpan(b.data, f.name)
		}
		c.spans = append(c.spans, name, c.copySpan(b.data, f.value))
	}
}

// addDeleted records an ID whose entry no longer exists (no fields).
func (c *collector) addDeleted(id ID) {
	c.ids = append(c.ids, id)
	c.nf = append(c.nf, 0)
}

// entries builds the result; nil when nothing was collected.
func (c *collector) entries() []Entry {
	if len(c.ids) == 0 {
		return nil
	}
	str := string(c.buf)
	fields := make([]Field, len(c.spans)/2)
	for i := range fields {
		n, v := c.spans[2*i], c.spans[2*i+1]
		fields[i] = Field{str[n.off : n.off+n.len], str[v.off : v.off+v.len]}
	}
	out := make([]Entry, len(c.ids))
	for i, id := range c.ids {
		n := int(c.nf[i])
		out[i] = Entry{ID: id}
		if n > 0 {
			out[i].Fields, fields = fields[:n:n], fields[n:]
		}
	}
	return out
}
