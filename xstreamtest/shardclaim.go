package xstreamtest

import (
	"math/big"
	"strconv"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream"
)

// A sharded ReadGroup with Claim takes over the records other consumers
// left pending, so that a dead consumer does not stall the group.

// claimIdle is the ClaimMinIdle of the cases below: small, as on an
// engine whose clock is real the case waits for it to pass.
const claimIdle = 100 * time.Millisecond

// refs returns the references of recs.
func refs(recs []xstream.Record) []xstream.RecordRef {
	out := make([]xstream.RecordRef, len(recs))
	for i, r := range recs {
		out[i] = xstream.RecordRef{ShardID: r.ShardID, SequenceNumber: r.SequenceNumber}
	}
	return out
}

// readGroup reads group g of e as consumer with args.
func (t *ST) readGroup(e xstream.ShardedEngine, g, consumer string, args xstream.ReadGroupArgs) []xstream.Record {
	t.Helper()
	recs, err := e.ReadGroup(t.ctx, g, consumer, args)
	require.NoError(t, err, "ReadGroup %s %+v", consumer, args)
	return recs
}

// pendingOf returns, shard by shard, the consumers with records pending
// in group g of e and how many.
func (t *ST) pendingOf(e xstream.ShardedEngine, g string) map[string][]xstream.ConsumerPending {
	t.Helper()
	pend, err := e.Pending(t.ctx, g)
	require.NoError(t, err)
	out := map[string][]xstream.ConsumerPending{}
	for _, p := range pend {
		out[p.ShardID] = p.Consumers
	}
	return out
}

// claimDeadConsumer: a consumer of a StrictOrder group reads the records
// of key K in the only shard and dies; a split, and a split of K's child
// while it is still empty, put K's next records in a grandchild, which
// the group holds back. A ReadGroup with Claim of another consumer takes
// nothing while the dead one's records are not idle for ClaimMinIdle,
// and takes them all, in put order, in the first read after that; once
// it acknowledges them, its next read delivers the grandchild's records.
// On an engine whose clock is real, the case waits ClaimMinIdle.
func claimDeadConsumer(t *ST) {
	const k = "K"
	target := t.target(1)
	e := target.Engine
	require.NoError(t, e.CreateGroup(t.ctx, "g", xstream.ShardGroupOptions{StrictOrder: true}))
	for i := range 3 {
		t.put(e, k, "n", strconv.Itoa(i))
	}
	start := time.Now()
	dead := t.readGroup(e, "g", "dead", xstream.ReadGroupArgs{})
	held := time.Now() // the dead consumer's records were delivered in [start, held]
	require.Len(t, dead, 3)
	half := new(big.Int).Rsh(two128, 1)
	require.NoError(t, e.SplitShard(t.ctx, shardName(0), half.String()))
	c := t.shard(e, t.owner(e, md5Key(k)))
	mid := new(big.Int).Add(bigKey(c.HashKeyRange.StartingHashKey), bigKey(c.HashKeyRange.EndingHashKey))
	require.NoError(t, e.SplitShard(t.ctx, c.ShardID, mid.Rsh(mid, 1).String()))
	var next []xstream.PutResult
	for i := 3; i < 5; i++ {
		next = append(next, t.put(e, k, "n", strconv.Itoa(i)))
	}
	require.Empty(t, t.readGroup(e, "g", "live", xstream.ReadGroupArgs{}), "the grandchild waits for the dead consumer's records")

	claim := xstream.ReadGroupArgs{Claim: true, ClaimMinIdle: claimIdle}
	if target.Advance != nil {
		target.Advance(claimIdle - time.Millisecond)
	}
	early := t.readGroup(e, "g", "live", claim)
	if target.Advance != nil || time.Since(start) < claimIdle-2*time.Millisecond {
		require.Empty(t, early, "records idle less than ClaimMinIdle stay with their consumer")
	}
	if target.Advance != nil {
		target.Advance(time.Millisecond)
	} else if wait := claimIdle + 2*time.Millisecond - time.Since(held); wait > 0 {
		time.Sleep(wait) // the dead consumer's records become idle enough
	}
	got := early
	if len(got) == 0 {
		got = t.readGroup(e, "g", "live", claim)
	}
	require.Len(t, got, 3, "the first read after ClaimMinIdle takes the dead consumer's records over")
	assert.Equal(t, refs(dead), refs(got), "taken over in put order")
	for i, r := range got {
		assert.Equal(t, k, r.PartitionKey)
		assert.Equal(t, xstream.Fields("n", strconv.Itoa(i)), r.Fields)
		assert.Equal(t, int64(1), r.Deliveries, "delivered once before")
	}
	assert.Equal(t, map[string][]xstream.ConsumerPending{shardName(0): {{Name: "live", Count: 3}}}, t.pendingOf(e, "g"))
	require.Empty(t, t.readGroup(e, "g", "other", xstream.ReadGroupArgs{}), "StrictOrder: the grandchild waits for the new owner's acks")
	n, err := e.Ack(t.ctx, "g", refs(got)...)
	require.NoError(t, err)
	require.Equal(t, int64(3), n)
	kids := t.readGroup(e, "g", "live", xstream.ReadGroupArgs{})
	require.Len(t, kids, 2, "the next read delivers the grandchild's records")
	for i, r := range kids {
		assert.Equal(t, next[i].ShardID, r.ShardID)
		assert.Equal(t, next[i].SequenceNumber, r.SequenceNumber)
		assert.Zero(t, r.Deliveries, "a new record")
	}
}

