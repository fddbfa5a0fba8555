package xstream

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func refsOf(rs []Record) []RecordRef {
	out := make([]RecordRef, len(rs))
	for i, r := range rs {
		out[i] = RecordRef{ShardID: r.ShardID, SequenceNumber: r.SequenceNumber}
	}
	return out
}

func readGroupAll(t testing.TB, ss *ShardedStream, group, consumer string, count int) []Record {
	t.Helper()
	var out []Record
	for {
		rs, err := ss.ReadGroup(context.Background(), group, consumer, ReadGroupArgs{Count: count})
		require.NoError(t, err)
		if len(rs) == 0 {
			return out
		}
		out = append(out, rs...)
	}
}

// reshardedWithKeys makes a stream with records of shardKeys in a parent,
// its two children and the merge of the children.
func reshardedWithKeys(t testing.TB, clk *testClock) (*ShardedStream, *keyWriter) {
	ss := newSharded(t, 1, clk)
	w := &keyWriter{ss: ss, sent: map[string]int{}}
	for range 5 {
		w.put(t, shardKeys...)
	}
	require.NoError(t, ss.SplitShard(shardID(0), uniformWidth(2).String()))
	for range 5 {
		w.put(t, shardKeys...)
	}
	require.NoError(t, ss.MergeShards(shardID(1), shardID(2)))
	for range 5 {
		w.put(t, shardKeys...)
	}
	return ss, w
}

func TestShardGroupParentBeforeChild(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss, w := reshardedWithKeys(t, clk)
	require.NoError(t, ss.CreateGroup("g", ShardGroupOptions{}))
	got := readGroupAll(t, ss, "g", "c1", 4)
	o := newOrderChecker()
	o.add(t, got)
	assert.Equal(t, w.sent, o.next, "every record once, each key in put order")
	last := map[string]int{}
	first := map[string]int{}
	for i, r := range got {
		last[r.ShardID] = i
		if _, ok := first[r.ShardID]; !ok {
			first[r.ShardID] = i
		}
	}
	assert.Less(t, last[shardID(0)], first[shardID(1)])
	assert.Less(t, last[shardID(0)], first[shardID(2)])
	assert.Less(t, last[shardID(1)], first[shardID(3)])
	assert.Less(t, last[shardID(2)], first[shardID(3)])

	pend, err := ss.Pending("g")
	require.NoError(t, err)
	var total int64
	for _, p := range pend {
		total += p.Count
		assert.Equal(t, []ConsumerPending{{Name: "c1", Count: p.Count}}, p.Consumers)
	}
	assert.Equal(t, int64(len(got)), total)
	n, err := ss.Ack("g", refsOf(got)...)
	require.NoError(t, err)
	assert.Equal(t, int64(len(got)), n)
	pend, err = ss.Pending("g")
	require.NoError(t, err)
	assert.Empty(t, pend)

	// Records put later, and shards made later, reach the group too.
	require.NoError(t, ss.SplitShard(shardID(3), uniformWidth(4).String()))
	w.put(t, shardKeys...)
	more := readGroupAll(t, ss, "g", "c2", 0)
	o.add(t, more)
	assert.Equal(t, w.sent, o.next)
}

func TestShardGroupStrictOrder(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss, _ := reshardedWithKeys(t, clk)
	require.NoError(t, ss.CreateGroup("strict", ShardGroupOptions{StrictOrder: true}))
	require.NoError(t, ss.CreateGroup("loose", ShardGroupOptions{}))

	parent := readGroupAll(t, ss, "strict", "c", 0)
	require.NotEmpty(t, parent)
	for _, r := range parent {
		require.Equal(t, shardID(0), r.ShardID, "only the parent until it is acknowledged")
	}
	// The loose group moves on to the children once the parent is delivered.
	loose := readGroupAll(t, ss, "loose", "c", 0)
	assert.Greater(t, len(loose), len(parent))

	// Acknowledging all but one parent record keeps the children back.
	_, err := ss.Ack("strict", refsOf(parent[1:])...)
	require.NoError(t, err)
	rs, err := ss.ReadGroup(context.Background(), "strict", "c", ReadGroupArgs{})
	require.NoError(t, err)
	assert.Empty(t, rs)
	_, err = ss.Ack("strict", refsOf(parent[:1])...)
	require.NoError(t, err)
	children := readGroupAll(t, ss, "strict", "c", 0)
	require.NotEmpty(t, children)
	for _, r := range children {
		require.Contains(t, []string{shardID(1), shardID(2)}, r.ShardID, "the merge child waits for both children's acks")
	}
	_, err = ss.Ack("strict", refsOf(children)...)
	require.NoError(t, err)
	rest := readGroupAll(t, ss, "strict", "c", 0)
	require.NotEmpty(t, rest)
	for _, r := range rest {
		require.Equal(t, shardID(3), r.ShardID)
	}
	assert.Equal(t, len(loose), len(parent)+len(children)+len(rest))
}

