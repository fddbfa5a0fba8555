package store

import (
	"fmt"
	"strings"
)

// Blocks is the storage of one stream: its entries in blocks ordered by
// ID, the index of the blocks' first IDs for seeks, and the counters that
// must change with them (length, last and first IDs, max deleted ID,
// entries added). Every change goes through a method of Blocks, which keeps
// the fields in step; Check verifies that they are.
//
// The zero Blocks is an empty stream. Blocks is not safe for concurrent
// use: the stream's lock guards it.
type Blocks struct {
	blocks    []*Block // ordered by ID; none is empty
	firsts    []ID     // firsts[i] is blocks[i].FirstID()
	open      *Block   // the last block, while it takes new entries
	openNames []string // field names of open's master entry
	// open's size as a Redis listpack, but for header and counters, when
	// openLPExact: it is computed when a bound of it comes near the limit
	// on bytes (see fitsBytes), and kept from then on.
	openLP      int
	openLPExact bool
	openBound   int // a bound of open's listpack size, kept at every append
	openFirst   ID  // open's first (master) ID
	// openNamesLen is the length of openNames together: Redis's bound on
	// bytes counts an entry's names even when the block stores only its
	// values.
	openNamesLen int

	length       int64
	lastID       ID // last ID generated (XINFO last-generated-id)
	firstID      ID // first live entry's ID, 0-0 when empty (recorded-first-entry-id)
	maxDeleted   ID // max-deleted-entry-id
	entriesAdded int64

	limits           Limits // of the blocks
	maxEntries, maxB int    // limits resolved; 0 until SetLimits: the defaults
}

// SetLimits sets the bounds of blocks from now on: the open block fills up
// to them, and the others stay as they are. O(1).
func (s *Blocks) SetLimits(l Limits) {
	s.limits = l
	s.maxEntries, s.maxB = l.resolved()
}

// bounds returns the resolved limits.
func (s *Blocks) bounds() (maxEntries, maxBytes int) {
	if s.maxEntries == 0 {
		return BlockMaxEntries, BlockMaxBytes
	}
	return s.maxEntries, s.maxB
}

// Len returns the number of live entries. O(1).
func (s *Blocks) Len() int64 { return s.length }

// LastID returns the last ID generated. O(1).
func (s *Blocks) LastID() ID { return s.lastID }

// FirstID returns the ID of the first live entry, 0-0 when there is none
// (XINFO recorded-first-entry-id). O(1): it is kept, as consumer groups
// read it for every entry they deliver.
func (s *Blocks) FirstID() ID { return s.firstID }

// refreshFirst recomputes the first ID after a removal: the head of the
// first block, as no block is without a live entry. O(1).
func (s *Blocks) refreshFirst() {
	s.firstID = ID{}
	if len(s.blocks) > 0 {
		b := s.blocks[0]
		s.firstID = b.IDAt(int(b.head))
	}
}

// MaxDeleted returns the largest ID removed by Delete. O(1).
func (s *Blocks) MaxDeleted() ID { return s.maxDeleted }

// EntriesAdded returns the number of entries ever added. O(1).
func (s *Blocks) EntriesAdded() int64 { return s.entriesAdded }

// NumBlocks returns the number of blocks. O(1).
func (s *Blocks) NumBlocks() int { return len(s.blocks) }

// Block returns block i, 0 <= i < NumBlocks(), in ID order.
func (s *Blocks) Block(i int) *Block { return s.blocks[i] }

// TopID returns the ID of the last entry stored, deleted or not, and
// false when no block holds one.
func (s *Blocks) TopID() (ID, bool) {
	if n := len(s.blocks); n > 0 {
		return s.blocks[n-1].last, true
	}
	return ID{}, false
}

// OpenNames returns the master field names of the block that takes the
// next entry, nil when a new block will be started. The caller must not
// change them.
func (s *Blocks) OpenNames() []string { return s.openNames }

// SameNames reports whether fields have exactly the given names, in order.
func SameNames(names []string, fields []Field) bool { return sameNames(names, fields) }

// Append stores an entry; id must be greater than every stored ID and than
// LastID. It becomes the last ID. It reports whether the entry's field
// names were those of OpenNames before the call. O(1) amortized.
func (s *Blocks) Append(id ID, fields []Field) (sameAsOpen bool) {
	return s.put(id, fields, true) // put stores any entry by appendAny when it does not take it
}

// appended counts an entry just stored with ID id.
func (s *Blocks) appended(id ID) {
	if s.length == 0 {
		s.firstID = id
	}
	s.length++
	s.lastID = id
	s.entriesAdded++
}

