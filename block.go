package xstream

import "encoding/binary"

// Storage.
//
// A stream keeps its entries in blocks, as Redis keeps them in listpack
// nodes: a block holds up to blockMaxEntries entries in one pointer-free
// byte slice. The block's first ("master") entry records the field names;
// a later entry with the same field names stores only its values. Entry IDs
// are stored as small deltas from the block's first ID. An offset table
// (two bytes an entry) gives direct access to each entry, so a seek is a
// binary search over blocks and then over one block's entries.
//
// Layout of block.data:
//
//	header:  uvarint n, then n × (uvarint len, name bytes)    master field names
//	entry:   flags byte
//	         uvarint msDelta             ms - first.Ms
//	         uvarint seq                 seq - first.Seq when msDelta == 0, else seq
//	         flagSame:  n × (uvarint len, value bytes)
//	         otherwise: uvarint k, k × (name, value)
//
// A deleted entry keeps its bytes with flagDeleted set; a block whose
// entries are all deleted is freed.

const (
	blockMaxEntries = 100
	blockMaxBytes   = 4096
)

const (
	flagDeleted = 1 << iota
	flagSame
)

type block struct {
	data  []byte   // header, then entries
	offs  []uint16 // entry i starts at data[hdr+offs[i]]
	first ID       // ID of the first entry ever put in the block
	last  ID       // ID of the last entry put in the block
	hdr   int32    // length of the header
	nmast int32    // number of master fields
	live  int32    // entries not deleted
}

func uvarintLen(x uint64) int {
	n := 1
	for x >= 0x80 {
		x >>= 7
		n++
	}
	return n
}

// idDelta encodes id relative to the block's first ID.
func (b *block) idDelta(id ID) (msd, seq uint64) {
	msd = id.Ms - b.first.Ms
	if msd == 0 {
		return 0, id.Seq - b.first.Seq
	}
	return msd, id.Seq
}

// sameNames reports whether fields have exactly the master field names.
func sameNames(names []string, fields []Field) bool {
	if len(names) != len(fields) {
		return false
	}
	for i, f := range fields {
		if f.Name != names[i] {
			return false
		}
	}
	return true
}

// entrySize returns the encoded size of an entry with the given ID deltas.
func entrySize(msd, seq uint64, same bool, fields []Field) int {
	n := 1 + uvarintLen(msd) + uvarintLen(seq)
	if !same {
		n += uvarintLen(uint64(len(fields)))
	}
	for _, f := range fields {
		if !same {
			n += uvarintLen(uint64(len(f.Name))) + len(f.Name)
		}
		n += uvarintLen(uint64(len(f.Value))) + len(f.Value)
	}
	return n
}

// newBlock starts a block whose master entry is (id, fields). It sizes the
// block for blockMaxEntries entries like this one (within blockMaxBytes),
// so that a block of similar entries is filled without growing.
func newBlock(id ID, fields []Field) *block {
	hdr := uvarintLen(uint64(len(fields)))
	for _, f := range fields {
		hdr += uvarintLen(uint64(len(f.Name))) + len(f.Name)
	}
	size := entrySize(0, 0, true, fields)
	body, n := size*blockMaxEntries, blockMaxEntries
	if body > blockMaxBytes {
		body, n = max(blockMaxBytes, size), max(blockMaxBytes/size, 1)
	}
	b := &block{first: id, hdr: int32(hdr), nmast: int32(len(fields))}
	b.data = make([]byte, 0, hdr+body)
	b.offs = make([]uint16, 0, n)
	b.data = binary.AppendUvarint(b.data, uint64(len(fields)))
	for _, f := range fields {
		b.data = appendString(b.data, f.Name)
	}
	return b
}

func appendString(d []byte, s string) []byte {
	d = binary.AppendUvarint(d, uint64(len(s)))
	return append(d, s...)
}

// fits reports whether an entry of size bytes may join the block.
func (b *block) fits(size int) bool {
	n := len(b.offs)
	return n == 0 || (n < blockMaxEntries && len(b.data)-int(b.hdr)+size <= blockMaxBytes)
}

// append adds an entry; the caller has checked fits and ordering.
func (b *block) append(id ID, msd, seq uint64, same bool, fields []Field) {
	b.offs = append(b.offs, uint16(len(b.data)-int(b.hdr)))
	var flags byte
	if same {
		flags = flagSame
	}
	d := append(b.data, flags)
	d = binary.AppendUvarint(d, msd)
	d = binary.AppendUvarint(d, seq)
	if !same {
		d = binary.AppendUvarint(d, uint64(len(fields)))
	}
	for _, f := range fields {
		if !same {
			d = appendString(d, f.Name)
		}
		d = appendString(d, f.Value)
	}
	b.data = d
	b.last = id
	b.live++
}

// seal trims the slack of a block that will take no more entries, when
// there is enough of it to be worth a copy.
func (b *block) seal() {
	if cap(b.data)-len(b.data) > len(b.data)/16 {
		b.data = append([]byte(nil), b.data...)
	}
	if cap(b.offs)-len(b.offs) > len(b.offs)/16 {
		b.offs = append([]uint16(nil), b.offs...)
	}
}

func uvarint(d []byte, p int) (uint64, int) {
	if c := d[p]; c < 0x80 {
		return uint64(c), p + 1
	}
	v, n := binary.Uvarint(d[p:])
	return v, p + n
}

// at decodes the flags and ID of entry i and returns the position of its
// body.
func (b *block) at(i int) (id ID, flags byte, body int) {
	p := int(b.hdr) + int(b.offs[i])
	flags = b.data[p]
	msd, p := uvarint(b.data, p+1)
	seq, p := uvarint(b.data, p)
	if msd == 0 {
		return ID{b.first.Ms, b.first.Seq + seq}, flags, p
	}
	return ID{b.first.Ms + msd, seq}, flags, p
}

// idAt returns the ID of entry i.
func (b *block) idAt(i int) ID {
	id, _, _ := b.at(i)
	return id
}

// search returns the index of the first entry with ID >= id (len(offs) if
// none).
func (b *block) search(id ID) int {
	lo, hi := 0, len(b.offs)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if b.idAt(m).Less(id) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// markDeleted marks entry i deleted; it reports whether it was live.
func (b *block) markDeleted(i int) bool {
	p := int(b.hdr) + int(b.offs[i])
	if b.data[p]&flagDeleted != 0 {
		return false
	}
	b.data[p] |= flagDeleted
	b.live--
	return true
}

// fieldSpan locates one string inside block data.
type fieldSpan struct{ name, value span }

type span struct{ off, len int32 }

// decodeFields appends the spans of entry body p's fields (offsets into
// b.data) to dst.
func (b *block) decodeFields(flags byte, p int, dst []fieldSpan) []fieldSpan {
	d := b.data
	if flags&flagSame != 0 {
		q := 0
		_, q = uvarint(d, q) // master field count
		for range b.nmast {
			var name, value span
			name, q = readSpan(d, q)
			value, p = readSpan(d, p)
			dst = append(dst, fieldSpan{name, value})
		}
		return dst
	}
	k, p := uvarint(d, p)
	for range k {
		var name, value span
		name, p = readSpan(d, p)
		value, p = readSpan(d, p)
		dst = append(dst, fieldSpan{name, value})
	}
	return dst
}

func readSpan(d []byte, p int) (span, int) {
	n, p := uvarint(d, p)
	return span{int32(p), int32(n)}, p + int(n)
}
