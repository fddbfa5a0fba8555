package xstream

import (
	"github.com/xstreamgo/xstream/internal/store"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDeleteReturnsHowManyExisted(t *testing.T) {
	s := streamWith(t, "1", "2", "3-0", "3-1", "4")
	n, err := s.Delete("2-0", "9-9", "2-0", "0-0")
	require.NoError(t, err)
	assert.EqualValues(t, 1, n, "a missing ID and a repeated ID count for nothing")
	n, err = s.Delete("2-0")
	require.NoError(t, err)
	assert.Zero(t, n, "an entry is deleted once")
	n, err = s.Delete("3", "3-1")
	require.NoError(t, err)
	assert.EqualValues(t, 2, n, "a bare ms means ms-0")
	n, err = s.Delete()
	require.NoError(t, err)
	assert.Zero(t, n)
	got, err := s.Range("-", "+", 0)
	require.NoError(t, err)
	assert.Equal(t, []string{"1-0", "4-0"}, ids(got))
	assert.EqualValues(t, 2, s.Len())
}

func TestDeleteUpdatesInfo(t *testing.T) {
	s := streamWith(t, "1", "2", "3", "4", "5")
	_, err := s.Delete("3")
	require.NoError(t, err)
	info := must(s.Info())
	assert.Equal(t, ID{3, 0}, info.MaxDeletedEntryID)
	assert.Equal(t, ID{1, 0}, info.RecordedFirstEntryID, "deleting a middle entry keeps the first")

	_, err = s.Delete("1")
	require.NoError(t, err)
	info = must(s.Info())
	assert.Equal(t, ID{3, 0}, info.MaxDeletedEntryID, "max-deleted-entry-id never goes down")
	assert.Equal(t, ID{2, 0}, info.RecordedFirstEntryID, "deleting the first entry moves the first")
	require.NotNil(t, info.FirstEntry)
	assert.Equal(t, ID{2, 0}, info.FirstEntry.ID)

	_, err = s.Delete("5")
	require.NoError(t, err)
	info = must(s.Info())
	assert.Equal(t, ID{5, 0}, info.MaxDeletedEntryID)
	require.NotNil(t, info.LastEntry)
	assert.Equal(t, ID{4, 0}, info.LastEntry.ID, "the last entry is the last live one")
	assert.Equal(t, ID{5, 0}, info.LastGeneratedID, "the last generated ID stays")

	_, err = s.Delete("9") // missing: changes nothing
	require.NoError(t, err)
	assert.Equal(t, ID{5, 0}, must(s.Info()).MaxDeletedEntryID)

	_, err = s.Delete("2", "4")
	require.NoError(t, err)
	assert.Equal(t, StreamInfo{
		LastGeneratedID:   ID{5, 0},
		MaxDeletedEntryID: ID{5, 0},
		EntriesAdded:      5,
	}, must(s.Info()), "an emptied stream keeps its state")
	_, err = s.Add(AddArgs{ID: "5"}, Fields("f", "v")...)
	requireErr(t, err, ErrIDTooSmall)
	assert.Equal(t, ID{6, 0}, mustAdd(t, s, "6"))
	assert.Equal(t, ID{6, 0}, must(s.Info()).RecordedFirstEntryID)
}

func TestDeleteRejectsBadIDs(t *testing.T) {
	s := streamWith(t, "1", "2")
	for _, bad := range []string{"x", "", "-", "+", "*", "1-*", "(1", "$", "1-2-3"} {
		before := snap(t, s)
		n, err := s.Delete("1-0", bad, "2-0")
		requireErr(t, err, ErrInvalidID, strconv.Quote(bad))
		assert.Zero(t, n)
		requireUnchanged(t, s, before)
	}
}

func TestDeleteFreesEmptyBlocks(t *testing.T) {
	s := NewStream()
	for i := 1; i <= 3*store.BlockMaxEntries; i++ {
		mustAdd(t, s, strconv.Itoa(i))
	}
	blocks := must(s.Info()).RadixTreeKeys
	require.GreaterOrEqual(t, blocks, 3)
	// Delete every entry of the second block.
	b := blocksOf(s)[1]
	var del []string
	for i := range b.Len() {
		del = append(del, ID(b.IDAt(i)).String())
	}
	n, err := s.Delete(del...)
	require.NoError(t, err)
	assert.EqualValues(t, len(del), n)
	assert.Equal(t, blocks-1, must(s.Info()).RadixTreeKeys)
	assert.NotContains(t, blocksOf(s), b)
	// The neighbours are intact.
	got, err := s.Range("-", "+", 0)
	require.NoError(t, err)
	assert.Len(t, got, 3*store.BlockMaxEntries-len(del))
	// Deleting the open (last) block, then adding again.
	last := blocksOf(s)[len(blocksOf(s))-1]
	del = del[:0]
	for i := range last.Len() {
		del = append(del, ID(last.IDAt(i)).String())
	}
	_, err = s.Delete(del...)
	require.NoError(t, err)
	id := mustAdd(t, s, strconv.Itoa(10*store.BlockMaxEntries))
	got, err = s.RevRange("+", "-", 2)
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, id, got[0].ID)
	assert.True(t, got[1].ID.Less(ID(last.FirstID())))
}

