package store

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// randomEntry returns fields drawn from a few name sets (among them
// names of 4 to 17 bytes that differ from another set's in one byte only,
// where appendRun compares words) and values of every form: empty, one
// byte, 2 to 20 characters of the alphabet or with one byte out of it,
// and, unless short, long ones.
func randomEntry(r *rand.Rand, short bool) []Field {
	nameSets := [][]string{
		{"sensor-id", "temperature"},
		{"sensor-id", "temperaturf"},
		{"sensor-id", "tamperature"},
		{"a"},
		{"abcd", "efghijk"},
		{"abcd", "efgxijk"},
		{"abcd", "efghij"},
		{"0123456789abcdef", "0123456789abcdefg"},
		{"0123456789abcdef", "0123456789abcdeg"},
		{"0123456789abcdef", "0123456789abcdefh"},
		{"", "x", "xy", "xyz"},
		{strings.Repeat("n", 70), "m"},
	}
	names := nameSets[r.IntN(len(nameSets))]
	fields := make([]Field, len(names))
	for i, n := range names {
		fields[i] = Field{n, randomValue(r, short)}
	}
	return fields
}

func randomValue(r *rand.Rand, short bool) string {
	var n int
	switch r.IntN(8) {
	case 0:
		n = r.IntN(2)
	case 1:
		n = 17 + r.IntN(60)
	case 2:
		n = 64 + r.IntN(200)
	default:
		n = 2 + r.IntN(15)
	}
	if short {
		n %= shortMax + 1
	}
	b := make([]byte, n)
	for i := range b {
		b[i] = packAlphabet[r.IntN(16)]
	}
	if n > 0 && r.IntN(3) == 0 {
		b[r.IntN(n)] = []byte{'*', ';', 'a', 0, 0x80, 0xab, 0xff, ' '}[r.IntN(8)]
	}
	return string(b)
}

// nextRandomID returns an ID after id: in the same millisecond, in a
// later one with a sequence below or above the first byte's 63, or far
// after (past the offset table key's 15 bits).
func nextRandomID(r *rand.Rand, id ID) ID {
	switch r.IntN(10) {
	case 0:
		return ID{id.Ms + 1 + r.Uint64N(3), r.Uint64N(62)}
	case 1:
		return ID{id.Ms + 1 + r.Uint64N(3), 63 + r.Uint64N(1<<20)}
	case 2:
		return ID{id.Ms + keyMax - 2 + r.Uint64N(4), r.Uint64N(100)}
	case 3:
		return ID{id.Ms, id.Seq + keyMax - 2 + r.Uint64N(4)}
	default:
		return ID{id.Ms, id.Seq + 1}
	}
}

// TestAppendSameAsAny adds random entries under random limits to three
// storages: one by Append, which takes appendRun's path when it can, one
// by AppendBatch in batches of random sizes, and one by appendAny only.
// After every entry (and the deletes between, which may free the open
// block and reopen the last one with its exact listpack size) the first
// and the last must be equal in every field and every byte of every
// block, and so must the batched one after each batch; appendRun must
// have taken a good part of the entries.
func TestAppendSameAsAny(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	fast, all := 0, 0
	for round := range 300 {
		limits := Limits{MaxEntries: int32(r.IntN(150)) - 1, MaxBytes: int32(r.IntN(6000)) - 1}
		if r.IntN(2) == 0 {
			limits = Limits{} // Redis's defaults
		}
		var got, batched, want Blocks
		got.SetLimits(limits)
		batched.SetLimits(limits)
		want.SetLimits(limits)
		kinds := [][]Field{randomEntry(r, r.IntN(4) != 0), randomEntry(r, false), randomEntry(r, false)}
		id := ID{1 + r.Uint64N(1<<40), r.Uint64N(100)}
		var ids []ID
		var batch [][]Field
		flush := func() {
			batched.AppendBatch(ids[len(ids)-len(batch):], batch)
			batch = batch[:0]
			require.Equal(t, want, batched, "round %d, batch up to %v", round, ids[len(ids)-1])
		}
		for range 1 + r.IntN(400) {
			fields := kinds[0]
			switch r.IntN(20) {
			case 0, 1, 2:
				fields = kinds[1+r.IntN(len(kinds)-1)]
			case 3:
				fields = randomEntry(r, false)
			}
			all++
			one, fs := [1]ID{id}, [1][]Field{fields}
			if got.open != nil && got.appendRun(got.open, one[:], fs[:]) == 1 {
				fast++
			} else {
				got.appendAny(id, fields)
			}
			want.appendAny(id, fields)
			ids = append(ids, id)
			batch = append(batch, fields)
			if r.IntN(30) == 0 {
				flush()
				del := ids[r.IntN(len(ids))]
				deleted := want.Delete(del)
				require.Equal(t, deleted, got.Delete(del))
				require.Equal(t, deleted, batched.Delete(del))
			} else if r.IntN(10) == 0 {
				flush()
			}
			require.Equal(t, want, got, "round %d, entry %v", round, id)
			id = nextRandomID(r, id)
		}
		flush()
		require.NoError(t, got.Check())
	}
	require.Greater(t, fast, all/10, "entries appendRun took, of %d", all)
}

