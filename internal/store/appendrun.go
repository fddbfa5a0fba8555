package store

import (
	"encoding/binary"
	"unsafe"
)

// The fast path of appends: an entry of the commonest kind stored in one
// pass that calls nothing (put), alone (Append) or in a run (AppendBatch).

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
		s.appendAny(ids[i], entries[i])
		i++
	}
}

// appendRun stores the longest prefix of entries (with IDs ids, as many)
// that put takes, and returns its length.
func (s *Blocks) appendRun(tail *Block, ids []ID, entries [][]Field) int {
	k := 0
	for k < len(entries) && s.put(tail, ids[k], entries[k]) {
		k++
	}
	return k
}

// put appends to the open block tail an entry that has its master names, an
// ID that its offset table key and first byte say (see the layout in
// block.go) but for a uvarint sequence, values of at most shortMax bytes,
// and room for the values' raw size in the block by every bound, with no
// need of the block's exact listpack size. It stores it as appendAny
// would, byte for byte and with the same bounds kept, and reports true;
// for any other entry it reports false, having changed nothing.
//
// It calls nothing but on rare paths (names of fewer than 4 or more than
// 16 bytes, a sequence difference to the block's first ID past 32767,
// growing the offset table): it compares the names and packs the values
// in word operations (see notAlpha).
func (s *Blocks) put(tail *Block, id ID, fields []Field) bool {
	names, data := s.openNames, tail.data
	maxEntries, maxBytes := s.bounds()
	if len(fields) != len(names) || len(tail.offs) >= maxEntries || s.openLPExact {
		return false
	}
	first := s.openFirst
	// The key and first byte as idKey and Block.append make them, and
	// the size of the uvarint sequence that may follow.
	msd, seqd := id.Ms-first.Ms, id.Seq-first.Seq
	key, h, extra := uint32(seqd), byte(FlagSame), 0
	if msd != 0 {
		if msd >= keyMax {
			return false
		}
		key, h = 0x8000|uint32(msd), FlagSame|byte(min(id.Seq, vFollows))<<vShift
		if id.Seq >= vFollows {
			extra = uvarintLen(id.Seq)
		}
	} else if seqd >= keyMax {
		return false
	}
	size := 1 + extra // 1 + idExtra + fieldsBound(true, fields)
	for i := range fields {
		// The names compared as sameNames does, those of 4 to 16 bytes
		// in two loads of each.
		a, b := fields[i].Name, names[i]
		n := len(a)
		if n != len(b) {
			return false
		}
		pa, pb := unsafe.Pointer(unsafe.StringData(a)), unsafe.Pointer(unsafe.StringData(b))
		switch {
		case uint(n-8) <= 8:
			if load64(pa, 0) != load64(pb, 0) || load64(pa, n-8) != load64(pb, n-8) {
				return false
			}
		case uint(n-4) <= 3:
			if load32(pa, 0) != load32(pb, 0) || load32(pa, n-4) != load32(pb, n-4) {
				return false
			}
		default:
			if a != b {
				return false
			}
		}
		v := len(fields[i].Value)
		size += 1 + v + v>>6
	}
	l := len(data)
	off := l - int(tail.hdr)
	// Redis's bound on bytes counts the names of an entry with the master
	// names though the block stores only its values (see appendAny).
	if cap(data)-l < size || off+size > BlockBytesCap || s.openBound+lpSlack+size+s.openNamesLen >= maxBytes {
		return false
	}
	d := data[l : l+size]
	p := 1
	if extra != 0 {
		p += binary.PutUvarint(d[1:], id.Seq)
	}
	// Each value of n bytes has its raw size, 1 + n, of room in d, and
	// every store below stays inside it. A packed store may write past
	// the packed size: the next value, or the next entry, writes over
	// those bytes.
	q := unsafe.Pointer(&d[0])
	for i := range fields {
		v := fields[i].Value
		n := len(v)
		if n > shortMax {
			return false
		}
		sp, o := unsafe.Pointer(unsafe.StringData(v)), unsafe.Add(q, p)
		packed := false
		switch {
		case n >= 8:
			a, b := load64(sp, 0), load64(sp, n-8)
			if packed = notAlpha(a)|notAlpha(b) == 0; packed {
				// The nibbles of b are those of characters n-8 to n-1;
				// where they overlap a's they are the same.
				store64(o, 1, uint64(pack8(a))|uint64(pack8(b))<<(uint(n-8)*4&63))
			} else {
				store64(o, 1, a)
				store64(o, 1+n-8, b)
			}
		case n >= 4:
			a, b := load32(sp, 0), load32(sp, n-4)
			if packed = notAlpha(uint64(a)|uint64(b)<<32) == 0; packed {
				store32(o, 1, pack8(uint64(a)|uint64(b)<<(uint(n-4)*8&63)))
			} else {
				store32(o, 1, a)
				store32(o, 1+n-4, b)
			}
		case n >= 2:
			a, b := load16(sp, 0), load16(sp, n-2)
			if x := uint64(a) | uint64(b)<<16; notAlpha(x|x<<32) == 0 {
				packed = true
				store16(o, 1, uint16(pack8(uint64(a)|uint64(b)<<(uint(n-2)*8&63))))
			} else {
				store16(o, 1, a)
				store16(o, 1+n-2, b)
			}
		case n == 1:
			*(*byte)(unsafe.Add(o, 1)) = *(*byte)(sp)
		}
		if packed {
			*(*byte)(o) = strPacked | byte(n)
			p += 1 + (n+1)/2
		} else {
			*(*byte)(o) = byte(n)
			p += 1 + n
		}
	}
	d[0] = h
	tail.data = tail.data[:l+p] // the same array: no pointer is written
	tail.offs = append(tail.offs, key<<16|uint32(off))
	tail.last = id
	tail.live++
	// lpEntryBound(first, id, size-extra, true, len(fields)), its terms
	// without a call but for differences or element counts past 32767
	// (msd is below it).
	ls := lpIntSizeNear(int64(seqd))
	if ls == 0 {
		ls = lpIntSizeWide(int64(seqd))
	}
	lc := lpIntSizeNear(int64(len(fields) + 3))
	if lc == 0 {
		lc = lpIntSizeWide(int64(len(fields) + 3))
	}
	s.openBound += 2*(size-extra) + lpIntSizeNear(int64(msd)) + ls + lc
	s.appended(id)
	return true
}
