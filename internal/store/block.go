package store

import (
	"encoding/binary"
	"slices"
)

// Storage.
//
// A stream keeps its entries in blocks, as Redis keeps them in listpack
// nodes: a block holds up to BlockMaxEntries entries in one pointer-free
// byte slice. The block's first ("master") entry records the field names;
// a later entry with the same field names stores only its values. Entry IDs
// are stored as small deltas from the block's first ID. An offset table
// (four bytes an entry) gives direct access to each entry, so a seek is a
// binary search over blocks and then over one block's entries.
//
// Each slot of the offset table also holds a 16-bit search key of the
// entry's ID (see idKey), which grows with the ID. A seek inside a block
// first searches the keys, which lie together in a few cache lines, and
// decodes entry IDs only among the entries whose key equals the target's:
// in a large stream that saves a cache miss per probe.
//
// Layout of block.data:
//
//	header:  first ID: ms, seq as two little-endian uint64   (see firstID)
//	         uvarint n, then n × (uvarint len, name bytes)    master field names
//	entry:   one byte: flags (bits 0-1) | v<<2 (v in 0..63)
//	         [uvarint msDelta]   ms - first.Ms, when the key says 0x7fff or more
//	         [uvarint seq]       when v == 63
//	         FlagSame:  n × value
//	         otherwise: uvarint k, k × (name, value)
//
// The names and values are strings in the forms of codec.go. An entry's
// ID is read from its offset table slot as much as from its bytes: the
// key (see idKey) of an ID in the first ID's millisecond is its sequence
// difference when below 0x7fff, and then the entry stores nothing more
// (v is 0); at 0x7fff or more v is 63 and the difference follows as a
// uvarint. For an ID in a later millisecond the key holds the millisecond
// difference, which follows as a uvarint only when it is 0x7fff or more,
// and the sequence number is v when below 63, else (v is 63) a uvarint.
// So an entry of the common kind, whose ID is near the block's first,
// takes one byte besides its strings.
//
// A deleted entry keeps its bytes with FlagDeleted set; a block whose
// entries are all deleted is freed. The block keeps the index of its first
// live entry (head), so that a trim, which deletes entries from the front,
// and the walks that start there skip the deleted ones in O(1) instead of
// decoding them again.

// A block takes at most BlockMaxEntries entries and, past its first
// entry, BlockMaxBytes bytes of entries (Redis's stream-node-max-entries
// and stream-node-max-bytes defaults), unless its Blocks has other Limits.
const (
	BlockMaxEntries = 100
	BlockMaxBytes   = 4096
	// BlockBytesCap is the most bytes of entries a block can address (an
	// entry's offset takes 16 bits): the bound of Limits.MaxBytes.
	BlockBytesCap = 1<<16 - 1
)

// Limits bound the blocks of a Blocks as Redis's stream-node-max-entries
// and stream-node-max-bytes bound its nodes (see listpack.go for how the
// bytes are counted). A zero field is the default (BlockMaxEntries,
// BlockMaxBytes); a negative one means no limit (Redis's 0). Whatever the
// limits, a block also ends before its entries pass BlockBytesCap bytes
// of its own format.
type Limits struct {
	MaxEntries, MaxBytes int32
}

// resolved returns l's effective bounds.
func (l Limits) resolved() (entries, bytes int) {
	entries, bytes = int(l.MaxEntries), int(l.MaxBytes)
	switch {
	case entries == 0:
		entries = BlockMaxEntries
	case entries < 0:
		entries = 1 << 30
	}
	switch {
	case bytes == 0:
		bytes = BlockMaxBytes
	case bytes < 0:
		bytes = lpMaxSize
	}
	return entries, bytes
}

// The flags of an entry, the low bits of its first byte.
const (
	FlagDeleted = 1 << iota // the entry was deleted
	FlagSame                // the entry has the master field names

	flagMask = FlagDeleted | FlagSame
	vShift   = 2      // v, the rest of the first byte, is the ID's form
	vFollows = 63     // v: a uvarint sequence (difference) follows
	keyMax   = 0x7fff // the largest key of one half of idKey's range
)

