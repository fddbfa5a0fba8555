package store

import (
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// appendStr appends s in its stored form, as Block.append writes it.
func appendStr(d []byte, s string) []byte {
	l, n := len(d), rawSize(len(s))
	d = slices.Grow(d, n)[:l+n]
	return d[:l+putStr(d[l:], s)]
}

// requireStrRoundTrip stores s and checks that every reader gets it back
// byte for byte, that strSize is its size and that it takes size bytes.
func requireStrRoundTrip(t testing.TB, s string, size int) {
	t.Helper()
	d := appendStr([]byte{0xee}, s) // a byte before, as in a block
	require.Equal(t, size, len(d)-1, "%q: stored size", s)
	require.Equal(t, size, strSize(s), "%q: strSize", s)
	got, end := AppendStr([]byte("x"), d, 1)
	require.Equal(t, "x"+s, string(got), "%q: AppendStr", s)
	require.Equal(t, len(d), end, "%q: AppendStr's end", s)
	q, ok := checkStr(d, 1)
	require.True(t, ok, "%q: checkStr", s)
	require.Equal(t, len(d), q, "%q: checkStr's end", s)
	for cut := 1; cut < len(d); cut++ {
		_, ok := checkStr(d[:cut], 1)
		require.False(t, ok, "%q cut to %d bytes: checkStr", s, cut-1)
	}
}

// TestStrForms stores the edge cases of the string forms: packed strings
// are any 2 to 63 characters of the alphabet, kept byte for byte whether
// or not they are an integer's canonical form; the others are raw, with
// a one-byte length below 64 and a longer one from 64 on.
func TestStrForms(t *testing.T) {
	for _, tc := range []struct {
		s    string
		size int
	}{
		{"", 1},
		{"0", 2}, // one character: raw, as packed it takes as much
		{"x", 2},
		{"-0", 2},  // packed, not an integer's canonical form
		{"007", 3}, // packed with its zeros
		{"0042", 3},
		{"23.7", 3},
		{"+1", 2},
		{"1e3", 4}, // e is not in the alphabet
		{" 1", 3},  // a space is not in the alphabet: raw
		{"1 ", 3},
		{"12:30:05", 5},
		{"2026-12-01", 6},
		{"12/01/2026", 6},
		{"1,2,3", 4},
		{"-12.50", 4},
		{"2026-12-01T17:02:33+01:00", 26}, // T is not
		{"9223372036854775807", 1 + 10},
		{"9223372036854775808", 1 + 10}, // past int64: the same
		{"-9223372036854775808", 1 + 10},
		{"-92233720368547758080", 1 + 11},
		{"0x1f", 5},
		{"1E3", 4},
		{strings.Repeat("7", 63), 1 + 32},
		{strings.Repeat("7", 64), 2 + 64}, // packed stops at 63
		{strings.Repeat("a", 63), 1 + 63},
		{strings.Repeat("a", 64), 2 + 64},
		{strings.Repeat("a", 127), 2 + 127},
		{strings.Repeat("a", 128), 2 + 128},
		{strings.Repeat("a", 8191), 2 + 8191},
		{strings.Repeat("a", 8192), 3 + 8192},
		{strings.Repeat("a", 70000), 3 + 70000},
		{"\x00\xff", 3},
		{"7\x00", 3},
	} {
		requireStrRoundTrip(t, tc.s, tc.size)
	}
}

// TestPackAlphabet puts every byte at every position of strings of 2 to
// 17 characters otherwise packable: the string is packed exactly when the
// byte is in the alphabet ('+' to ':'), and it round-trips either way.
func TestPackAlphabet(t *testing.T) {
	for n := 2; n <= shortMax+1; n++ {
		for pos := range n {
			for c := range 256 {
				b := []byte(strings.Repeat("7", n))
				b[pos] = byte(c)
				s := string(b)
				in := c >= '+' && c <= ':'
				require.Equal(t, in, strings.IndexByte(packAlphabet, byte(c)) >= 0, "%#x", c)
				require.Equal(t, in, packable(s), "%q", s)
				size := 1 + n
				if in {
					size = 1 + (n+1)/2
				}
				requireStrRoundTrip(t, s, size)
			}
		}
	}
}

// TestNotAlpha checks notAlpha, and notAlpha32 on the low half, against
// packable's byte test on words of
// alphabet bytes with one or two bytes of every value at every position:
// 0 exactly when every byte is in the alphabet. A borrow from a byte
// below the alphabet into the byte above must not hide either.
func TestNotAlpha(t *testing.T) {
	inAlpha := func(x uint64) bool {
		for range 8 {
			if c := byte(x); c < packFirst || c > packFirst+15 {
				return false
			}
			x >>= 8
		}
		return true
	}
	base := uint64(0x3a2b30393a2b3039) // ":+09:+09", bytes from both ends
	checked := 0
	for i := range 8 {
		for c := range 256 {
			x := base&^(0xff<<(8*i)) | uint64(c)<<(8*i)
			require.Equal(t, inAlpha(x), notAlpha(x) == 0, "%#x", x)
			require.Equal(t, inAlpha(x&0xffffffff|base&^0xffffffff), notAlpha32(uint32(x)) == 0, "%#x", uint32(x))
			for j := i + 1; j < 8; j++ {
				for d := range 256 {
					y := x&^(0xff<<(8*j)) | uint64(d)<<(8*j)
					if notAlpha(y) == 0 != inAlpha(y) {
						t.Fatalf("notAlpha(%#x) = %#x", y, notAlpha(y))
					}
					if notAlpha32(uint32(y)) == 0 != inAlpha(y&0xffffffff|base&^0xffffffff) {
						t.Fatalf("notAlpha32(%#x) = %#x", uint32(y), notAlpha32(uint32(y)))
					}
					checked++
				}
			}
		}
	}
	require.Equal(t, 28*256*256, checked)
}

// TestPutStrRoom stores strings into exactly the room strSize says and
// into exactly their raw size (what Block.append gives when it does not
// grow the block), each capped there so that a write past it panics: both
// write the same stored form.
func TestPutStrRoom(t *testing.T) {
	var strs []string
	for n := range 70 {
		for _, c := range []string{"7", "a", "-"} {
			strs = append(strs, strings.Repeat(c, n))
		}
		if n > 0 {
			strs = append(strs, strings.Repeat("9", n-1)+"x", "x"+strings.Repeat("1", n-1))
		}
	}
	for _, s := range strs {
		exact := strSize(s)
		tight := make([]byte, exact)
		require.Equal(t, exact, putStr(tight[:exact:exact], s), "%q in %d bytes", s, exact)
		raw := rawSize(len(s))
		roomy := make([]byte, raw)
		require.Equal(t, exact, putStr(roomy[:raw:raw], s), "%q in %d bytes", s, raw)
		require.Equal(t, tight, roomy[:exact], "%q", s)
		got, end := AppendStr(nil, tight, 0)
		require.Equal(t, s, string(got))
		require.Equal(t, exact, end)
	}
}

// TestCheckStrRejects shows that checkStr refuses the bytes appendStr
// does not write, however they end.
func TestCheckStrRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		d    []byte
	}{
		{"empty", nil},
		{"raw past the end", []byte{3, 'a', 'b'}},
		{"long raw without its length", []byte{strLong | 1}},
		{"long raw of length below 64", []byte{strLong | 1, 0}},
		{"long raw past the end", []byte{strLong, 1, 'a'}},
		{"long raw, overlong uvarint", []byte{strLong, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f}},
		{"packed of 0 characters", []byte{strPacked}},
		{"packed of 1 character", []byte{strPacked | 1, 7}},
		{"packed of 64 characters", append([]byte{strPacked | 64}, make([]byte, 32)...)},
		{"packed past the end", []byte{strPacked | 4, 0x21}},
		{"packed, odd, with a last high nibble", []byte{strPacked | 3, 0x21, 0x13}},
		{"first byte 0xff", []byte{0xff, 1, 2, 3}},
	} {
		_, ok := checkStr(tc.d, 0)
		require.False(t, ok, tc.name)
	}
}

