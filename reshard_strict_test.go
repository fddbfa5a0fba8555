package xstream

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Kinesis refuses a NewStartingHashKey that is not both greater than one
// plus the shard's StartingHashKey and less than its EndingHashKey
// (InvalidArgumentException): each child keeps at least two hash keys.
func TestSplitShardKinesisBounds(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 2, clk)
	r := shardByID(t, ss, "shardId-000000000001").HashKeyRange
	start, end := r.StartingHashKey, r.EndingHashKey
	one := HashKey{0, 1}
	before := shardSnap(ss)
	for name, key := range map[string]HashKey{
		"at start":          start,
		"at start plus one": start.add(one),
		"at end":            end,
	} {
		err := ss.SplitShard("shardId-000000000001", key.String())
		require.ErrorIs(t, err, ErrInvalidArgument, name)
		for _, want := range []string{key.String(), start.String(), end.String(), "shardId-000000000001"} {
			assert.Contains(t, err.Error(), want, name)
		}
		require.Equal(t, before, shardSnap(ss), name+" changed the stream")
	}

	// The nearest keys allowed: start+2 and end-1.
	require.NoError(t, ss.SplitShard("shardId-000000000001", start.add(HashKey{0, 2}).String()))
	lo := shardByID(t, ss, "shardId-000000000002")
	assert.Equal(t, HashKeyRange{start, start.add(one)}, lo.HashKeyRange, "two keys below")
	require.NoError(t, ss.SplitShard("shardId-000000000003", end.sub(one).String()))
	hi := shardByID(t, ss, "shardId-000000000005")
	assert.Equal(t, HashKeyRange{end.sub(one), end}, hi.HashKeyRange, "two keys above")
	requirePartition(t, ss)

	// A two-key shard cannot be split at all.
	before = shardSnap(ss)
	for _, key := range []HashKey{start, start.add(one)} {
		require.ErrorIs(t, ss.SplitShard("shardId-000000000002", key.String()), ErrInvalidArgument)
	}
	require.Equal(t, before, shardSnap(ss))
}

// Kinesis refuses MergeShards when ShardToMerge's range lies above
// AdjacentShardToMerge's ("adjacency is inverted").
func TestMergeShardsInverted(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 3, clk)
	before := shardSnap(ss)
	err := ss.MergeShards("shardId-000000000001", "shardId-000000000000")
	require.ErrorIs(t, err, ErrInvalidArgument)
	for _, want := range []string{"shardId-000000000001", "shardId-000000000000", "inverted"} {
		assert.Contains(t, err.Error(), want)
	}
	require.Equal(t, before, shardSnap(ss), "nothing changed")

	require.NoError(t, ss.MergeShards("shardId-000000000000", "shardId-000000000001"))
	child := shardByID(t, ss, "shardId-000000000003")
	assert.Equal(t, "shardId-000000000000", child.ParentShardID)
	assert.Equal(t, "shardId-000000000001", child.AdjacentParentShardID)
	requirePartition(t, ss)
}

// A refused split or merge of a durable DB's sharded stream writes
// nothing: the reopened DB has the same shards.
func TestReshardStrictDurable(t *testing.T) {
	dir := t.TempDir()
	clk := newTestClock(1_700_000_000_000)
	db := openT(t, dir, clk)
	ss, err := db.CreateShardedStream("orders", ShardedArgs{Shards: 2})
	require.NoError(t, err)
	r := shardByID(t, ss, "shardId-000000000000").HashKeyRange
	before := shardSnap(ss)
	require.ErrorIs(t, ss.SplitShard("shardId-000000000000", r.StartingHashKey.add(HashKey{0, 1}).String()), ErrInvalidArgument)
	require.ErrorIs(t, ss.SplitShard("shardId-000000000000", r.EndingHashKey.String()), ErrInvalidArgument)
	require.ErrorIs(t, ss.MergeShards("shardId-000000000001", "shardId-000000000000"), ErrInvalidArgument)
	require.Equal(t, before, shardSnap(ss))
	require.NoError(t, db.Close())

	db = openT(t, dir, clk)
	ss, ok := db.ShardedStream("orders")
	require.True(t, ok)
	require.Equal(t, before, shardSnap(ss), "after a reopen")
	require.NoError(t, ss.MergeShards("shardId-000000000000", "shardId-000000000001"))
}