// blockLives returns the number of live entries of each block.
func blockLives(s *Stream) []int64 {
	out := make([]int64, len(blocksOf(s)))
	for i, b := range blocksOf(s) {
		out[i] = int64(b.Live())
	}
	return out
}

// sizedStream holds n small entries with IDs 1-0 … n-0.
func sizedStream(t *testing.T, n int) *Stream {
	t.Helper()
	s := NewStream()
	for i := 1; i <= n; i++ {
		mustAdd(t, s, strconv.Itoa(i), reading("1234", "19.8")...)
	}
	return s
}

func requireIDs(t *testing.T, s *Stream, from, to int) {
	t.Helper()
	got, err := s.Range("-", "+", 0)
	require.NoError(t, err)
	var want []string
	for i := from; i <= to; i++ {
		want = append(want, strconv.Itoa(i)+"-0")
	}
	require.Equal(t, want, idsOrNil(got))
}

func TestTrimExactMaxLen(t *testing.T) {
	s := sizedStream(t, 250)
	n, err := s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 300})
	require.NoError(t, err)
	assert.Zero(t, n)
	n, err = s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 250})
	require.NoError(t, err)
	assert.Zero(t, n)
	n, err = s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 77})
	require.NoError(t, err)
	assert.EqualValues(t, 173, n)
	requireIDs(t, s, 174, 250)
	info := must(s.Info())
	assert.EqualValues(t, 77, info.Length)
	assert.Equal(t, ID{174, 0}, info.RecordedFirstEntryID)
	assert.Equal(t, ID{}, info.MaxDeletedEntryID)
	assert.Equal(t, ID{250, 0}, info.LastGeneratedID)
	assert.EqualValues(t, 250, info.EntriesAdded)

	n, err = s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 0})
	require.NoError(t, err)
	assert.EqualValues(t, 77, n)
	assert.Equal(t, StreamInfo{LastGeneratedID: ID{250, 0}, EntriesAdded: 250}, must(s.Info()))
}

func TestTrimExactAfterDeletes(t *testing.T) {
	s := sizedStream(t, 10)
	_, err := s.Delete("2", "3", "7")
	require.NoError(t, err)
	n, err := s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 4})
	require.NoError(t, err)
	assert.EqualValues(t, 3, n, "deleted entries do not count")
	got, err := s.Range("-", "+", 0)
	require.NoError(t, err)
	assert.Equal(t, []string{"6-0", "8-0", "9-0", "10-0"}, ids(got))
	assert.Equal(t, ID{6, 0}, must(s.Info()).RecordedFirstEntryID)
}

func TestTrimExactMinID(t *testing.T) {
	s := sizedStream(t, 250)
	n, err := s.Trim(TrimArgs{Strategy: TrimMinID, MinID: "0-0"})
	require.NoError(t, err)
	assert.Zero(t, n)
	n, err = s.Trim(TrimArgs{Strategy: TrimMinID, MinID: "1"})
	require.NoError(t, err)
	assert.Zero(t, n, "MinID keeps the entry equal to it")
	n, err = s.Trim(TrimArgs{Strategy: TrimMinID, MinID: "150-0"})
	require.NoError(t, err)
	assert.EqualValues(t, 149, n)
	requireIDs(t, s, 150, 250)
	n, err = s.Trim(TrimArgs{Strategy: TrimMinID, MinID: "150-1"})
	require.NoError(t, err)
	assert.EqualValues(t, 1, n)
	requireIDs(t, s, 151, 250)
	n, err = s.Trim(TrimArgs{Strategy: TrimMinID, MinID: "9999"})
	require.NoError(t, err)
	assert.EqualValues(t, 100, n)
	assert.Zero(t, s.Len())
	assert.Zero(t, must(s.Info()).RadixTreeKeys, "the memory of trimmed entries is given back")
}

