package xstream

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The node size decides the blocks, and so what an approximate trim
// removes: with nodes of 10 entries, MAXLEN ~ 25 of 100 entries keeps
// the 3 last whole nodes (30 entries), as Redis does with
// stream-node-max-entries 10.
func TestNodeSizeDecidesApproxTrim(t *testing.T) {
	s := NewStream(WithNodeSize(10, 0))
	checkStream(t, s)
	for i := 1; i <= 100; i++ {
		_, err := s.Add(AddArgs{ID: strconv.Itoa(i) + "-1"}, Fields("f", "v")...)
		require.NoError(t, err)
	}
	assert.Equal(t, 10, len(blocksOf(s)))
	n, err := s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 25, Approx: true})
	require.NoError(t, err)
	assert.Equal(t, int64(70), n)
	assert.Equal(t, int64(30), s.Len())

	// By bytes: entries of about 10 bytes in nodes of at most 50 bytes.
	b := NewStream(WithNodeSize(0, 50))
	checkStream(t, b)
	for i := 1; i <= 20; i++ {
		_, err := b.Add(AddArgs{ID: strconv.Itoa(i) + "-1"}, Fields("f", "value")...)
		require.NoError(t, err)
	}
	assert.Greater(t, len(blocksOf(b)), 3)
}

// SetNodeSize changes the blocks started afterwards, on one stream or on
// every stream of a DB and those it makes later; bad sizes are refused
// and change nothing.
func TestSetNodeSize(t *testing.T) {
	db := NewDB()
	s := db.Stream("a")
	checkStream(t, s)
	add := func(s *Stream, n int) {
		for range n {
			_, err := s.Add(AddArgs{}, Fields("f", "v")...)
			require.NoError(t, err)
		}
	}
	add(s, 100)
	assert.Equal(t, 1, len(blocksOf(s)), "Redis's default: 100 entries a node")
	require.NoError(t, db.SetNodeSize(5, 0))
	add(s, 10)
	assert.Equal(t, 3, len(blocksOf(s)), "the new entries in nodes of 5")
	later := db.Stream("b")
	checkStream(t, later)
	add(later, 10)
	assert.Equal(t, 2, len(blocksOf(later)), "a stream made later takes the DB's size")

	for _, bad := range [][2]int{{-1, 0}, {0, -1}, {1 << 31, 0}, {0, 1<<30 + 1}} {
		err := s.SetNodeSize(bad[0], bad[1])
		require.ErrorIs(t, err, ErrInvalidArgument)
		require.ErrorIs(t, db.SetNodeSize(bad[0], bad[1]), ErrInvalidArgument)
	}
	add(later, 5)
	assert.Equal(t, 3, len(blocksOf(later)), "a refused size changed nothing")
	require.NoError(t, s.SetNodeSize(0, 0)) // no limit
	add(s, 300)
	assert.Equal(t, 3, len(blocksOf(s)), "no limit: the open block takes them all")
}
