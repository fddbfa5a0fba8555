package xstream

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// partitionError says how the OPEN shards fail to partition the hash key
// space, or returns nil.
func partitionError(open []ShardInfo) error {
	sortByStart(open)
	next := new(big.Int)
	for _, s := range open {
		if s.State != ShardOpen {
			return fmt.Errorf("%s listed as open is %s", s.ShardID, s.State)
		}
		if bigOf(s.HashKeyRange.StartingHashKey).Cmp(next) != 0 {
			return fmt.Errorf("%s starts at %s, want %s", s.ShardID, s.HashKeyRange.StartingHashKey, next)
		}
		next = bigOf(s.HashKeyRange.EndingHashKey)
		next.Add(next, big.NewInt(1))
	}
	if next.Cmp(new(big.Int).Lsh(big.NewInt(1), 128)) != 0 {
		return fmt.Errorf("open shards end at %s", next)
	}
	return nil
}

// randomReshard does one random split, merge or rescale.
func randomReshard(ss *ShardedStream, rng *rand.Rand) (string, error) {
	open, err := ss.ListShards(ShardFilter{Type: FilterAtLatest})
	if err != nil {
		return "list", err
	}
	sortByStart(open)
	switch op := rng.IntN(5); {
	case op < 2 && len(open) < 12:
		s := open[rng.IntN(len(open))]
		width := s.HashKeyRange.EndingHashKey.sub(s.HashKeyRange.StartingHashKey)
		step, _ := width.divmod(1000)
		key := s.HashKeyRange.StartingHashKey.add(step.mul(1 + rng.Uint64N(999)))
		return "split " + s.ShardID, ss.SplitShard(s.ShardID, key.String())
	case op < 4 && len(open) > 1:
		i := rng.IntN(len(open) - 1)
		a, b := open[i], open[i+1]
		if rng.IntN(2) == 0 {
			// The upper shard first is refused: adjacency inverted.
			op := "inverted merge " + b.ShardID + " " + a.ShardID
			switch err := ss.MergeShards(b.ShardID, a.ShardID); {
			case errors.Is(err, ErrResourceInUse) || errors.Is(err, ErrShardClosed):
				return op, err // lost a race with another resharder
			case !errors.Is(err, ErrInvalidArgument):
				return op, fmt.Errorf("want ErrInvalidArgument, got %v", err)
			}
		}
		return "merge " + a.ShardID + " " + b.ShardID, ss.MergeShards(a.ShardID, b.ShardID)
	default:
		n := len(open)
		target := (n+1)/2 + rng.IntN(min(2*n, 12)-(n+1)/2+1)
		return "scale to " + strconv.Itoa(target), ss.UpdateShardCount(target)
	}
}

// TestShardedProperty runs writers over many partition keys against
// random splits, merges and rescalings, with a reader that restarts from
// its checkpoints now and then, and checks that each key's records come
// in put order, none lost, none duplicated, and that after every reshard
// the open shards partition the hash key space.
func TestShardedProperty(t *testing.T) {
	const (
		writers   = 4
		keysEach  = 25
		perWriter = 600
		reshards  = 25
	)
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 3, clk)

	var wg sync.WaitGroup
	var written atomic.Int64
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, uint64(w)))
			sent := make([]int, keysEach)
			for range perWriter {
				k := rng.IntN(keysEach)
				pk := fmt.Sprintf("w%d-key%d", w, k)
				if rng.IntN(10) == 0 {
					_, failed, err := ss.PutRecords([]PutRecordsEntry{
						{PartitionKey: pk, Fields: Fields("n", strconv.Itoa(sent[k]))},
						{PartitionKey: pk, Fields: Fields("n", strconv.Itoa(sent[k]+1))},
					})
					if !assert.NoError(t, err) || !assert.Zero(t, failed) {
						return
					}
					sent[k] += 2
					written.Add(2)
					continue
				}
				if _, err := ss.Put(pk, PutArgs{}, Fields("n", strconv.Itoa(sent[k]))...); !assert.NoError(t, err) {
					return
				}
				sent[k]++
				written.Add(1)
			}
		}()
	}
	var reshardErrs []string
	var mu sync.Mutex
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(seed, 100+uint64(g)))
			for range reshards {
				op, err := randomReshard(ss, rng)
				clk.advance(time.Millisecond)
				if errors.Is(err, ErrResourceInUse) || errors.Is(err, ErrShardClosed) ||
					(errors.Is(err, ErrInvalidArgument) && strings.HasPrefix(op, "scale")) {
					continue // lost a race with the other resharder
				}
				open, lerr := ss.ListShards(ShardFilter{Type: FilterAtLatest})
				mu.Lock()
				if err != nil {
					reshardErrs = append(reshardErrs, op+": "+err.Error())
				}
				if lerr != nil {
					reshardErrs = append(reshardErrs, lerr.Error())
				} else if perr := partitionError(open); perr != nil {
					reshardErrs = append(reshardErrs, op+": "+perr.Error())
				}
				mu.Unlock()
			}
		}()
	}
	allDone := make(chan struct{})
	go func() { wg.Wait(); close(allDone) }()

	// Read concurrently, restarting from checkpoints every few reads.
	o := newOrderChecker()
	r, err := ss.NewReader()
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	finished := false
	for reads := 0; ; reads++ {
		select {
		case <-allDone:
			finished = true
		default:
		}
		if finished && o.total() == int(written.Load()) {
			break
		}
		rs, err := r.Read(ctx, ReadArgs{Count: 50, Block: 20 * time.Millisecond})
		require.NoError(t, err)
		o.add(t, rs)
		if reads%7 == 0 {
			r, err = ss.NewReader(r.Checkpoints()...)
			require.NoError(t, err)
		}
	}
	require.Empty(t, reshardErrs)
	rs, err := r.Read(ctx, ReadArgs{})
	require.NoError(t, err)
	require.Empty(t, rs, "nothing beyond what was written")
	require.NoError(t, partitionError(mustList(t, ss, ShardFilter{Type: FilterAtLatest})))

	// No record landed in a shard after it closed.
	for _, info := range mustList(t, ss, ShardFilter{}) {
		if info.State != ShardClosed {
			continue
		}
		it, err := ss.GetShardIterator(info.ShardID, IteratorArgs{Type: TrimHorizon})
		require.NoError(t, err)
		for it != nil {
			res, err := ss.GetRecords(it, 100)
			require.NoError(t, err)
			for _, rec := range res.Records {
				require.False(t, info.SequenceNumberRange.EndingSequenceNumber.Less(rec.SequenceNumber),
					"record %s in %s after its ending sequence number %s", rec.SequenceNumber, info.ShardID, info.SequenceNumberRange.EndingSequenceNumber)
				require.True(t, info.HashKeyRange.Contains(PartitionHashKey(rec.PartitionKey)), "record of %q outside %s's range", rec.PartitionKey, info.ShardID)
			}
			it = res.NextShardIterator
		}
	}

	// A fresh reader sees the same, in order.
	fresh, err := ss.NewReader()
	require.NoError(t, err)
	o2 := newOrderChecker()
	o2.add(t, readAllShards(t, fresh, 97))
	require.Equal(t, o.next, o2.next)
	require.Equal(t, int(written.Load()), o2.total())
	require.GreaterOrEqual(t, o2.total(), writers*perWriter)
	t.Logf("%d records, %d shards made", o.total(), len(ss.Lineage().all()))
}
