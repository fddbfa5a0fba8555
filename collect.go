package xstream

import (
	"slices"
	"sync"
	"unsafe"

	"github.com/xstreamgo/xstream/internal/store"
)

// collector gathers entries under a stream's lock and then builds the
// returned []Entry with three allocations in all: one string holding every
// name and value, one []Field and one []Entry.
//
// A collect whose bytes pass chunkMin goes on in chunks of its own instead
// of one growing buffer, which append would copy over and over (at 1.25x
// a step, about five times the result in all) and then copy once more
// into the string: the chunks become the result's strings as they are.
// So a read of a whole big stream allocates about its bytes once.
type collector struct {
	ids   []ID
	nf    []int32 // number of fields of each entry
	spans []span  // name, value, name, value… at offsets of the collect
	buf   []byte  // the open chunk: the collect's bytes from sealedLen on

	sealed    [][]byte // the chunks before buf, when the collect outgrew one
	sealedLen int      // their bytes
	noSeal    bool     // one buffer only, reused (ScanNoCopy's views)

	mastBlk   *store.Block // block whose master names are in mastSpans
	mastSpans []span

	fields []Field // ScanNoCopy's fields of one entry, views into buf
	ends   []int32 // ends of one entry's strings in buf, as add decodes them
}

// chunkMin is the size past which a collect goes on in chunks, and the
// first chunk's size; chunks double up to chunkMax.
const (
	chunkMin = 256 << 10
	chunkMax = 4 << 20
)

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
	c.ids, c.nf, c.spans, c.buf = c.ids[:0], c.nf[:0], c.spans[:0], c.buf[:0]
	if c.sealed != nil { // not handed over: drop the chunks, keep none
		c.sealed, c.sealedLen, c.buf = nil, 0, nil
	}
	c.noSeal = false
	clear(c.fields) // drop the views into buf
	c.fields = c.fields[:0]
	c.mastBlk, c.mastSpans = nil, c.mastSpans[:0]
}

// add records the entry whose body starts at body in b. It decodes the
// entry's strings to buf and records where they lie in buf; the master
// field names of b are copied once.
func (c *collector) add(b *store.Block, id ID, flags byte, body int) {
	c.ids = append(c.ids, id)
	d := b.Data()
	// The block bounds the body's strings (a packed byte gives two) and its
	// master names.
	if len(c.buf)+2*len(d) > cap(c.buf) {
		c.reserve(2 * len(d))
	}
	if flags&store.FlagSame != 0 {
		if c.mastBlk != b {
			c.addMaster(b)
		}
		start := len(c.buf)
		c.ends = slices.Grow(c.ends[:0], len(c.mastSpans))[:len(c.mastSpans)]
		c.buf, _ = store.AppendStrs(c.buf, c.ends, d, body)
		for i, name := range c.mastSpans {
			end := int(c.ends[i])
			c.spans = append(c.spans, name, span{c.sealedLen + start, end - start})
			start = end
		}
		c.nf = append(c.nf, int32(len(c.mastSpans)))
		return
	}
	k, p := store.Uvarint(d, body)
	start := len(c.buf)
	c.ends = slices.Grow(c.ends[:0], 2*int(k))[:2*int(k)]
	c.buf, _ = store.AppendStrs(c.buf, c.ends, d, p)
	for _, end := range c.ends {
		c.spans = append(c.spans, span{c.sealedLen + start, int(end) - start})
		start = int(end)
	}
	c.nf = append(c.nf, int32(k))
}

// addMaster copies the master field names of b to buf and records their
// spans in mastSpans.
func (c *collector) addMaster(b *store.Block) {
	d := b.Data()
	c.mastBlk, c.mastSpans = b, c.mastSpans[:0]
	_, p := store.Uvarint(d, store.FirstIDLen) // master field count
	for range b.MasterCount() {
		n, q := store.Uvarint(d, p)
		c.mastSpans = append(c.mastSpans, span{c.end(), int(n)})
		c.buf = append(c.buf, d[q:q+int(n)]...)
		p = q + int(n)
	}
}

// end is the collect's offset of the next byte added.
func (c *collector) end() int { return c.sealedLen + len(c.buf) }

// reserve makes room for n more bytes when the open chunk lacks it:
// nothing while the collect is small (or noSeal: append grows the
// buffer), else a new chunk.
func (c *collector) reserve(n int) {
	if c.noSeal || (c.sealed == nil && len(c.buf)+n <= chunkMin) {
		return
	}
	size := chunkMin
	if k := len(c.sealed); k > 0 {
		size = min(chunkMax, 2*cap(c.sealed[k-1]))
	}
	if len(c.buf) > 0 {
		c.sealed = append(c.sealed, c.buf)
		c.sealedLen += len(c.buf)
	}
	c.buf = make([]byte, 0, max(size, n))
}

