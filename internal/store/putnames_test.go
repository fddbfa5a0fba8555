package store

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestPutComparesNames opens a block with a master name of each length
// from 0 to 40 bytes and offers put entries whose name is a copy of it
// (other data, equal bytes), the master's own string, or the same length
// with one byte changed, at every position: put must take the equal
// names and refuse the others, leaving the storage as it was, and what
// it takes must be stored as appendAny stores it.
func TestPutComparesNames(t *testing.T) {
	for n := 0; n <= 40; n++ {
		master := strings.Repeat("n", n)
		for i := range n {
			master = master[:i] + string(rune('a'+i%26)) + master[i+1:]
		}
		var got, want Blocks
		id := ID{1, 0}
		first := []Field{{master, "v0"}, {"t", "1"}}
		got.Append(id, first)
		want.appendAny(id, first)
		put := func(name string) bool {
			id.Seq++
			fs := []Field{{name, "v1"}, {"t", "2"}}
			if !got.put(id, fs, false) {
				return false
			}
			want.appendAny(id, fs)
			return true
		}
		require.True(t, put(strings.Clone(master)), "length %d: a copy of the name", n)
		require.True(t, put(got.openNames[0]), "length %d: the master's string", n)
		require.True(t, put(("x" + master)[1:]), "length %d: the name inside a longer string", n)
		for pos := range n {
			b := []byte(master)
			b[pos] ^= 0x20
			require.False(t, put(string(b)), "length %d: byte %d differs", n, pos)
			require.Equal(t, want, got, "length %d, byte %d: put refused but changed the storage", n, pos)
		}
		require.False(t, put(master+"x"), "length %d: one byte longer", n)
		if n > 0 {
			require.False(t, put(master[:n-1]), "length %d: one byte shorter", n)
		}
		require.Equal(t, want, got, "length %d", n)
		require.NoError(t, got.Check())
	}
}

// TestPutFullOffsets fills a block whose offset table was allocated for
// fewer entries than its limit (its first entry is larger than those that
// follow): put refuses the entry that finds the table full, leaving the
// storage as it was, and Append then stores it, and the rest, as
// appendAny does.
func TestPutFullOffsets(t *testing.T) {
	var got, want Blocks
	id := ID{1, 0}
	big := []Field{{"k", strings.Repeat("x", 400)}}
	got.Append(id, big)
	want.appendAny(id, big)
	small := []Field{{"k", "1"}}
	refused := 0
	for range BlockMaxEntries - 1 {
		id.Seq++
		if got.open != nil && len(got.open.offs) == cap(got.open.offs) {
			before := len(got.open.offs)
			require.False(t, got.put(id, small, false), "a full offset table")
			require.Equal(t, want, got, "put refused but changed the storage")
			require.Equal(t, before, len(got.open.offs))
			refused++
		}
		got.Append(id, small)
		want.appendAny(id, small)
	}
	require.Equal(t, want, got)
	require.NoError(t, got.Check())
	require.Positive(t, refused, "the offset table never filled")
	require.Equal(t, 1, got.NumBlocks(), "the entries fit one block")
}
