package xstream

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// putN puts n records with key pk into the one-shard stream, one ms apart,
// and returns their sequence numbers.
func putShardRecords(t testing.TB, ss *ShardedStream, clk *testClock, pk string, n int) []ID {
	t.Helper()
	var ids []ID
	for i := range n {
		r, err := ss.Put(pk, PutArgs{}, Fields("i", strconv.Itoa(i))...)
		require.NoError(t, err)
		ids = append(ids, r.SequenceNumber)
		clk.advance(time.Millisecond)
	}
	return ids
}

func recordSeqs(rs []Record) []ID {
	out := make([]ID, len(rs))
	for i, r := range rs {
		out[i] = r.SequenceNumber
	}
	return out
}

func shardIter(t testing.TB, ss *ShardedStream, shard string, a IteratorArgs) *ShardIterator {
	t.Helper()
	it, err := ss.GetShardIterator(shard, a)
	require.NoError(t, err)
	return it
}

func TestIteratorTypes(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 1, clk)
	const sh = "shardId-000000000000"
	ids := putShardRecords(t, ss, clk, "k", 10)

	get := func(it *ShardIterator, limit int) GetRecordsResult {
		res, err := ss.GetRecords(it, limit)
		require.NoError(t, err)
		return res
	}
	res := get(shardIter(t, ss, sh, IteratorArgs{Type: TrimHorizon}), 0)
	assert.Equal(t, ids, recordSeqs(res.Records))
	assert.NotNil(t, res.NextShardIterator, "an OPEN shard always gives a next iterator")
	assert.Zero(t, res.MillisBehindLatest)

	res = get(shardIter(t, ss, sh, IteratorArgs{Type: AtSequenceNumber, SequenceNumber: ids[3].String()}), 0)
	assert.Equal(t, ids[3:], recordSeqs(res.Records))
	res = get(shardIter(t, ss, sh, IteratorArgs{Type: AfterSequenceNumber, SequenceNumber: ids[3].String()}), 0)
	assert.Equal(t, ids[4:], recordSeqs(res.Records))
	res = get(shardIter(t, ss, sh, IteratorArgs{Type: AfterSequenceNumber, SequenceNumber: ids[9].String()}), 0)
	assert.Empty(t, res.Records)
	require.NotNil(t, res.NextShardIterator)

	res = get(shardIter(t, ss, sh, IteratorArgs{Type: AtTimestamp, Timestamp: time.UnixMilli(int64(ids[6].Ms))}), 0)
	assert.Equal(t, ids[6:], recordSeqs(res.Records))
	res = get(shardIter(t, ss, sh, IteratorArgs{Type: AtTimestamp, Timestamp: time.UnixMilli(0)}), 0)
	assert.Equal(t, ids, recordSeqs(res.Records))
	res = get(shardIter(t, ss, sh, IteratorArgs{Type: AtTimestamp, Timestamp: clk.now().Add(time.Hour)}), 0)
	assert.Empty(t, res.Records)

	latest := shardIter(t, ss, sh, IteratorArgs{Type: Latest})
	res = get(latest, 0)
	assert.Empty(t, res.Records)
	more := putShardRecords(t, ss, clk, "k", 2)
	res = get(res.NextShardIterator, 0)
	assert.Equal(t, more, recordSeqs(res.Records))
	res = get(latest, 0)
	assert.Equal(t, more, recordSeqs(res.Records), "an iterator is a value: reusing it reads again")

	// Paging with a limit, and MillisBehindLatest while behind.
	it := shardIter(t, ss, sh, IteratorArgs{Type: TrimHorizon})
	var all []ID
	for {
		res = get(it, 3)
		all = append(all, recordSeqs(res.Records)...)
		if len(res.Records) < 3 {
			break
		}
		if len(all) < 12 {
			want := clk.now().UnixMilli() - int64(ids[len(all)].Ms)
			assert.Equal(t, want, res.MillisBehindLatest)
		}
		it = res.NextShardIterator
	}
	assert.Equal(t, append(ids, more...), all)
	assert.Equal(t, "AT_TIMESTAMP", AtTimestamp.String())
	assert.Equal(t, sh, it.ShardID())
}

