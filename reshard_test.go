package xstream

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func shardByID(t testing.TB, ss *ShardedStream, id string) ShardInfo {
	t.Helper()
	for _, s := range ss.Lineage().all() {
		if s.ShardID == id {
			return s
		}
	}
	t.Fatalf("no shard %s", id)
	return ShardInfo{}
}

// all lists every shard of the lineage once, by ID.
func (l Lineage) all() []ShardInfo {
	seen := map[string]bool{}
	var out []ShardInfo
	var walk func(n *LineageNode)
	walk = func(n *LineageNode) {
		if !seen[n.Shard.ShardID] {
			seen[n.Shard.ShardID] = true
			out = append(out, n.Shard)
		}
		for _, c := range n.Children {
			walk(c)
		}
	}
	for _, r := range l.Roots {
		walk(r)
	}
	return out
}

func TestSplitShard(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 2, clk)
	r, err := ss.Put("k", PutArgs{ExplicitHashKey: "100"}, Fields("v", "1")...)
	require.NoError(t, err)
	require.Equal(t, "shardId-000000000000", r.ShardID)
	clk.advance(5 * time.Millisecond)
	require.NoError(t, ss.SplitShard("shardId-000000000000", "1000"))
	requirePartition(t, ss)

	parent := shardByID(t, ss, "shardId-000000000000")
	assert.Equal(t, ShardClosed, parent.State)
	assert.Equal(t, r.SequenceNumber, parent.SequenceNumberRange.EndingSequenceNumber)
	lo := shardByID(t, ss, "shardId-000000000002")
	hi := shardByID(t, ss, "shardId-000000000003")
	assert.Equal(t, "shardId-000000000000", lo.ParentShardID)
	assert.Equal(t, "shardId-000000000000", hi.ParentShardID)
	assert.Empty(t, lo.AdjacentParentShardID)
	assert.Equal(t, HashKeyRange{HashKey{}, HashKey{0, 999}}, lo.HashKeyRange)
	assert.Equal(t, HashKey{0, 1000}, hi.HashKeyRange.StartingHashKey)
	assert.Equal(t, parent.HashKeyRange.EndingHashKey, hi.HashKeyRange.EndingHashKey)
	assert.Equal(t, ShardOpen, lo.State)
	assert.True(t, r.SequenceNumber.Less(lo.SequenceNumberRange.StartingSequenceNumber) || r.SequenceNumber == lo.SequenceNumberRange.StartingSequenceNumber)

	// New records go to the children; the parent's record stays readable.
	r2, err := ss.Put("k", PutArgs{ExplicitHashKey: "100"}, Fields("v", "2")...)
	require.NoError(t, err)
	assert.Equal(t, "shardId-000000000002", r2.ShardID)
	assert.True(t, lo.SequenceNumberRange.StartingSequenceNumber.Less(r2.SequenceNumber))
	r3, err := ss.Put("k", PutArgs{ExplicitHashKey: "1000"}, Fields("v", "3")...)
	require.NoError(t, err)
	assert.Equal(t, "shardId-000000000003", r3.ShardID)
	it, err := ss.GetShardIterator("shardId-000000000000", IteratorArgs{Type: TrimHorizon})
	require.NoError(t, err)
	got, err := ss.GetRecords(it, 0)
	require.NoError(t, err)
	require.Len(t, got.Records, 1)
	assert.Equal(t, r.SequenceNumber, got.Records[0].SequenceNumber)
}

func TestMergeShards(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 3, clk)
	require.NoError(t, ss.MergeShards("shardId-000000000001", "shardId-000000000002"))
	requirePartition(t, ss)
	child := shardByID(t, ss, "shardId-000000000003")
	assert.Equal(t, "shardId-000000000001", child.ParentShardID)
	assert.Equal(t, "shardId-000000000002", child.AdjacentParentShardID)
	one := shardByID(t, ss, "shardId-000000000001")
	two := shardByID(t, ss, "shardId-000000000002")
	assert.Equal(t, ShardClosed, one.State)
	assert.Equal(t, ShardClosed, two.State)
	assert.Equal(t, HashKeyRange{one.HashKeyRange.StartingHashKey, two.HashKeyRange.EndingHashKey}, child.HashKeyRange)
	assert.Equal(t, []string{"shardId-000000000000", "shardId-000000000003"}, shardIDs(mustList(t, ss, ShardFilter{Type: FilterAtLatest})))
	assert.Contains(t, ss.Lineage().String(), "shardId-000000000003 OPEN")
	assert.Contains(t, ss.Lineage().String(), "(merge of shardId-000000000001 and shardId-000000000002)")
}

// snapshot captures everything the bad-input tests must find unchanged.
type shardSnapshot struct {
	lineage string
	status  StreamStatus
}

func shardSnap(ss *ShardedStream) shardSnapshot {
	return shardSnapshot{lineage: ss.Lineage().String(), status: ss.Status()}
}

