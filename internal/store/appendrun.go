package store

import (
	"encoding/binary"
	"unsafe"
)

// The fast path of appends: an entry of the commonest kind stored in one
// pass (put), alone (Append) or in a run (AppendBatch: appendRun, run.encode).

// AppendBatch stores entries[i] with ID ids[i], in order, as that many
// calls of Append would: the IDs increase and the first is greater than
// every stored ID and than LastID. O(len(entries)) amortized; a run of
// entries of the common kind (see appendRun) is stored in one loop.
func (s *Blocks) AppendBatch(ids []ID, entries [][]Field) {
	for i := 0; i < len(entries); {
		if tail := s.open; tail != nil {
			if k := s.appendRun(tail, ids[i:], entries[i:]); k > 0 {
				i += k
				continue
			}
		}
		s.Append(ids[i], entries[i])
		i++
	}
}

// runNamesMax is the most master names appendRun takes.
const runNamesMax = 8

// appendRun stores, as appendAny would one by one, the longest prefix of
// entries (with IDs ids) of the common kind (see run.encode) that fits
// the open block tail as allocated, and returns its length. It sets up a
// run, lets run.encode store the entries in one loop, compares for it
// the names it cannot, and writes the block's fields and the counters
// once at the end. O(len(entries)) for the names compared.
func (s *Blocks) appendRun(tail *Block, ids []ID, entries [][]Field) int {
	maxEntries, maxBytes := s.bounds()
	n0 := len(tail.offs)
	room := min(len(entries), len(ids), maxEntries-n0, cap(tail.offs)-n0)
	names := s.openNames
	if s.openLPExact || room <= 0 || len(names) > runNamesMax {
		return 0
	}
	data := tail.data
	r := run{
		q:       unsafe.Pointer(unsafe.SliceData(data)),
		offs:    tail.offs[n0 : n0+room],
		ids:     ids[:room],
		entries: entries[:room],
		names:   names,
		first:   s.openFirst,
		hdr:     int(tail.hdr),
		lim:     min(cap(data), int(tail.hdr)+BlockBytesCap),
		// Redis's bound on bytes counts the names of an entry with the
		// master names though the block stores only its values (see
		// appendAny).
		bmax:  maxBytes - lpSlack - s.openNamesLen,
		lc:    lpIntSize(int64(len(names)+3)) + 1 + len(names),
		l:     len(data),
		bound: s.openBound,
	}
	for i, n := range names {
		r.nlen[i] = len(n)
	}
	for r.encode() {
		// Names encode cannot compare in words: the entry is taken when
		// they are equal.
		fields := r.entries[r.k]
		if !sameNames(names, fields) {
			break
		}
		for i, f := range fields {
			r.seen[i] = uintptr(unsafe.Pointer(unsafe.StringData(f.Name)))
		}
	}
	k := r.k
	if k == 0 {
		return 0
	}
	last := ids[k-1]
	tail.data = data[:r.l] // the same array: no pointer is written
	tail.offs = tail.offs[:n0+k]
	tail.last = last
	tail.live += int32(k)
	s.openBound = r.bound
	if s.length == 0 {
		s.firstID = ids[0]
	}
	s.length += int64(k)
	s.lastID = last
	s.entriesAdded += int64(k)
	return k
}

// run is a run of appends to the open block (appendRun): what encode
// reads, the names it found equal, and how far it got.
type run struct {
	q       unsafe.Pointer       // the block's data array
	offs    []uint32             // the offset table's slots the run may fill
	ids     []ID                 // as many as offs
	entries [][]Field            // as many as offs
	names   []string             // the master names
	first   ID                   // the block's first ID
	hdr     int                  // the block's header length
	lim     int                  // every entry ends by lim in data (cap, BlockBytesCap)
	bmax    int                  // an entry of size bytes needs bound+size < bmax
	lc      int                  // the listpack size of an entry's element count, plus 1 + the names (see encode's bound)
	seen    [runNamesMax]uintptr // the data of names found equal to names[i]
	nlen    [runNamesMax]int     // len(names[i])

	k     int // the entries stored
	l     int // the data's length
	bound int // openBound
}

// id returns r.ids[k] and setOff sets r.offs[k] to o, for 0 <= k <
// len(r.offs), without a bounds check: appendRun makes ids and offs of
// one length, and encode's loop keeps k below it (5 instructions an
// entry of BenchmarkAddBatch).
func (r *run) id(k int) ID {
	return *(*ID)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(r.ids)), uintptr(k)*unsafe.Sizeof(ID{})))
}

func (r *run) setOff(k int, o uint32) {
	*(*uint32)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(r.offs)), uintptr(k)*4)) = o
}

