package store

import (
	"errors"
	"fmt"
)

// Check verifies the invariants of the storage and returns the first one
// broken, or nil: blocks are non-empty, ordered and indexed by firsts; each
// block's live count, last ID and offset table agree with its entries; the
// open block is the last one, with its master names; the length, first ID
// and last ID agree with the entries. It costs O(N) and is meant for tests
// and for checking loaded data.
func (s *Blocks) Check() error {
	if len(s.firsts) != len(s.blocks) {
		return fmt.Errorf("%d blocks but %d first IDs", len(s.blocks), len(s.firsts))
	}
	var live int64
	var prev ID
	var first ID
	for bi, b := range s.blocks {
		if b == nil {
			return fmt.Errorf("block %d is nil", bi)
		}
		if err := b.check(); err != nil {
			return fmt.Errorf("block %d: %w", bi, err)
		}
		if b.live == 0 {
			return fmt.Errorf("block %d has no live entry", bi)
		}
		if s.firsts[bi] != b.FirstID() {
			return fmt.Errorf("block %d: index says first ID %v, block says %v", bi, s.firsts[bi], b.FirstID())
		}
		if bi > 0 && !prev.Less(b.FirstID()) {
			return fmt.Errorf("block %d starts at %v, not after the previous block's last %v", bi, b.FirstID(), prev)
		}
		prev = b.last
		live += int64(b.live)
		if first.IsZero() {
			for i := range b.offs {
				if id, flags, _ := b.At(i); flags&FlagDeleted == 0 {
					first = id
					break
				}
			}
		}
	}
	if live != s.length {
		return fmt.Errorf("length %d, but blocks hold %d live entries", s.length, live)
	}
	if first != s.firstID {
		return fmt.Errorf("first ID %v, but the first live entry is %v", s.firstID, first)
	}
	if len(s.blocks) > 0 && s.lastID.Less(prev) {
		return fmt.Errorf("last ID %v is below the top entry %v", s.lastID, prev)
	}
	if s.entriesAdded < s.length {
		return fmt.Errorf("entries added %d is below the length %d", s.entriesAdded, s.length)
	}
	if s.open != nil {
		if len(s.blocks) == 0 || s.blocks[len(s.blocks)-1] != s.open {
			return errors.New("the open block is not the last block")
		}
		if names, _ := s.open.masterNames(); !equalStrings(names, s.openNames) {
			return fmt.Errorf("open names %q, but the open block's master names are %q", s.openNames, names)
		}
	} else if s.openNames != nil {
		return errors.New("open names without an open block")
	}
	return nil
}

// check verifies one block: its entries (checkEntries), and that head is
// its first live entry.
func (b *Block) check() error {
	if err := b.checkEntries(); err != nil {
		return err
	}
	h := 0
	for h < len(b.offs) && b.deleted(h) {
		h++
	}
	if int(b.head) != h {
		return fmt.Errorf("head %d, but the first live entry is %d", b.head, h)
	}
	return nil
}

// checkEntries verifies a block's entries: every entry decodes inside data,
// IDs grow from the first ID to last, search keys match, and live counts
// the entries not deleted.
func (b *Block) checkEntries() error {
	if len(b.data) < FirstIDLen || b.hdr < FirstIDLen || int(b.hdr) > len(b.data) {
		return fmt.Errorf("header of %d bytes in %d bytes of data", b.hdr, len(b.data))
	}
	if _, err := b.masterNames(); err != nil {
		return err
	}
	if len(b.offs) == 0 {
		return errors.New("no entries")
	}
	var live int32
	var prev ID
	end := int(b.hdr)
	for i, o := range b.offs {
		p := int(b.hdr) + int(uint16(o))
		if p != end {
			return fmt.Errorf("entry %d at %d, the previous one ended at %d", i, p, end)
		}
		id, flags, q, err := b.decode(o)
		if err != nil {
			return fmt.Errorf("entry %d: %w", i, err)
		}
		if i == 0 && id != b.FirstID() {
			return fmt.Errorf("entry 0 has ID %v, the block's first ID is %v", id, b.FirstID())
		}
		if i > 0 && !prev.Less(id) {
			return fmt.Errorf("entry %d has ID %v, not after %v", i, id, prev)
		}
		if flags&FlagDeleted == 0 {
			live++
		}
		prev, end = id, q
	}
	if end != len(b.data) {
		return fmt.Errorf("entries end at %d, data at %d", end, len(b.data))
	}
	if prev != b.last {
		return fmt.Errorf("last entry %v, block says %v", prev, b.last)
	}
	if live != b.live {
		return fmt.Errorf("%d live entries, block says %d", live, b.live)
	}
	return nil
}