// Block is one storage block. Its first ID lives in data rather than in
// the struct: the struct then takes an 80-byte allocation instead of 96,
// and as the garbage collector scans every block struct, that keeps the
// scanned heap under one byte per entry. Blocks.firsts has the first IDs
// for seeks.
type Block struct {
	data  []byte   // header, then entries
	offs  []uint32 // idKey<<16 | offset: entry i starts at data[hdr+uint16(offs[i])]
	last  ID       // ID of the last entry put in the block
	hdr   int32    // length of the header
	nmast int32    // number of master fields
	live  int32    // entries not deleted
	head  int32    // entries before it are deleted; the first live one while live > 0
}

// FirstIDLen is the size of the first ID at the start of a block's data.
const FirstIDLen = 16

// Len returns the number of entries in the block, deleted ones included.
func (b *Block) Len() int { return len(b.offs) }

// Live returns the number of entries not deleted.
func (b *Block) Live() int { return int(b.live) }

// Last returns the ID of the last entry put in the block, deleted or not.
func (b *Block) Last() ID { return b.last }

// Data returns the block's bytes (see the layout above). The caller must
// not change them.
func (b *Block) Data() []byte { return b.data }

// MasterCount returns the number of master field names; they follow the
// first ID in Data as n × (uvarint len, bytes), after a uvarint n.
func (b *Block) MasterCount() int { return int(b.nmast) }