// FuzzStrCodec: any string round-trips through appendStr and the readers,
// and checkStr accepts it; any bytes that checkStr accepts decode without
// a panic to a string that stores back to at most as many bytes.
func FuzzStrCodec(f *testing.F) {
	for _, s := range []string{"", "0", "-0", "007", "23.7", " 1", "+1", "1e3", "12/01/2026", "9223372036854775808", strings.Repeat("1", 63), strings.Repeat("1", 64), strings.Repeat("z", 200)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		requireStrRoundTrip(t, s, strSize(s))
		d := []byte(s)
		if q, ok := checkStr(d, 0); ok {
			got, end := AppendStr(nil, d, 0)
			require.Equal(t, q, end)
			require.LessOrEqual(t, strSize(string(got)), q)
		}
	})
}

// decodeEntry returns the fields of entry i of b, decoded as the
// collector of package xstream decodes them.
func decodeEntry(b *Block, names []string, i int) (ID, byte, []Field) {
	id, flags, p := b.At(i)
	var fields []Field
	str := func() string {
		var s []byte
		s, p = AppendStr(nil, b.data, p)
		return string(s)
	}
	if flags&FlagSame != 0 {
		for _, n := range names {
			fields = append(fields, Field{n, str()})
		}
		return id, flags, fields
	}
	k, q := Uvarint(b.data, p)
	p = q
	for range k {
		name := str()
		fields = append(fields, Field{name, str()})
	}
	return id, flags, fields
}

