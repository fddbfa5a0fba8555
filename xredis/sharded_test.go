package xredis_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/xredis"
	"github.com/xstreamgo/xstream/xstreamtest"
)

// shardedKinds are the servers the sharded stream runs on: it needs Lua
// scripts (EVALSHA), which xstream's server does not have.
var shardedKinds = []string{"redis", "cluster", "valkey"}

// shardedSkips are the cases of the sharded suite this engine does not
// pass yet, with the reason.
var shardedSkips = map[string]string{}

// shardedName returns a sharded stream name of its own for t.
func shardedName(t testing.TB) string {
	return strings.NewReplacer("/", ".", " ", "_").Replace(t.Name()) + fmt.Sprintf("#%d", keySeq.Add(1))
}

// newSharded creates a sharded stream on the server of kind.
func newSharded(t testing.TB, kind string, args xstream.ShardedArgs, opts ...xredis.ShardedOption) (*xredis.Sharded, xredis.Engine) {
	t.Helper()
	e := newEngine(t, kind)
	s, err := xredis.CreateSharded(bg(), e, shardedName(t), args, opts...)
	require.NoError(t, err)
	return s, e
}

// TestShardedConformance runs the core's sharded suite on each server
// with Lua scripts.
func TestShardedConformance(t *testing.T) {
	for _, kind := range shardedKinds {
		t.Run(kind, func(t *testing.T) {
			e := newEngine(t, kind)
			xstreamtest.RunSharded(t, func(t *testing.T, args xstream.ShardedArgs) xstreamtest.ShardedTarget {
				for c, why := range shardedSkips {
					if strings.HasSuffix(t.Name(), "/"+c) {
						t.Skip(why)
					}
				}
				s, err := xredis.CreateSharded(bg(), e, shardedName(t), args)
				require.NoError(t, err)
				return xstreamtest.ShardedTarget{Engine: s}
			})
		})
	}
}

// TestShardedXstreamServer: on a server without scripts the stream
// cannot be created, and the error says why.
func TestShardedXstreamServer(t *testing.T) {
	e := newEngine(t, "xstream")
	_, err := xredis.CreateSharded(bg(), e, shardedName(t), xstream.ShardedArgs{Shards: 1})
	require.ErrorIs(t, err, errors.ErrUnsupported)
	require.ErrorContains(t, err, "EVALSHA")
}

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func eachShardedKind(t *testing.T, fn func(t *testing.T, kind string)) {
	for _, kind := range shardedKinds {
		t.Run(kind, func(t *testing.T) { fn(t, kind) })
	}
}

func shardIDs(in []xstream.ShardInfo) []string {
	var out []string
	for _, s := range in {
		out = append(out, s.ShardID)
	}
	return out
}

func lineage(t *testing.T, s *xredis.Sharded) string {
	t.Helper()
	l, err := s.Lineage(bg())
	require.NoError(t, err)
	return l.String()
}

// TestShardedCreateOpen: the errors of CreateSharded and OpenSharded,
// and a stream shared by two engines.
func TestShardedCreateOpen(t *testing.T) {
	eachShardedKind(t, func(t *testing.T, kind string) {
		e := newEngine(t, kind)
		name := shardedName(t)
		for _, c := range []struct {
			name string
			args xstream.ShardedArgs
			msg  string
		}{
			{"", xstream.ShardedArgs{Shards: 1}, "name"},
			{"a{b", xstream.ShardedArgs{Shards: 1}, "a{b"},
			{"a}b", xstream.ShardedArgs{Shards: 1}, "a}b"},
			{name, xstream.ShardedArgs{Shards: 0}, "0"},
			{name, xstream.ShardedArgs{Shards: 1, Retention: -time.Second}, "-1s"},
		} {
			_, err := xredis.CreateSharded(bg(), e, c.name, c.args)
			require.ErrorIs(t, err, xstream.ErrInvalidArgument, "%q %+v", c.name, c.args)
			require.ErrorContains(t, err, c.msg)
		}
		_, err := xredis.OpenSharded(bg(), e, name)
		require.ErrorIs(t, err, xstream.ErrNoStream, "the refused creations made nothing")
		a, err := xredis.CreateSharded(bg(), e, name, xstream.ShardedArgs{Shards: 3, Retention: time.Hour})
		require.NoError(t, err)
		_, err = xredis.CreateSharded(bg(), e, name, xstream.ShardedArgs{Shards: 5})
		require.ErrorIs(t, err, xstream.ErrResourceInUse)
		require.ErrorContains(t, err, name)

		b, err := xredis.OpenSharded(bg(), newEngine(t, kind), name)
		require.NoError(t, err)
		want, err := a.ListShards(bg(), xstream.ShardFilter{})
		require.NoError(t, err)
		require.Len(t, want, 3, "the second creation changed nothing")
		got, err := b.ListShards(bg(), xstream.ShardFilter{})
		require.NoError(t, err)
		require.Equal(t, want, got)
		d, err := b.Retention(bg())
		require.NoError(t, err)
		require.Equal(t, time.Hour, d)

		// A put through one engine is read through the other; a
		// retention set by one is seen by the other.
		r, err := b.Put(bg(), "k", xstream.PutArgs{}, xstream.Fields("a", "1", "a", "2")...)
		require.NoError(t, err)
		it, err := a.GetShardIterator(bg(), r.ShardID, xstream.IteratorArgs{Type: xstream.AtSequenceNumber, SequenceNumber: r.SequenceNumber.String()})
		require.NoError(t, err)
		page, err := a.GetRecords(bg(), it, 0)
		require.NoError(t, err)
		require.Equal(t, []xstream.Record{{ShardID: r.ShardID, SequenceNumber: r.SequenceNumber, PartitionKey: "k", Fields: xstream.Fields("a", "1", "a", "2")}}, page.Records)
		require.NoError(t, a.SetRetention(bg(), 2*time.Hour))
		d, err = b.Retention(bg())
		require.NoError(t, err)
		require.Equal(t, 2*time.Hour, d)
	})
}