// FirstID returns the ID of the first entry ever put in the block.
func (b *Block) FirstID() ID {
	return ID{binary.LittleEndian.Uint64(b.data), binary.LittleEndian.Uint64(b.data[8:])}
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
func (b *Block) idDelta(id ID) (msd, seq uint64) {
	first := b.FirstID()
	msd = id.Ms - first.Ms
	if msd == 0 {
		return 0, id.Seq - first.Seq
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

// idExtra returns the size of the uvarints that follow an entry's first
// byte for an ID with the given differences (see idDelta).
func idExtra(msd, seq uint64) int {
	n := 0
	if msd >= keyMax {
		n = uvarintLen(msd)
	}
	if msd == 0 && seq >= keyMax || msd != 0 && seq >= vFollows {
		n += uvarintLen(seq)
	}
	return n
}

// fieldsSize returns the size of an entry's strings, with their count
// and names unless same.
func fieldsSize(same bool, fields []Field) int {
	n := 0
	if !same {
		n = uvarintLen(uint64(len(fields)))
	}
	for _, f := range fields {
		if !same {
			n += strSize(f.Name)
		}
		n += strSize(f.Value)
	}
	return n
}

// fieldsBound bounds fieldsSize without a look at the strings' bytes:
// a string of n bytes takes at most 1 + n + n>>6 here (rawSize), which
// it counts without a branch.
func fieldsBound(same bool, fields []Field) int {
	n := 0
	if same {
		for _, f := range fields {
			l := len(f.Value)
			n += 1 + l + l>>6
		}
		return n
	}
	n = uvarintLen(uint64(len(fields)))
	for _, f := range fields {
		l, k := len(f.Value), len(f.Name)
		n += 2 + l + l>>6 + k + k>>6
	}
	return n
}

// newBlock starts a block whose master entry is (id, fields). It sizes the
// block for as many entries like this one as the limits let in, so that
// a block of similar entries is filled without growing.
func newBlock(id ID, fields []Field, maxEntries, maxBytes int) *Block {
	hdr := FirstIDLen + uvarintLen(uint64(len(fields)))
	for _, f := range fields {
		hdr += uvarintLen(uint64(len(f.Name))) + len(f.Name)
	}
	size := 1 + fieldsSize(true, fields)
	maxBytes = min(maxBytes, BlockMaxBytes) // what is allocated at first
	n := min(maxEntries, maxBytes/size+1)
	body := size * n
	if body > maxBytes {
		body, n = max(maxBytes, size), max(maxBytes/size, 1)
	}
	b := &Block{hdr: int32(hdr), nmast: int32(len(fields))}
	b.data = make([]byte, 0, hdr+body)
	b.offs = make([]uint32, 0, n)
	b.data = binary.LittleEndian.AppendUint64(b.data, id.Ms)
	b.data = binary.LittleEndian.AppendUint64(b.data, id.Seq)
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

// fits reports whether an entry of size bytes here may join the block
// by the limits on entries and on this format's bytes; the caller checks
// Redis's bound on bytes (Blocks.fitsBytes).
func (b *Block) fits(size, maxEntries int) bool {
	n := len(b.offs)
	return n == 0 || (n < maxEntries && len(b.data)-int(b.hdr)+size <= BlockBytesCap)
}

// lpCounters is the size of the block's listpack header and end and of
// its two counters (live and deleted entries).
func (b *Block) lpCounters() int {
	return lpEmpty + lpIntSize(int64(b.live)) + lpIntSize(int64(len(b.offs)-int(b.live)))
}

// append adds an entry of at most size bytes; the caller has checked
// fits and ordering.
func (b *Block) append(id ID, msd, seq uint64, same bool, fields []Field, size int) {
	b.offs = append(b.offs, b.idKey(id)<<16|uint32(len(b.data)-int(b.hdr)))
	l := len(b.data)
	if cap(b.data)-l < size { // grow by the exact size only, as it may fit
		b.data = slices.Grow(b.data, 1+idExtra(msd, seq)+fieldsSize(same, fields))
		size = cap(b.data) - l
	}
	d := b.data[l : l+size]
	var h byte
	if same {
		h = FlagSame
	}
	var v uint64
	if msd != 0 {
		v = min(seq, vFollows)
	} else if seq >= keyMax {
		v = vFollows
	}
	d[0] = h | byte(v)<<vShift
	p := 1
	if msd >= keyMax {
		p += binary.PutUvarint(d[p:], msd)
	}
	if v == vFollows {
		p += binary.PutUvarint(d[p:], seq)
	}
	if !same {
		p += binary.PutUvarint(d[p:], uint64(len(fields)))
	}
	for _, f := range fields {
		if !same {
			p += putStr(d[p:], f.Name)
		}
		p += putStr(d[p:], f.Value)
	}
	b.data = b.data[:l+p]
	b.last = id
	b.live++
}

// seal trims the slack of a block that will take no more entries, when
// there is enough of it to be worth a copy.
func (b *Block) seal() {
	if cap(b.data)-len(b.data) > len(b.data)/16 {
		b.data = append([]byte(nil), b.data...)
	}
	if cap(b.offs)-len(b.offs) > len(b.offs)/16 {
		b.offs = append([]uint32(nil), b.offs...)
	}
}

// Uvarint decodes the uvarint at d[p], written by this package, and
// returns it and the position after it. It is small enough to be inlined.
func Uvarint(d []byte, p int) (uint64, int) {
	var v uint64
	for s := uint(0); ; s += 7 {
		c := d[p]
		p++
		v |= uint64(c&0x7f) << s
		if c < 0x80 {
			return v, p
		}
	}
}

// At decodes the flags and ID of entry i and returns the position of its
// body. An entry whose key and first byte say its ID takes the fast path:
// one in the first ID's millisecond at a sequence difference below
// 0x7fff, or in a later millisecond below 0x7fff ms with a sequence
// number below 63.
func (b *Block) At(i int) (id ID, flags byte, body int) {
	o := b.offs[i]
	p := int(b.hdr) + int(uint16(o))
	h := b.data[p]
	first := b.FirstID()
	k := o >> 16
	if k < keyMax {
		return ID{first.Ms, first.Seq + uint64(k)}, h & flagMask, p + 1
	}
	if v := uint64(h >> vShift); k != 0xffff && v != vFollows {
		return ID{first.Ms + uint64(k&keyMax), v}, h & flagMask, p + 1
	}
	return b.atSlow(o, h, p+1)
}

// atSlow is At for the IDs whose key does not say it all.
func (b *Block) atSlow(o uint32, h byte, p int) (id ID, flags byte, body int) {
	first := b.FirstID()
	k := uint64(o >> 16)
	if k == keyMax {
		seq, p := Uvarint(b.data, p)
		return ID{first.Ms, first.Seq + seq}, h & flagMask, p
	}
	msd := k &^ 0x8000
	if msd == keyMax {
		msd, p = Uvarint(b.data, p)
	}
	seq := uint64(h >> vShift)
	if seq == vFollows {
		seq, p = Uvarint(b.data, p)
	}
	return ID{first.Ms + msd, seq}, h & flagMask, p
}

// IDAt returns the ID of entry i.
func (b *Block) IDAt(i int) ID {
	id, _, _ := b.At(i)
	return id
}

// idKey returns the search key of an ID >= b.FirstID(): the sequence delta
// (at most 0x7fff) for an ID in the first ID's millisecond, else 0x8000
// plus the millisecond delta (at most 0x7fff). For IDs a < b of one block,
// idKey(a) <= idKey(b).
func (b *Block) idKey(id ID) uint32 {
	first := b.FirstID()
	if msd := id.Ms - first.Ms; msd != 0 {
		return 0x8000 | uint32(min(msd, keyMax))
	}
	return uint32(min(id.Seq-first.Seq, keyMax))
}

// Search returns the index of the first entry with ID >= id (len(offs) if
// none).
func (b *Block) Search(id ID) int {
	n := len(b.offs)
	if n == 0 {
		return 0
	}
	if b.last.Less(id) {
		return n
	}
	// touch goes before firstID so that the misses on the offset table
	// and on data overlap.
	x := b.touch()
	if !b.FirstID().Less(id) {
		return 0
	}
	// The answer lies in [lo, hi]: the entries before lo have a smaller
	// key, so a smaller ID; those from hi on a greater key and ID. lo
	// starts at 0: x>>31 & n>>30 is 0 since n < 1<<30, but the compiler
	// cannot tell and so keeps the loads of touch.
	k := b.idKey(id)
	lo, hi := int(x>>31&uint32(n>>30)), n
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if b.offs[m]>>16 < k {
			lo = m + 1
		} else {
			hi = m
		}
	}
	hi = n
	for j := lo; j < hi; {
		m := int(uint(j+hi) >> 1)
		if b.offs[m]>>16 <= k {
			j = m + 1
		} else {
			hi = m
		}
	}
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if b.IDAt(m).Less(id) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo
}

// touch loads one word of every cache line of the offset table and of the
// entries, and returns their sum. The loads do not depend on each other, so
// the processor overlaps their cache misses, and the binary searches that
// follow (and a range that goes on from there) find the lines in cache
// instead of missing probe after probe. In a stream far larger than the
// caches this makes a seek about 10% faster than touching only the table.
func (b *Block) touch() uint32 {
	var x uint32
	o := b.offs
	for i := 0; i < len(o); i += 16 {
		x += o[i]
	}
	d := b.data[b.hdr:]
	for i := 0; i < len(d); i += 64 {
		x += uint32(d[i])
	}
	return x
}

// Head returns the index of the block's first live entry (Len() when it
// has none): the entries before it are deleted. O(1).
func (b *Block) Head() int { return int(b.head) }

// deleted reports whether entry i is deleted.
func (b *Block) deleted(i int) bool {
	return b.data[int(b.hdr)+int(uint16(b.offs[i]))]&FlagDeleted != 0
}

// markDeleted marks entry i deleted; it reports whether it was live. When
// i is the head it moves the head past the deleted entries that follow:
// each entry is passed once, so O(1) amortized.
func (b *Block) markDeleted(i int) bool {
	p := int(b.hdr) + int(uint16(b.offs[i]))
	if b.data[p]&FlagDeleted != 0 {
		return false
	}
	b.data[p] |= FlagDeleted
	b.live--
	if i == int(b.head) {
		b.skipDeleted()
	}
	return true
}

// skipDeleted moves the head past deleted entries.
func (b *Block) skipDeleted() {
	h := int(b.head)
	for h < len(b.offs) && b.deleted(h) {
		h++
	}
	b.head = int32(h)
}

// RawBlock is a block's content as a snapshot stores it: its bytes and
// offset table as they are in memory.
type RawBlock struct {
	Data  []byte
	Offs  []uint32
	Last  ID
	Hdr   int32
	Nmast int32
	Live  int32
}

// Raw returns a copy of the block's content.
func (b *Block) Raw() RawBlock {
	return RawBlock{
		Data: append([]byte(nil), b.data...), Offs: append([]uint32(nil), b.offs...),
		Last: b.last, Hdr: b.hdr, Nmast: b.nmast, Live: b.live,
	}
}

// FromRaw makes a block of raw content, which it keeps. It checks that the
// content holds together (every entry decodes inside the data, in ID
// order, and the counts agree), so that no later access can fail.
func FromRaw(r RawBlock) (*Block, error) {
	b := &Block{data: r.Data, offs: r.Offs, last: r.Last, hdr: r.Hdr, nmast: r.Nmast, live: r.Live}
	if err := b.checkEntries(); err != nil {
		return nil, err
	}
	b.skipDeleted()
	return b, nil
}
