package store

import "fmt"

// Fences: a seek that reads only the lines it needs.
//
// In a stream far larger than the caches, a seek's cost is the memory it
// waits for, and the block it ends in is cold: its struct, its offset
// table and its entries. Block.Search loads every line of the table and
// entries (touch), about twenty lines for a block of the default size, as
// many as a core can have in flight at once or more. A sealed block also
// has a fence in Blocks.fences, next to the index of first IDs: the offset
// table slots (key and offset, see Block.offs) of every stride-th entry,
// in one pointer-free cache line whose address follows from the block's
// index. The fence's keys tell which segment of the block the target
// lies in, while the block's struct is still on its way, and its offsets
// tell where that segment's entries start: the seek then loads only the
// lines of that segment and of the next one (a range usually goes on from
// where it starts), about six instead of twenty, all at once.
//
// A fence describes the entries the block had when it was sealed; the
// entries a block takes later (a block that becomes the open one again
// when the open block is freed) lie in its last segment, which runs to
// the block's end, so a fence never goes stale: entries never move, and
// deleting one changes only its flags. The open block has a zero fence and
// is searched as before. Fences are derived from the blocks: a snapshot
// does not store them, and Restore computes them.

// fenceSlots is the size of a fence in slots of four bytes: one cache line.
const fenceSlots = 16

// fence is a block's fence: slot 0 holds stride<<16 | count, and slot j,
// 1 <= j <= count, the offset table slot of entry j*stride. Entry 0, whose
// key is 0, is the implicit fence 0. A zero fence (count 0) says nothing.
type fence [fenceSlots]uint32

// set makes f the fence of b's entries as they are: strides of
// ceil(n / fenceSlots) entries, so that at most fenceSlots-1 slots are
// used. O(fenceSlots).
func (f *fence) set(b *Block) {
	*f = fence{}
	o := b.offs
	n := len(o)
	if n < 2 {
		return
	}
	stride := (n + fenceSlots - 1) / fenceSlots
	f[0] = uint32(stride)<<16 | uint32((n-1)/stride)
	for j, i := 1, stride; j < fenceSlots && i < n; j, i = j+1, i+stride {
		f[j] = o[i]
	}
}

// checkFence verifies that f says only what is true of b: each slot is
// the offset table slot of its entry.
func checkFence(f *fence, b *Block) error {
	stride, count := int(f[0]>>16), int(f[0]&0xffff)
	if count == 0 {
		return nil
	}
	if stride == 0 || count >= fenceSlots || count*stride >= len(b.offs) {
		return fmt.Errorf("fence of %d slots of stride %d for %d entries", count, stride, len(b.offs))
	}
	for j := 1; j <= count; j++ {
		if f[j] != b.offs[j*stride] {
			return fmt.Errorf("fence slot %d is %#x, entry %d's slot %#x", j, f[j], j*stride, b.offs[j*stride])
		}
	}
	return nil
}

// fenceOf returns the fence of block bi: the zero fence of the open block
// and of a block sealed before fences were kept past it (fences may be
// shorter than blocks).
func (s *Blocks) fenceOf(bi int) *fence {
	if bi < len(s.fences) {
		return &s.fences[bi]
	}
	return &zeroFence
}

// zeroFence is the fence of a block without one; it is never written.
var zeroFence fence

// sealOpen seals the open block, the last one, which will take no more
// entries, and records its fence. O(entries of the block) for the copy
// that seal may make, O(1) for the fence.
func (s *Blocks) sealOpen(b *Block) {
	b.seal()
	last := len(s.blocks) - 1
	for len(s.fences) <= last {
		s.fences = append(s.fences, fence{})
	}
	s.fences[last].set(b)
}

// search returns the index in block bi of the first entry with ID >= id
// (its Len() if none), as Block.Search does, with the block's fence when
// it has one. rev says that the caller walks backward from the entry
// before the answer, so that the lines loaded ahead are those before it.
func (s *Blocks) search(bi int, id ID, rev bool) int {
	b := s.blocks[bi]
	f := s.fenceOf(bi)
	h := f[0]
	if h&0xffff == 0 {
		return b.Search(id)
	}
	first := s.firsts[bi]
	n := len(b.offs)
	if !first.Less(id) {
		return 0
	}
	if b.last.Less(id) {
		return n
	}
	k := keyOf(first, id)
	// Fence j stands for entry j*stride, fence 0 for entry 0 (key 0 < k,
	// as id > first). The answer lies after the last fence whose key is
	// below k (its entry has a smaller ID), and at or before the first
	// fence whose key is above k (its entry has a greater ID), or the end.
	stride, count := int(h>>16), int(h&0xffff)
	below, upTo := 0, 0 // fences with a key < k, <= k
	for j := 1; j <= count; j++ {
		fk := f[j] >> 16
		if fk < k {
			below++
		}
		if fk <= k {
			upTo++
		}
	}
	lo, hi := below*stride, n
	if upTo < count {
		hi = (upTo + 1) * stride
	}
	// The lines to load: those of the segments from fence `below` to the
	// one after the answer's (or before it, for a walk backward).
	from, to := below, upTo+2
	if rev {
		from, to = max(below-1, 0), upTo+1
	}
	x := b.touchSpan(fenceOffset(f, from), fenceOffset(f, min(to, count+1)), from*stride, min(to*stride, n))
	lo += int(x >> 31 & uint32(n>>30)) // 0, which keeps the loads
	return b.searchIn(id, k, lo, hi)
}

// fenceOffset returns the data offset of fence j's entry, past the header;
// j = count+1 means the end of the data.
func fenceOffset(f *fence, j int) int {
	if j == 0 {
		return 0
	}
	if j > int(f[0]&0xffff) {
		return -1
	}
	return int(uint16(f[j]))
}

// touchSpan loads one word of every cache line of the offset table slots
// [i0, i1) and of the entries' bytes from offset d0 to d1 (to the end when
// d1 < 0), and of the header's first line, which At reads for the first
// ID, and returns their sum: the loads do not depend on each other, so
// their misses overlap (see touch).
func (b *Block) touchSpan(d0, d1, i0, i1 int) uint32 {
	x := uint32(b.data[0])
	for i := i0; i < i1; i += 16 {
		x += b.offs[i]
	}
	if i1 > i0 {
		x += b.offs[i1-1]
	}
	d := b.data[b.hdr:]
	if d1 < 0 || d1 > len(d) {
		d1 = len(d)
	}
	for i := d0; i < d1; i += 64 {
		x += uint32(d[i])
	}
	if d1 > d0 {
		x += uint32(d[d1-1])
	}
	return x
}