// TestAppendTakesSame shows that Append takes appendRun's path: a
// storage filled by Append and one filled by appendAny are equal.
func TestAppendTakesSame(t *testing.T) {
	var got, want Blocks
	fs := []Field{{"sensor-id", "0042"}, {"temperature", "23.7"}}
	for i := range uint64(1000) {
		id := ID{1 + i/7, i % 7}
		require.Equal(t, i != 0, got.Append(id, fs), "entry %d: same as the open names", i)
		want.appendAny(id, fs)
	}
	require.Equal(t, want, got)
}

// TestPutEveryShortValue puts every byte at every position of values of
// 0 to shortMax+1 bytes otherwise packable, each the value of an entry
// with the master names, and stores it by Append (put's word packing)
// and by appendAny: the two storages are equal byte for byte, and the
// value reads back.
func TestPutEveryShortValue(t *testing.T) {
	var got, want Blocks
	var vals []string
	id := ID{1, 0}
	add := func(v string) {
		vals = append(vals, v)
		fs := []Field{{"v", v}}
		got.Append(id, fs)
		want.appendAny(id, fs)
		id.Seq++
	}
	add("0")
	for n := 0; n <= shortMax+1; n++ {
		for pos := range max(n, 1) {
			for c := range 256 {
				b := []byte(strings.Repeat("7", n))
				if n > 0 {
					b[pos] = byte(c)
				}
				add(string(b))
			}
		}
	}
	require.Equal(t, want, got)
	require.NoError(t, got.Check())
	k := 0
	for bi := range got.NumBlocks() {
		blk := got.Block(bi)
		for i := range blk.Len() {
			_, _, fields := decodeEntry(blk, []string{"v"}, i)
			require.Equal(t, []Field{{"v", vals[k]}}, fields, "entry %d", k)
			k++
		}
	}
	require.Equal(t, len(vals), k)
}