// decode decodes the entry of offset table slot o with bounds checks
// and returns its ID, flags and end. Unlike At it never panics, whatever
// the bytes, and it accepts only the form append writes: an ID whose key
// and first byte agree, with uvarints only where the key and v need them.
func (b *Block) decode(o uint32) (id ID, flags byte, end int, err error) {
	d := b.data
	p := int(b.hdr) + int(uint16(o))
	if p >= len(d) {
		return ID{}, 0, 0, errors.New("past the end of data")
	}
	h := d[p]
	flags, v := h&flagMask, uint64(h>>vShift)
	p++
	first := b.FirstID()
	k := uint64(o >> 16)
	var msd, seq uint64
	switch {
	case k < keyMax:
		if v != 0 {
			return ID{}, 0, 0, fmt.Errorf("first byte %#x for key %#x", h, k)
		}
		seq = k
	case k == keyMax:
		var ok bool
		if seq, p, ok = safeUvarint(d, p); !ok || v != vFollows || seq < keyMax {
			return ID{}, 0, 0, errors.New("bad sequence")
		}
	default:
		msd = k &^ 0x8000
		if msd == keyMax {
			var ok bool
			if msd, p, ok = safeUvarint(d, p); !ok || msd < keyMax {
				return ID{}, 0, 0, errors.New("bad ms delta")
			}
		}
		seq = v
		if v == vFollows {
			var ok bool
			if seq, p, ok = safeUvarint(d, p); !ok || seq < vFollows {
				return ID{}, 0, 0, errors.New("bad sequence")
			}
		}
	}
	if msd == 0 {
		if seq > ^first.Seq {
			return ID{}, 0, 0, errors.New("sequence overflows")
		}
		id = ID{first.Ms, first.Seq + seq}
	} else {
		if msd > ^first.Ms {
			return ID{}, 0, 0, errors.New("ms overflows")
		}
		id = ID{first.Ms + msd, seq}
	}
	if k != uint64(b.idKey(id)) {
		return ID{}, 0, 0, fmt.Errorf("search key %#x, want %#x", k, b.idKey(id))
	}
	strs := uint64(b.nmast)
	if flags&FlagSame == 0 {
		n, q, ok := safeUvarint(d, p)
		if !ok || n == 0 || n > uint64(len(d)) {
			return ID{}, 0, 0, errors.New("bad field count")
		}
		p, strs = q, 2*n
	}
	for range strs {
		q, ok := checkStr(d, p)
		if !ok {
			return ID{}, 0, 0, errors.New("bad string or one past the end of data")
		}
		p = q
	}
	return id, flags, p, nil
}

// safeUvarint is Uvarint with bounds and overflow checks.
func safeUvarint(d []byte, p int) (uint64, int, bool) {
	var v uint64
	for s := uint(0); s < 64; s += 7 {
		if p >= len(d) {
			return 0, 0, false
		}
		c := d[p]
		p++
		if s == 63 && c > 1 {
			return 0, 0, false
		}
		v |= uint64(c&0x7f) << s
		if c < 0x80 {
			return v, p, true
		}
	}
	return 0, 0, false
}

// masterNames decodes the block's master field names, checking that they
// fill the header exactly.
func (b *Block) masterNames() ([]string, error) {
	d := b.data[:min(int(max(b.hdr, 0)), len(b.data))]
	k, p, ok := safeUvarint(d, FirstIDLen)
	if !ok || k != uint64(b.nmast) {
		return nil, fmt.Errorf("header: bad master field count (block says %d)", b.nmast)
	}
	names := make([]string, 0, min(k, uint64(len(d))))
	for range k {
		n, q, ok := safeUvarint(d, p)
		if !ok || n > uint64(len(d)-q) {
			return nil, errors.New("header: name past the end of the header")
		}
		names = append(names, string(d[q:q+int(n)]))
		p = q + int(n)
	}
	if p != len(d) {
		return nil, fmt.Errorf("header: names end at %d, header at %d", p, len(d))
	}
	return names, nil
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