// TestShardedListFilters: every filter type, on a clock the test moves.
func TestShardedListFilters(t *testing.T) {
	eachShardedKind(t, func(t *testing.T, kind string) {
		clk := newFakeClock()
		t0 := clk.Now()
		s, _ := newSharded(t, kind, xstream.ShardedArgs{Shards: 2, Retention: time.Hour}, xredis.WithShardClock(clk.Now))
		clk.Advance(10 * time.Minute)
		t1 := clk.Now()
		require.NoError(t, s.SplitShard(bg(), "shardId-000000000000", "1000"))
		clk.Advance(10 * time.Minute)
		t2 := clk.Now()
		list := func(f xstream.ShardFilter) []string {
			t.Helper()
			out, err := s.ListShards(bg(), f)
			require.NoError(t, err)
			return shardIDs(out)
		}
		all := []string{"shardId-000000000000", "shardId-000000000001", "shardId-000000000002", "shardId-000000000003"}
		require.Equal(t, all, list(xstream.ShardFilter{}))
		require.Equal(t, all[1:], list(xstream.ShardFilter{Type: xstream.FilterAtLatest}))
		require.Equal(t, all[:2], list(xstream.ShardFilter{Type: xstream.FilterAtTrimHorizon}), "the horizon is the creation")
		require.Equal(t, all[2:], list(xstream.ShardFilter{Type: xstream.FilterAfterShardID, ShardID: all[1]}))
		require.Equal(t, all[:2], list(xstream.ShardFilter{Type: xstream.FilterAtTimestamp, Timestamp: t0}))
		require.Equal(t, all, list(xstream.ShardFilter{Type: xstream.FilterAtTimestamp, Timestamp: t1}), "shard 0 closed at t1, the children made at t1")
		require.Equal(t, all[1:], list(xstream.ShardFilter{Type: xstream.FilterAtTimestamp, Timestamp: t2}))
		require.Equal(t, all, list(xstream.ShardFilter{Type: xstream.FilterFromTimestamp, Timestamp: t1}))
		require.Equal(t, all[1:], list(xstream.ShardFilter{Type: xstream.FilterFromTimestamp, Timestamp: t2}))
		clk.Advance(51 * time.Minute) // the horizon is t1+1m: shard 0 closed before it
		require.Equal(t, all[1:], list(xstream.ShardFilter{Type: xstream.FilterAtTrimHorizon}))
		require.Equal(t, all[1:], list(xstream.ShardFilter{Type: xstream.FilterFromTimestamp, Timestamp: t0}), "a time before the horizon is the horizon")
		_, err := s.ListShards(bg(), xstream.ShardFilter{Type: 99})
		require.ErrorIs(t, err, xstream.ErrInvalidArgument)
		_, err = s.ListShards(bg(), xstream.ShardFilter{Type: xstream.FilterAfterShardID, ShardID: "shard-1"})
		require.ErrorIs(t, err, xstream.ErrInvalidArgument)
		require.ErrorContains(t, err, "shard-1")
	})
}