// approxRemoved is what an approximate trim removes from blocks of the
// given live sizes: the longest prefix of whole blocks that keeps at least
// keep entries, within limit (0: no limit).
func approxRemovedMaxLen(lives []int64, keep, limit int64) int64 {
	var total int64
	for _, l := range lives {
		total += l
	}
	var removed int64
	for _, l := range lives {
		if total-removed-l < keep || (limit > 0 && removed+l > limit) {
			break
		}
		removed += l
	}
	return removed
}

func TestTrimApproxMaxLen(t *testing.T) {
	for _, c := range []struct{ keep, limit int64 }{
		{0, 0}, {1, 0}, {49, 0}, {50, 0}, {51, 0}, {120, 0}, {150, 0}, {151, 0}, {200, 0},
		{249, 0}, {250, 0}, {400, 0},
		{0, 1}, {0, 99}, {0, 100}, {0, 199}, {0, 200}, {50, 150}, {10, 1000},
	} {
		s := sizedStream(t, 250)
		lives := blockLives(s)
		require.Greater(t, len(lives), 2, "the test needs several blocks")
		want := approxRemovedMaxLen(lives, c.keep, c.limit)
		n, err := s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: c.keep, Approx: true, Limit: c.limit})
		require.NoError(t, err)
		assert.Equal(t, want, n, "MaxLen ~%d Limit %d on blocks %v", c.keep, c.limit, lives)
		assert.GreaterOrEqual(t, s.Len(), min(c.keep, 250), "never below the threshold")
		if c.limit > 0 {
			assert.LessOrEqual(t, n, c.limit)
		}
		requireIDs(t, s, int(n)+1, 250)
		assert.Equal(t, lives[len(lives)-len(blocksOf(s)):], blockLives(s), "only whole blocks go")
	}
	// With the default block size the numbers are these.
	if store.BlockMaxEntries == 100 {
		s := sizedStream(t, 250)
		n, err := s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 120, Approx: true})
		require.NoError(t, err)
		assert.EqualValues(t, 100, n)
		assert.EqualValues(t, 150, s.Len())
	}
}

func TestTrimApproxMinID(t *testing.T) {
	s := sizedStream(t, 250)
	lives := blockLives(s)
	firstBlockEnd := int(lives[0])
	n, err := s.Trim(TrimArgs{Strategy: TrimMinID, MinID: strconv.Itoa(firstBlockEnd), Approx: true})
	require.NoError(t, err)
	assert.Zero(t, n, "the first block still holds an entry >= MinID")
	n, err = s.Trim(TrimArgs{Strategy: TrimMinID, MinID: strconv.Itoa(firstBlockEnd + 1), Approx: true})
	require.NoError(t, err)
	assert.EqualValues(t, firstBlockEnd, n)
	requireIDs(t, s, firstBlockEnd+1, 250)
	n, err = s.Trim(TrimArgs{Strategy: TrimMinID, MinID: "9999", Approx: true, Limit: 1})
	require.NoError(t, err)
	assert.Zero(t, n, "Limit 1 is below a whole block")
	n, err = s.Trim(TrimArgs{Strategy: TrimMinID, MinID: "9999", Approx: true})
	require.NoError(t, err)
	assert.EqualValues(t, 250-firstBlockEnd, n)
	assert.Zero(t, s.Len())
	assert.Equal(t, ID{}, must(s.Info()).RecordedFirstEntryID)
}

func TestTrimApproxCountsLiveEntries(t *testing.T) {
	s := sizedStream(t, 250)
	lives := blockLives(s)
	// Delete half of the first block: it then counts for its live entries.
	var del []string
	for i := 1; i <= int(lives[0])/2; i++ {
		del = append(del, strconv.Itoa(i))
	}
	_, err := s.Delete(del...)
	require.NoError(t, err)
	lives = blockLives(s)
	n, err := s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 1, Approx: true, Limit: lives[0]})
	require.NoError(t, err)
	assert.Equal(t, lives[0], n)
}

func TestTrimRejectsBadArgs(t *testing.T) {
	s := sizedStream(t, 250)
	for _, c := range badTrims {
		before := snap(t, s)
		n, err := s.Trim(c.args)
		requireErr(t, err, c.sentinel, c.names...)
		assert.Zero(t, n)
		requireUnchanged(t, s, before)
	}
	before := snap(t, s)
	n, err := s.Trim(TrimArgs{})
	require.NoError(t, err)
	assert.Zero(t, n, "TrimNone trims nothing")
	requireUnchanged(t, s, before)
}
