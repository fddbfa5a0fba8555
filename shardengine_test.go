package xstream_test

import (
	"context"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/xstreamtest"
)

// TestShardedConformance runs the sharded conformance suite against the
// in-process adapter: a ShardedStream in memory (on a clock the test
// owns, and on the real one) and a sharded stream of a durable DB (on a
// clock the test owns).
func TestShardedConformance(t *testing.T) {
	t.Run("Memory", func(t *testing.T) {
		xstreamtest.RunSharded(t, func(t *testing.T, args xstream.ShardedArgs) xstreamtest.ShardedTarget {
			c := newFakeClock()
			ss, err := xstream.NewShardedStream(args, xstream.WithClock(c.Now))
			require.NoError(t, err)
			return xstreamtest.ShardedTarget{Engine: xstream.LocalSharded(ss), Advance: c.Advance}
		})
	})
	t.Run("RealClock", func(t *testing.T) {
		xstreamtest.RunSharded(t, func(t *testing.T, args xstream.ShardedArgs) xstreamtest.ShardedTarget {
			ss, err := xstream.NewShardedStream(args)
			require.NoError(t, err)
			return xstreamtest.ShardedTarget{Engine: xstream.LocalSharded(ss)}
		})
	})
	t.Run("Durable", func(t *testing.T) {
		var n atomic.Int64
		xstreamtest.RunSharded(t, func(t *testing.T, args xstream.ShardedArgs) xstreamtest.ShardedTarget {
			c := newFakeClock()
			db, err := xstream.Open(t.TempDir(), xstream.WithClock(c.Now))
			require.NoError(t, err)
			t.Cleanup(func() { require.NoError(t, db.Close()) })
			ss, err := db.CreateShardedStream("s"+strconv.FormatInt(n.Add(1), 10), args)
			require.NoError(t, err)
			return xstreamtest.ShardedTarget{Engine: xstream.LocalSharded(ss), Advance: c.Advance}
		})
	})
}

// TestShardOrder runs xstreamtest's randomized check of per-key order
// across deep reshard trees (StrictOrder and plain groups, the reader) on
// in-memory sharded streams, with more seeds and steps than the
// conformance suite's single run. Each seed reproduces its run.
func TestShardOrder(t *testing.T) {
	for seed := uint64(2); seed < 10; seed++ {
		t.Run("seed"+strconv.FormatUint(seed, 10), func(t *testing.T) {
			xstreamtest.RunShardOrder(t, func(t *testing.T, args xstream.ShardedArgs) xstreamtest.ShardedTarget {
				ss, err := xstream.NewShardedStream(args, xstream.WithClock(newFakeClock().Now))
				require.NoError(t, err)
				return xstreamtest.ShardedTarget{Engine: xstream.LocalSharded(ss)}
			}, seed, 1500)
		})
	}
}

// TestLocalShardedIterators: the adapter's iterator strings name their
// stream, shard and position; anything else is refused with
// ErrInvalidIterator, and a GetRecords through the adapter is the
// ShardedStream's.
func TestLocalShardedIterators(t *testing.T) {
	ctx := context.Background()
	ss, err := xstream.NewShardedStream(xstream.ShardedArgs{Shards: 2})
	require.NoError(t, err)
	e := xstream.LocalSharded(ss)
	r, err := e.Put(ctx, "k", xstream.PutArgs{ExplicitHashKey: "7"}, xstream.Fields("a", "1")...)
	require.NoError(t, err)
	it, err := e.GetShardIterator(ctx, "shardId-000000000000", xstream.IteratorArgs{Type: xstream.TrimHorizon})
	require.NoError(t, err)
	page, err := e.GetRecords(ctx, it, 0)
	require.NoError(t, err)
	require.Len(t, page.Records, 1)
	direct, err := ss.GetShardIterator("shardId-000000000000", xstream.IteratorArgs{Type: xstream.TrimHorizon})
	require.NoError(t, err)
	want, err := ss.GetRecords(direct, 0)
	require.NoError(t, err)
	assert.Equal(t, want.Records, page.Records)
	assert.Equal(t, r.SequenceNumber, page.Records[0].SequenceNumber)
	// The next iterator continues after the record: nothing more yet,
	// and the record put next.
	empty, err := e.GetRecords(ctx, page.NextShardIterator, 0)
	require.NoError(t, err)
	assert.Empty(t, empty.Records)
	r2, err := e.Put(ctx, "k", xstream.PutArgs{ExplicitHashKey: "7"}, xstream.Fields("a", "2")...)
	require.NoError(t, err)
	again, err := e.GetRecords(ctx, page.NextShardIterator, 0)
	require.NoError(t, err)
	require.Len(t, again.Records, 1)
	assert.Equal(t, r2.SequenceNumber, again.Records[0].SequenceNumber)

	other, err := xstream.NewShardedStream(xstream.ShardedArgs{Shards: 2})
	require.NoError(t, err)
	foreign, err := xstream.LocalSharded(other).GetShardIterator(ctx, "shardId-000000000000", xstream.IteratorArgs{Type: xstream.TrimHorizon})
	require.NoError(t, err)
	uid, _, _ := cut(it)
	for _, bad := range []string{"", "/", "//", "x/0/h", foreign, uid + "/9/h", uid + "/0/", uid + "/0/x-1", uid + "/-1/h", uid + "/0/h/extra"} {
		_, err := e.GetRecords(ctx, bad, 0)
		require.ErrorIs(t, err, xstream.ErrInvalidIterator, "iterator %q", bad)
		if bad != "" {
			assert.Contains(t, err.Error(), bad)
		}
	}
	// A reader through the adapter is a ShardReader; a bad checkpoint
	// fails without a typed nil.
	rd, err := e.NewReader(ctx, xstream.Checkpoint{ShardID: "shardId-000000000042"})
	require.ErrorIs(t, err, xstream.ErrShardNotFound)
	assert.Nil(t, rd)
	require.NoError(t, e.Close())
}

// cut splits an iterator string at its first "/".
func cut(it string) (string, string, bool) {
	for i := range len(it) {
		if it[i] == '/' {
			return it[:i], it[i+1:], true
		}
	}
	return it, "", false
}