func TestShardGroupBlocksUntilAck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := newTestClock(1_700_000_000_000)
		ss := newSharded(t, 1, clk)
		require.NoError(t, ss.CreateGroup("g", ShardGroupOptions{StrictOrder: true}))
		r1, err := ss.Put("k", PutArgs{}, Fields("n", "0")...)
		require.NoError(t, err)
		require.NoError(t, ss.SplitShard(shardID(0), "1000"))
		r2, err := ss.Put("k", PutArgs{ExplicitHashKey: "5"}, Fields("n", "1")...)
		require.NoError(t, err)

		first, err := ss.ReadGroup(context.Background(), "g", "c", ReadGroupArgs{})
		require.NoError(t, err)
		require.Equal(t, []ID{r1.SequenceNumber}, recordSeqs(first))

		got := make(chan []Record)
		go func() {
			rs, err := ss.ReadGroup(context.Background(), "g", "c", ReadGroupArgs{Block: BlockForever})
			assert.NoError(t, err)
			got <- rs
		}()
		synctest.Wait()
		select {
		case <-got:
			t.Fatal("the child was delivered before the parent's record was acknowledged")
		default:
		}
		_, err = ss.Ack("g", refsOf(first)...)
		require.NoError(t, err)
		assert.Equal(t, []ID{r2.SequenceNumber}, recordSeqs(<-got))

		// A timeout returns nothing; a Put wakes a waiting reader.
		rs, err := ss.ReadGroup(context.Background(), "g", "c", ReadGroupArgs{Block: time.Second})
		require.NoError(t, err)
		assert.Empty(t, rs)
		go func() {
			rs, err := ss.ReadGroup(context.Background(), "g", "c", ReadGroupArgs{Block: BlockForever})
			assert.NoError(t, err)
			got <- rs
		}()
		synctest.Wait()
		r3, err := ss.Put("k", PutArgs{ExplicitHashKey: "5"}, Fields("n", "2")...)
		require.NoError(t, err)
		assert.Equal(t, []ID{r3.SequenceNumber}, recordSeqs(<-got))
	})
}

func TestShardGroupExpiredParentDoesNotBlock(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 1, clk)
	require.NoError(t, ss.CreateGroup("g", ShardGroupOptions{StrictOrder: true}))
	_, err := ss.Put("k", PutArgs{}, Fields("n", "0")...)
	require.NoError(t, err)
	require.NoError(t, ss.SplitShard(shardID(0), "1000"))
	child, err := ss.Put("k", PutArgs{ExplicitHashKey: "5"}, Fields("n", "1")...)
	require.NoError(t, err)
	parent := readGroupAll(t, ss, "g", "c", 0)
	require.Len(t, parent, 1, "the parent's record, left pending")
	clk.advance(DefaultRetention + time.Millisecond)
	// The child's record is now past retention as well: put a fresh one.
	fresh, err := ss.Put("k", PutArgs{ExplicitHashKey: "5"}, Fields("n", "2")...)
	require.NoError(t, err)
	_ = child
	got := readGroupAll(t, ss, "g", "c", 0)
	assert.Equal(t, []ID{fresh.SequenceNumber}, recordSeqs(got))
}