func TestGetRecordsAtShardEnd(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 1, clk)
	const sh = "shardId-000000000000"
	ids := putShardRecords(t, ss, clk, "k", 5)
	it := shardIter(t, ss, sh, IteratorArgs{Type: TrimHorizon})
	require.NoError(t, ss.SplitShard(sh, "1000"))

	res, err := ss.GetRecords(it, 3)
	require.NoError(t, err)
	assert.Equal(t, ids[:3], recordSeqs(res.Records))
	require.NotNil(t, res.NextShardIterator, "not at the end yet")
	assert.Empty(t, res.ChildShards)

	res, err = ss.GetRecords(res.NextShardIterator, 2)
	require.NoError(t, err)
	assert.Equal(t, ids[3:], recordSeqs(res.Records))
	assert.Nil(t, res.NextShardIterator, "the end of a CLOSED shard")
	want := []ChildShard{
		{ShardID: "shardId-000000000001", ParentShards: []string{sh}, HashKeyRange: HashKeyRange{HashKey{}, HashKey{0, 999}}},
		{ShardID: "shardId-000000000002", ParentShards: []string{sh}, HashKeyRange: HashKeyRange{HashKey{0, 1000}, MaxHashKey()}},
	}
	assert.Equal(t, want, res.ChildShards)

	// LATEST on a closed shard is at its end at once.
	res, err = ss.GetRecords(shardIter(t, ss, sh, IteratorArgs{Type: Latest}), 0)
	require.NoError(t, err)
	assert.Empty(t, res.Records)
	assert.Nil(t, res.NextShardIterator)
	assert.Equal(t, want, res.ChildShards)

	// A merge child names both parents.
	require.NoError(t, ss.MergeShards("shardId-000000000001", "shardId-000000000002"))
	res, err = ss.GetRecords(shardIter(t, ss, "shardId-000000000002", IteratorArgs{Type: TrimHorizon}), 0)
	require.NoError(t, err)
	assert.Nil(t, res.NextShardIterator)
	assert.Equal(t, []ChildShard{{ShardID: "shardId-000000000003",
		ParentShards: []string{"shardId-000000000001", "shardId-000000000002"},
		HashKeyRange: HashKeyRange{HashKey{}, MaxHashKey()}}}, res.ChildShards)
}

func TestIteratorBadInput(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 1, clk)
	other := newSharded(t, 1, clk)
	const sh = "shardId-000000000000"
	ids := putShardRecords(t, ss, clk, "k", 3)
	before := shardSnap(ss)
	cases := []struct {
		name string
		run  func() error
		err  error
		msg  string
	}{
		{"unknown shard", func() error {
			_, err := ss.GetShardIterator("shardId-000000000005", IteratorArgs{})
			return err
		}, ErrShardNotFound, "shardId-000000000005"},
		{"bad sequence number", func() error {
			_, err := ss.GetShardIterator(sh, IteratorArgs{Type: AtSequenceNumber, SequenceNumber: "x-1"})
			return err
		}, ErrInvalidID, "x-1"},
		{"sequence number beyond the end", func() error {
			_, err := ss.GetShardIterator(sh, IteratorArgs{Type: AfterSequenceNumber, SequenceNumber: "99999999999999-0"})
			return err
		}, ErrInvalidArgument, "99999999999999-0"},
		{"sequence number before the start", func() error {
			_, err := ss.GetShardIterator(sh, IteratorArgs{Type: AtSequenceNumber, SequenceNumber: "5-0"})
			return err
		}, ErrInvalidArgument, "5-0"},
		{"unknown type", func() error {
			_, err := ss.GetShardIterator(sh, IteratorArgs{Type: 42})
			return err
		}, ErrInvalidArgument, "42"},
		{"nil iterator", func() error {
			_, err := ss.GetRecords(nil, 1)
			return err
		}, ErrInvalidIterator, "nil"},
		{"foreign iterator", func() error {
			_, err := ss.GetRecords(shardIter(t, other, sh, IteratorArgs{}), 1)
			return err
		}, ErrInvalidIterator, sh},
		{"negative limit", func() error {
			_, err := ss.GetRecords(shardIter(t, ss, sh, IteratorArgs{}), -1)
			return err
		}, ErrInvalidArgument, "-1"},
		{"limit too big", func() error {
			_, err := ss.GetRecords(shardIter(t, ss, sh, IteratorArgs{}), 10001)
			return err
		}, ErrInvalidArgument, "10001"},
	}
	for _, c := range cases {
		err := c.run()
		require.ErrorIs(t, err, c.err, c.name)
		assert.Contains(t, err.Error(), c.msg, c.name)
		require.Equal(t, before, shardSnap(ss), c.name)
	}
	res, err := ss.GetRecords(shardIter(t, ss, sh, IteratorArgs{}), 0)
	require.NoError(t, err)
	assert.Equal(t, ids, recordSeqs(res.Records))
}