// claimCount: with a ClaimMinIdle of 0 a ReadGroup with Claim takes
// every pending record, whoever has it (itself included), shard by shard
// in shard order and by sequence number within a shard, before new
// records, Count capping both together; with NoAck the records it takes
// stay pending, its new ones do not. This needs no clock.
func claimCount(t *ST) {
	e := t.stream(2)
	require.NoError(t, e.CreateGroup(t.ctx, "g", xstream.ShardGroupOptions{}))
	last := new(big.Int).Sub(two128, big.NewInt(1)).String()
	put := func(ehk, v string) xstream.PutResult {
		t.Helper()
		r, err := e.Put(t.ctx, "k"+v, xstream.PutArgs{ExplicitHashKey: ehk}, xstream.Fields("v", v)...)
		require.NoError(t, err)
		return r
	}
	var zero, one []xstream.PutResult // the records of shard 0 and shard 1
	for i := range 3 {
		zero = append(zero, put("0", "a"+strconv.Itoa(i)))
		one = append(one, put(last, "b"+strconv.Itoa(i)))
	}
	require.Len(t, t.readGroup(e, "g", "dead", xstream.ReadGroupArgs{}), 6)
	zero = append(zero, put("0", "a3"))
	one = append(one, put(last, "b3"))
	type rec struct {
		ref        xstream.RecordRef
		deliveries int64
	}
	ref := func(r xstream.PutResult) xstream.RecordRef {
		return xstream.RecordRef(r)
	}
	recsOf := func(recs []xstream.Record) []rec {
		out := make([]rec, len(recs))
		for i, r := range refs(recs) {
			out[i] = rec{r, recs[i].Deliveries}
		}
		return out
	}

	got := t.readGroup(e, "g", "live", xstream.ReadGroupArgs{Claim: true, Count: 4})
	assert.Equal(t, []rec{{ref(zero[0]), 1}, {ref(zero[1]), 1}, {ref(zero[2]), 1}, {ref(one[0]), 1}}, recsOf(got),
		"shard 0's pending records, then shard 1's, up to Count")

	got = t.readGroup(e, "g", "live", xstream.ReadGroupArgs{Claim: true})
	require.Len(t, got, 8)
	assert.Equal(t, []rec{
		{ref(zero[0]), 2}, {ref(zero[1]), 2}, {ref(zero[2]), 2},
		{ref(one[0]), 2}, {ref(one[1]), 1}, {ref(one[2]), 1},
	}, recsOf(got[:6]), "every pending record first, its own too")
	assert.ElementsMatch(t, []rec{{ref(zero[3]), 0}, {ref(one[3]), 0}}, recsOf(got[6:]), "then the new records")
	for _, r := range got {
		assert.Equal(t, "k"+r.Fields[0].Value, r.PartitionKey, "a record taken over comes with its key and fields")
	}

	three := put("0", "a4")
	got = t.readGroup(e, "g", "other", xstream.ReadGroupArgs{Claim: true, NoAck: true})
	require.Len(t, got, 9)
	assert.Equal(t, rec{ref(three), 0}, recsOf(got)[8])
	assert.Equal(t, map[string][]xstream.ConsumerPending{
		shardName(0): {{Name: "other", Count: 4}},
		shardName(1): {{Name: "other", Count: 4}},
	}, t.pendingOf(e, "g"), "with NoAck the records taken over stay pending, the new one does not")
}