// TestShardedReshardRules: a split key must leave each child at least two
// hash keys; a merge takes the lower shard first.
func TestShardedReshardRules(t *testing.T) {
	eachShardedKind(t, func(t *testing.T, kind string) {
		s, _ := newSharded(t, kind, xstream.ShardedArgs{Shards: 4})
		in, err := s.ListShards(bg(), xstream.ShardFilter{})
		require.NoError(t, err)
		r1 := in[1].HashKeyRange
		before := lineage(t, s)
		for _, c := range []struct {
			name string
			run  func() error
			msg  string
		}{
			{"split at start", func() error { return s.SplitShard(bg(), in[1].ShardID, r1.StartingHashKey.String()) }, r1.StartingHashKey.String()},
			{"split at start+1", func() error { return s.SplitShard(bg(), in[1].ShardID, hkAdd(r1.StartingHashKey, 1).String()) }, "above"},
			{"split at end", func() error { return s.SplitShard(bg(), in[1].ShardID, r1.EndingHashKey.String()) }, "below"},
			{"merge inverted", func() error { return s.MergeShards(bg(), in[2].ShardID, in[1].ShardID) }, "adjacent"},
			{"merge with itself", func() error { return s.MergeShards(bg(), in[2].ShardID, in[2].ShardID) }, "itself"},
			{"scale too far", func() error { return s.UpdateShardCount(bg(), 9) }, "9"},
			{"scale too little", func() error { return s.UpdateShardCount(bg(), 1) }, "1"},
		} {
			err := c.run()
			require.ErrorIs(t, err, xstream.ErrInvalidArgument, c.name)
			require.ErrorContains(t, err, c.msg, c.name)
			require.Equal(t, before, lineage(t, s), c.name+" changed the stream")
		}
		st, err := s.Status(bg())
		require.NoError(t, err)
		require.Equal(t, xstream.StreamActive, st, "a refused reshard leaves no lock")
		// The narrowest splits allowed: children of two keys.
		require.NoError(t, s.SplitShard(bg(), in[1].ShardID, hkAdd(r1.StartingHashKey, 2).String()))
		require.NoError(t, s.SplitShard(bg(), "shardId-000000000005", hkAdd(r1.EndingHashKey, -1).String()))
		got, err := s.ListShards(bg(), xstream.ShardFilter{Type: xstream.FilterAfterShardID, ShardID: in[3].ShardID})
		require.NoError(t, err)
		require.Len(t, got, 4)
		require.Equal(t, xstream.HashKeyRange{StartingHashKey: r1.StartingHashKey, EndingHashKey: hkAdd(r1.StartingHashKey, 1)}, got[0].HashKeyRange)
		require.Equal(t, xstream.HashKeyRange{StartingHashKey: hkAdd(r1.EndingHashKey, -1), EndingHashKey: r1.EndingHashKey}, got[3].HashKeyRange)
		// Merging the lower with the upper is allowed.
		require.NoError(t, s.MergeShards(bg(), in[2].ShardID, in[3].ShardID))
	})
}

// hkAdd returns h+d.
func hkAdd(h xstream.HashKey, d int64) xstream.HashKey {
	lo := h.Lo + uint64(d)
	hi := h.Hi
	if d > 0 && lo < h.Lo {
		hi++
	} else if d < 0 && lo > h.Lo {
		hi--
	}
	return xstream.HashKey{Hi: hi, Lo: lo}
}

// TestShardedPutRacingReshards: producers on one engine put while another
// engine splits and merges the shard they put to. No acknowledged record
// is lost, and none lands in a shard after its ending sequence number.
func TestShardedPutRacingReshards(t *testing.T) {
	eachShardedKind(t, func(t *testing.T, kind string) {
		a, _ := newSharded(t, kind, xstream.ShardedArgs{Shards: 1})
		b, err := xredis.OpenSharded(bg(), newEngine(t, kind), a.Name())
		require.NoError(t, err)
		ctx, stop := context.WithCancel(bg())
		var (
			mu    sync.Mutex
			acked []xstream.PutResult
			wg    sync.WaitGroup
			perr  error
		)
		for p := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; ctx.Err() == nil; i++ {
					r, err := a.Put(bg(), fmt.Sprintf("p%d-%d", p, i), xstream.PutArgs{}, xstream.Fields("i", "x")...)
					mu.Lock()
					if err != nil && perr == nil {
						perr = err
					}
					if err == nil {
						acked = append(acked, r)
					}
					mu.Unlock()
				}
			}()
		}
		// Reshards until producers got past each: split, merge, rescale.
		waitPuts := func(n int) {
			for {
				mu.Lock()
				k := len(acked)
				mu.Unlock()
				if k >= n {
					return
				}
				runtime.Gosched()
			}
		}
		steps := []func() error{
			func() error {
				return b.SplitShard(bg(), "shardId-000000000000", "170141183460469231731687303715884105728")
			},
			func() error { return b.MergeShards(bg(), "shardId-000000000001", "shardId-000000000002") },
			func() error { return b.UpdateShardCount(bg(), 2) },
			func() error { return b.UpdateShardCount(bg(), 4) },
		}
		for i, step := range steps {
			waitPuts(50 * (i + 1))
			require.NoError(t, step(), "step %d", i)
		}
		waitPuts(50 * (len(steps) + 1))
		stop()
		wg.Wait()
		require.NoError(t, perr)

		stored := storedRecords(t, b)
		total := 0
		for _, ids := range stored {
			total += len(ids)
		}
		require.Equal(t, len(acked), total, "every stored record was acknowledged, once")
		for _, r := range acked {
			require.True(t, stored[r.ShardID][r.SequenceNumber], "acknowledged %s in %s is not there", r.SequenceNumber, r.ShardID)
		}
		t.Logf("%d puts across %d shards", len(acked), len(stored))
	})
}

