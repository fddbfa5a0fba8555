package xstream

import (
	"context"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// orderChecker checks that each key's records come as 0, 1, 2, ...
type orderChecker struct {
	next map[string]int
}

func newOrderChecker() *orderChecker { return &orderChecker{next: map[string]int{}} }

func (o *orderChecker) add(t testing.TB, rs []Record) {
	t.Helper()
	for _, r := range rs {
		n, err := strconv.Atoi(r.Fields[0].Value)
		require.NoError(t, err)
		require.Equal(t, o.next[r.PartitionKey], n, "key %q out of order or duplicated (record %s in %s)", r.PartitionKey, r.SequenceNumber, r.ShardID)
		o.next[r.PartitionKey] = n + 1
	}
}

func (o *orderChecker) total() int {
	n := 0
	for _, v := range o.next {
		n += v
	}
	return n
}

// keyWriter puts numbered records per key.
type keyWriter struct {
	ss   *ShardedStream
	sent map[string]int
}

func (w *keyWriter) put(t testing.TB, keys ...string) {
	t.Helper()
	for _, k := range keys {
		_, err := w.ss.Put(k, PutArgs{}, Fields("n", strconv.Itoa(w.sent[k]))...)
		require.NoError(t, err)
		w.sent[k]++
	}
}

func readAllShards(t testing.TB, r *ShardReader, count int) []Record {
	t.Helper()
	var out []Record
	for {
		rs, err := r.Read(context.Background(), ReadArgs{Count: count})
		require.NoError(t, err)
		if len(rs) == 0 {
			return out
		}
		if count > 0 {
			require.LessOrEqual(t, len(rs), count)
		}
		out = append(out, rs...)
	}
}

var shardKeys = []string{"alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel", "india", "juliet"}

func TestReaderParentBeforeChild(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 2, clk)
	w := &keyWriter{ss: ss, sent: map[string]int{}}
	for range 5 {
		w.put(t, shardKeys...)
	}
	require.NoError(t, ss.SplitShard(shardID(0), uniformWidth(4).String()))
	for range 5 {
		w.put(t, shardKeys...)
	}
	require.NoError(t, ss.MergeShards(shardID(3), shardID(1)))
	for range 5 {
		w.put(t, shardKeys...)
	}
	require.NoError(t, ss.UpdateShardCount(4))
	for range 5 {
		w.put(t, shardKeys...)
	}
	for _, count := range []int{1, 3, 7, 0} {
		r, err := ss.NewReader()
		require.NoError(t, err)
		got := readAllShards(t, r, count)
		o := newOrderChecker()
		o.add(t, got)
		assert.Equal(t, w.sent, o.next, "count %d: every record once", count)
		// No record of a child comes before the last record of a parent.
		lastAt := map[string]int{}
		firstAt := map[string]int{}
		for i, rec := range got {
			lastAt[rec.ShardID] = i
			if _, ok := firstAt[rec.ShardID]; !ok {
				firstAt[rec.ShardID] = i
			}
		}
		for _, s := range mustList(t, ss, ShardFilter{}) {
			for _, p := range []string{s.ParentShardID, s.AdjacentParentShardID} {
				f, ok1 := firstAt[s.ShardID]
				l, ok2 := lastAt[p]
				if p != "" && ok1 && ok2 {
					assert.Less(t, l, f, "count %d: child %s read before parent %s ended", count, s.ShardID, p)
				}
			}
		}
	}
}

func TestReaderSpreadsOverShards(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 4, clk)
	for i := range 4 {
		for range 50 {
			_, err := ss.Put("k", PutArgs{ExplicitHashKey: uniformWidth(4).mul(uint64(i)).String()}, Fields("n", "0")...)
			require.NoError(t, err)
		}
	}
	r, err := ss.NewReader()
	require.NoError(t, err)
	rs, err := r.Read(context.Background(), ReadArgs{Count: 40})
	require.NoError(t, err)
	per := map[string]int{}
	for _, rec := range rs {
		per[rec.ShardID]++
	}
	assert.Len(t, per, 4)
	for id, n := range per {
		assert.Equal(t, 10, n, id)
	}
}