// encode stores entries from r.k on while they are of the common kind:
// the master names, an ID that its offset table key and first byte say
// (see the layout in block.go) but for a uvarint sequence, values of at
// most shortMax bytes, and room for the values' raw size by every bound
// (the data as allocated, BlockBytesCap, Redis's byte bound) with no need
// of the block's exact listpack size. It stores each as appendAny would,
// byte for byte and with the same bounds kept. It reports true when it
// stopped at an entry whose names it could not compare (of fewer than 4
// or more than 16 bytes, and not one of r.seen): the caller compares
// them and calls it again.
//
// It calls only putValues, once an entry, and keeps its state in r rather
// than in locals, which Go's register allocator would reload at every
// iteration of the inner loops. A name is equal when it has the data and
// length of one found equal before (r.seen), else it is compared in two
// loads of each.
func (r *run) encode() (compare bool) {
	// The loop's state stays in r: Go's register allocator would reload
	// locals live across the inner loops at every iteration of theirs.
	for ; r.k < len(r.offs); r.k++ {
		k := r.k
		fields := r.entries[k]
		if len(fields) != len(r.names) {
			break
		}
		// The names compared and the size bound of the values.
		size := 1 // 1 + idExtra + fieldsBound(true, fields)
		for i := range fields {
			f := &fields[i]
			a, n := f.Name, len(f.Value)
			if len(a) != r.nlen[i&(runNamesMax-1)] || n > shortMax {
				size = -1
				break
			}
			size += 1 + n
			pa := unsafe.Pointer(unsafe.StringData(a))
			if uintptr(pa) == r.seen[i&(runNamesMax-1)] {
				continue
			}
			pb, m := unsafe.Pointer(unsafe.StringData(r.names[i])), len(a)
			ok := false
			switch {
			case uint(m-8) <= 8:
				ok = load64(pa, 0) == load64(pb, 0) && load64(pa, m-8) == load64(pb, m-8)
			case uint(m-4) <= 3:
				ok = load32(pa, 0) == load32(pb, 0) && load32(pa, m-4) == load32(pb, m-4)
			default:
				return true
			}
			if !ok {
				size = -1
				break
			}
			r.seen[i&(runNamesMax-1)] = uintptr(pa)
		}
		if size < 0 {
			break
		}
		// The key and first byte as idKey and Block.append make them, the
		// size of the uvarint sequence that may follow, and the terms of
		// lpEntryBound(first, id, true, fields) but the strings' (msd is
		// below 32767).
		id := r.id(k)
		msd, seqd := id.Ms-r.first.Ms, id.Seq-r.first.Seq
		key, h, extra, lpID := uint32(seqd), byte(FlagSame), 0, 2+2+r.lc
		if msd != 0 || seqd > 127 {
			if msd != 0 {
				if msd >= keyMax {
					break
				}
				key, h = 0x8000|uint32(msd), FlagSame|byte(min(id.Seq, vFollows))<<vShift
				if id.Seq >= vFollows {
					extra = uvarintLen(id.Seq)
				}
			} else if seqd >= keyMax {
				break
			}
			ls := lpIntSizeNear(int64(seqd))
			if ls == 0 {
				ls = lpIntSizeFar(int64(seqd))
			}
			lpID = lpIntSizeNear(int64(msd)) + ls + r.lc
			size += extra
		}
		l := r.l
		if l+size > r.lim || r.bound+size >= r.bmax {
			break
		}
		r.setOff(k, key<<16|uint32(l-r.hdr))
		// lpEntryBound: the flags, each value of n bytes as a string of
		// 2 + n (size-extra-1 counts 1 + n, r.lc the 1 + len(fields)
		// more), the differences and count.
		r.bound += size - extra + lpID
		q := r.q
		*(*byte)(unsafe.Add(q, l)) = h
		p := l + 1
		if extra != 0 { // the uvarint sequence
			x := id.Seq
			for ; x >= 0x80; x >>= 7 {
				*(*byte)(unsafe.Add(q, p)) = byte(x) | 0x80
				p++
			}
			*(*byte)(unsafe.Add(q, p)) = byte(x)
			p++
		}
		// Each value of n bytes has its raw size, 1 + n, of room, and
		// every store below stays inside it. Each is loaded as two
		// overlapping words (its first and last 2, 4 or 8 bytes), checked
		// against the alphabet and packed in word operations (notAlpha,
		// pack8), or stored as the words when raw. A packed store may
		// write past the packed size: the next value, or the next entry,
		// writes over those bytes.
		r.l = putValues(q, p, fields)
	}
	return false
}

