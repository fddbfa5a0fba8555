package xstream

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func shardNums(nums ...int) []string {
	out := make([]string, len(nums))
	for i, n := range nums {
		out[i] = shardID(n)
	}
	return out
}

func TestListShardsFilters(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	t0 := clk.now()
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	ss := newSharded(t, 2, clk) // 0, 1 at t0
	r, err := ss.Put("k", PutArgs{ExplicitHashKey: "7"}, Fields("v", "1")...)
	require.NoError(t, err)
	clk.advance(10 * time.Millisecond)
	require.NoError(t, ss.SplitShard(shardID(0), "1000")) // 2, 3 at t0+10
	clk.advance(10 * time.Millisecond)
	require.NoError(t, ss.MergeShards(shardID(2), shardID(3))) // 4 at t0+20
	clk.advance(10 * time.Millisecond)

	list := func(f ShardFilter) []string { return shardIDs(mustList(t, ss, f)) }
	assert.Equal(t, shardNums(1, 4), list(ShardFilter{Type: FilterAtLatest}))
	assert.Equal(t, shardNums(0, 1, 2, 3, 4), list(ShardFilter{}))
	assert.Equal(t, shardNums(0, 1, 2, 3, 4), list(ShardFilter{Type: FilterFromTrimHorizon}))
	assert.Equal(t, shardNums(0, 1), list(ShardFilter{Type: FilterAtTrimHorizon}))
	assert.Equal(t, shardNums(3, 4), list(ShardFilter{Type: FilterAfterShardID, ShardID: shardID(2)}))
	assert.Equal(t, shardNums(1, 2, 3, 4), list(ShardFilter{Type: FilterAfterShardID, ShardID: shardID(0)}))
	assert.Empty(t, list(ShardFilter{Type: FilterAfterShardID, ShardID: shardID(40)}))
	assert.Equal(t, shardNums(1, 2, 3), list(ShardFilter{Type: FilterAtTimestamp, Timestamp: at(15)}))
	assert.Equal(t, shardNums(0, 1, 2, 3), list(ShardFilter{Type: FilterAtTimestamp, Timestamp: at(10)}))
	assert.Equal(t, shardNums(1, 4), list(ShardFilter{Type: FilterAtTimestamp, Timestamp: at(25)}))
	assert.Equal(t, shardNums(1, 2, 3, 4), list(ShardFilter{Type: FilterFromTimestamp, Timestamp: at(15)}))
	assert.Equal(t, shardNums(1, 4), list(ShardFilter{Type: FilterFromTimestamp, Timestamp: at(21)}))
	assert.Equal(t, shardNums(0, 1, 2, 3, 4), list(ShardFilter{Type: FilterFromTimestamp, Timestamp: at(-1000)}), "before the horizon means the horizon")

	byID := map[string]ShardInfo{}
	for _, s := range mustList(t, ss, ShardFilter{}) {
		byID[s.ShardID] = s
	}
	assert.Equal(t, r.SequenceNumber, byID[shardID(0)].SequenceNumberRange.EndingSequenceNumber)
	assert.Equal(t, ShardClosed, byID[shardID(0)].State)
	assert.True(t, byID[shardID(4)].SequenceNumberRange.EndingSequenceNumber.IsZero())
	assert.False(t, byID[shardID(4)].SequenceNumberRange.StartingSequenceNumber.IsZero())
	assert.Equal(t, shardID(2), byID[shardID(4)].ParentShardID)
	assert.Equal(t, shardID(3), byID[shardID(4)].AdjacentParentShardID)

	// Move the trim horizon to t0+15: shard 0 (closed at t0+10) expires.
	clk.advance(DefaultRetention - 15*time.Millisecond)
	assert.Equal(t, shardNums(1, 2, 3, 4), list(ShardFilter{}))
	assert.Equal(t, shardNums(1, 2, 3), list(ShardFilter{Type: FilterAtTrimHorizon}))
	assert.Equal(t, shardNums(1, 2, 3, 4), list(ShardFilter{Type: FilterFromTimestamp, Timestamp: at(0)}))
	assert.Equal(t, shardNums(1, 2, 3, 4), list(ShardFilter{Type: FilterAfterShardID, ShardID: shardID(0)}))

	for _, f := range []ShardFilter{{Type: FilterAfterShardID, ShardID: "bogus"}, {Type: FilterAfterShardID, ShardID: "shardId-1"}, {Type: 99}} {
		_, err := ss.ListShards(f)
		require.ErrorIs(t, err, ErrInvalidArgument)
		if f.ShardID != "" {
			assert.Contains(t, err.Error(), f.ShardID)
		}
	}
	assert.Equal(t, "FROM_TIMESTAMP", FilterFromTimestamp.String())
}

func TestLineageString(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 2, clk)
	require.NoError(t, ss.SplitShard(shardID(0), "1000"))
	require.NoError(t, ss.MergeShards(shardID(3), shardID(1)))
	l := ss.Lineage()
	require.Len(t, l.Roots, 2)
	require.Len(t, l.Roots[0].Children, 2)
	assert.Equal(t, shardID(2), l.Roots[0].Children[0].Shard.ShardID)
	assert.Equal(t, shardID(4), l.Roots[0].Children[1].Children[0].Shard.ShardID)
	assert.Same(t, l.Roots[0].Children[1].Children[0], l.Roots[1].Children[0], "the merge child is shared by both parents")
	s := l.String()
	lines := strings.Split(strings.TrimSpace(s), "\n")
	require.Len(t, lines, 6, s)
	assert.True(t, strings.HasPrefix(lines[0], "shardId-000000000000 CLOSED keys 0-"), s)
	assert.True(t, strings.HasPrefix(lines[1], "  └─ shardId-000000000002 OPEN keys 0-999 "), s)
	assert.True(t, strings.HasPrefix(lines[2], "  └─ shardId-000000000003 CLOSED keys 1000-"), s)
	assert.Contains(t, lines[3], "shardId-000000000004 OPEN")
	assert.Contains(t, lines[3], "(merge of shardId-000000000003 and shardId-000000000001)")
	assert.True(t, strings.HasPrefix(lines[4], "shardId-000000000001 CLOSED"), s)
	assert.Equal(t, "  └─ shardId-000000000004 (merged, see above)", lines[5])
}
