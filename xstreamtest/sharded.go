package xstreamtest

import (
	"context"
	"crypto/md5"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream"
)

// ShardedTarget is what a ShardedFactory makes for one test.
type ShardedTarget struct {
	// Engine is a fresh sharded stream with the shards and retention of
	// the ShardedArgs the factory was given. The suite never closes it:
	// the factory does (t.Cleanup).
	Engine xstream.ShardedEngine
	// Advance, when not nil, moves the engine's clock forward by d:
	// the clock of idle times of pending records too.
	Advance func(d time.Duration)
}

// ShardedFactory makes the sharded stream of one test (or of one part of
// it: a test may ask for several). It may fail the test or skip it.
type ShardedFactory func(t *testing.T, args xstream.ShardedArgs) ShardedTarget

// RunSharded runs the conformance suite of ShardedEngine: the Kinesis
// facts that any implementation must match (the shards of a new stream,
// routing by MD5, the IDs, parents and ranges of splits and merges, the
// errors of bad reshards, iterators and GetRecords with child shards at a
// shard's end, the parent-before-child reader with checkpoints, the
// sharded consumer groups, ReadGroup with Claim taking over a dead
// consumer's records, and per-key order through groups and reader across
// reshard trees with empty shards between generations, as RunShardOrder
// checks it). Every case runs on sharded streams of its own from
// newStream. The cases of Claim wait for ClaimMinIdle (100 ms) when the
// target has no Advance.
func RunSharded(t *testing.T, newStream ShardedFactory) {
	t.Helper()
	for _, c := range shardedCases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			c.run(&ST{T: t, ctx: ctx, newStream: newStream})
		})
	}
}

// ST is one sharded test.
type ST struct {
	*testing.T
	ctx       context.Context
	newStream ShardedFactory
}

// stream makes a sharded stream of n shards.
func (t *ST) stream(n int) xstream.ShardedEngine {
	t.Helper()
	return t.target(n).Engine
}

// target makes a sharded stream of n shards, with its clock's Advance.
func (t *ST) target(n int) ShardedTarget {
	t.Helper()
	target := t.newStream(t.T, xstream.ShardedArgs{Shards: n})
	require.NotNil(t, target.Engine, "the ShardedFactory returned no Engine")
	return target
}

// shardName is the Kinesis ID of shard number n.
func shardName(n int) string { return fmt.Sprintf("shardId-%012d", n) }

var two128 = new(big.Int).Lsh(big.NewInt(1), 128)

func bigKey(h xstream.HashKey) *big.Int {
	b := new(big.Int).SetUint64(h.Hi)
	return b.Lsh(b, 64).Or(b, new(big.Int).SetUint64(h.Lo))
}

// md5Key is a partition key's hash key, computed here from its MD5.
func md5Key(pk string) *big.Int {
	sum := md5.Sum([]byte(pk))
	return new(big.Int).SetBytes(sum[:])
}

func (t *ST) list(e xstream.ShardedEngine, f xstream.ShardFilter) []xstream.ShardInfo {
	t.Helper()
	out, err := e.ListShards(t.ctx, f)
	require.NoError(t, err)
	return out
}

func (t *ST) shard(e xstream.ShardedEngine, id string) xstream.ShardInfo {
	t.Helper()
	for _, s := range t.list(e, xstream.ShardFilter{}) {
		if s.ShardID == id {
			return s
		}
	}
	t.Fatalf("no shard %s", id)
	return xstream.ShardInfo{}
}

func (t *ST) open(e xstream.ShardedEngine) []string {
	t.Helper()
	var ids []string
	for _, s := range t.list(e, xstream.ShardFilter{Type: xstream.FilterAtLatest}) {
		ids = append(ids, s.ShardID)
	}
	return ids
}

// owner returns the ID of the OPEN shard whose range holds h.
func (t *ST) owner(e xstream.ShardedEngine, h *big.Int) string {
	t.Helper()
	for _, s := range t.list(e, xstream.ShardFilter{Type: xstream.FilterAtLatest}) {
		if bigKey(s.HashKeyRange.StartingHashKey).Cmp(h) <= 0 && h.Cmp(bigKey(s.HashKeyRange.EndingHashKey)) <= 0 {
			return s.ShardID
		}
	}
	t.Fatalf("no OPEN shard owns %s", h)
	return ""
}

