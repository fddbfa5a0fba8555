package xstream

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSetID(t *testing.T) {
	s := NewStream()
	for _, id := range []string{"1-1", "2-1", "3-1"} {
		_, err := s.Add(AddArgs{ID: id}, Fields("f", "v")...)
		require.NoError(t, err)
	}
	_, err := s.Delete("2-1")
	require.NoError(t, err)
	before := must(s.Info())

	for _, bad := range []SetIDArgs{
		{LastID: "3-0", EntriesAdded: -1},                         // below the top entry
		{LastID: "x", EntriesAdded: -1},                           // invalid
		{LastID: "9-0", EntriesAdded: 1},                          // below the length
		{LastID: "9-0", EntriesAdded: -1, MaxDeletedID: "10-0"},   // max deleted above last
		{LastID: "9-0", EntriesAdded: -2},                         // bad count
		{LastID: "9-0", EntriesAdded: -1, MaxDeletedID: "bad-id"}, // invalid
	} {
		require.Error(t, s.SetID(bad), "%+v", bad)
		require.Equal(t, before, must(s.Info()), "%+v changed the stream", bad)
	}
	require.ErrorIs(t, s.SetID(SetIDArgs{LastID: "3-0", EntriesAdded: -1}), ErrIDTooSmall)
	require.ErrorIs(t, s.SetID(SetIDArgs{LastID: "9-0", EntriesAdded: 1}), ErrInvalidArgument)
	require.ErrorIs(t, s.SetID(SetIDArgs{LastID: "x", EntriesAdded: -1}), ErrInvalidID)

	require.NoError(t, s.SetID(SetIDArgs{LastID: "9-0", EntriesAdded: 7, MaxDeletedID: "5-0"}))
	info := must(s.Info())
	require.Equal(t, ID{9, 0}, info.LastGeneratedID)
	require.Equal(t, int64(7), info.EntriesAdded)
	require.Equal(t, ID{5, 0}, info.MaxDeletedEntryID)
	require.ErrorIs(t, s.SetID(SetIDArgs{LastID: "3-0", EntriesAdded: -1}), ErrIDTooSmall)
	require.NoError(t, s.SetID(SetIDArgs{LastID: "4-0", EntriesAdded: -1}), "below the max deleted ID")
	require.Equal(t, ID{4, 0}, s.LastID())
	require.NoError(t, s.SetID(SetIDArgs{LastID: "9-0", EntriesAdded: -1}))

	id, err := s.Add(AddArgs{}, Fields("f", "v")...)
	require.NoError(t, err)
	require.True(t, ID{9, 0}.Less(id))
	_, err = s.Add(AddArgs{ID: "9-0"}, Fields("f", "v")...)
	require.ErrorIs(t, err, ErrIDTooSmall)
}
