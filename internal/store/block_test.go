package store

import (
	"encoding/binary"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// entryBytes returns the size of entry i of b.
func entryBytes(b *Block, i int) int {
	end := len(b.data)
	if i+1 < len(b.offs) {
		end = int(b.hdr) + int(uint16(b.offs[i+1]))
	}
	return end - int(b.hdr) - int(uint16(b.offs[i]))
}

// TestEntryIDForms appends an entry after a first one for each form of
// its ID and checks its size (the first byte, the uvarints the key does
// not make needless, and the two strings) and that it reads back.
func TestEntryIDForms(t *testing.T) {
	first := ID{Ms: 1000, Seq: 5}
	fields := []Field{{"sensor-id", "0042"}, {"temperature", "23.7"}}
	const strs = 3 + 3
	for _, tc := range []struct {
		id    ID
		extra int // bytes of uvarints
	}{
		{ID{1000, 6}, 0},
		{ID{1000, 5 + 0x7ffe}, 0},
		{ID{1000, 5 + 0x7fff}, 3},
		{ID{1000, 5 + 0x8000}, 3},
		{ID{1000, ^uint64(0)}, 10},
		{ID{1001, 0}, 0},
		{ID{1001, 62}, 0},
		{ID{1001, 63}, 1},
		{ID{1001, 1 << 40}, 6},
		{ID{1000 + 0x7ffe, 7}, 0},
		{ID{1000 + 0x7fff, 7}, 3},
		{ID{1000 + 0x7fff, 70}, 4},
		{ID{^uint64(0), ^uint64(0)}, 20},
	} {
		name := fmt.Sprint(tc.id)
		var s Blocks
		s.Append(first, fields)
		s.Append(tc.id, fields)
		require.NoError(t, s.Check(), name)
		b := s.Block(0)
		require.Equal(t, 2, b.Len(), name)
		require.Equal(t, 1+strs, entryBytes(b, 0), name)
		require.Equal(t, 1+tc.extra+strs, entryBytes(b, 1), name)
		id, flags, got := decodeEntry(b, []string{"sensor-id", "temperature"}, 1)
		require.Equal(t, tc.id, id, name)
		require.Equal(t, byte(FlagSame), flags, name)
		require.Equal(t, fields, got, name)
		require.Equal(t, 1, b.Search(tc.id), name)
		raw := b.Raw()
		c, err := FromRaw(raw)
		require.NoError(t, err, name)
		require.Equal(t, raw, c.Raw(), name)
	}
}

// TestBlockFilledExactly fills blocks sized for their entries to the
// last byte: the last entry of each, whose bound (its strings counted
// raw) passes the room left while its packed size fits, is written in
// place whole, and every entry reads back.
func TestBlockFilledExactly(t *testing.T) {
	var s Blocks
	var want [][]Field
	for i := range 1000 {
		fs := []Field{{"sensor-id", fmt.Sprintf("%04d", (i*7919)%10000)}, {"temperature", fmt.Sprintf("%d.%d", 10+i%30, i%10)}}
		s.Append(ID{uint64(i/8 + 1), uint64(i % 8)}, fs)
		want = append(want, fs)
	}
	require.NoError(t, s.Check())
	k := 0
	for bi := range s.NumBlocks() {
		b := s.Block(bi)
		require.Equal(t, len(b.data), cap(b.data), "block %d has room left", bi)
		for i := range b.Len() {
			_, _, fs := decodeEntry(b, []string{"sensor-id", "temperature"}, i)
			require.Equal(t, want[k], fs, "entry %d", k)
			k++
		}
	}
	require.Equal(t, len(want), k)
}

// twoEntryBlock returns the raw content of a block of first and one more
// entry, id, and the position of the second entry's first byte.
func twoEntryBlock(t *testing.T, id ID) (RawBlock, int) {
	var s Blocks
	s.Append(ID{1000, 5}, []Field{{"a", "1"}})
	s.Append(id, []Field{{"a", "2"}})
	require.NoError(t, s.Check())
	b := s.Block(0)
	return b.Raw(), int(b.hdr) + int(uint16(b.offs[1]))
}

// TestFromRawRejectsOtherForms changes one entry's bytes or key into a
// form append does not write: FromRaw refuses each, saying what is wrong.
func TestFromRawRejectsOtherForms(t *testing.T) {
	for _, tc := range []struct {
		name   string
		id     ID
		change func(r *RawBlock, p int)
		want   string
	}{
		{"v set for a key that says it all", ID{1000, 6}, func(r *RawBlock, p int) { r.Data[p] |= 1 << vShift }, "first byte"},
		{"no v for a saturated key", ID{1000, 5 + 0x8000}, func(r *RawBlock, p int) { r.Data[p] &= flagMask }, "bad sequence"},
		{"a sequence difference the key could hold", ID{1000, 5 + 0x7fff}, func(r *RawBlock, p int) { r.Data[p+1], r.Data[p+2], r.Data[p+3] = 0x01, 0x80, 0x00 }, "bad sequence"},
		{"an ms difference the key could hold", ID{1000 + 0x7fff, 1}, func(r *RawBlock, p int) { r.Data[p+1], r.Data[p+2], r.Data[p+3] = 0x81, 0x80, 0x00 }, "bad ms delta"},
		{"a sequence v could hold", ID{1001, 70}, func(r *RawBlock, p int) { r.Data[p+1] = 5 }, "bad sequence"},
		{"a key of another ID", ID{1001, 0}, func(r *RawBlock, p int) { r.Offs[1] ^= 1 << 16 }, "search key"},
		{"a key of 0x8000", ID{1001, 0}, func(r *RawBlock, p int) { r.Offs[1] = r.Offs[1]&0xffff | 0x8000<<16 }, "search key"},
		{"a string past the end", ID{1001, 0}, func(r *RawBlock, p int) { r.Data[p+1] = 9 }, "string"},
		{"a packed string of one character", ID{1001, 0}, func(r *RawBlock, p int) { r.Data[len(r.Data)-2] = strPacked | 1 }, "string"},
	} {
		raw, p := twoEntryBlock(t, tc.id)
		tc.change(&raw, p)
		_, err := FromRaw(raw)
		require.ErrorContains(t, err, tc.want, tc.name)
		require.ErrorContains(t, err, "entry 1", tc.name)
	}
}

// TestBlockDeletedAndSame mixes entries with the master names and with
// others, deletes some (the first among them): the flags, the fields, the
// head and the live count read back, and survive Raw and FromRaw.
func TestBlockDeletedAndSame(t *testing.T) {
	var s Blocks
	kinds := [][]Field{{{"sensor-id", "0042"}, {"temperature", "23.7"}}, {{"temperature", "-0"}, {"sensor-id", " 1"}}, {{"x", strings.Repeat("y", 100)}}}
	var ids []ID
	for i := range 30 {
		id := ID{Ms: 50 + uint64(i/4), Seq: uint64(i % 4 * 30)}
		s.Append(id, kinds[i%3])
		ids = append(ids, id)
	}
	deleted := map[int]bool{0: true, 1: true, 4: true, 29: true}
	for i := range deleted {
		require.True(t, s.Delete(ids[i]))
	}
	require.NoError(t, s.Check())
	require.Equal(t, 1, s.NumBlocks())
	b := s.Block(0)
	require.Equal(t, 2, b.Head())
	require.Equal(t, 26, b.Live())
	for round := range 2 {
		for i := range ids {
			id, flags, fields := decodeEntry(b, []string{"sensor-id", "temperature"}, i)
			require.Equal(t, ids[i], id)
			require.Equal(t, kinds[i%3], fields, "entry %d", i)
			require.Equal(t, i%3 == 0, flags&FlagSame != 0, "entry %d", i)
			require.Equal(t, deleted[i], flags&FlagDeleted != 0, "entry %d", i)
		}
		if round == 0 {
			c, err := FromRaw(b.Raw())
			require.NoError(t, err)
			require.Equal(t, b.Head(), c.Head())
			b = c
		}
	}
}

// TestBlockBytesCap fills blocks without limits: each ends before its
// entries would pass BlockBytesCap, an entry larger than the cap gets a
// block of its own, and every entry reads back.
func TestBlockBytesCap(t *testing.T) {
	var s Blocks
	s.SetLimits(Limits{MaxEntries: -1, MaxBytes: -1})
	var want []Field
	big := []Field{{"a", strings.Repeat("b", 1000)}}
	for i := range 200 {
		fs := big
		if i == 100 {
			fs = []Field{{"a", strings.Repeat("c", BlockBytesCap+10)}}
		}
		s.Append(ID{Ms: 1, Seq: uint64(i)}, fs)
		want = append(want, fs...)
	}
	require.NoError(t, s.Check())
	var got []Field
	for bi := range s.NumBlocks() {
		b := s.Block(bi)
		body := len(b.data) - int(b.hdr)
		if b.Len() > 1 {
			require.LessOrEqual(t, body, BlockBytesCap, "block %d", bi)
		}
		if bi+1 < s.NumBlocks() && b.Len() > 1 {
			next := entryBytes(s.Block(bi+1), 0)
			require.Greater(t, body+next, BlockBytesCap, "block %d ended early", bi)
		}
		for i := range b.Len() {
			_, _, fs := decodeEntry(b, []string{"a"}, i)
			got = append(got, fs...)
		}
	}
	require.Equal(t, want, got)
	// 1003 bytes an entry: 65 of them fit in the cap, the big one has a
	// block of its own.
	require.Equal(t, 65, s.Block(0).Len())
	require.Equal(t, []int{65, 35, 1, 65, 34}, blockLens(&s))
}

func blockLens(s *Blocks) []int {
	var n []int
	for i := range s.NumBlocks() {
		n = append(n, s.Block(i).Len())
	}
	return n
}

// v1Entry is an entry of a block in the first format.
type v1Entry struct {
	id      ID
	deleted bool
	fields  []Field
}

// encodeV1 makes a block of the first format (see blockv1.go), as the
// code before it did: names are the master names, taken from the first
// entry.
func encodeV1(es []v1Entry) RawBlock {
	first := es[0].id
	names := es[0].fields
	d := binary.LittleEndian.AppendUint64(nil, first.Ms)
	d = binary.LittleEndian.AppendUint64(d, first.Seq)
	d = binary.AppendUvarint(d, uint64(len(names)))
	str := func(d []byte, s string) []byte {
		return append(binary.AppendUvarint(d, uint64(len(s))), s...)
	}
	for _, f := range names {
		d = str(d, f.Name)
	}
	r := RawBlock{Hdr: int32(len(d)), Nmast: int32(len(names)), Last: es[len(es)-1].id}
	hb := &Block{data: d}
	for _, e := range es {
		r.Offs = append(r.Offs, hb.idKey(e.id)<<16|uint32(len(d)-int(r.Hdr)))
		msd, seq := hb.idDelta(e.id)
		same := len(e.fields) == len(names)
		for i := range names {
			same = same && e.fields[i].Name == names[i].Name
		}
		var flags byte
		if same {
			flags = FlagSame
		}
		if e.deleted {
			flags |= FlagDeleted
		} else {
			r.Live++
		}
		d = binary.AppendUvarint(binary.AppendUvarint(append(d, flags), msd), seq)
		if !same {
			d = binary.AppendUvarint(d, uint64(len(e.fields)))
		}
		for _, f := range e.fields {
			if !same {
				d = str(d, f.Name)
			}
			d = str(d, f.Value)
		}
	}
	r.Data = d
	return r
}

// requireEntries checks that blocks hold es, in order.
func requireEntries(t *testing.T, es []v1Entry, blocks []*Block) {
	t.Helper()
	var got []v1Entry
	for _, b := range blocks {
		require.NoError(t, b.check())
		names, err := b.masterNames()
		require.NoError(t, err)
		for i := range b.Len() {
			id, flags, fields := decodeEntry(b, names, i)
			got = append(got, v1Entry{id, flags&FlagDeleted != 0, fields})
		}
	}
	require.Equal(t, es, got)
}

// TestFromRawV1 converts blocks of the first format: entries with the
// master names and without, deleted ones (the first among them), IDs of
// every form; the result holds the same entries with the same flags.
func TestFromRawV1(t *testing.T) {
	sensor := func(id, temp string) []Field { return []Field{{"sensor-id", id}, {"temperature", temp}} }
	es := []v1Entry{
		{ID{1000, 5}, true, sensor("0042", "23.7")},
		{ID{1000, 6}, false, sensor("9999", "-0")},
		{ID{1000, 5 + 0x8000}, false, []Field{{"note", " 1"}, {"n", "9223372036854775808"}}},
		{ID{1001, 63}, true, sensor("007", "+1")},
		{ID{1000 + 0x7fff, 70}, false, sensor("", strings.Repeat("7", 64))},
		{ID{1 << 60, 1}, false, sensor("1e3", "x")},
	}
	blocks, err := FromRawV1(encodeV1(es))
	require.NoError(t, err)
	require.Len(t, blocks, 1)
	requireEntries(t, es, blocks)
	require.Equal(t, 1, blocks[0].Head())
	require.Equal(t, 4, blocks[0].Live())
	require.Equal(t, es[len(es)-1].id, blocks[0].Last())
}

// TestFromRawV1Split converts a block of the first format near the byte
// cap whose entries take more bytes in the current one (twenty strings of
// 64 bytes each): it becomes two blocks, split where an entry would pass
// the cap; with every entry of the second part deleted, one block.
func TestFromRawV1Split(t *testing.T) {
	var fields []Field
	for i := range 20 {
		fields = append(fields, Field{string(rune('a' + i)), strings.Repeat("v", 64)})
	}
	var es []v1Entry
	for i := range 50 {
		es = append(es, v1Entry{id: ID{7, uint64(i)}, fields: fields})
	}
	raw := encodeV1(es)
	require.LessOrEqual(t, len(raw.Data)-int(raw.Hdr), BlockBytesCap)
	blocks, err := FromRawV1(raw)
	require.NoError(t, err)
	require.Len(t, blocks, 2)
	requireEntries(t, es, blocks)
	require.Greater(t, len(blocks[0].data)-int(blocks[0].hdr)+entryBytes(blocks[1], 0), BlockBytesCap)

	split := blocks[0].Len()
	for i := split; i < len(es); i++ {
		es[i].deleted = true
	}
	blocks, err = FromRawV1(encodeV1(es))
	require.NoError(t, err)
	require.Len(t, blocks, 1)
	requireEntries(t, es[:split], blocks)
}

// TestFromRawV1Rejects damages blocks of the first format: FromRawV1
// refuses each, saying what is wrong.
func TestFromRawV1Rejects(t *testing.T) {
	good := func() RawBlock {
		return encodeV1([]v1Entry{
			{ID{10, 1}, false, []Field{{"a", "1"}}},
			{ID{10, 2}, false, []Field{{"a", "2"}}},
			{ID{11, 0}, false, []Field{{"b", "3"}}},
		})
	}
	_, err := FromRawV1(good())
	require.NoError(t, err)
	for _, tc := range []struct {
		name   string
		change func(r *RawBlock)
		want   string
	}{
		{"no data", func(r *RawBlock) { r.Data = r.Data[:10] }, "header"},
		{"bad master count", func(r *RawBlock) { r.Nmast = 2 }, "master field count"},
		{"no entries", func(r *RawBlock) { r.Offs = nil }, "no entries"},
		{"no live entry", func(r *RawBlock) { r.Live = 0 }, "no live entry"},
		{"live count", func(r *RawBlock) { r.Live = 2 }, "live entries"},
		{"unknown flags", func(r *RawBlock) { r.Data[r.Hdr] = 4 }, "unknown flags"},
		{"cut", func(r *RawBlock) { r.Data = r.Data[:len(r.Data)-1] }, "past the end"},
		{"trailing bytes", func(r *RawBlock) { r.Data = append(r.Data, 0) }, "entries end"},
		{"offset", func(r *RawBlock) { r.Offs[1]++ }, "previous one ended"},
		{"search key", func(r *RawBlock) { r.Offs[1] += 1 << 16 }, "search key"},
		{"last ID", func(r *RawBlock) { r.Last = ID{11, 1} }, "last entry"},
		{"IDs out of order", func(r *RawBlock) { r.Data[int(r.Hdr)+int(uint16(r.Offs[1]))+2] = 0 }, "not after"},
	} {
		raw := good()
		tc.change(&raw)
		_, err := FromRawV1(raw)
		require.ErrorContains(t, err, tc.want, tc.name)
	}
}
