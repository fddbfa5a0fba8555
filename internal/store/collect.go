package store

import (
	"encoding/binary"
	"slices"
)

// Collect gathers entries for a reader that builds its own copies of
// them: their IDs (as the reader's ID type I), their field counts, and
// their names and values decoded into one buffer, each string located by
// a Span. The strings of a collect that outgrows ChunkMin go on in chunks
// of their own instead of one growing buffer, which append would copy
// over and over; Span offsets count across the chunks. The master field
// names of a block are decoded once per collect and block, and each entry
// with them points at them. Its zero value is ready; it is not safe for
// concurrent use.
type Collect[I ~struct{ Ms, Seq uint64 }] struct {
	IDs   []I
	NF    []int32 // number of fields of each entry
	Spans []Span  // name, value, name, value… at offsets of the collect
	Buf   []byte  // the open chunk: the collect's bytes from SealedLen on

	Sealed    [][]byte // the chunks before Buf, when the collect outgrew one
	SealedLen int      // their bytes
	NoSeal    bool     // one buffer only, reused (views into it)

	mastBlk   *Block // block whose master names are in mastSpans
	mastSpans []Span
	ends      []int32 // ends of one entry's strings in Buf, as Add decodes them
}

// Span locates one string inside a byte slice, or inside a collect's
// chunks: int, as a collect may pass 2 GiB.
type Span struct{ Off, Len int }

// ChunkMin is the size past which a collect goes on in chunks, and the
// first chunk's size; chunks double up to ChunkMax.
const (
	ChunkMin = 256 << 10
	ChunkMax = 4 << 20
)

// Reset empties c for another collect, keeping its buffers (but not the
// chunks of a collect that outgrew one, which the result may hold).
func (c *Collect[I]) Reset() {
	c.IDs, c.NF, c.Spans, c.Buf = c.IDs[:0], c.NF[:0], c.Spans[:0], c.Buf[:0]
	if c.Sealed != nil { // not handed over: drop the chunks, keep none
		c.Sealed, c.SealedLen, c.Buf = nil, 0, nil
	}
	c.NoSeal = false
	c.mastBlk, c.mastSpans = nil, c.mastSpans[:0]
}

// Forget drops the chunks of the collect and its open buffer, which the
// caller took over (as the strings of its result).
func (c *Collect[I]) Forget() { c.Sealed, c.SealedLen, c.Buf = nil, 0, nil }

// Add records the entry id whose body starts at body in b. It decodes the
// entry's strings to Buf and records where they lie; the master field
// names of b are copied once. O(size of the entry).
func (c *Collect[I]) Add(b *Block, id ID, flags byte, body int) {
	c.IDs = append(c.IDs, I(id))
	d := b.data
	// The block bounds the body's strings (a packed byte gives two) and its
	// master names.
	if len(c.Buf)+2*len(d) > cap(c.Buf) {
		c.reserve(2 * len(d))
	}
	if flags&FlagSame != 0 {
		if c.mastBlk != b {
			c.addMaster(b)
		}
		start := len(c.Buf)
		c.ends = slices.Grow(c.ends[:0], len(c.mastSpans))[:len(c.mastSpans)]
		c.Buf, _ = AppendStrs(c.Buf, c.ends, d, body)
		for i, name := range c.mastSpans {
			end := int(c.ends[i])
			c.Spans = append(c.Spans, name, Span{c.SealedLen + start, end - start})
			start = end
		}
		c.NF = append(c.NF, int32(len(c.mastSpans)))
		return
	}
	k, p := Uvarint(d, body)
	start := len(c.Buf)
	c.ends = slices.Grow(c.ends[:0], 2*int(k))[:2*int(k)]
	c.Buf, _ = AppendStrs(c.Buf, c.ends, d, p)
	for _, end := range c.ends {
		c.Spans = append(c.Spans, Span{c.SealedLen + start, int(end) - start})
		start = int(end)
	}
	c.NF = append(c.NF, int32(k))
}

// AddDeleted records an ID whose entry no longer exists (no fields).
func (c *Collect[I]) AddDeleted(id ID) {
	c.IDs = append(c.IDs, I(id))
	c.NF = append(c.NF, 0)
}

// addMaster copies the master field names of b to Buf and records their
// spans in mastSpans.
func (c *Collect[I]) addMaster(b *Block) {
	d := b.data
	c.mastBlk, c.mastSpans = b, c.mastSpans[:0]
	_, p := Uvarint(d, FirstIDLen) // master field count
	for range b.nmast {
		n, q := Uvarint(d, p)
		c.mastSpans = append(c.mastSpans, Span{c.SealedLen + len(c.Buf), int(n)})
		c.Buf = append(c.Buf, d[q:q+int(n)]...)
		p = q + int(n)
	}
}

// reserve makes room for n more bytes when the open chunk lacks it:
// nothing while the collect is small (or NoSeal: append grows the
// buffer), else a new chunk.
func (c *Collect[I]) reserve(n int) {
	if c.NoSeal || (c.Sealed == nil && len(c.Buf)+n <= ChunkMin) {
		return
	}
	size := ChunkMin
	if k := len(c.Sealed); k > 0 {
		size = min(ChunkMax, 2*cap(c.Sealed[k-1]))
	}
	if len(c.Buf) > 0 {
		c.Sealed = append(c.Sealed, c.Buf)
		c.SealedLen += len(c.Buf)
	}
	c.Buf = make([]byte, 0, max(size, n))
}