// FuzzEntryCodec appends entries made of arbitrary bytes (names and
// values split at 0 bytes of a and b) to a storage and reads them back:
// each entry's fields come back byte for byte, with FlagSame when and
// only when they have the block's master names, and the storage checks.
func FuzzEntryCodec(f *testing.F) {
	f.Add([]byte("sensor-id\x000042"), []byte("temperature\x0023.7"), uint16(1), uint8(3))
	f.Add([]byte("a\x00-0"), []byte("a\x00 1\x00b"), uint16(0x8000), uint8(70))
	f.Add([]byte(""), []byte("\x00\x00"), uint16(0xffff), uint8(255))
	f.Fuzz(func(t *testing.T, a, b []byte, gap uint16, n uint8) {
		kinds := [][]Field{splitFields(a), splitFields(b)}
		var s Blocks
		s.SetLimits(Limits{MaxEntries: int32(1 + n%8), MaxBytes: -1})
		var ids []ID
		id := ID{Ms: 1 << 40, Seq: 1 << 50}
		for i := range int(n) {
			if i%3 == 2 {
				id = ID{Ms: id.Ms + uint64(gap) + 1, Seq: uint64(i) * uint64(n)}
			} else {
				id.Seq += uint64(gap) + 1
			}
			s.Append(id, kinds[i%2])
			ids = append(ids, id)
		}
		require.NoError(t, s.Check())
		k := 0
		for bi := range s.NumBlocks() {
			blk := s.Block(bi)
			names, err := blk.masterNames()
			require.NoError(t, err)
			for i := range blk.Len() {
				id, flags, fields := decodeEntry(blk, names, i)
				want := kinds[k%2]
				require.Equal(t, ids[k], id, "entry %d", k)
				require.Equal(t, want, fields, "entry %d", k)
				require.Equal(t, SameNames(names, want), flags&FlagSame != 0, "entry %d", k)
				same := SameNames(names, want)
				require.GreaterOrEqual(t, fieldsBound(same, want), fieldsSize(same, want), "entry %d: fieldsBound", k)
				require.Equal(t, entryBytes(blk, i), 1+idExtra(blk.idDelta(id))+fieldsSize(same, want), "entry %d: size", k)
				k++
			}
		}
		require.Equal(t, len(ids), k)
	})
}

// BenchmarkAppendStr stores the two values of an entry of the sensor
// benchmarks, four characters each, as Block.append does.
func BenchmarkAppendStr(b *testing.B) {
	d := make([]byte, 64)
	vals := []string{"0042", "23.7", "1234", "31.9"}
	for i := range b.N {
		p := putStr(d, vals[i&3])
		putStr(d[p:], vals[(i+1)&3])
	}
}

// BenchmarkAppendStrText decodes the two values of BenchmarkAppendStr, as
// the collector does; /raw decodes two raw strings of four bytes instead,
// the yardstick of the packed ones.
func BenchmarkAppendStrText(b *testing.B) {
	for _, tc := range []struct{ name, a, c string }{{"packed", "0042", "23.7"}, {"raw", "abcd", "wxyz"}} {
		b.Run(tc.name, func(b *testing.B) {
			d := appendStr(appendStr(nil, tc.a), tc.c)
			out := make([]byte, 0, 64)
			ends := make([]int32, 2)
			for range b.N {
				out, _ = AppendStrs(out[:0], ends, d, 0)
			}
		})
	}
}

// splitFields makes fields of arbitrary bytes for the fuzz targets: the
// names and values of x split at its 0 bytes, in turn.
func splitFields(x []byte) []Field {
	parts := strings.Split(string(x), "\x00")
	var fs []Field
	for i := 0; i < len(parts); i += 2 {
		f := Field{Name: parts[i]}
		if i+1 < len(parts) {
			f.Value = parts[i+1]
		}
		fs = append(fs, f)
	}
	return fs
}
