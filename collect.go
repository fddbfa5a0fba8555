package xstream

import (
	"math"
	"slices"
	"sync"
	"unsafe"

	"github.com/xstreamgo/xstream/internal/store"
)

// collector gathers entries under a stream's lock (store.Collect) and
// then builds the returned []Entry with three allocations in all: one
// string holding every name and value, one []Field and one []Entry.
//
// A collect whose bytes pass store.ChunkMin goes on in chunks of its own
// instead of one growing buffer: the chunks become the result's strings
// as they are. So a read of a whole big stream allocates about its bytes
// once.
type collector struct {
	store.Collect[ID]
	fields []Field // ScanNoCopy's fields of one entry, views into Buf
}

var collectors = sync.Pool{New: func() any { return new(collector) }}

func getCollector() *collector { return collectors.Get().(*collector) }

func putCollector(c *collector) {
	if cap(c.Buf) > 1<<20 || cap(c.Spans) > 1<<16 {
		return // let an unusually large one go
	}
	c.reset()
	collectors.Put(c)
}

func (c *collector) reset() {
	c.Reset()
	clear(c.fields) // drop the views into Buf
	c.fields = c.fields[:0]
}

// add records the entry whose body starts at body in b (store.Collect.Add).
func (c *collector) add(b *store.Block, id ID, flags byte, body int) {
	c.Add(b, store.ID(id), flags, body)
}

// text returns the strings of the collect: one copy of buf when it is
// one buffer (which the pool keeps), or views of its chunks, which it
// hands over to them (the collector forgets them).
func (c *collector) text() text {
	if c.Sealed == nil {
		return text{str: string(c.Buf)}
	}
	t := text{chunks: make([]string, 0, len(c.Sealed)+1), starts: make([]int, 0, len(c.Sealed)+1)}
	off := 0
	for _, b := range append(c.Sealed, c.Buf) {
		t.chunks = append(t.chunks, unsafe.String(unsafe.SliceData(b), len(b)))
		t.starts = append(t.starts, off)
		off += len(b)
	}
	c.Forget()
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
		return t.str[sp.Off : sp.Off+sp.Len]
	}
	return t.inChunk(sp)
}

func (t *text) inChunk(sp span) string {
	i, _ := slices.BinarySearch(t.starts, sp.Off+1) // the first start past sp
	ch, o := t.chunks[i-1], sp.Off-t.starts[i-1]
	return ch[o : o+sp.Len]
}

// collectLimit is the limit of a Walk that brings a collect holding have
// entries up to count (0: no cap).
func collectLimit(count, have int) int {
	if count == 0 {
		return math.MaxInt
	}
	return count - have
}

// addDeleted records an ID whose entry no longer exists (no fields).
func (c *collector) addDeleted(id ID) { c.AddDeleted(store.ID(id)) }

// entries builds the result; nil when nothing was collected. Its loops
// work on local copies of the collect's slices: a store into the result
// could otherwise change them, for all the compiler knows, and they would
// be loaded again for every field.
func (c *collector) entries() []Entry {
	if len(c.IDs) == 0 {
		return nil
	}
	str := c.text()
	spans, ids, nf := c.Spans, c.IDs, c.NF[:len(c.IDs)]
	fields := make([]Field, len(spans)/2)
	spans = spans[:2*len(fields)]
	if str.chunks == nil { // the usual collect, one string: no chunk to look up
		s := str.str
		for i := range fields {
			name, value := spans[2*i], spans[2*i+1]
			fields[i] = Field{s[name.Off : name.Off+name.Len], s[value.Off : value.Off+value.Len]}
		}
	} else {
		for i := range fields {
			fields[i] = Field{str.at(spans[2*i]), str.at(spans[2*i+1])}
		}
	}
	out := make([]Entry, len(ids))
	for i, id := range ids {
		out[i].ID = id
		if n := int(nf[i]); n > 0 {
			out[i].Fields, fields = fields[:n:n], fields[n:]
		}
	}
	return out
}

// view returns the string at sp in buf without copying it: it is valid
// only until buf is reused (ScanNoCopy).
func (c *collector) view(sp span) string {
	if sp.Len == 0 {
		return ""
	}
	return unsafe.String(&c.Buf[sp.Off], sp.Len)
}

// span locates one string of a collect (store.Span).
type span = store.Span

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
	if len(c.IDs) == 0 {
		return nil
	}
	str := c.text()
	fields := make([]Field, len(c.Spans)/2-len(c.IDs))
	out := make([]Record, len(c.IDs))
	pi, left, sp := 0, parts[0].n, 0
	for i, id := range c.IDs {
		for left == 0 {
			pi++
			left = parts[pi].n
		}
		left--
		n := int(c.NF[i]) - 1 // fields after the partition key
		pk := c.Spans[sp+1]
		sp += 2
		fs := fields[:n:n]
		fields = fields[n:]
		for k := range fs {
			fs[k] = Field{str.at(c.Spans[sp]), str.at(c.Spans[sp+1])}
			sp += 2
		}
		out[i] = Record{ShardID: parts[pi].sh.id, SequenceNumber: id, PartitionKey: str.at(pk), Fields: fs}
	}
	return out
}
