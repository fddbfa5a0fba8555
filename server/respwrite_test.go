package server

import (
	"math"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/tidwall/redcon"
	"github.com/xstreamgo/xstream"
)

// edgeNumbers are numbers around every power of ten, and the ends of
// uint64.
func edgeNumbers() []uint64 {
	out := []uint64{0, 1, 9, math.MaxUint64, math.MaxUint64 - 1, math.MaxInt64, math.MaxInt64 + 1}
	for _, p := range pow10 {
		out = append(out, p-1, p, p+1)
	}
	return out
}

// TestDecimalLen: the digit count of every edge number is strconv's
// (fails with an off-by-one of the log10 estimate).
func TestDecimalLen(t *testing.T) {
	for _, v := range edgeNumbers() {
		require.Equal(t, len(strconv.FormatUint(v, 10)), decimalLen(v), v)
	}
}

// TestAppendHeader: headers and integers, negative ones and the smallest
// int64 included, are redcon's, after bytes already in the buffer.
func TestAppendHeader(t *testing.T) {
	ns := []int64{math.MinInt64, math.MinInt64 + 1, -100, -10, -9, -1}
	for _, v := range edgeNumbers() {
		ns = append(ns, int64(v))
	}
	for _, n := range ns {
		pre := []byte("+OK\r\n")
		require.Equal(t, string(redcon.AppendInt(pre, n)), string(appendHeader(append([]byte(nil), pre...), ':', n)), n)
		if n >= 0 && n <= math.MaxInt32 {
			require.Equal(t, string(redcon.AppendArray(pre, int(n))), string(appendHeader(append([]byte(nil), pre...), '*', n)), n)
		}
	}
}

// TestAppendBulk: bulk strings of 0 to 200 bytes and of a megabyte, from
// a string and from bytes, are redcon's.
func TestAppendBulk(t *testing.T) {
	big := make([]byte, 1<<20)
	for i := range big {
		big[i] = byte(i)
	}
	sizes := []int{1 << 20}
	for n := 0; n <= 200; n++ {
		sizes = append(sizes, n)
	}
	for _, n := range sizes {
		b := big[:n]
		want := string(redcon.AppendBulk([]byte("*2\r\n"), b))
		require.Equal(t, want, string(appendBulk([]byte("*2\r\n"), b)), n)
		require.Equal(t, want, string(appendBulk([]byte("*2\r\n"), string(b))), n)
	}
}

// pieceEntry writes an entry as the server wrote it before appendEntry:
// redcon's headers and bulks, the ID by its text.
func pieceEntry(b []byte, id xstream.ID, fields []xstream.Field, n int) []byte {
	b = redcon.AppendArray(b, n)
	b = redcon.AppendBulk(b, id.AppendText(nil))
	b = redcon.AppendArray(b, 2*len(fields))
	for _, f := range fields {
		b = redcon.AppendBulkString(b, f.Name)
		b = redcon.AppendBulkString(b, f.Value)
	}
	return b
}

// FuzzAppendEntry: an entry written in one function (appendEntry, appendID)
// is the entry written piece by piece with redcon, for any ID and fields.
func FuzzAppendEntry(f *testing.F) {
	f.Add(uint64(1764633600000), uint64(0), "sensor-id", "1234", 2, false)
	f.Add(uint64(0), uint64(0), "", "", 4, true)
	f.Add(uint64(math.MaxUint64), uint64(math.MaxUint64), "temperature", "19.8", 2, true)
	f.Add(uint64(9), uint64(10), "a\r\nb", "0123456789", 4, false)
	f.Fuzz(func(t *testing.T, ms, seq uint64, name, value string, n int, two bool) {
		if n != 2 && n != 4 {
			n = 2
		}
		id := xstream.ID{Ms: ms, Seq: seq}
		fields := []xstream.Field{{Name: name, Value: value}}
		if two {
			fields = append(fields, xstream.Field{Name: value, Value: name})
		}
		pre := []byte("$-1\r\n")
		got := appendEntry(append([]byte(nil), pre...), id, fields, n)
		want := pieceEntry(append([]byte(nil), pre...), id, fields, n)
		require.Equal(t, string(want), string(got))
		require.Equal(t, string(redcon.AppendBulk(pre, id.AppendText(nil))), string(appendID(append([]byte(nil), pre...), id)))
		// An empty field list (not a deleted entry: that is nil, written
		// apart) is an empty array.
		require.Equal(t, string(pieceEntry(nil, id, fields[:0], n)), string(appendEntry(nil, id, fields[:0], n)))
	})
}