func TestShardGroupClaim(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss, _ := reshardedWithKeys(t, clk)
	require.NoError(t, ss.CreateGroup("g", ShardGroupOptions{}))
	got := readGroupAll(t, ss, "g", "dead", 0)
	clk.advance(time.Minute)

	claimed, err := ss.Claim("g", "alive", 30*time.Second, refsOf(got[:3]), ClaimArgs{})
	require.NoError(t, err)
	assert.Equal(t, refsOf(got[:3]), refsOf(claimed))
	assert.Equal(t, got[0].PartitionKey, claimed[0].PartitionKey)

	var all []Record
	var cursor RecordRef
	for {
		res, err := ss.AutoClaim("g", "alive", 30*time.Second, cursor, AutoClaimArgs{Count: 7})
		require.NoError(t, err)
		assert.LessOrEqual(t, len(res.Records), 7)
		all = append(all, res.Records...)
		if res.Next == (RecordRef{}) {
			break
		}
		cursor = res.Next
	}
	assert.Len(t, all, len(got)-3, "the rest, across every shard")
	pend, err := ss.Pending("g")
	require.NoError(t, err)
	for _, p := range pend {
		assert.Equal(t, []ConsumerPending{{Name: "alive", Count: p.Count}}, p.Consumers)
	}
}

func TestShardGroupBadInput(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss, _ := reshardedWithKeys(t, clk)
	require.NoError(t, ss.CreateGroup("g", ShardGroupOptions{}))
	got := readGroupAll(t, ss, "g", "c", 0)
	before, err := ss.Pending("g")
	require.NoError(t, err)

	err = ss.CreateGroup("g", ShardGroupOptions{StrictOrder: true})
	require.ErrorIs(t, err, ErrGroupExists)
	assert.Contains(t, err.Error(), `"g"`)
	_, err = ss.ReadGroup(context.Background(), "nope", "c", ReadGroupArgs{})
	require.ErrorIs(t, err, ErrNoGroup)
	assert.Contains(t, err.Error(), "nope")
	_, err = ss.ReadGroup(context.Background(), "g", "c", ReadGroupArgs{Count: -1})
	require.ErrorIs(t, err, ErrInvalidArgument)
	_, err = ss.ReadGroup(context.Background(), "g", "c", ReadGroupArgs{Claim: true, ClaimMinIdle: -time.Millisecond})
	require.ErrorIs(t, err, ErrInvalidArgument)
	assert.Contains(t, err.Error(), "ClaimMinIdle")
	_, err = ss.ReadGroup(context.Background(), "g", "c", ReadGroupArgs{ClaimMinIdle: time.Millisecond})
	require.ErrorIs(t, err, ErrInvalidArgument)
	assert.Contains(t, err.Error(), "without Claim")
	_, err = ss.Ack("nope", refsOf(got)...)
	require.ErrorIs(t, err, ErrNoGroup)
	_, err = ss.Ack("g", append(refsOf(got), RecordRef{ShardID: "shardId-000000000099"})...)
	require.ErrorIs(t, err, ErrShardNotFound)
	assert.Contains(t, err.Error(), "shardId-000000000099")
	_, err = ss.Claim("g", "x", 0, []RecordRef{{ShardID: "bogus"}}, ClaimArgs{})
	require.ErrorIs(t, err, ErrShardNotFound)
	_, err = ss.AutoClaim("g", "x", 0, RecordRef{ShardID: "bogus"}, AutoClaimArgs{})
	require.ErrorIs(t, err, ErrShardNotFound)
	_, err = ss.Pending("nope")
	require.ErrorIs(t, err, ErrNoGroup)

	after, err := ss.Pending("g")
	require.NoError(t, err)
	assert.Equal(t, before, after, "nothing changed")
}