// appendAny is Append for any entry.
func (s *Blocks) appendAny(id ID, fields []Field) (sameAsOpen bool) {
	tail := s.open
	var msd, seq uint64
	same := false
	// A bound of the entry's size but for the uvarints of its ID: its
	// strings counted raw (fieldsBound).
	rest, size := 0, 0
	if tail != nil {
		msd, seq = tail.idDelta(id)
		same = sameNames(s.openNames, fields)
		sameAsOpen = same
		rest = 1 + fieldsBound(same, fields)
		size = rest + idExtra(msd, seq)
		maxEntries, maxBytes := s.bounds()
		// The names' and values' lengths are less than size, and the
		// listpack's header and counters take at most lpSlack: only an
		// entry that may not fit needs fitsBytes. Only an entry that may
		// not fit in BlockBytesCap by its bound needs its exact size.
		fits := tail.fits(size, maxEntries)
		if !fits && len(tail.offs) < maxEntries {
			fits = tail.fits(1+fieldsSize(same, fields)+idExtra(msd, seq), maxEntries)
		}
		lpSize := size // what Redis's bound counts of the entry
		if same {
			lpSize += s.openNamesLen
		}
		if !fits || s.openBound+lpSlack+lpSize >= maxBytes && !s.fitsBytes(tail, fields, maxBytes) {
			tail.seal()
			tail = nil
		}
	}
	if tail == nil {
		maxEntries, maxBytes := s.bounds()
		tail = newBlock(id, fields, maxEntries, maxBytes)
		s.openLPExact, s.openBound, s.openFirst = false, 2*len(tail.data), id
		s.blocks = append(s.blocks, tail)
		s.firsts = append(s.firsts, id)
		s.open = tail
		// The names of the block just sealed serve again when the entry
		// has them (same): they are never changed.
		if !same {
			names := make([]string, len(fields))
			s.openNamesLen = 0
			for i, f := range fields {
				names[i] = strings.Clone(f.Name) // not a part of a caller's larger string
				s.openNamesLen += len(f.Name)
			}
			s.openNames = names
		}
		msd, seq, same = 0, 0, true
		rest = 1 + fieldsBound(true, fields)
		size = rest
	}
	s.openBound += lpEntryBound(s.openFirst, id, same, fields)
	if s.openLPExact {
		s.openLP += lpEntrySize(s.openFirst, id, same, fields)
	}
	tail.append(id, msd, seq, same, fields, size)
	s.appended(id)
	return sameAsOpen
}

// SetLast sets the last generated ID, and the entries-added counter when
// entriesAdded >= 0, and the max deleted ID when maxDeleted is not 0-0,
// as XSETID does. The caller has checked that last is not below TopID and
// that entriesAdded is not below Len.
func (s *Blocks) SetLast(last ID, entriesAdded int64, maxDeleted ID) {
	s.lastID = last
	if entriesAdded >= 0 {
		s.entriesAdded = entriesAdded
	}
	if !maxDeleted.IsZero() {
		s.maxDeleted = maxDeleted
	}
}

// blockFor returns the index of the last block whose first ID is <= id, or
// -1 if there is none. O(log blocks).
//
// It is a binary search over the contiguous firsts that, while it compares
// at one level, already loads the two places the next level may look at
// and the block pointer it may end on: the loads do not depend on the
// comparison, so in a large stream their cache misses overlap instead of
// coming one after another. x gathers what they load; it feeds the result
// through a term that is always 0 (len(f) < 1<<48) so that they stay.
func (s *Blocks) blockFor(id ID) int {
	f := s.firsts
	if len(f) == 0 || id.Less(f[0]) {
		return -1
	}
	var x uint64
	base, n := 0, len(f) // the answer is in [base, base+n)
	for n > 1 {
		half := n >> 1
		next := (n - half) >> 1
		x += f[base+next].Ms + f[base+half+next].Ms
		if s.blocks[base+half] == nil {
			x++
		}
		if !id.Less(f[base+half]) {
			base += half
		}
		n -= half
	}
	return base + int(x>>63&uint64(len(f)>>48))
}

// cursor addresses entry i of block bi.
type cursor struct{ bi, i int }

// seekGE returns the position of the first stored entry (deleted or not)
// with ID >= id.
func (s *Blocks) seekGE(id ID) cursor {
	bi := s.blockFor(id)
	if bi < 0 {
		return cursor{0, 0}
	}
	b := s.blocks[bi]
	i := b.Search(id)
	if i == len(b.offs) {
		return cursor{bi + 1, 0}
	}
	return cursor{bi, i}
}

// seekLE returns the position of the last stored entry with ID <= id;
// bi is -1 when there is none.
func (s *Blocks) seekLE(id ID) cursor {
	bi := s.blockFor(id)
	if bi < 0 {
		return cursor{-1, 0}
	}
	b := s.blocks[bi]
	var i int
	if id == MaxID {
		i = len(b.offs)
	} else {
		next, _ := id.Next()
		i = b.Search(next)
	}
	// i > 0: the block's first ID is <= id.
	return cursor{bi, i - 1}
}