// put appends to the open block (tail) an entry that has its master names,
// an ID that its offset table key and first byte say (see the layout in
// block.go) but for a uvarint sequence, values of at most shortMax bytes,
// room for the values' raw size in the block by every bound (by Redis's
// bound on bytes, the bound of the block's listpack size (openBound) or,
// once fitsBytes has computed it, the exact size (openLP), which it then
// keeps), and a free slot in the offset table as allocated. It stores it
// as appendAny would, byte for byte and with the same bounds kept, and
// reports true. Any other entry (or no open block) it leaves to notPut:
// with orAny, as Append calls it, appendAny stores the entry and put
// reports what appendAny does; else put reports false, having changed
// nothing. Append is then one call, inlined into its callers.
//
// It compares the names in word loads and calls putValues, and nothing
// else but on rare paths (a uvarint sequence, the values' exact listpack
// size, notPut). It writes the block's fields and the counters before it
// calls putValues, so that little is live across the call.
func (s *Blocks) put(id ID, fields []Field, orAny bool) bool {
	tail := s.open
	if tail == nil {
		return s.notPut(id, fields, orAny)
	}
	names := s.openNames
	if len(fields) != len(names) {
		return s.notPut(id, fields, orAny)
	}
	names = names[:len(fields)]
	// The names first: few values are live across the loop.
	vals := 0 // the values' lengths
	for i := range fields {
		// The names compared as sameNames does, in loads of 8 bytes (the
		// last one overlapping) or, for fewer than 8, of their first and
		// last 4, 2 or 1.
		a, b := fields[i].Name, names[i]
		n := len(a)
		if n != len(b) {
			return s.notPut(id, fields, orAny)
		}
		pa, pb := unsafe.Pointer(unsafe.StringData(a)), unsafe.Pointer(unsafe.StringData(b))
		switch {
		case uint(n-8) <= 8:
			if load64(pa, 0) != load64(pb, 0) || load64(pa, n-8) != load64(pb, n-8) {
				return s.notPut(id, fields, orAny)
			}
		case n > 16:
			for j := 0; j < n-8; j += 8 {
				if load64(pa, j) != load64(pb, j) {
					return s.notPut(id, fields, orAny)
				}
			}
			if load64(pa, n-8) != load64(pb, n-8) {
				return s.notPut(id, fields, orAny)
			}
		case n >= 4:
			if load32(pa, 0) != load32(pb, 0) || load32(pa, n-4) != load32(pb, n-4) {
				return s.notPut(id, fields, orAny)
			}
		case n >= 2:
			if load16(pa, 0) != load16(pb, 0) || load16(pa, n-2) != load16(pb, n-2) {
				return s.notPut(id, fields, orAny)
			}
		case n == 1:
			if *(*byte)(pa) != *(*byte)(pb) {
				return s.notPut(id, fields, orAny)
			}
		}
		v := len(fields[i].Value)
		if v > shortMax {
			return s.notPut(id, fields, orAny)
		}
		vals += v
	}
	maxEntries, maxBytes := s.bounds()
	n0 := len(tail.offs)
	if n0 >= maxEntries || n0 == cap(tail.offs) {
		return s.notPut(id, fields, orAny)
	}
	first := s.openFirst
	// The key and first byte as idKey and Block.append make them, and
	// the size of the uvarint sequence that may follow.
	msd, seqd := id.Ms-first.Ms, id.Seq-first.Seq
	key, h, extra := uint32(seqd), byte(FlagSame), 0
	if msd != 0 {
		if msd >= keyMax {
			return s.notPut(id, fields, orAny)
		}
		key, h = 0x8000|uint32(msd), FlagSame|byte(min(id.Seq, vFollows))<<vShift
		if id.Seq >= vFollows {
			extra = uvarintLen(id.Seq)
		}
	} else if seqd >= keyMax {
		return s.notPut(id, fields, orAny)
	}
	size := 1 + extra + len(fields) + vals // 1 + idExtra + fieldsBound(true, fields), whose 1 + v + v>>6 a value is 1 + v here
	data := tail.data
	l := len(data)
	off := l - int(tail.hdr)
	if cap(data)-l < size || off+size > BlockBytesCap {
		return s.notPut(id, fields, orAny)
	}
	// Redis's bound on bytes counts the names of an entry with the master
	// names though the block stores only its values (see appendAny). Once
	// the block's listpack size is exact, the entry fits as fitsBytes
	// decides it, and adds its exact size (putExact).
	if s.openLPExact {
		if !s.putExact(tail, id, fields, vals, maxBytes) {
			return s.notPut(id, fields, orAny)
		}
	} else if s.openBound+lpSlack+size+s.openNamesLen >= maxBytes {
		return s.notPut(id, fields, orAny)
	}
	// Nothing below fails: the entry is stored. First the block's fields
	// and the counters.
	tail.offs = tail.offs[:n0+1]
	tail.offs[n0] = key<<16 | uint32(off)
	tail.last = id
	tail.live++
	// lpEntryBound(first, id, true, fields), its terms without a call but
	// for differences or element counts past 32767 (msd is below it):
	// the flags, each value of n bytes as a string of 2 + n (size-extra-1
	// counts 1 + n), the differences and the element count.
	ls := lpIntSizeNear(int64(seqd))
	if ls == 0 {
		ls = lpIntSizeWide(int64(seqd))
	}
	lc := lpIntSizeNear(int64(len(fields) + 3))
	if lc == 0 {
		lc = lpIntSizeWide(int64(len(fields) + 3))
	}
	s.openBound += size - extra + 1 + len(fields) + lpIntSizeNear(int64(msd)) + ls + lc
	s.appended(id)
	// Then the bytes, inside data[l:l+size]: size counts each value raw.
	q := unsafe.Add(unsafe.Pointer(unsafe.SliceData(data)), l)
	*(*byte)(q) = h
	p := 1
	if extra != 0 {
		p += binary.PutUvarint(data[l+1:l+size], id.Seq)
	}
	tail.data = data[:l+putValues(q, p, fields)] // the same array: no pointer is written
	return true
}