// TestShardedReshardMidway: a split whose process stopped after each of
// its parts is completed by another engine: by a reshard once the lock's
// deadline has passed (before, it is refused with ErrResourceInUse), or
// by a put that finds the parent closed.
func TestShardedReshardMidway(t *testing.T) {
	eachShardedKind(t, func(t *testing.T, kind string) {
		for parts := 1; parts <= 3; parts++ {
			t.Run(fmt.Sprint(parts), func(t *testing.T) {
				clk := newFakeClock()
				dead, _ := newSharded(t, kind, xstream.ShardedArgs{Shards: 2}, xredis.WithShardClock(clk.Now), xredis.WithReshardLease(time.Minute))
				require.NoError(t, xredis.SplitPartly(bg(), dead, "shardId-000000000000", xstream.HashKey{Lo: 1000}, parts))
				other, err := xredis.OpenSharded(bg(), newEngine(t, kind), dead.Name(), xredis.WithShardClock(clk.Now))
				require.NoError(t, err, "opening completes the step")
				st, err := other.Status(bg())
				require.NoError(t, err)
				require.Equal(t, xstream.StreamUpdating, st, "the dead reshard holds the lock until its deadline")
				err = other.SplitShard(bg(), "shardId-000000000001", "170141183460469231731687303715884105738")
				require.ErrorIs(t, err, xstream.ErrResourceInUse)
				require.ErrorContains(t, err, "SplitShard in progress")

				// Parts 2 and 3 closed the parent: the step is complete
				// already (OpenSharded did it); the children own its keys.
				r, err := other.Put(bg(), "k", xstream.PutArgs{ExplicitHashKey: "10"}, xstream.Fields("a", "b")...)
				require.NoError(t, err)
				require.Equal(t, "shardId-000000000002", r.ShardID)
				shards, err := other.ListShards(bg(), xstream.ShardFilter{})
				require.NoError(t, err)
				require.Len(t, shards, 4)
				require.Equal(t, xstream.ShardClosed, shards[0].State)
				require.Equal(t, xstream.HashKey{Lo: 999}, shards[2].HashKeyRange.EndingHashKey)
				require.Equal(t, xstream.HashKey{Lo: 1000}, shards[3].HashKeyRange.StartingHashKey)

				clk.Advance(time.Minute + time.Millisecond)
				st, err = other.Status(bg())
				require.NoError(t, err)
				require.Equal(t, xstream.StreamActive, st)
				require.NoError(t, other.SplitShard(bg(), "shardId-000000000001", "170141183460469231731687303715884105738"))
				open, err := other.ListShards(bg(), xstream.ShardFilter{Type: xstream.FilterAtLatest})
				require.NoError(t, err)
				require.Equal(t, []string{"shardId-000000000002", "shardId-000000000003", "shardId-000000000004", "shardId-000000000005"}, shardIDs(open))
			})
		}
	})
}

// TestShardedPutCompletesStep: a put that finds its shard closed by a
// step not yet published completes the step and lands in a child.
func TestShardedPutCompletesStep(t *testing.T) {
	eachShardedKind(t, func(t *testing.T, kind string) {
		s, _ := newSharded(t, kind, xstream.ShardedArgs{Shards: 1})
		pe := newEngine(t, kind)
		p, err := xredis.OpenSharded(bg(), pe, s.Name())
		require.NoError(t, err)
		before, err := p.Put(bg(), "k", xstream.PutArgs{ExplicitHashKey: "5"}, xstream.Fields("n", "0")...)
		require.NoError(t, err)
		require.NoError(t, xredis.SplitPartly(bg(), s, "shardId-000000000000", xstream.HashKey{Lo: 1000}, 2))
		c := pe.Client()
		err = c.Do(bg(), c.B().Xadd().Key(s.StreamKey(0)).Nomkstream().Id("*").FieldValue().FieldValue("pk", "x").Build()).Error()
		require.ErrorContains(t, err, "exhausted", "the closed parent's stream takes no entry")
		r, err := p.Put(bg(), "k", xstream.PutArgs{ExplicitHashKey: "5"}, xstream.Fields("n", "1")...)
		require.NoError(t, err, "the put completed the split")
		require.Equal(t, "shardId-000000000001", r.ShardID)
		require.True(t, before.SequenceNumber.Less(r.SequenceNumber), "the child's sequence numbers follow the parent's")
		parent, err := p.ListShards(bg(), xstream.ShardFilter{})
		require.NoError(t, err)
		require.Equal(t, before.SequenceNumber, parent[0].SequenceNumberRange.EndingSequenceNumber)
		require.False(t, parent[1].SequenceNumberRange.StartingSequenceNumber.Less(before.SequenceNumber))
	})
}