// claimBadArgs: a negative ClaimMinIdle, or a ClaimMinIdle without Claim,
// fails with ErrInvalidArgument and changes nothing, as does Claim on a
// group that does not exist (ErrNoGroup).
func claimBadArgs(t *ST) {
	e := t.stream(1)
	require.NoError(t, e.CreateGroup(t.ctx, "g", xstream.ShardGroupOptions{StrictOrder: true}))
	for i := range 4 {
		t.put(e, "k", "n", strconv.Itoa(i))
	}
	require.Len(t, t.readGroup(e, "g", "dead", xstream.ReadGroupArgs{Count: 2}), 2)
	before := t.pendingOf(e, "g")
	for _, args := range []xstream.ReadGroupArgs{
		{Claim: true, ClaimMinIdle: -time.Millisecond},
		{ClaimMinIdle: time.Millisecond},
		{ClaimMinIdle: time.Millisecond, Block: time.Second},
		{Claim: true, Count: -1},
	} {
		recs, err := e.ReadGroup(t.ctx, "g", "live", args)
		require.ErrorIs(t, err, xstream.ErrInvalidArgument, "%+v", args)
		assert.Empty(t, recs)
	}
	_, err := e.ReadGroup(t.ctx, "nope", "live", xstream.ReadGroupArgs{Claim: true})
	require.ErrorIs(t, err, xstream.ErrNoGroup)
	assert.Equal(t, before, t.pendingOf(e, "g"), "nothing taken over")
	assert.Len(t, t.readGroup(e, "g", "live", xstream.ReadGroupArgs{}), 2, "nothing delivered")
}

// claimBlocked: a blocked ReadGroup with Claim that finds nothing idle
// enough waits for new records only, and returns nothing when its Block
// passes; the records pending stay with their consumer.
func claimBlocked(t *ST) {
	e := t.stream(1)
	require.NoError(t, e.CreateGroup(t.ctx, "g", xstream.ShardGroupOptions{}))
	t.put(e, "k", "n", "0")
	require.Len(t, t.readGroup(e, "g", "dead", xstream.ReadGroupArgs{}), 1)
	claim := xstream.ReadGroupArgs{Claim: true, ClaimMinIdle: time.Hour, Block: 20 * time.Millisecond}
	assert.Empty(t, t.readGroup(e, "g", "live", claim), "Block passes")

	claim.Block = waitLimit / 2
	ch := async(func() ([]xstream.Record, error) { return e.ReadGroup(t.ctx, "g", "live", claim) })
	var put []xstream.PutResult
	var got []xstream.Record
	var err error
	for got == nil && err == nil {
		put = append(put, t.put(e, "k", "n", strconv.Itoa(len(put)+1)))
		select {
		case r := <-ch:
			got, err = r.v, r.err
			require.NoError(t, err)
			require.NotNil(t, got, "the blocked read returned nothing")
		case <-time.After(5 * time.Millisecond):
		}
	}
	require.NoError(t, err)
	require.NotEmpty(t, got)
	for i, r := range got {
		assert.Equal(t, put[i].SequenceNumber, r.SequenceNumber, "new records only")
		assert.Zero(t, r.Deliveries)
	}
	assert.Equal(t, xstream.ConsumerPending{Name: "dead", Count: 1}, t.pendingOf(e, "g")[shardName(0)][0])
}