// Walk collects the live entries of s with lo <= ID <= hi in ascending
// order, at most limit of them (limit > 0). It reports whether a live
// entry in the range was left out for the limit, and the ID of the first
// one. It is the loop of Blocks.Walk and Add in one: each block's run of
// entries takes one check for room, and the common entry (the block's
// master names; values of up to eight packed characters or short raw
// ones; an ID that the offset table says) is decoded in place. O(log N)
// to find lo, then O(size) per entry.
func (c *Collect[I]) Walk(s *Blocks, lo, hi ID, limit int) (more bool, next ID) {
	if hi.Less(lo) || s.length == 0 {
		return false, ID{}
	}
	for cur := s.seekGE(lo); cur.bi < len(s.blocks); cur.bi, cur.i = cur.bi+1, 0 {
		b := s.blocks[cur.bi]
		i := max(cur.i, int(b.head))
		if more, next, done := c.walkBlock(b, i, hi, &limit); done {
			return more, next
		}
	}
	return false, ID{}
}

// walkBlock is Walk over the entries of b from i on: done when it met an
// entry past hi or past the limit (more, at next).
func (c *Collect[I]) walkBlock(b *Block, i int, hi ID, limit *int) (more bool, next ID, done bool) {
	d, offs := b.data, b.offs
	// Room for the strings of the whole block (a packed byte gives two,
	// and a packed string's last store writes 8 bytes) and for its
	// entries' records, so that the loop writes at indexes.
	if room := 2*len(d) + 8; len(c.Buf)+room > cap(c.Buf) {
		c.reserve(room)
		c.Buf = slices.Grow(c.Buf, room)
	}
	var mast []Span // b's master names, when it has some
	if b.nmast > 0 {
		if c.mastBlk != b {
			c.addMaster(b)
		}
		mast = c.mastSpans
	}
	n := len(offs) - i
	c.IDs, c.NF = slices.Grow(c.IDs, n), slices.Grow(c.NF, n)
	w := c.walkState(len(mast), n)
	first, hdr, base, left := b.FirstID(), int(b.hdr), c.SealedLen, *limit
	past := hi.Less(b.last) // whether some entry of b is past hi
	for ; i < len(offs); i++ {
		// At's fast paths, with the block's first ID read once.
		o := offs[i]
		p := hdr + int(uint16(o))
		h := d[p]
		var id ID
		if k := o >> 16; k < keyMax {
			id, p = ID{first.Ms, first.Seq + uint64(k)}, p+1
		} else if v := uint64(h >> vShift); k != 0xffff && v != vFollows {
			id, p = ID{first.Ms + uint64(k&keyMax), v}, p+1
		} else {
			id, _, p = b.atSlow(o, h, p+1)
		}
		if past && hi.Less(id) {
			done = true
			break
		}
		if h&FlagDeleted != 0 {
			continue
		}
		if left == 0 {
			more, next, done = true, id, true
			break
		}
		left--
		if h&FlagSame == 0 {
			w.store(c)
			c.Add(b, id, h&flagMask, p)
			w = c.walkState(len(mast), len(offs)-i-1)
			base = c.SealedLen
			continue
		}
		w.ids[w.ni], w.nf[w.ni] = I(id), int32(len(mast))
		w.ni++
		for _, name := range mast {
			start := w.nb
			// The room made above holds every string of the block; the
			// checks of it below only keep a mistake from writing short.
			switch h := d[p]; {
			case h < strLong && start+int(h) <= len(w.buf):
				q := p + 1 + int(h)
				w.nb += copy(w.buf[start:], d[p+1:q])
				p = q
			case h >= strPacked && h <= strPacked+8 && p+5 <= len(d) && start+8 <= len(w.buf):
				l := int(h &^ strPacked)
				binary.LittleEndian.PutUint64(w.buf[start:start+8], unpack8(binary.LittleEndian.Uint32(d[p+1:p+5])))
				w.nb += l
				p += 1 + (l+1)/2
			default:
				var out []byte
				out, p = AppendStr(w.buf[:start], d, p)
				w.buf, w.nb = out[:cap(out)], len(out)
			}
			w.spans[w.ns], w.spans[w.ns+1] = name, Span{base + start, w.nb - start}
			w.ns += 2
		}
	}
	w.store(c)
	*limit = left
	return more, next, done
}

// walkState is walkBlock's view of a Collect's slices, at their capacity,
// and the lengths it has filled.
type walkState[I ~struct{ Ms, Seq uint64 }] struct {
	ids        []I
	nf         []int32
	spans      []Span
	buf        []byte
	ni, ns, nb int
}

// walkState returns the state of a walk of n more entries of nmast
// master names each: c's slices at their capacity, which has room for
// their IDs, counts and spans, so that walkBlock writes at indexes.
func (c *Collect[I]) walkState(nmast, n int) walkState[I] {
	c.Spans = slices.Grow(c.Spans, 2*nmast*n)
	return walkState[I]{
		ids: c.IDs[:cap(c.IDs)], nf: c.NF[:cap(c.NF)], spans: c.Spans[:cap(c.Spans)], buf: c.Buf[:cap(c.Buf)],
		ni: len(c.IDs), ns: len(c.Spans), nb: len(c.Buf),
	}
}

// store sets c's slices to the lengths w filled.
func (w *walkState[I]) store(c *Collect[I]) {
	c.IDs, c.NF, c.Spans, c.Buf = w.ids[:w.ni], w.nf[:w.ni], w.spans[:w.ns], w.buf[:w.nb]
}