// TestShardedMillisBehind: MillisBehindLatest is the age, on the
// engine's clock, of the first record not returned.
func TestShardedMillisBehind(t *testing.T) {
	eachShardedKind(t, func(t *testing.T, kind string) {
		clk := newFakeClock()
		s, _ := newSharded(t, kind, xstream.ShardedArgs{Shards: 1}, xredis.WithShardClock(clk.Now))
		var rs []xstream.PutResult
		for i := range 3 {
			r, err := s.Put(bg(), "k", xstream.PutArgs{}, xstream.Fields("i", fmt.Sprint(i))...)
			require.NoError(t, err)
			rs = append(rs, r)
		}
		it, err := s.GetShardIterator(bg(), "shardId-000000000000", xstream.IteratorArgs{Type: xstream.TrimHorizon})
		require.NoError(t, err)
		clk.mu.Lock()
		clk.now = time.UnixMilli(int64(rs[1].SequenceNumber.Ms) + 5000)
		clk.mu.Unlock()
		page, err := s.GetRecords(bg(), it, 1)
		require.NoError(t, err)
		require.Len(t, page.Records, 1)
		require.Equal(t, int64(5000), page.MillisBehindLatest)
		page, err = s.GetRecords(bg(), page.NextShardIterator, 0)
		require.NoError(t, err)
		require.Len(t, page.Records, 2)
		require.Zero(t, page.MillisBehindLatest, "nothing left")
	})
}

// TestShardedReaderWakes: a reader blocked on a shard wakes when another
// engine splits it, and reads the child's records after the parent's.
func TestShardedReaderWakes(t *testing.T) {
	eachShardedKind(t, func(t *testing.T, kind string) {
		a, _ := newSharded(t, kind, xstream.ShardedArgs{Shards: 1})
		eb := newEngine(t, kind)
		b, err := xredis.OpenSharded(bg(), eb, a.Name())
		require.NoError(t, err)
		first, err := a.Put(bg(), "k", xstream.PutArgs{}, xstream.Fields("n", "0")...)
		require.NoError(t, err)
		r, err := b.NewReader(bg())
		require.NoError(t, err)
		got, err := r.Read(bg(), xstream.ReadArgs{})
		require.NoError(t, err)
		require.Len(t, got, 1)
		ctx, cancel := context.WithTimeout(bg(), 30*time.Second)
		defer cancel()
		done := goRead(func() ([]xstream.Record, error) {
			return r.Read(ctx, xstream.ReadArgs{Block: xstream.BlockForever})
		})
		waitBlocked(t, kind, eb, 1, "")
		require.NoError(t, a.SplitShard(bg(), "shardId-000000000000", "1000"))
		child, err := a.Put(bg(), "k", xstream.PutArgs{}, xstream.Fields("n", "1")...)
		require.NoError(t, err)
		res := <-done // a Read that blocks forever returns records
		require.NoError(t, res.err)
		require.Len(t, res.recs, 1)
		require.Equal(t, child.SequenceNumber, res.recs[0].SequenceNumber)
		require.True(t, first.SequenceNumber.Less(child.SequenceNumber))
		cps := r.Checkpoints()
		require.Len(t, cps, 3)
		require.Equal(t, xstream.Checkpoint{ShardID: "shardId-000000000000", SequenceNumber: first.SequenceNumber, ShardEnd: true}, cps[0])
	})
}