func TestReaderCheckpointResume(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 2, clk)
	w := &keyWriter{ss: ss, sent: map[string]int{}}
	for range 10 {
		w.put(t, shardKeys...)
	}
	require.NoError(t, ss.SplitShard(shardID(1), uniformWidth(4).mul(3).String()))
	for range 10 {
		w.put(t, shardKeys...)
	}
	require.NoError(t, ss.MergeShards(shardID(0), shardID(2)))
	for range 10 {
		w.put(t, shardKeys...)
	}

	o := newOrderChecker()
	r, err := ss.NewReader()
	require.NoError(t, err)
	var sawEnd bool
	for step := 0; ; step++ {
		rs, err := r.Read(context.Background(), ReadArgs{Count: 13})
		require.NoError(t, err)
		o.add(t, rs)
		if len(rs) == 0 {
			break
		}
		cps := r.Checkpoints()
		require.GreaterOrEqual(t, len(cps), 5)
		for _, cp := range cps {
			sawEnd = sawEnd || cp.ShardEnd
		}
		// Resume from the checkpoints with a new reader, as an application
		// restarting would.
		r, err = ss.NewReader(cps...)
		require.NoError(t, err)
		if step == 3 { // also puts and a reshard in between
			w.put(t, shardKeys...)
			require.NoError(t, ss.SplitShard(shardID(3), uniformWidth(8).mul(7).String()))
			w.put(t, shardKeys...)
		}
	}
	assert.True(t, sawEnd, "drained parents are checkpointed as SHARD_END")
	assert.Equal(t, w.sent, o.next, "nothing lost, nothing repeated")

	cps := r.Checkpoints()
	byID := map[string]Checkpoint{}
	for _, cp := range cps {
		byID[cp.ShardID] = cp
	}
	assert.True(t, byID[shardID(0)].ShardEnd)
	assert.True(t, byID[shardID(1)].ShardEnd)
	assert.False(t, byID[shardID(4)].ShardEnd)
}

func TestNewReaderBadInput(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 1, clk)
	_, err := ss.NewReader(Checkpoint{ShardID: "shardId-000000000009"})
	require.ErrorIs(t, err, ErrShardNotFound)
	assert.Contains(t, err.Error(), "shardId-000000000009")
	_, err = ss.NewReader(Checkpoint{ShardID: shardID(0)}, Checkpoint{ShardID: shardID(0)})
	require.ErrorIs(t, err, ErrInvalidArgument)
	assert.Contains(t, err.Error(), shardID(0))
	_, err = ss.NewReader(Checkpoint{ShardID: shardID(0), SequenceNumber: ID{1 << 60, 0}})
	require.ErrorIs(t, err, ErrInvalidArgument)
	assert.Contains(t, err.Error(), ID{1 << 60, 0}.String())
	r, err := ss.NewReader()
	require.NoError(t, err)
	_, err = r.Read(context.Background(), ReadArgs{Count: -1})
	require.ErrorIs(t, err, ErrInvalidArgument)
}

func TestReaderExpiredParentDoesNotBlock(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 1, clk)
	_, err := ss.Put("a", PutArgs{}, Fields("n", "0")...)
	require.NoError(t, err)
	require.NoError(t, ss.SplitShard(shardID(0), "1000"))
	clk.advance(DefaultRetention + time.Millisecond)
	r2, err := ss.Put("b", PutArgs{ExplicitHashKey: "5"}, Fields("n", "0")...)
	require.NoError(t, err)
	r, err := ss.NewReader(Checkpoint{ShardID: shardID(0)})
	require.NoError(t, err, "a checkpoint of an expired shard is accepted")
	rs := readAllShards(t, r, 0)
	assert.Equal(t, []ID{r2.SequenceNumber}, recordSeqs(rs), "the parent's record expired; its children are read")
	assert.Len(t, r.Checkpoints(), 2)
}