// Walk calls fn for each live entry with lo <= ID <= hi, in ascending (or,
// with rev, descending) order, until fn returns false. fn gets the entry's
// block, ID and flags and the position of its body in the block's Data; it
// must not change the storage. Finding the first entry is O(log N).
func (s *Blocks) Walk(lo, hi ID, rev bool, fn func(b *Block, id ID, flags byte, body int) bool) {
	if hi.Less(lo) || s.length == 0 {
		return
	}
	if !rev {
		for c := s.seekGE(lo); c.bi < len(s.blocks); c.bi, c.i = c.bi+1, 0 {
			b := s.blocks[c.bi]
			c.i = max(c.i, int(b.head))
			for ; c.i < len(b.offs); c.i++ {
				id, flags, body := b.At(c.i)
				if hi.Less(id) {
					return
				}
				if flags&FlagDeleted == 0 && !fn(b, id, flags, body) {
					return
				}
			}
		}
		return
	}
	for c := s.seekLE(hi); c.bi >= 0; c.bi, c.i = c.bi-1, -1 {
		b := s.blocks[c.bi]
		if c.i < 0 {
			c.i = len(b.offs) - 1
		}
		for ; c.i >= int(b.head); c.i-- {
			id, flags, body := b.At(c.i)
			if id.Less(lo) {
				return
			}
			if flags&FlagDeleted == 0 && !fn(b, id, flags, body) {
				return
			}
		}
	}
}

// Entry locates the live entry id: its block, flags and body position.
// O(log N).
func (s *Blocks) Entry(id ID) (b *Block, flags byte, body int, ok bool) {
	bi := s.blockFor(id)
	if bi < 0 {
		return nil, 0, 0, false
	}
	b = s.blocks[bi]
	i := b.Search(id)
	if i == len(b.offs) {
		return nil, 0, 0, false
	}
	eid, flags, body := b.At(i)
	if eid != id || flags&FlagDeleted != 0 {
		return nil, 0, 0, false
	}
	return b, flags, body, true
}

// Has reports whether id is a live entry. O(log N).
func (s *Blocks) Has(id ID) bool {
	_, _, _, ok := s.Entry(id)
	return ok
}

// Delete removes the live entry id, as XDEL does: it raises the max
// deleted ID and frees the entry's block when it has no live entry left.
// It reports whether id was a live entry. O(log N).
func (s *Blocks) Delete(id ID) bool {
	if !s.remove(id) {
		return false
	}
	if s.maxDeleted.Less(id) {
		s.maxDeleted = id
	}
	return true
}

// TrimEntry removes the live entry id, as a trim does: unlike Delete it
// leaves the max deleted ID. It reports whether id was a live entry.
// O(log N).
func (s *Blocks) TrimEntry(id ID) bool { return s.remove(id) }

// remove marks id deleted, frees its block when emptied and keeps the
// first ID right.
func (s *Blocks) remove(id ID) bool {
	bi := s.blockFor(id)
	if bi < 0 {
		return false
	}
	b := s.blocks[bi]
	i := b.Search(id)
	if i == len(b.offs) || b.IDAt(i) != id || !b.markDeleted(i) {
		return false
	}
	s.length--
	if b.live == 0 {
		s.removeBlock(bi)
	}
	if id == s.firstID || s.length == 0 {
		s.refreshFirst()
	}
	return true
}

// TrimTo removes every live entry with ID <= upTo, the effect of a trim
// that keeps references: whole blocks are dropped in O(1) each, and
// entries are marked deleted in the one block the bound falls in, from its
// head on, so O(1) for each entry removed. The max deleted ID is left. It
// returns how many entries it removed.
func (s *Blocks) TrimTo(upTo ID) int64 {
	var removed int64
	n := 0 // blocks dropped whole, from the head
	for _, b := range s.blocks {
		if upTo.Less(b.last) {
			break
		}
		removed += int64(b.live)
		n++
	}
	s.length -= removed
	s.dropHead(n)
	if len(s.blocks) > 0 && !upTo.Less(s.blocks[0].FirstID()) {
		b := s.blocks[0]
		for i := int(b.head); i < len(b.offs); i++ {
			id := b.IDAt(i)
			if upTo.Less(id) {
				break
			}
			if b.markDeleted(i) {
				s.length--
				removed++
			}
			if id == upTo {
				break
			}
		}
		if b.live == 0 {
			s.dropHead(1)
		}
	}
	if removed > 0 {
		s.refreshFirst()
	}
	return removed
}