func TestShardGroupConcurrent(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 2, clk)
	require.NoError(t, ss.CreateGroup("g", ShardGroupOptions{StrictOrder: true}))
	const writers, each = 3, 300
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				_, err := ss.Put(fmt.Sprintf("w%d-%d", w, i%7), PutArgs{}, Fields("n", strconv.Itoa(i))...)
				assert.NoError(t, err)
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		rng := rand.New(rand.NewPCG(1, 2))
		for range 15 {
			_, err := randomReshard(ss, rng)
			if err != nil && !errors.Is(err, ErrShardClosed) {
				assert.NoError(t, err)
			}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var mu sync.Mutex
	seen := map[RecordRef]int{}
	var done atomic.Bool
	complete := make(chan struct{})
	var completeOnce sync.Once
	var cg sync.WaitGroup
	for c := range 2 {
		cg.Add(1)
		go func() {
			defer cg.Done()
			for !done.Load() {
				rs, err := ss.ReadGroup(ctx, "g", fmt.Sprint("c", c), ReadGroupArgs{Count: 10, Block: 5 * time.Millisecond})
				if !assert.NoError(t, err) {
					return
				}
				// StrictOrder: a shard's records come only once its
				// ancestors have nothing pending, and nothing can become
				// pending in them again.
				if len(rs) > 0 {
					pend, err := ss.Pending("g")
					assert.NoError(t, err)
					ancestors := ancestorsOf(t, ss)
					for _, p := range pend {
						for _, r := range rs {
							assert.NotContains(t, ancestors[r.ShardID], p.ShardID, "record of %s delivered while its ancestor %s has pending records", r.ShardID, p.ShardID)
						}
					}
				}
				mu.Lock()
				for _, ref := range refsOf(rs) {
					seen[ref]++
				}
				if len(seen) == writers*each {
					completeOnce.Do(func() { close(complete) })
				}
				mu.Unlock()
				if len(rs) > 0 {
					_, err = ss.Ack("g", refsOf(rs)...)
					assert.NoError(t, err)
				}
			}
		}()
	}
	wg.Wait()
	select {
	case <-complete:
	case <-ctx.Done():
	}
	done.Store(true)
	cg.Wait()
	require.Len(t, seen, writers*each)
	for ref, n := range seen {
		require.Equal(t, 1, n, "record %v delivered %d times", ref, n)
	}
	pend, err := ss.Pending("g")
	require.NoError(t, err)
	assert.Empty(t, pend)
}

func TestShardGroupAutoClaimDropsExpiredRecords(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 2, clk)
	require.NoError(t, ss.CreateGroup("g", ShardGroupOptions{StrictOrder: true}))
	old, err := ss.Put("k", PutArgs{ExplicitHashKey: "5"}, Fields("n", "0")...)
	require.NoError(t, err)
	got := readGroupAll(t, ss, "g", "c", 0)
	require.Len(t, got, 1)
	clk.advance(time.Hour)
	require.NoError(t, ss.SetRetention(time.Minute)) // the pending record is dropped
	res, err := ss.AutoClaim("g", "c2", 0, RecordRef{}, AutoClaimArgs{})
	require.NoError(t, err)
	assert.Empty(t, res.Records)
	assert.Equal(t, []RecordRef{{ShardID: shardID(0), SequenceNumber: old.SequenceNumber}}, res.Deleted)
	assert.Equal(t, RecordRef{}, res.Next)
	pend, err := ss.Pending("g")
	require.NoError(t, err)
	assert.Empty(t, pend)
}

// ancestorsOf maps each listed shard to its listed ancestors.
func ancestorsOf(t testing.TB, ss *ShardedStream) map[string][]string {
	out := map[string][]string{}
	list, err := ss.ListShards(ShardFilter{})
	assert.NoError(t, err)
	for _, s := range list { // by number: parents first
		for _, p := range []string{s.ParentShardID, s.AdjacentParentShardID} {
			if p != "" {
				out[s.ShardID] = append(append(out[s.ShardID], p), out[p]...)
			}
		}
	}
	return out
}