func TestReaderBlocks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		clk := newTestClock(1_700_000_000_000)
		ss := newSharded(t, 1, clk)
		r, err := ss.NewReader()
		require.NoError(t, err)

		// A timeout returns nothing and no error.
		rs, err := r.Read(context.Background(), ReadArgs{Block: time.Second})
		require.NoError(t, err)
		assert.Empty(t, rs)

		// A cancelled context ends the wait.
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error)
		go func() {
			_, err := r.Read(ctx, ReadArgs{Block: BlockForever})
			done <- err
		}()
		synctest.Wait()
		cancel()
		require.ErrorIs(t, <-done, context.Canceled)

		// A Put wakes a blocked reader.
		got := make(chan []Record)
		go func() {
			rs, err := r.Read(context.Background(), ReadArgs{Block: BlockForever})
			assert.NoError(t, err)
			got <- rs
		}()
		synctest.Wait()
		res, err := ss.Put("k", PutArgs{}, Fields("n", "0")...)
		require.NoError(t, err)
		assert.Equal(t, []ID{res.SequenceNumber}, recordSeqs(<-got))

		// A reader waiting at the end of a shard that gets split moves on
		// to the children.
		go func() {
			rs, err := r.Read(context.Background(), ReadArgs{Block: BlockForever})
			assert.NoError(t, err)
			got <- rs
		}()
		synctest.Wait()
		require.NoError(t, ss.SplitShard(shardID(0), "1000"))
		synctest.Wait()
		res, err = ss.Put("k", PutArgs{ExplicitHashKey: "2000"}, Fields("n", "1")...)
		require.NoError(t, err)
		assert.Equal(t, []ID{res.SequenceNumber}, recordSeqs(<-got))
		assert.Equal(t, shardID(2), res.ShardID)
	})
}

func TestReaderSharedByGoroutines(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 3, clk)
	w := &keyWriter{ss: ss, sent: map[string]int{}}
	for range 40 {
		w.put(t, shardKeys...)
	}
	require.NoError(t, ss.UpdateShardCount(5))
	for range 40 {
		w.put(t, shardKeys...)
	}
	r, err := ss.NewReader()
	require.NoError(t, err)
	const total = 800
	results := make(chan []Record, 2)
	for range 2 {
		go func() {
			var mine []Record
			for {
				rs, err := r.Read(context.Background(), ReadArgs{Count: 7})
				if !assert.NoError(t, err) || len(rs) == 0 {
					results <- mine
					return
				}
				mine = append(mine, rs...)
			}
		}()
	}
	seen := map[string]bool{}
	for range 2 {
		for _, rec := range <-results {
			k := rec.ShardID + "/" + rec.SequenceNumber.String()
			require.False(t, seen[k], "record %s delivered twice", k)
			seen[k] = true
		}
	}
	assert.Len(t, seen, total)
}

// A ShardEnd checkpoint, as a lease table stores it, finishes the shard:
// a new reader goes straight to the children and delivers nothing of it
// again. ShardEnd for an OPEN shard is refused.
func TestNewReaderShardEndCheckpoint(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 1, clk)
	w := &keyWriter{ss: ss, sent: map[string]int{}}
	w.put(t, "a", "b", "c")
	require.NoError(t, ss.SplitShard(shardID(0), "1000"))
	w.put(t, "a", "b", "c")

	_, err := ss.NewReader(Checkpoint{ShardID: shardID(1), ShardEnd: true})
	require.ErrorIs(t, err, ErrInvalidArgument)
	assert.Contains(t, err.Error(), shardID(1))

	r, err := ss.NewReader(Checkpoint{ShardID: shardID(0), ShardEnd: true})
	require.NoError(t, err)
	rs := readAllShards(t, r, 0)
	require.Len(t, rs, 3, "only the children's records")
	for _, rec := range rs {
		assert.NotEqual(t, shardID(0), rec.ShardID)
	}
}
