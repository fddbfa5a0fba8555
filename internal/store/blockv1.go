package store

import (
	"errors"
	"fmt"
)

// The first block format.
//
// Snapshots written before the format of block.go hold blocks in the
// first format: the same header, and entries of
//
//	flags byte (FlagDeleted, FlagSame; no other bit)
//	uvarint msDelta, uvarint seq (as idDelta gives them)
//	FlagSame:  n × (uvarint len, value bytes)
//	otherwise: uvarint k, k × (uvarint len, name, uvarint len, value)
//
// with the same offset table. FromRawV1 reads such a block and makes it
// anew in the current format.

// FromRawV1 makes blocks of raw content in the first format, which it
// checks as FromRaw checks the current one. The result is one block, but
// for a block near BlockBytesCap whose entries take more bytes in the
// current format (strings of 64 to 127 bytes take one more): it is split
// where an entry would pass the cap, as Append splits, and a part with no
// live entry is left out.
func FromRawV1(r RawBlock) ([]*Block, error) {
	hb := &Block{data: r.Data, hdr: r.Hdr, nmast: r.Nmast}
	if len(r.Data) < FirstIDLen || r.Hdr < FirstIDLen || int(r.Hdr) > len(r.Data) {
		return nil, fmt.Errorf("header of %d bytes in %d bytes of data", r.Hdr, len(r.Data))
	}
	names, err := hb.masterNames()
	if err != nil {
		return nil, err
	}
	if len(r.Offs) == 0 {
		return nil, errors.New("no entries")
	}
	if r.Live <= 0 {
		return nil, errors.New("no live entry")
	}
	var out Blocks
	out.SetLimits(Limits{MaxEntries: -1, MaxBytes: -1})
	first := hb.FirstID()
	var live int32
	var prev ID
	end := int(r.Hdr)
	for i, o := range r.Offs {
		p := int(r.Hdr) + int(uint16(o))
		if p != end {
			return nil, fmt.Errorf("entry %d at %d, the previous one ended at %d", i, p, end)
		}
		id, flags, fields, q, err := decodeV1(r.Data, p, first, names)
		if err != nil {
			return nil, fmt.Errorf("entry %d: %w", i, err)
		}
		if i == 0 && id != first {
			return nil, fmt.Errorf("entry 0 has ID %v, the block's first ID is %v", id, first)
		}
		if i > 0 && !prev.Less(id) {
			return nil, fmt.Errorf("entry %d has ID %v, not after %v", i, id, prev)
		}
		if o>>16 != hb.idKey(id) {
			return nil, fmt.Errorf("entry %d: search key %#x, want %#x", i, o>>16, hb.idKey(id))
		}
		out.Append(id, fields)
		if flags&FlagDeleted == 0 {
			live++
		} else {
			b := out.open
			b.markDeleted(len(b.offs) - 1)
		}
		prev, end = id, q
	}
	if end != len(r.Data) {
		return nil, fmt.Errorf("entries end at %d, data at %d", end, len(r.Data))
	}
	if prev != r.Last {
		return nil, fmt.Errorf("last entry %v, block says %v", prev, r.Last)
	}
	if live != r.Live {
		return nil, fmt.Errorf("%d live entries, block says %d", live, r.Live)
	}
	out.open.seal()
	blocks := out.blocks[:0]
	for _, b := range out.blocks {
		if b.live > 0 {
			blocks = append(blocks, b)
		}
	}
	return blocks, nil
}

// decodeV1 decodes the entry of the first format at p, with bounds
// checks, and returns its ID, flags, fields (strings of their own) and
// end.
func decodeV1(d []byte, p int, first ID, names []string) (id ID, flags byte, fields []Field, end int, err error) {
	if p >= len(d) {
		return ID{}, 0, nil, 0, errors.New("past the end of data")
	}
	flags = d[p]
	if flags&^(FlagDeleted|FlagSame) != 0 {
		return ID{}, 0, nil, 0, fmt.Errorf("unknown flags %#x", flags)
	}
	msd, p, ok := safeUvarint(d, p+1)
	if !ok {
		return ID{}, 0, nil, 0, errors.New("bad ms delta")
	}
	seq, p, ok := safeUvarint(d, p)
	if !ok {
		return ID{}, 0, nil, 0, errors.New("bad sequence")
	}
	if msd == 0 {
		if seq > ^first.Seq {
			return ID{}, 0, nil, 0, errors.New("sequence overflows")
		}
		id = ID{first.Ms, first.Seq + seq}
	} else {
		if msd > ^first.Ms {
			return ID{}, 0, nil, 0, errors.New("ms overflows")
		}
		id = ID{first.Ms + msd, seq}
	}
	str := func() (string, bool) {
		n, q, ok := safeUvarint(d, p)
		if !ok || n > uint64(len(d)-q) {
			return "", false
		}
		p = q + int(n)
		return string(d[q:p]), true
	}
	if flags&FlagSame != 0 {
		for _, name := range names {
			v, ok := str()
			if !ok {
				return ID{}, 0, nil, 0, errors.New("string past the end of data")
			}
			fields = append(fields, Field{Name: name, Value: v})
		}
		return id, flags, fields, p, nil
	}
	k, q, ok := safeUvarint(d, p)
	if !ok || k == 0 || k > uint64(len(d)) {
		return ID{}, 0, nil, 0, errors.New("bad field count")
	}
	p = q
	for range k {
		name, ok1 := str()
		v, ok2 := str()
		if !ok1 || !ok2 {
			return ID{}, 0, nil, 0, errors.New("string past the end of data")
		}
		fields = append(fields, Field{Name: name, Value: v})
	}
	return id, flags, fields, p, nil
}