func (t *ST) put(e xstream.ShardedEngine, pk string, fields ...string) xstream.PutResult {
	t.Helper()
	r, err := e.Put(t.ctx, pk, xstream.PutArgs{}, xstream.Fields(fields...)...)
	require.NoError(t, err, "Put %q", pk)
	return r
}

// all reads a whole shard with GetRecords from its trim horizon, pages of
// limit records, and returns the records and the last page.
func (t *ST) all(e xstream.ShardedEngine, shardID string, limit int) ([]xstream.Record, xstream.ShardRecords) {
	t.Helper()
	it, err := e.GetShardIterator(t.ctx, shardID, xstream.IteratorArgs{Type: xstream.TrimHorizon})
	require.NoError(t, err)
	var out []xstream.Record
	for range 10000 {
		page, err := e.GetRecords(t.ctx, it, limit)
		require.NoError(t, err)
		out = append(out, page.Records...)
		if page.NextShardIterator == "" || len(page.Records) == 0 {
			return out, page
		}
		it = page.NextShardIterator
	}
	t.Fatal("GetRecords never reached the end")
	return nil, xstream.ShardRecords{}
}

type shardedCase struct {
	name string
	run  func(t *ST)
}

var shardedCases = []shardedCase{
	{"NewShards", func(t *ST) {
		// 1 to 16 shards divide 2^128 evenly, the last one taking the
		// remainder, numbered from shardId-000000000000.
		for n := 1; n <= 16; n++ {
			e := t.stream(n)
			shards := t.list(e, xstream.ShardFilter{})
			require.Len(t, shards, n)
			q := new(big.Int).Div(two128, big.NewInt(int64(n)))
			for i, s := range shards {
				assert.Equal(t, shardName(i), s.ShardID)
				assert.Equal(t, xstream.ShardOpen, s.State)
				assert.Empty(t, s.ParentShardID)
				assert.Empty(t, s.AdjacentParentShardID)
				start := new(big.Int).Mul(q, big.NewInt(int64(i)))
				end := new(big.Int).Sub(new(big.Int).Add(start, q), big.NewInt(1))
				if i == n-1 {
					end.Sub(two128, big.NewInt(1))
				}
				assert.Zero(t, start.Cmp(bigKey(s.HashKeyRange.StartingHashKey)), "%d shards: shard %d starts at %s", n, i, s.HashKeyRange.StartingHashKey)
				assert.Zero(t, end.Cmp(bigKey(s.HashKeyRange.EndingHashKey)), "%d shards: shard %d ends at %s", n, i, s.HashKeyRange.EndingHashKey)
				assert.True(t, s.SequenceNumberRange.EndingSequenceNumber.IsZero())
			}
			st, err := e.Status(t.ctx)
			require.NoError(t, err)
			assert.Equal(t, xstream.StreamActive, st)
		}
	}},
	{"Routing", func(t *ST) {
		e := t.stream(5)
		last := map[string]xstream.ID{}
		for i := range 300 {
			pk := "key-" + strconv.Itoa(i%37)
			r := t.put(e, pk, "i", strconv.Itoa(i))
			require.Equal(t, t.owner(e, md5Key(pk)), r.ShardID, "key %q goes to the shard owning its MD5", pk)
			if prev, ok := last[pk]; ok {
				require.True(t, prev.Less(r.SequenceNumber), "key %q: sequence numbers grow", pk)
			}
			last[pk] = r.SequenceNumber
		}
		// An explicit hash key routes instead of the partition key.
		r, err := e.Put(t.ctx, "any", xstream.PutArgs{ExplicitHashKey: "0"}, xstream.Fields("a", "b")...)
		require.NoError(t, err)
		assert.Equal(t, shardName(0), r.ShardID)
		r, err = e.Put(t.ctx, "any", xstream.PutArgs{ExplicitHashKey: new(big.Int).Sub(two128, big.NewInt(1)).String()}, xstream.Fields("a", "b")...)
		require.NoError(t, err)
		assert.Equal(t, shardName(4), r.ShardID)
		// Records keep their partition key and fields in order.
		recs, _ := t.all(e, shardName(0), 0)
		require.NotEmpty(t, recs)
		assert.Equal(t, "any", recs[len(recs)-1].PartitionKey)
		assert.Equal(t, xstream.Fields("a", "b"), recs[len(recs)-1].Fields)
	}},
	{"PutErrors", func(t *ST) {
		e := t.stream(2)
		for _, c := range []struct {
			pk, ehk string
			fields  []xstream.Field
			err     error
		}{
			{"", "", xstream.Fields("a", "b"), xstream.ErrInvalidPartitionKey},
			{string(make([]byte, 257)), "", xstream.Fields("a", "b"), xstream.ErrInvalidPartitionKey},
			{"k", "12a", xstream.Fields("a", "b"), xstream.ErrInvalidHashKey},
			{"k", two128.String(), xstream.Fields("a", "b"), xstream.ErrInvalidHashKey},
			{"k", "", nil, xstream.ErrNoFields},
		} {
			_, err := e.Put(t.ctx, c.pk, xstream.PutArgs{ExplicitHashKey: c.ehk}, c.fields...)
			require.ErrorIs(t, err, c.err, "pk %q ehk %q", c.pk, c.ehk)
		}
		for i := range 2 {
			recs, _ := t.all(e, shardName(i), 0)
			assert.Empty(t, recs, "a refused put stores nothing")
		}
	}},
	{"PutRecords", func(t *ST) {
		e := t.stream(3)
		res, failed, err := e.PutRecords(t.ctx, []xstream.PutRecordsEntry{
			{PartitionKey: "a", Fields: xstream.Fields("n", "1")},
			{PartitionKey: "", Fields: xstream.Fields("n", "2")},
			{PartitionKey: "c", Fields: xstream.Fields("n", "3")},
		})
		require.NoError(t, err)
		require.Len(t, res, 3)
		assert.Equal(t, 1, failed)
		assert.Equal(t, t.owner(e, md5Key("a")), res[0].ShardID)
		assert.ErrorIs(t, res[1].Err, xstream.ErrInvalidPartitionKey)
		assert.Equal(t, t.owner(e, md5Key("c")), res[2].ShardID)
	}},
	{"Split", func(t *ST) {
		e := t.stream(2)
		r, err := e.Put(t.ctx, "k", xstream.PutArgs{ExplicitHashKey: "100"}, xstream.Fields("v", "1")...)
		require.NoError(t, err)
		require.NoError(t, e.SplitShard(t.ctx, shardName(0), "1000"))
		parent := t.shard(e, shardName(0))
		assert.Equal(t, xstream.ShardClosed, parent.State)
		assert.Equal(t, r.SequenceNumber, parent.SequenceNumberRange.EndingSequenceNumber)
		lo, hi := t.shard(e, shardName(2)), t.shard(e, shardName(3))
		assert.Equal(t, shardName(0), lo.ParentShardID)
		assert.Equal(t, shardName(0), hi.ParentShardID)
		assert.Empty(t, lo.AdjacentParentShardID)
		assert.Equal(t, xstream.HashKeyRange{StartingHashKey: xstream.HashKey{}, EndingHashKey: xstream.HashKey{Lo: 999}}, lo.HashKeyRange)
		assert.Equal(t, xstream.HashKeyRange{StartingHashKey: xstream.HashKey{Lo: 1000}, EndingHashKey: parent.HashKeyRange.EndingHashKey}, hi.HashKeyRange)
		assert.Equal(t, []string{shardName(1), shardName(2), shardName(3)}, t.open(e))
		// New records go to the children; the parent's stays readable.
		r2, err := e.Put(t.ctx, "k", xstream.PutArgs{ExplicitHashKey: "100"}, xstream.Fields("v", "2")...)
		require.NoError(t, err)
		assert.Equal(t, shardName(2), r2.ShardID)
		assert.True(t, r.SequenceNumber.Less(r2.SequenceNumber))
		recs, last := t.all(e, shardName(0), 0)
		require.Len(t, recs, 1)
		assert.Equal(t, r.SequenceNumber, recs[0].SequenceNumber)
		assert.Empty(t, last.NextShardIterator, "a CLOSED shard read to its end has no next iterator")
		require.Len(t, last.ChildShards, 2)
		assert.Equal(t, shardName(2), last.ChildShards[0].ShardID)
		assert.Equal(t, []string{shardName(0)}, last.ChildShards[0].ParentShards)
		assert.Equal(t, lo.HashKeyRange, last.ChildShards[0].HashKeyRange)
		assert.Equal(t, shardName(3), last.ChildShards[1].ShardID)
	}},
	{"Merge", func(t *ST) {
		e := t.stream(3)
		one, two := t.shard(e, shardName(1)), t.shard(e, shardName(2))
		require.NoError(t, e.MergeShards(t.ctx, shardName(1), shardName(2)))
		child := t.shard(e, shardName(3))
		assert.Equal(t, shardName(1), child.ParentShardID)
		assert.Equal(t, shardName(2), child.AdjacentParentShardID)
		assert.Equal(t, xstream.HashKeyRange{StartingHashKey: one.HashKeyRange.StartingHashKey, EndingHashKey: two.HashKeyRange.EndingHashKey}, child.HashKeyRange)
		assert.Equal(t, xstream.ShardClosed, t.shard(e, shardName(1)).State)
		assert.Equal(t, xstream.ShardClosed, t.shard(e, shardName(2)).State)
		assert.Equal(t, []string{shardName(0), shardName(3)}, t.open(e))
		lin, err := e.Lineage(t.ctx)
		require.NoError(t, err)
		assert.Contains(t, lin.String(), shardName(3)+" OPEN")
	}},
	{"UpdateShardCount", func(t *ST) {
		e := t.stream(3)
		for _, target := range []int{6, 4, 2, 3} {
			require.NoError(t, e.UpdateShardCount(t.ctx, target), "to %d", target)
			open := t.list(e, xstream.ShardFilter{Type: xstream.FilterAtLatest})
			require.Len(t, open, target)
			slices.SortFunc(open, func(a, b xstream.ShardInfo) int {
				return bigKey(a.HashKeyRange.StartingHashKey).Cmp(bigKey(b.HashKeyRange.StartingHashKey))
			})
			next := new(big.Int)
			for _, s := range open { // by starting key, they partition the key space
				require.Zero(t, bigKey(s.HashKeyRange.StartingHashKey).Cmp(next), "to %d: gap before %s", target, s.ShardID)
				next = bigKey(s.HashKeyRange.EndingHashKey)
				next.Add(next, big.NewInt(1))
			}
			require.Zero(t, next.Cmp(two128))
		}
		st, err := e.Status(t.ctx)
		require.NoError(t, err)
		assert.Equal(t, xstream.StreamActive, st)
	}},
	{"ReshardErrors", func(t *ST) {
		e := t.stream(4)
		require.NoError(t, e.SplitShard(t.ctx, shardName(0), "10"))
		before, err := e.Lineage(t.ctx)
		require.NoError(t, err)
		for _, c := range []struct {
			name string
			run  func() error
			err  error
			msg  string
		}{
			{"unknown shard", func() error { return e.SplitShard(t.ctx, shardName(99), "5") }, xstream.ErrShardNotFound, shardName(99)},
			{"split closed", func() error { return e.SplitShard(t.ctx, shardName(0), "5") }, xstream.ErrShardClosed, shardName(0)},
			{"split outside", func() error { return e.SplitShard(t.ctx, shardName(1), "3") }, xstream.ErrInvalidArgument, "3"},
			{"split key not a number", func() error { return e.SplitShard(t.ctx, shardName(1), "abc") }, xstream.ErrInvalidHashKey, "abc"},
			{"merge closed", func() error { return e.MergeShards(t.ctx, shardName(0), shardName(1)) }, xstream.ErrShardClosed, shardName(0)},
			{"merge not adjacent", func() error { return e.MergeShards(t.ctx, shardName(1), shardName(3)) }, xstream.ErrInvalidArgument, "adjacent"},
			{"merge unknown", func() error { return e.MergeShards(t.ctx, shardName(1), shardName(77)) }, xstream.ErrShardNotFound, shardName(77)},
			{"scale to zero", func() error { return e.UpdateShardCount(t.ctx, 0) }, xstream.ErrInvalidArgument, "0"},
		} {
			err := c.run()
			require.ErrorIs(t, err, c.err, c.name)
			assert.Contains(t, err.Error(), c.msg, c.name)
			after, err := e.Lineage(t.ctx)
			require.NoError(t, err)
			require.Equal(t, before.String(), after.String(), c.name+" changed the stream")
		}
	}},
	{"Iterators", func(t *ST) {
		e := t.stream(1)
		var seqs []xstream.ID
		for i := range 25 {
			seqs = append(seqs, t.put(e, "k", "i", strconv.Itoa(i)).SequenceNumber)
		}
		recs, _ := t.all(e, shardName(0), 7) // pages of 7
		require.Len(t, recs, 25)
		for i, r := range recs {
			assert.Equal(t, seqs[i], r.SequenceNumber)
			assert.Equal(t, xstream.Fields("i", strconv.Itoa(i)), r.Fields)
			assert.Equal(t, shardName(0), r.ShardID)
		}
		at := func(typ xstream.ShardIteratorType, seq xstream.ID) []xstream.Record {
			it, err := e.GetShardIterator(t.ctx, shardName(0), xstream.IteratorArgs{Type: typ, SequenceNumber: seq.String()})
			require.NoError(t, err)
			page, err := e.GetRecords(t.ctx, it, 0)
			require.NoError(t, err)
			assert.NotEmpty(t, page.NextShardIterator, "an OPEN shard always has a next iterator")
			return page.Records
		}
		assert.Len(t, at(xstream.AtSequenceNumber, seqs[10]), 15)
		assert.Len(t, at(xstream.AfterSequenceNumber, seqs[10]), 14)
		assert.Empty(t, at(xstream.Latest, xstream.ID{}))
		// Latest sees only what comes after it.
		it, err := e.GetShardIterator(t.ctx, shardName(0), xstream.IteratorArgs{Type: xstream.Latest})
		require.NoError(t, err)
		r := t.put(e, "k", "i", "late")
		page, err := e.GetRecords(t.ctx, it, 0)
		require.NoError(t, err)
		require.Len(t, page.Records, 1)
		assert.Equal(t, r.SequenceNumber, page.Records[0].SequenceNumber)
		// Errors.
		_, err = e.GetShardIterator(t.ctx, shardName(5), xstream.IteratorArgs{Type: xstream.TrimHorizon})
		require.ErrorIs(t, err, xstream.ErrShardNotFound)
		_, err = e.GetRecords(t.ctx, it, -1)
		require.ErrorIs(t, err, xstream.ErrInvalidArgument)
		_, err = e.GetRecords(t.ctx, it, 10001)
		require.ErrorIs(t, err, xstream.ErrInvalidArgument)
		other := t.stream(1)
		foreign, err := other.GetShardIterator(t.ctx, shardName(0), xstream.IteratorArgs{Type: xstream.TrimHorizon})
		require.NoError(t, err)
		for _, bad := range []string{"", "x", foreign} {
			_, err = e.GetRecords(t.ctx, bad, 0)
			require.ErrorIs(t, err, xstream.ErrInvalidIterator, "iterator %q", bad)
		}
	}},
	{"Reader", func(t *ST) {
		// Per-key order across a split, a merge and a rescale, read by
		// one reader; a second resumes from the first's checkpoints.
		e := t.stream(2)
		keys := 20
		seq := make([]int, keys)
		putRound := func(n int) {
			for i := range n {
				k := i % keys
				t.put(e, "pk"+strconv.Itoa(k), "n", strconv.Itoa(seq[k]))
				seq[k]++
			}
		}
		putRound(60)
		require.NoError(t, e.SplitShard(t.ctx, shardName(0), new(big.Int).Rsh(two128, 2).String()))
		putRound(60)
		require.NoError(t, e.MergeShards(t.ctx, shardName(2), shardName(3)))
		putRound(60)
		require.NoError(t, e.UpdateShardCount(t.ctx, 3))
		putRound(60)
		r, err := e.NewReader(t.ctx)
		require.NoError(t, err)
		next := make([]int, keys)
		total := 0
		read := func(r xstream.RecordReader, upTo int) {
			for total < upTo {
				recs, err := r.Read(t.ctx, xstream.ReadArgs{Count: 17, Block: 5 * time.Second})
				require.NoError(t, err)
				require.NotEmpty(t, recs, "the reader stopped at %d of %d records", total, upTo)
				for _, rec := range recs {
					k, err := strconv.Atoi(rec.PartitionKey[2:])
					require.NoError(t, err)
					require.Equal(t, xstream.Fields("n", strconv.Itoa(next[k])), rec.Fields, "key %s out of order", rec.PartitionKey)
					next[k]++
					total++
				}
			}
		}
		read(r, 120)
		r2, err := e.NewReader(t.ctx, r.Checkpoints()...)
		require.NoError(t, err)
		read(r2, 240)
		assert.Equal(t, seq, next, "every record read once")
		ctx, cancel := context.WithTimeout(t.ctx, 50*time.Millisecond)
		defer cancel()
		recs, err := r2.Read(ctx, xstream.ReadArgs{Block: xstream.BlockForever})
		assert.Empty(t, recs)
		require.ErrorIs(t, err, context.DeadlineExceeded)
	}},
	{"Groups", func(t *ST) {
		e := t.stream(1)
		for i := range 3 {
			t.put(e, "k", "n", strconv.Itoa(i))
		}
		require.NoError(t, e.CreateGroup(t.ctx, "g", xstream.ShardGroupOptions{StrictOrder: true}))
		require.ErrorIs(t, e.CreateGroup(t.ctx, "g", xstream.ShardGroupOptions{}), xstream.ErrGroupExists)
		require.NoError(t, e.SplitShard(t.ctx, shardName(0), "1000"))
		r := t.put(e, "k", "n", "3") // in a child
		got, err := e.ReadGroup(t.ctx, "g", "c1", xstream.ReadGroupArgs{})
		require.NoError(t, err)
		require.Len(t, got, 3, "the parent's records first; the child waits for their acks")
		for _, rec := range got {
			assert.Equal(t, shardName(0), rec.ShardID)
		}
		pend, err := e.Pending(t.ctx, "g")
		require.NoError(t, err)
		require.Len(t, pend, 1)
		assert.Equal(t, int64(3), pend[0].Count)
		more, err := e.ReadGroup(t.ctx, "g", "c1", xstream.ReadGroupArgs{})
		require.NoError(t, err)
		assert.Empty(t, more, "StrictOrder holds the child back until the parent is acknowledged")
		refs := make([]xstream.RecordRef, len(got))
		for i, rec := range got {
			refs[i] = xstream.RecordRef{ShardID: rec.ShardID, SequenceNumber: rec.SequenceNumber}
		}
		n, err := e.Ack(t.ctx, "g", refs...)
		require.NoError(t, err)
		assert.Equal(t, int64(3), n)
		got, err = e.ReadGroup(t.ctx, "g", "c1", xstream.ReadGroupArgs{})
		require.NoError(t, err)
		require.Len(t, got, 1)
		assert.Equal(t, r.ShardID, got[0].ShardID)
		assert.Equal(t, r.SequenceNumber, got[0].SequenceNumber)
		// Claim and AutoClaim give the pending record to another consumer.
		claimed, err := e.Claim(t.ctx, "g", "c2", 0, []xstream.RecordRef{{ShardID: r.ShardID, SequenceNumber: r.SequenceNumber}}, xstream.ClaimArgs{})
		require.NoError(t, err)
		require.Len(t, claimed, 1)
		ac, err := e.AutoClaim(t.ctx, "g", "c1", 0, xstream.RecordRef{}, xstream.AutoClaimArgs{})
		require.NoError(t, err)
		require.Len(t, ac.Records, 1)
		assert.Equal(t, r.SequenceNumber, ac.Records[0].SequenceNumber)
		// Errors.
		_, err = e.ReadGroup(t.ctx, "nope", "c1", xstream.ReadGroupArgs{})
		require.ErrorIs(t, err, xstream.ErrNoGroup)
		_, err = e.Ack(t.ctx, "nope", refs...)
		require.ErrorIs(t, err, xstream.ErrNoGroup)
		_, err = e.Pending(t.ctx, "nope")
		require.ErrorIs(t, err, xstream.ErrNoGroup)
	}},
	{"GroupsEmptyIntermediate", emptyIntermediate},
	{"GroupsClaimDeadConsumer", claimDeadConsumer},
	{"GroupsClaimCount", claimCount},
	{"GroupsClaimBadArgs", claimBadArgs},
	{"GroupsClaimBlocked", claimBlocked},
	{"OrderAcrossGenerations", func(t *ST) { shardOrder(t, 1, 300) }},
	{"Retention", func(t *ST) {
		e := t.stream(1)
		d, err := e.Retention(t.ctx)
		require.NoError(t, err)
		assert.Equal(t, xstream.DefaultRetention, d)
		require.NoError(t, e.SetRetention(t.ctx, 48*time.Hour))
		d, err = e.Retention(t.ctx)
		require.NoError(t, err)
		assert.Equal(t, 48*time.Hour, d)
		require.ErrorIs(t, e.SetRetention(t.ctx, -time.Second), xstream.ErrInvalidArgument)
		d, err = e.Retention(t.ctx)
		require.NoError(t, err)
		assert.Equal(t, 48*time.Hour, d, "a refused SetRetention changes nothing")
	}},
}
