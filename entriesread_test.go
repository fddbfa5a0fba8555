package xstream

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// A delivery keeps counting entries-read when the deletions are all
// before the delivered entry, as Redis 7 does (streamRangeHasTombstones
// from the delivered ID): here 2-0 was deleted after 1-0 was read, and
// reading 3-0 counts 2, with a lag of 3 (Redis counts the deleted entry as
// unread).
func TestEntriesReadAfterDeletionBehind(t *testing.T) {
	s := NewStream()
	for _, id := range []string{"1-0", "2-0", "3-0", "4-0", "5-0"} {
		_, err := s.Add(AddArgs{ID: id}, Fields("f", "v")...)
		require.NoError(t, err)
	}
	zero := int64(0)
	require.NoError(t, s.CreateGroup("g", "0", GroupOptions{EntriesRead: &zero}))
	ctx := context.Background()
	_, err := s.ReadGroup(ctx, "g", "c", ">", ReadGroupArgs{Count: 1})
	require.NoError(t, err)
	_, err = s.Delete("2-0")
	require.NoError(t, err)
	es, err := s.ReadGroup(ctx, "g", "c", ">", ReadGroupArgs{Count: 1})
	require.NoError(t, err)
	require.Equal(t, ID{3, 0}, es[0].ID)
	g := s.Groups()[0]
	require.True(t, g.EntriesReadKnown)
	require.Equal(t, int64(2), g.EntriesRead)
	require.True(t, g.LagKnown)
	require.Equal(t, int64(3), g.Lag)
}