// text returns the strings of the collect: one copy of buf when it is
// one buffer (which the pool keeps), or views of its chunks, which it
// hands over to them (the collector forgets them).
func (c *collector) text() text {
	if c.sealed == nil {
		return text{str: string(c.buf)}
	}
	t := text{chunks: make([]string, 0, len(c.sealed)+1), starts: make([]int, 0, len(c.sealed)+1)}
	off := 0
	for _, b := range append(c.sealed, c.buf) {
		t.chunks = append(t.chunks, unsafe.String(unsafe.SliceData(b), len(b)))
		t.starts = append(t.starts, off)
		off += len(b)
	}
	c.sealed, c.sealedLen, c.buf = nil, 0, nil
	return t
}

// text holds the strings of a collect, which spans locate.
type text struct {
	str    string   // all of them, when the collect was one buffer
	chunks []string // else its chunks,
	starts []int    // at these offsets of the collect
}

// at returns the string at sp.
func (t *text) at(sp span) string {
	if t.chunks == nil {
		return t.str[sp.off : sp.off+sp.len]
	}
	return t.inChunk(sp)
}

func (t *text) inChunk(sp span) string {
	i, _ := slices.BinarySearch(t.starts, sp.off+1) // the first start past sp
	ch, o := t.chunks[i-1], sp.off-t.starts[i-1]
	return ch[o : o+sp.len]
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
	str := c.text()
	fields := make([]Field, len(c.spans)/2)
	if str.chunks == nil { // the usual collect, one string: no chunk to look up
		for i := range fields {
			name, value := c.spans[2*i], c.spans[2*i+1]
			fields[i] = Field{str.str[name.off : name.off+name.len], str.str[value.off : value.off+value.len]}
		}
	} else {
		for i := range fields {
			fields[i] = Field{str.at(c.spans[2*i]), str.at(c.spans[2*i+1])}
		}
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

// view returns the string at sp in buf without copying it: it is valid
// only until buf is reused (ScanNoCopy).
func (c *collector) view(sp span) string {
	if sp.len == 0 {
		return ""
	}
	return unsafe.String(&c.buf[sp.off], sp.len)
}

// span locates one string inside a byte slice, or inside a collect's
// chunks: int, as a collect may pass 2 GiB.
type span struct{ off, len int }

// shardRead reports on a collect.
type shardRead struct {
	n       int
	stale   bool // records at the position were dropped
	trimmed ID
	more    bool   // records remain after those collected
	nextMs  uint64 // time of the first of them
}

// collect gathers into c up to limit records with sequence number >= from.
// With strict it reports stale, collecting nothing, when retention
// dropped records at or after from.
func (sh *shard) collect(c *collector, from ID, strict bool, limit int) shardRead {
	s := sh.s
	s.mu.RLock()
	defer s.runlock()
	rd := shardRead{trimmed: sh.trimmed}
	if strict && !sh.trimmed.IsZero() && !sh.trimmed.Less(from) {
		rd.stale = true
		return rd
	}
	s.walkLocked(from, MaxID(), false, func(b *store.Block, sk sID, flags byte, body int) bool {
		id := ID(sk)
		if rd.n == limit {
			rd.more, rd.nextMs = true, id.Ms
			return false
		}
		c.add(b, id, flags, body)
		rd.n++
		return true
	})
	return rd
}

// shardCount says that n consecutive collected entries came from sh.
type shardCount struct {
	sh *shard
	n  int
}

// records builds the records of the collected entries, which came from
// the shards in parts, in order. It makes three allocations in all: one
// string for every partition key, name and value, one []Field and one
// []Record.
func (c *collector) records(parts []shardCount) []Record {
	if len(c.ids) == 0 {
		return nil
	}
	str := c.text()
	fields := make([]Field, len(c.spans)/2-len(c.ids))
	out := make([]Record, len(c.ids))
	pi, left, sp := 0, parts[0].n, 0
	for i, id := range c.ids {
		for left == 0 {
			pi++
			left = parts[pi].n
		}
		left--
		n := int(c.nf[i]) - 1 // fields after the partition key
		pk := c.spans[sp+1]
		sp += 2
		fs := fields[:n:n]
		fields = fields[n:]
		for k := range fs {
			fs[k] = Field{str.at(c.spans[sp]), str.at(c.spans[sp+1])}
			sp += 2
		}
		out[i] = Record{ShardID: parts[pi].sh.id, SequenceNumber: id, PartitionKey: str.at(pk), Fields: fs}
	}
	return out
}