// TestShardedGroupsAcrossEngines: a child shard's records go to a group
// only once its parents are drained: delivered (loose) or acknowledged
// (StrictOrder), by consumers on other engines; a blocked ReadGroup
// sees an Ack of another engine free the child.
func TestShardedGroupsAcrossEngines(t *testing.T) {
	eachShardedKind(t, func(t *testing.T, kind string) {
		a, _ := newSharded(t, kind, xstream.ShardedArgs{Shards: 2})
		b, err := xredis.OpenSharded(bg(), newEngine(t, kind), a.Name())
		require.NoError(t, err)
		require.NoError(t, a.CreateGroup(bg(), "strict", xstream.ShardGroupOptions{StrictOrder: true}))
		require.NoError(t, a.CreateGroup(bg(), "loose", xstream.ShardGroupOptions{}))
		require.ErrorIs(t, b.CreateGroup(bg(), "loose", xstream.ShardGroupOptions{}), xstream.ErrGroupExists)
		put := func(s *xredis.Sharded, hk, v string) xstream.PutResult {
			t.Helper()
			r, err := s.Put(bg(), "k"+hk, xstream.PutArgs{ExplicitHashKey: hk}, xstream.Fields("v", v)...)
			require.NoError(t, err)
			return r
		}
		hi := "170141183460469231731687303715884105728" // shard 1's start
		p0, p1 := put(a, "5", "p0"), put(a, hi, "p1")
		// Merge the two: the child waits for both parents.
		require.NoError(t, a.MergeShards(bg(), "shardId-000000000000", "shardId-000000000001"))
		c := put(b, "5", "c")
		require.Equal(t, "shardId-000000000002", c.ShardID)

		for _, g := range []string{"strict", "loose"} {
			got, err := b.ReadGroup(bg(), g, "w1", xstream.ReadGroupArgs{Count: 1})
			require.NoError(t, err)
			require.Len(t, got, 1, g)
			first := got[0]
			got, err = b.ReadGroup(bg(), g, "w1", xstream.ReadGroupArgs{})
			require.NoError(t, err)
			require.Len(t, got, 1, "%s: the other parent's record, not yet the child's", g)
			require.NotEqual(t, first.ShardID, got[0].ShardID)
			require.ElementsMatch(t, []xstream.ID{p0.SequenceNumber, p1.SequenceNumber}, []xstream.ID{first.SequenceNumber, got[0].SequenceNumber})
		}
		got, err := b.ReadGroup(bg(), "loose", "w1", xstream.ReadGroupArgs{})
		require.NoError(t, err)
		require.Len(t, got, 1, "loose: both parents delivered, the child follows")
		require.Equal(t, c.SequenceNumber, got[0].SequenceNumber)

		got, err = b.ReadGroup(bg(), "strict", "w1", xstream.ReadGroupArgs{})
		require.NoError(t, err)
		require.Empty(t, got, "strict: the parents' records are pending")
		ctx, cancel := context.WithTimeout(bg(), 30*time.Second)
		defer cancel()
		done := goRead(func() ([]xstream.Record, error) {
			return b.ReadGroup(ctx, "strict", "w2", xstream.ReadGroupArgs{Block: xstream.BlockForever})
		})
		n, err := a.Ack(bg(), "strict", xstream.RecordRef(p0))
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		pend, err := a.Pending(bg(), "strict")
		require.NoError(t, err)
		require.Len(t, pend, 1, "one parent still has a pending record")
		require.Equal(t, p1.ShardID, pend[0].ShardID)
		n, err = a.Ack(bg(), "strict", xstream.RecordRef(p1))
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		res := <-done
		require.NoError(t, res.err)
		require.Len(t, res.recs, 1)
		require.Equal(t, c.SequenceNumber, res.recs[0].SequenceNumber)
		require.Equal(t, xstream.Fields("v", "c"), res.recs[0].Fields)

		// Errors: unknown group, unknown shard; a blocked read that times out.
		_, err = a.ReadGroup(bg(), "nope", "w", xstream.ReadGroupArgs{})
		require.ErrorIs(t, err, xstream.ErrNoGroup)
		_, err = a.Ack(bg(), "strict", xstream.RecordRef{ShardID: "shardId-000000000099"})
		require.ErrorIs(t, err, xstream.ErrShardNotFound)
		_, err = a.ReadGroup(bg(), "strict", "w", xstream.ReadGroupArgs{Count: -1})
		require.ErrorIs(t, err, xstream.ErrInvalidArgument)
		_, err = a.ReadGroup(bg(), "strict", "w", xstream.ReadGroupArgs{Claim: true, ClaimMinIdle: -time.Second})
		require.ErrorIs(t, err, xstream.ErrInvalidArgument)
		require.Contains(t, err.Error(), "ClaimMinIdle")
		got, err = a.ReadGroup(bg(), "strict", "w", xstream.ReadGroupArgs{Block: 10 * time.Millisecond})
		require.NoError(t, err)
		require.Empty(t, got)
	})
}

// readResult is what a read in a goroutine returned.
type readResult struct {
	recs []xstream.Record
	err  error
}

// goRead runs read in a goroutine and returns its result on a channel.
func goRead(read func() ([]xstream.Record, error)) <-chan readResult {
	done := make(chan readResult, 1)
	go func() {
		recs, err := read()
		done <- readResult{recs, err}
	}()
	return done
}