// dropHead frees the first n blocks.
func (s *Blocks) dropHead(n int) {
	if n == 0 {
		return
	}
	for i := range n {
		if s.blocks[i] == s.open {
			s.open, s.openNames = nil, nil
		}
		s.blocks[i] = nil
	}
	s.blocks, s.firsts = s.blocks[n:], s.firsts[n:]
	if len(s.blocks) == 0 {
		s.blocks, s.firsts = nil, nil
	}
}

// removeBlock frees block bi, which has no live entry left.
func (s *Blocks) removeBlock(bi int) {
	if bi == 0 {
		s.dropHead(1)
		return
	}
	wasOpen := s.blocks[bi] == s.open
	copy(s.blocks[bi:], s.blocks[bi+1:])
	s.blocks[len(s.blocks)-1] = nil
	s.blocks = s.blocks[:len(s.blocks)-1]
	s.firsts = append(s.firsts[:bi], s.firsts[bi+1:]...)
	if wasOpen {
		s.reopenLast()
	}
}

// reopenLast makes the last block the one that takes new entries, after
// the open block was freed: Redis appends to its last node, whichever it
// is.
func (s *Blocks) reopenLast() {
	s.open, s.openNames = nil, nil
	if len(s.blocks) == 0 {
		return
	}
	b := s.blocks[len(s.blocks)-1]
	names, err := b.masterNames()
	if err != nil {
		return // Check reports the block
	}
	s.open, s.openNames = b, names
	s.setOpenLP()
}

// State is what a snapshot keeps of a Blocks besides its blocks.
type State struct {
	LastID, FirstID, MaxDeleted ID
	EntriesAdded                int64
	Open                        bool // the last block takes new entries
}

// State returns the counters of the storage.
func (s *Blocks) State() State {
	return State{
		LastID: s.lastID, FirstID: s.firstID, MaxDeleted: s.maxDeleted,
		EntriesAdded: s.entriesAdded, Open: s.open != nil,
	}
}

// Restore replaces the storage's content with blocks (as Raw gave them,
// in order) and st, and checks the result (Check): a snapshot that does
// not hold together is an error, and the storage is then left empty.
func (s *Blocks) Restore(blocks []*Block, st State) error {
	limits := s.limits
	defer s.SetLimits(limits)
	*s = Blocks{
		blocks: blocks, firsts: make([]ID, len(blocks)),
		lastID: st.LastID, firstID: st.FirstID, maxDeleted: st.MaxDeleted, entriesAdded: st.EntriesAdded,
	}
	for i, b := range blocks {
		if b == nil || len(b.data) < FirstIDLen {
			*s = Blocks{}
			return fmt.Errorf("block %d is empty", i)
		}
		s.firsts[i] = b.FirstID()
		s.length += int64(b.live)
	}
	if st.Open && len(blocks) > 0 {
		names, err := blocks[len(blocks)-1].masterNames()
		if err != nil {
			*s = Blocks{}
			return err
		}
		s.open, s.openNames = blocks[len(blocks)-1], names
	}
	if len(blocks) == 0 {
		s.blocks, s.firsts = nil, nil
	}
	if err := s.Check(); err != nil {
		*s = Blocks{}
		return err
	}

	if s.open != nil {
		s.setOpenLP()
	}
	return nil
}

// setOpenLP computes the open block's listpack size from its entries.
func (s *Blocks) setOpenLP() {
	s.openLP, s.openLPExact = blockLP(s.open, s.openNames), true
	s.openBound, s.openFirst = s.openLP, s.open.FirstID()
	s.openNamesLen = 0
	for _, n := range s.openNames {
		s.openNamesLen += len(n)
	}
}

// fitsBytes applies Redis's bound on a node's bytes: an entry of fields
// starts a new node when the node's listpack bytes plus the entry's names
// and values reach maxBytes. The listpack's size is computed exactly only
// when its bound (openBound, see lpEntryBound) comes that near, so a
// block of small entries, whose limit on entries comes first, never
// needs it.
func (s *Blocks) fitsBytes(tail *Block, fields []Field, maxBytes int) bool {
	need := tail.lpCounters() + lpFieldsLen(fields)
	if need+s.openBound < maxBytes {
		return true
	}
	if !s.openLPExact {
		s.openLP, s.openLPExact = blockLP(tail, s.openNames), true
	}
	return need+s.openLP < maxBytes
}

// MemoryBytes returns the memory the blocks take: their data and offset
// arrays as allocated, their structs and the index. O(blocks).
func (s *Blocks) MemoryBytes() int64 {
	n := int64(cap(s.blocks))*8 + int64(cap(s.firsts))*16
	for _, b := range s.blocks {
		n += 80 + int64(cap(b.data)) + 4*int64(cap(b.offs))
	}
	return n
}