func TestReshardBadInput(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 4, clk)
	require.NoError(t, ss.SplitShard("shardId-000000000000", "10"))
	shards := mustList(t, ss, ShardFilter{})
	s1 := shards[1].HashKeyRange
	before := shardSnap(ss)
	cases := []struct {
		name string
		run  func() error
		err  error
		msg  string
	}{
		{"unknown shard", func() error { return ss.SplitShard("shardId-000000000099", "5") }, ErrShardNotFound, "shardId-000000000099"},
		{"malformed shard", func() error { return ss.SplitShard("shard-1", "5") }, ErrShardNotFound, "shard-1"},
		{"split closed", func() error { return ss.SplitShard("shardId-000000000000", "5") }, ErrShardClosed, "shardId-000000000000"},
		{"split at start", func() error { return ss.SplitShard("shardId-000000000001", s1.StartingHashKey.String()) }, ErrInvalidArgument, s1.StartingHashKey.String()},
		{"split below", func() error { return ss.SplitShard("shardId-000000000001", "3") }, ErrInvalidArgument, "3"},
		{"split above", func() error {
			return ss.SplitShard("shardId-000000000001", s1.EndingHashKey.add(HashKey{0, 1}).String())
		}, ErrInvalidArgument, s1.EndingHashKey.add(HashKey{0, 1}).String()},
		{"split key not a number", func() error { return ss.SplitShard("shardId-000000000001", "abc") }, ErrInvalidHashKey, "abc"},
		{"split key too big", func() error {
			return ss.SplitShard("shardId-000000000001", "340282366920938463463374607431768211456")
		}, ErrInvalidHashKey, "340282366920938463463374607431768211456"},
		{"merge closed", func() error { return ss.MergeShards("shardId-000000000000", "shardId-000000000001") }, ErrShardClosed, "shardId-000000000000"},
		{"merge not adjacent", func() error { return ss.MergeShards("shardId-000000000001", "shardId-000000000003") }, ErrInvalidArgument, "not adjacent"},
		{"merge self", func() error { return ss.MergeShards("shardId-000000000001", "shardId-000000000001") }, ErrInvalidArgument, "shardId-000000000001"},
		{"merge unknown", func() error { return ss.MergeShards("shardId-000000000001", "shardId-000000000077") }, ErrShardNotFound, "shardId-000000000077"},
		{"scale too far up", func() error { return ss.UpdateShardCount(11) }, ErrInvalidArgument, "11"},
		{"scale too far down", func() error { return ss.UpdateShardCount(2) }, ErrInvalidArgument, "2"},
		{"scale to zero", func() error { return ss.UpdateShardCount(0) }, ErrInvalidArgument, "0"},
	}
	for _, c := range cases {
		err := c.run()
		require.ErrorIs(t, err, c.err, c.name)
		assert.Contains(t, err.Error(), c.msg, c.name)
		require.Equal(t, before, shardSnap(ss), c.name+" changed the stream")
	}
	requirePartition(t, ss)
}

func TestReshardExpiredShard(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 2, clk)
	require.NoError(t, ss.MergeShards("shardId-000000000000", "shardId-000000000001"))
	clk.advance(DefaultRetention + time.Millisecond)
	before := shardSnap(ss)
	err := ss.SplitShard("shardId-000000000000", "5")
	require.ErrorIs(t, err, ErrShardExpired)
	assert.Contains(t, err.Error(), "shardId-000000000000")
	err = ss.MergeShards("shardId-000000000001", "shardId-000000000002")
	require.ErrorIs(t, err, ErrShardExpired)
	require.Equal(t, before, shardSnap(ss))
}

func TestReshardResourceInUse(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 2, clk)
	var inner []error
	var statuses []StreamStatus
	ss.stepHook = func() {
		statuses = append(statuses, ss.Status())
		inner = append(inner, ss.SplitShard("shardId-000000000000", "5"), ss.MergeShards("shardId-000000000000", "shardId-000000000001"), ss.UpdateShardCount(3))
	}
	require.NoError(t, ss.UpdateShardCount(4))
	ss.stepHook = nil
	require.NotEmpty(t, inner)
	for _, err := range inner {
		require.ErrorIs(t, err, ErrResourceInUse)
		assert.Contains(t, err.Error(), "UPDATING")
	}
	for _, st := range statuses {
		assert.Equal(t, StreamUpdating, st)
	}
	assert.Equal(t, StreamActive, ss.Status())
	assert.Equal(t, "UPDATING", StreamUpdating.String())
	assert.Len(t, mustList(t, ss, ShardFilter{Type: FilterAtLatest}), 4)
}

func TestUpdateShardCount(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 3, clk)
	steps := []int{6, 12, 7, 4, 2, 1, 2, 3, 5, 10, 10}
	for _, target := range steps {
		require.NoError(t, ss.UpdateShardCount(target), "to %d", target)
		requirePartition(t, ss)
		open := mustList(t, ss, ShardFilter{Type: FilterAtLatest})
		require.Len(t, open, target)
		w := bigOf(uniformWidth(uint64(target)))
		for _, s := range open {
			width := bigOf(s.HashKeyRange.EndingHashKey)
			width.Sub(width, bigOf(s.HashKeyRange.StartingHashKey))
			width.Sub(width, w)
			width.Abs(width)
			// Near-equal: within 2^34 of the exact width (out of >= 2^124).
			assert.LessOrEqual(t, width.BitLen(), 35, "shard %s after scaling to %d", s.ShardID, target)
		}
	}
	// Every shard but the open ones is CLOSED, with a parent chain back
	// to the three made at creation: lineage is kept.
	for _, s := range ss.Lineage().all() {
		n := 0
		_, _ = fmtSscan(s.ShardID, &n)
		if n >= 3 {
			assert.NotEmpty(t, s.ParentShardID, s.ShardID)
		}
	}
}

// doubling a uniform stream splits each shard exactly once.
func TestUpdateShardCountDoubleIsSplits(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 4, clk)
	require.NoError(t, ss.UpdateShardCount(8))
	all := ss.Lineage().all()
	require.Len(t, all, 12)
	for _, s := range all[4:] {
		assert.Empty(t, s.AdjacentParentShardID, "no merge needed")
	}
	require.NoError(t, ss.UpdateShardCount(4))
	all = ss.Lineage().all()
	require.Len(t, all, 16, "halving merges pairs: 4 merges")
}

func fmtSscan(id string, n *int) (int, error) { return fmt.Sscanf(id, "shardId-%d", n) }