// TestShardedCheckpointsInRedis: a reader saves its checkpoints; a reader
// of another engine loads them and reads on, across a split, each record
// once.
func TestShardedCheckpointsInRedis(t *testing.T) {
	eachShardedKind(t, func(t *testing.T, kind string) {
		a, _ := newSharded(t, kind, xstream.ShardedArgs{Shards: 2})
		for i := range 10 {
			_, err := a.Put(bg(), fmt.Sprint("k", i), xstream.PutArgs{}, xstream.Fields("i", fmt.Sprint(i))...)
			require.NoError(t, err)
		}
		r, err := a.NewReader(bg())
		require.NoError(t, err)
		first, err := r.Read(bg(), xstream.ReadArgs{Count: 4})
		require.NoError(t, err)
		require.Len(t, first, 4)
		require.NoError(t, a.SaveCheckpoints(bg(), "app", r.Checkpoints()))
		require.NoError(t, a.SplitShard(bg(), "shardId-000000000000", "1000"))
		for i := 10; i < 15; i++ {
			_, err := a.Put(bg(), fmt.Sprint("k", i), xstream.PutArgs{}, xstream.Fields("i", fmt.Sprint(i))...)
			require.NoError(t, err)
		}

		b, err := xredis.OpenSharded(bg(), newEngine(t, kind), a.Name())
		require.NoError(t, err)
		cps, err := b.LoadCheckpoints(bg(), "app")
		require.NoError(t, err)
		require.Equal(t, r.Checkpoints()[:2], cps)
		r2, err := b.NewReader(bg(), cps...)
		require.NoError(t, err)
		rest, err := r2.Read(bg(), xstream.ReadArgs{})
		require.NoError(t, err)
		seen := map[string]int{}
		for _, rec := range append(first, rest...) {
			seen[rec.Fields[0].Value]++
		}
		require.Len(t, seen, 15)
		for v, n := range seen {
			require.Equal(t, 1, n, "record %s read %d times", v, n)
		}
		none, err := b.LoadCheckpoints(bg(), "other")
		require.NoError(t, err)
		require.Empty(t, none)
		require.ErrorIs(t, b.SaveCheckpoints(bg(), "", cps), xstream.ErrInvalidArgument)
		require.ErrorIs(t, b.SaveCheckpoints(bg(), "app", []xstream.Checkpoint{{ShardID: "x"}}), xstream.ErrInvalidArgument)
		again, err := b.LoadCheckpoints(bg(), "app")
		require.NoError(t, err)
		require.Equal(t, cps, again, "a refused save changes nothing")
	})
}

// TestShardedRetention: records older than the retention (by the
// engine's clock against their IDs, the servers' arrival times) are
// trimmed by MINID; reads at trimmed positions fail with
// ErrPastTrimHorizon; a CLOSED shard whose records are all past it
// becomes EXPIRED, leaves the listings and its keys are deleted.
func TestShardedRetention(t *testing.T) {
	eachShardedKind(t, func(t *testing.T, kind string) {
		clk := &fakeClock{now: time.Now()}
		s, e := newSharded(t, kind, xstream.ShardedArgs{Shards: 1, Retention: time.Hour}, xredis.WithShardClock(clk.Now))
		var old []xstream.PutResult
		for i := range 3 {
			r, err := s.Put(bg(), "k", xstream.PutArgs{}, xstream.Fields("i", fmt.Sprint(i))...)
			require.NoError(t, err)
			old = append(old, r)
		}
		it, err := s.GetShardIterator(bg(), "shardId-000000000000", xstream.IteratorArgs{Type: xstream.AtSequenceNumber, SequenceNumber: old[1].SequenceNumber.String()})
		require.NoError(t, err)
		require.NoError(t, s.SplitShard(bg(), "shardId-000000000000", "1000"))
		child, err := s.Put(bg(), "k", xstream.PutArgs{}, xstream.Fields("i", "3")...)
		require.NoError(t, err)

		// Half an hour on, nothing is past the retention.
		clk.Advance(30 * time.Minute)
		require.NoError(t, s.ApplyRetention(bg()))
		page, err := s.GetRecords(bg(), it, 0)
		require.NoError(t, err)
		require.Len(t, page.Records, 2)

		// Past the retention: the parent expires, the child's record is
		// trimmed, the child stays. ListShards runs the pass, being the
		// first call a second after the last pass.
		clk.Advance(31 * time.Minute)
		shards, err := s.ListShards(bg(), xstream.ShardFilter{})
		require.NoError(t, err)
		require.Equal(t, []string{"shardId-000000000001", "shardId-000000000002"}, shardIDs(shards))
		require.Contains(t, lineage(t, s), "shardId-000000000000 EXPIRED")
		_, err = s.GetRecords(bg(), it, 0)
		require.ErrorIs(t, err, xstream.ErrShardExpired)
		_, err = s.GetShardIterator(bg(), "shardId-000000000000", xstream.IteratorArgs{Type: xstream.TrimHorizon})
		require.ErrorIs(t, err, xstream.ErrShardExpired)
		n, err := e.Client().Do(bg(), e.Client().B().Exists().Key(s.StreamKey(0), s.StreamKey(0)+":state").Build()).AsInt64()
		require.NoError(t, err)
		require.Zero(t, n, "the expired shard's keys are deleted")

		_, err = s.GetShardIterator(bg(), child.ShardID, xstream.IteratorArgs{Type: xstream.AtSequenceNumber, SequenceNumber: child.SequenceNumber.String()})
		require.ErrorIs(t, err, xstream.ErrPastTrimHorizon)
		h, err := s.GetShardIterator(bg(), child.ShardID, xstream.IteratorArgs{Type: xstream.TrimHorizon})
		require.NoError(t, err)
		page, err = s.GetRecords(bg(), h, 0)
		require.NoError(t, err)
		require.Empty(t, page.Records)
		require.NotEmpty(t, page.NextShardIterator)
		// A put now is kept; a reader starts at the child (its parent
		// expired) and reads it.
		late, err := s.Put(bg(), "k", xstream.PutArgs{}, xstream.Fields("i", "4")...)
		require.NoError(t, err)
		r, err := s.NewReader(bg())
		require.NoError(t, err)
		got, err := r.Read(bg(), xstream.ReadArgs{})
		require.NoError(t, err)
		require.Len(t, got, 1)
		require.Equal(t, late.SequenceNumber, got[0].SequenceNumber)
	})
}

