package xstream

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestInfoEmpty(t *testing.T) {
	assert.Equal(t, StreamInfo{}, must(NewStream().Info()))
	info, err := NewStream().InfoFull(0)
	require.NoError(t, err)
	assert.Equal(t, StreamInfo{}, info)
}

func TestInfoFields(t *testing.T) {
	s := NewStream()
	for i := 1; i <= 150; i++ {
		mustAdd(t, s, strconv.Itoa(i), Fields("n", strconv.Itoa(i))...)
	}
	_, err := s.Delete("1", "77", "150")
	require.NoError(t, err)
	info := must(s.Info())
	assert.EqualValues(t, 147, info.Length)
	assert.Equal(t, len(blocksOf(s)), info.RadixTreeKeys)
	assert.GreaterOrEqual(t, info.RadixTreeKeys, 2)
	assert.Equal(t, ID{150, 0}, info.LastGeneratedID)
	assert.Equal(t, ID{150, 0}, info.MaxDeletedEntryID)
	assert.EqualValues(t, 150, info.EntriesAdded)
	assert.Equal(t, ID{2, 0}, info.RecordedFirstEntryID)
	assert.Zero(t, info.Groups)
	assert.Equal(t, &Entry{ID: ID{2, 0}, Fields: Fields("n", "2")}, info.FirstEntry)
	assert.Equal(t, &Entry{ID: ID{149, 0}, Fields: Fields("n", "149")}, info.LastEntry)
	assert.Nil(t, info.Entries, "Info lists no entries")
}

func TestInfoFull(t *testing.T) {
	s := streamWith(t, "1", "2", "3", "4")
	_, err := s.Delete("2")
	require.NoError(t, err)
	full, err := s.InfoFull(0)
	require.NoError(t, err)
	assert.Equal(t, []string{"1-0", "3-0", "4-0"}, ids(full.Entries), "count 0 lists every entry")
	assert.Equal(t, Fields("f", "3"), full.Entries[1].Fields)
	brief := full
	brief.Entries = nil
	assert.Equal(t, must(s.Info()), brief, "InfoFull is Info plus the entries")

	full, err = s.InfoFull(2)
	require.NoError(t, err)
	assert.Equal(t, []string{"1-0", "3-0"}, ids(full.Entries))

	before := snap(t, s)
	_, err = s.InfoFull(-1)
	requireErr(t, err, ErrInvalidArgument, "-1")
	requireUnchanged(t, s, before)
}