// TestAppendRunSameAsAny stores random batches by AppendBatch (run.encode
// for the runs it takes) and the same entries by appendAny only, under
// random limits, and compares the storages field by field and byte by
// byte after each batch. The entries' names are the master names' own
// strings, copies of them (other data, equal bytes), names cut out of a
// longer string, names of the same lengths that differ in one byte, or
// the data of the names one byte shorter, so that encode's test by data
// and length (run.seen, run.nlen) meets names it has not seen that are
// equal, and names that are not; names of under 4 or
// over 16 bytes go to the caller's comparison. The runs must have taken
// a good part of the entries.
func TestAppendRunSameAsAny(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	nameSets := [][]string{
		{"sensor-id", "temperature"},
		{"abcd", "efghijk"},
		{"0123456789abcdef", "0123456789abcdefg"},
		{"", "x", "xyz"},
		{strings.Repeat("n", 20), "m"},
	}
	variant := func(names []string) []string {
		out := make([]string, len(names))
		for i, n := range names {
			switch r.IntN(6) {
			case 0:
				n = strings.Clone(n)
			case 1:
				n = ("<" + n + ">")[1 : 1+len(n)]
			case 2:
				if len(n) > 0 {
					b := []byte(n)
					b[r.IntN(len(b))] ^= 1
					n = string(b)
				}
			case 3:
				// The data of a name seen before, one byte shorter.
				if len(n) > 0 {
					n = n[:len(n)-1]
				}
			}
			out[i] = n
		}
		return out
	}
	taken, all := 0, 0
	for round := range 30 {
		limits := Limits{MaxEntries: int32(r.IntN(150)) - 1, MaxBytes: int32(r.IntN(6000)) - 1}
		if r.IntN(2) == 0 {
			limits = Limits{}
		}
		var got, want Blocks
		got.SetLimits(limits)
		want.SetLimits(limits)
		names := nameSets[r.IntN(len(nameSets))]
		id := ID{1 + r.Uint64N(1<<40), r.Uint64N(100)}
		for range 1 + r.IntN(30) {
			n := 1 + r.IntN(80)
			ids := make([]ID, n)
			entries := make([][]Field, n)
			for i := range entries {
				ns := names
				if r.IntN(4) == 0 {
					ns = variant(names)
				}
				fields := make([]Field, len(ns))
				for j, name := range ns {
					fields[j] = Field{name, randomValue(r, r.IntN(20) != 0)}
				}
				ids[i], entries[i] = id, fields
				id = nextRandomID(r, id)
			}
			for i := 0; i < n; {
				if got.open != nil {
					if k := got.appendRun(got.open, ids[i:], entries[i:]); k > 0 {
						for _, e := range entries[i : i+k] {
							require.True(t, SameNames(got.openNames, e), "round %d: a run took other names", round)
						}
						taken += k
						i += k
						continue
					}
				}
				got.Append(ids[i], entries[i])
				i++
			}
			for i := range entries {
				want.appendAny(ids[i], entries[i])
			}
			all += n
			require.Equal(t, want, got, "round %d, batch up to %v", round, ids[n-1])
			if r.IntN(5) == 0 {
				del := ids[r.IntN(n)]
				require.Equal(t, want.Delete(del), got.Delete(del))
			}
		}
		require.NoError(t, got.Check())
	}
	require.Greater(t, taken, all/10, "entries runs took, of %d", all)
}

// FuzzAppendBatch stores entries made of arbitrary bytes (as
// FuzzEntryCodec splits them: names and values at 0 bytes, a run of
// entries of a's fields then one of b's, and so on) by AppendBatch in
// batches of the fuzzed size and by appendAny one by one, under fuzzed
// limits: the storages are equal field by field and byte by byte, and
// check.
func FuzzAppendBatch(f *testing.F) {
	f.Add([]byte("sensor-id\x000042\x00temperature\x0023.7"), []byte("sensor-id\x00x\x00temperature\x001"), uint16(1), uint8(40), uint8(7), int16(100))
	f.Add([]byte("a\x00-0"), []byte("a\x00 1\x00b"), uint16(0x7ffe), uint8(90), uint8(33), int16(-1))
	f.Add([]byte("0123456789abcdef\x001234567890123456"), []byte(""), uint16(62), uint8(255), uint8(0), int16(5))
	f.Fuzz(func(t *testing.T, a, b []byte, gap uint16, n, batch uint8, maxBytes int16) {
		kinds := [][]Field{splitFields(a), splitFields(b)}
		limits := Limits{MaxEntries: int32(n%16) - 1, MaxBytes: int32(maxBytes)}
		var got, want Blocks
		got.SetLimits(limits)
		want.SetLimits(limits)
		ids := make([]ID, n)
		entries := make([][]Field, n)
		id := ID{Ms: 1 << 40, Seq: uint64(gap)}
		for i := range ids {
			switch i % 5 {
			case 3:
				id = ID{Ms: id.Ms + uint64(gap%300) + 1, Seq: uint64(i) * uint64(gap)}
			default:
				id.Seq += uint64(gap%3) + 1
			}
			ids[i], entries[i] = id, kinds[i/7%2]
		}
		size := 1 + int(batch)
		for i := 0; i < len(ids); i += size {
			j := min(i+size, len(ids))
			got.AppendBatch(ids[i:j], entries[i:j])
			for k := i; k < j; k++ {
				want.appendAny(ids[k], entries[k])
			}
			require.Equal(t, want, got, "batch from entry %d", i)
		}
		require.NoError(t, got.Check())
	})
}