// A StrictOrder group delivers a grandchild's records only after the
// grandparent's are acknowledged, through a CLOSED child that never had
// a record; but an EXPIRED grandparent holds back nothing, even when the
// empty child between them is still CLOSED: the grandparent's pending
// record goes with it.
func TestShardGroupExpiredGrandparent(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 1, clk)
	require.NoError(t, ss.CreateGroup("g", ShardGroupOptions{StrictOrder: true}))
	old, err := ss.Put("k", PutArgs{ExplicitHashKey: "5"}, Fields("n", "0")...)
	require.NoError(t, err)
	require.NoError(t, ss.SplitShard(shardID(0), "1000")) // shard 1 owns 5
	clk.advance(time.Hour)
	require.NoError(t, ss.SplitShard(shardID(1), "100")) // shard 1 CLOSED with no record; shard 3 owns 5
	r, err := ss.Put("k", PutArgs{ExplicitHashKey: "5"}, Fields("n", "1")...)
	require.NoError(t, err)
	require.Equal(t, shardID(3), r.ShardID)

	got := readGroupAll(t, ss, "g", "c", 1)
	assert.Equal(t, []ID{old.SequenceNumber}, recordSeqs(got), "the grandparent's record, left pending; the grandchild waits")
	// Past the grandparent's retention, not yet past the child's close.
	clk.advance(DefaultRetention - time.Hour + time.Millisecond)
	got = readGroupAll(t, ss, "g", "c", 0)
	assert.Equal(t, []ID{r.SequenceNumber}, recordSeqs(got))
	assert.Equal(t, ShardExpired, shardByID(t, ss, shardID(0)).State)
	assert.Equal(t, ShardClosed, shardByID(t, ss, shardID(1)).State)
}

// TestShardGroupReadClaimDurable: what a sharded ReadGroup with Claim
// takes over is in the log: after a reopen the records are pending to
// the new owner, with the delivery time and count of the claim, so that
// they are not idle enough again until ClaimMinIdle after the claim, and
// a later claim reports them delivered twice.
func TestShardGroupReadClaimDurable(t *testing.T) {
	ctx := context.Background()
	clk := newTestClock(1_700_000_000_000)
	dir := t.TempDir()
	db := openT(t, dir, clk)
	ss, err := db.CreateShardedStream("orders", ShardedArgs{Shards: 1})
	require.NoError(t, err)
	require.NoError(t, ss.CreateGroup("g", ShardGroupOptions{StrictOrder: true}))
	for i := range 3 {
		_, err := ss.Put("k", PutArgs{}, Fields("n", strconv.Itoa(i))...)
		require.NoError(t, err)
	}
	dead, err := ss.ReadGroup(ctx, "g", "dead", ReadGroupArgs{})
	require.NoError(t, err)
	require.Len(t, dead, 3)
	require.NoError(t, ss.SplitShard(shardID(0), uniformWidth(2).String()))
	_, err = ss.Put("k", PutArgs{}, Fields("n", "3")...)
	require.NoError(t, err)
	clk.advance(time.Minute)
	claim := ReadGroupArgs{Claim: true, ClaimMinIdle: time.Minute}
	got, err := ss.ReadGroup(ctx, "g", "live", claim)
	require.NoError(t, err)
	require.Equal(t, refsOf(dead), refsOf(got))
	want := dumpState(t, db)
	require.NoError(t, db.Close())

	db = openT(t, dir, clk)
	assert.Equal(t, want, dumpState(t, db))
	ss, _ = db.ShardedStream("orders")
	pend, err := ss.Pending("g")
	require.NoError(t, err)
	require.Len(t, pend, 1)
	assert.Equal(t, []ConsumerPending{{Name: "live", Count: 3}}, pend[0].Consumers)
	clk.advance(time.Minute - time.Millisecond)
	got, err = ss.ReadGroup(ctx, "g", "third", claim)
	require.NoError(t, err)
	assert.Empty(t, got, "idle since the claim, not since the first delivery")
	clk.advance(time.Millisecond)
	got, err = ss.ReadGroup(ctx, "g", "third", claim)
	require.NoError(t, err)
	require.Len(t, got, 3)
	for _, r := range got {
		assert.Equal(t, int64(2), r.Deliveries)
	}
	_, err = ss.Ack("g", refsOf(got)...)
	require.NoError(t, err)
	got, err = ss.ReadGroup(ctx, "g", "third", claim)
	require.NoError(t, err)
	require.Len(t, got, 1, "the child's record, once the parent's are acknowledged")
	assert.Equal(t, Fields("n", "3"), got[0].Fields)
	assert.Zero(t, got[0].Deliveries)
}