func TestRetentionTrimsAndExpires(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 1, clk)
	const sh = "shardId-000000000000"
	old := putShardRecords(t, ss, clk, "k", 3) // at t0, t0+1, t0+2
	parentIt := shardIter(t, ss, sh, IteratorArgs{Type: AfterSequenceNumber, SequenceNumber: old[0].String()})
	horizonIt := shardIter(t, ss, sh, IteratorArgs{Type: TrimHorizon})
	require.NoError(t, ss.SplitShard(sh, "1000")) // closed at t0+3
	clk.advance(time.Hour)
	newer, err := ss.Put("k", PutArgs{ExplicitHashKey: "5"}, Fields("i", "late")...)
	require.NoError(t, err)

	// At t0+2+24h the records of t0 and t0+1 are out of the retention
	// window; the shard expires once its closing time (t0+3) is.
	clk.advance(DefaultRetention - time.Hour - time.Millisecond)
	res, err := ss.GetRecords(horizonIt, 0)
	require.NoError(t, err)
	assert.Equal(t, old[2:], recordSeqs(res.Records), "records older than the retention period are dropped")
	_, err = ss.GetRecords(parentIt, 0)
	require.ErrorIs(t, err, ErrPastTrimHorizon)
	assert.Contains(t, err.Error(), old[1].String())
	_, err = ss.GetShardIterator(sh, IteratorArgs{Type: AtSequenceNumber, SequenceNumber: old[0].String()})
	require.ErrorIs(t, err, ErrPastTrimHorizon)
	res, err = ss.GetRecords(shardIter(t, ss, sh, IteratorArgs{Type: AtTimestamp, Timestamp: time.UnixMilli(0)}), 0)
	require.NoError(t, err)
	assert.Equal(t, old[2:], recordSeqs(res.Records), "AT_TIMESTAMP before the horizon means TRIM_HORIZON")
	assert.Equal(t, ShardClosed, shardByID(t, ss, sh).State)

	clk.advance(2 * time.Millisecond)
	assert.Equal(t, ShardExpired, shardByID(t, ss, sh).State)
	assert.Equal(t, []string{"shardId-000000000001", "shardId-000000000002"}, shardIDs(mustList(t, ss, ShardFilter{})))
	_, err = ss.GetRecords(horizonIt, 0)
	require.ErrorIs(t, err, ErrShardExpired)
	assert.Contains(t, err.Error(), sh)
	_, err = ss.GetShardIterator(sh, IteratorArgs{})
	require.ErrorIs(t, err, ErrShardExpired)

	// The child's record, younger, is still there.
	res, err = ss.GetRecords(shardIter(t, ss, "shardId-000000000001", IteratorArgs{}), 0)
	require.NoError(t, err)
	assert.Equal(t, []ID{newer.SequenceNumber}, recordSeqs(res.Records))

	// Shortening the retention applies at once.
	require.ErrorIs(t, ss.SetRetention(0), ErrInvalidArgument)
	assert.Equal(t, DefaultRetention, ss.Retention(), "a bad retention changes nothing")
	require.NoError(t, ss.SetRetention(time.Hour))
	assert.Equal(t, time.Hour, ss.Retention())
	res, err = ss.GetRecords(shardIter(t, ss, "shardId-000000000001", IteratorArgs{}), 0)
	require.NoError(t, err)
	assert.Empty(t, res.Records)
}

func TestRetentionOnPutOnly(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss, err := NewShardedStream(ShardedArgs{Shards: 1, Retention: time.Minute}, WithClock(clk.now))
	require.NoError(t, err)
	putShardRecords(t, ss, clk, "k", 100)
	clk.advance(2 * time.Minute)
	putShardRecords(t, ss, clk, "k", 1)
	// Put alone, with no read, gave the memory back.
	ss.mu.RLock()
	n := ss.shards[0].s.Len()
	ss.mu.RUnlock()
	assert.Equal(t, int64(1), n)
}

func TestScanShard(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 1, clk)
	const sh = "shardId-000000000000"
	want := putShardRecords(t, ss, clk, "k", 600)
	var got []ID
	for r, err := range ss.ScanShard(sh, IteratorArgs{}) {
		require.NoError(t, err)
		got = append(got, r.SequenceNumber)
		if len(got) == 300 {
			// The loop body may write: the scan sees it, being open.
			res, err := ss.Put("k", PutArgs{}, Fields("i", "more")...)
			require.NoError(t, err)
			want = append(want, res.SequenceNumber)
		}
	}
	assert.Equal(t, want, got)

	got = got[:0]
	for r, err := range ss.ScanShard(sh, IteratorArgs{Type: AfterSequenceNumber, SequenceNumber: want[597].String()}) {
		require.NoError(t, err)
		got = append(got, r.SequenceNumber)
		if len(got) == 2 {
			break
		}
	}
	assert.Equal(t, want[598:600], got)

	require.NoError(t, ss.SplitShard(sh, "1000"))
	n := 0
	for _, err := range ss.ScanShard(sh, IteratorArgs{}) {
		require.NoError(t, err)
		n++
	}
	assert.Equal(t, len(want), n, "a closed shard is scanned to its end")

	var errs []error
	for r, err := range ss.ScanShard("shardId-000000000077", IteratorArgs{}) {
		assert.Zero(t, r)
		errs = append(errs, err)
	}
	require.Len(t, errs, 1)
	require.ErrorIs(t, errs[0], ErrShardNotFound)

	clk.advance(DefaultRetention + time.Second)
	errs = errs[:0]
	for _, err := range ss.ScanShard(sh, IteratorArgs{}) {
		errs = append(errs, err)
	}
	require.Len(t, errs, 1)
	require.ErrorIs(t, errs[0], ErrShardExpired)
}