// notPut is what put does with an entry it does not take: appendAny
// stores it when orAny (Append), else nothing (false).
func (s *Blocks) notPut(id ID, fields []Field, orAny bool) bool {
	if orAny {
		return s.appendAny(id, fields)
	}
	return false
}

// putExact is put's check of Redis's bound on bytes once the open block
// tail's listpack size is exact (openLPExact): an entry of fields, whose
// values take vals bytes, fits as fitsBytes decides it. When it fits,
// putExact adds its exact listpack size to openLP and reports true.
func (s *Blocks) putExact(tail *Block, id ID, fields []Field, vals, maxBytes int) bool {
	if tail.lpCounters()+s.openNamesLen+vals+s.openLP >= maxBytes {
		return false
	}
	s.openLP += lpShortEntrySize(s.openFirst, id, fields)
	return true
}

// putValues writes the values of fields, each of at most shortMax bytes,
// at q+p on, where each value of n bytes has its raw size, 1 + n, of
// room, and returns the position after them. Each is loaded as two
// overlapping words (its first and last 2, 4 or 8 bytes), checked against
// the alphabet and packed in word operations (notAlpha, pack8), or stored
// as the words when raw. A packed store may write past the packed size:
// the next value, or the next entry, writes over those bytes.
func putValues(q unsafe.Pointer, p int, fields []Field) int {
	for _, f := range fields {
		v := f.Value
		n := len(v)
		sp, o := unsafe.Pointer(unsafe.StringData(v)), unsafe.Add(q, p)
		switch {
		case n >= 8:
			a, b := load64(sp, 0), load64(sp, n-8)
			if notAlpha(a)|notAlpha(b) == 0 {
				// The nibbles of b are those of characters n-8 to n-1;
				// where they overlap a's they are the same.
				store64(o, 1, uint64(pack8(a))|uint64(pack8(b))<<(uint(n-8)*4&63))
				*(*byte)(o) = strPacked | byte(n)
				p += 1 + int(uint(n+1)>>1)
				continue
			}
			store64(o, 1, a)
			store64(o, 1+n-8, b)
		case n >= 4:
			a, b := load32(sp, 0), load32(sp, n-4)
			if notAlpha32(a)|notAlpha32(b) == 0 {
				store32(o, 1, pack8(uint64(a)|uint64(b)<<(uint(n-4)*8&63)))
				*(*byte)(o) = strPacked | byte(n)
				p += 1 + int(uint(n+1)>>1)
				continue
			}
			store32(o, 1, a)
			store32(o, 1+n-4, b)
		case n >= 2:
			a, b := load16(sp, 0), load16(sp, n-2)
			if notAlpha32(uint32(a)|uint32(b)<<16) == 0 {
				store16(o, 1, uint16(pack8(uint64(a)|uint64(b)<<(uint(n-2)*8&63))))
				*(*byte)(o) = strPacked | byte(n)
				p += 1 + int(uint(n+1)>>1)
				continue
			}
			store16(o, 1, a)
			store16(o, 1+n-2, b)
		case n == 1:
			*(*byte)(unsafe.Add(o, 1)) = *(*byte)(sp)
		}
		*(*byte)(o) = byte(n)
		p += 1 + n
	}
	return p
}