// storedRecords reads every shard of s from its trim horizon and returns
// the sequence numbers it holds, by shard; it fails the test when a
// CLOSED shard holds a record after its ending sequence number.
func storedRecords(t *testing.T, s *xredis.Sharded) map[string]map[xstream.ID]bool {
	t.Helper()
	shards, err := s.ListShards(bg(), xstream.ShardFilter{})
	require.NoError(t, err)
	stored := map[string]map[xstream.ID]bool{}
	for _, sh := range shards {
		it, err := s.GetShardIterator(bg(), sh.ShardID, xstream.IteratorArgs{Type: xstream.TrimHorizon})
		require.NoError(t, err)
		ids := map[xstream.ID]bool{}
		for it != "" {
			page, err := s.GetRecords(bg(), it, 0)
			require.NoError(t, err)
			for _, r := range page.Records {
				ids[r.SequenceNumber] = true
				if sh.State == xstream.ShardClosed {
					require.False(t, sh.SequenceNumberRange.EndingSequenceNumber.Less(r.SequenceNumber), "%s holds %s after its end %s", sh.ShardID, r.SequenceNumber, sh.SequenceNumberRange.EndingSequenceNumber)
				}
			}
			if len(page.Records) == 0 {
				break
			}
			it = page.NextShardIterator
		}
		stored[sh.ShardID] = ids
	}
	return stored
}

// TestShardedGroupCount: ReadGroup delivers at most Count records,
// whichever shards hold them.
func TestShardedGroupCount(t *testing.T) {
	eachShardedKind(t, func(t *testing.T, kind string) {
		s, _ := newSharded(t, kind, xstream.ShardedArgs{Shards: 3})
		require.NoError(t, s.CreateGroup(bg(), "g", xstream.ShardGroupOptions{}))
		last := "340282366920938463463374607431768211455"
		for range 3 { // whichever shard a read starts at, it finds the record
			_, err := s.Put(bg(), "k", xstream.PutArgs{ExplicitHashKey: last}, xstream.Fields("n", "0")...)
			require.NoError(t, err)
			got, err := s.ReadGroup(bg(), "g", "c", xstream.ReadGroupArgs{Count: 1})
			require.NoError(t, err)
			require.Len(t, got, 1)
			require.Equal(t, "shardId-000000000002", got[0].ShardID)
			n, err := s.Ack(bg(), "g", xstream.RecordRef{ShardID: got[0].ShardID, SequenceNumber: got[0].SequenceNumber})
			require.NoError(t, err)
			require.Equal(t, int64(1), n)
		}
		for _, hk := range []string{"0", "170141183460469231731687303715884105728", last} {
			_, err := s.Put(bg(), "k", xstream.PutArgs{ExplicitHashKey: hk}, xstream.Fields("n", "1")...)
			require.NoError(t, err)
		}
		got, err := s.ReadGroup(bg(), "g", "c", xstream.ReadGroupArgs{Count: 2})
		require.NoError(t, err)
		require.Len(t, got, 2)
		got, err = s.ReadGroup(bg(), "g", "c", xstream.ReadGroupArgs{Count: 2})
		require.NoError(t, err)
		require.Len(t, got, 1)
		pend, err := s.Pending(bg(), "g")
		require.NoError(t, err)
		total := int64(0)
		for _, p := range pend {
			total += p.Count
		}
		require.Equal(t, int64(3), total, "every delivered record is pending, none more")
		// A shard made after the group has no Redis group until a read:
		// nothing is pending there, and claims find nothing.
		require.NoError(t, s.SplitShard(bg(), "shardId-000000000000", "1000"))
		r, err := s.Put(bg(), "k", xstream.PutArgs{ExplicitHashKey: "5"}, xstream.Fields("n", "2")...)
		require.NoError(t, err)
		claimed, err := s.Claim(bg(), "g", "c2", 0, []xstream.RecordRef{{ShardID: r.ShardID, SequenceNumber: r.SequenceNumber}}, xstream.ClaimArgs{})
		require.NoError(t, err)
		require.Empty(t, claimed)
		ac, err := s.AutoClaim(bg(), "g", "c2", 0, xstream.RecordRef{ShardID: r.ShardID}, xstream.AutoClaimArgs{})
		require.NoError(t, err)
		require.Empty(t, ac.Records)
		n, err := s.Ack(bg(), "g", xstream.RecordRef(r))
		require.NoError(t, err)
		require.Zero(t, n)
	})
}
