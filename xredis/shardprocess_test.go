package xredis_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/xredis"
)

// The multi-process test: producer and resharder processes (this test
// binary run again, as TestShardedHelperProcess with a role) share one
// sharded stream on the cluster with a reader in the test's process.

const (
	procProducers = 3
	procKeys      = 4 // partition keys per producer
)

// TestShardedHelperProcess is a role of the multi-process test when
// XREDIS_SHARDED_ROLE is set; else it does nothing.
func TestShardedHelperProcess(t *testing.T) {
	role := os.Getenv("XREDIS_SHARDED_ROLE")
	if role == "" {
		return
	}
	ctx := context.Background()
	e, err := xredis.Dial(ctx, strings.Split(os.Getenv("XREDIS_ADDRS"), ",")...)
	require.NoError(t, err)
	defer e.Close()
	var opts []xredis.ShardedOption
	if role == "resharder" {
		opts = append(opts, xredis.WithReshardLease(200*time.Millisecond))
	}
	if os.Getenv("XREDIS_TAKEOVER") != "" {
		// A clock an hour ahead sees every lock of the others as expired.
		opts = append(opts, xredis.WithShardClock(func() time.Time { return time.Now().Add(time.Hour) }))
	}
	s, err := xredis.OpenSharded(ctx, e, os.Getenv("XREDIS_STREAM"), opts...)
	require.NoError(t, err)
	n, _ := strconv.Atoi(os.Getenv("XREDIS_N"))
	switch role {
	case "producer":
		// Puts until the stop key exists, then prints how many records
		// each key got.
		p := os.Getenv("XREDIS_PRODUCER")
		c := e.Client()
		i := 0
		for ; ; i++ {
			if i%20 == 0 {
				n, err := c.Do(ctx, c.B().Exists().Key(os.Getenv("XREDIS_STOP")).Build()).AsInt64()
				require.NoError(t, err)
				if n > 0 {
					break
				}
			}
			for k := range procKeys {
				_, err := s.Put(ctx, "p"+p+"k"+strconv.Itoa(k), xstream.PutArgs{}, xstream.Fields("n", strconv.Itoa(i))...)
				require.NoError(t, err)
			}
		}
		fmt.Printf("records %d\n", i)
	case "consumer":
		// Reads group g as "dead", says how many records it got, and
		// waits to be killed without acknowledging them.
		recs, err := s.ReadGroup(ctx, "g", "dead", xstream.ReadGroupArgs{})
		require.NoError(t, err)
		fmt.Printf("read %d\n", len(recs))
		select {}
	case "lease-producer", "lease-resharder", "lease-worker":
		leaseRole(t, ctx, e, s, role) // leases_test.go
	case "resharder":
		rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
		for i := 0; n < 0 || i < n; {
			err := reshardOnce(ctx, s, rng)
			if errors.Is(err, xstream.ErrResourceInUse) {
				continue
			}
			require.NoError(t, err)
			i++
			fmt.Printf("reshard %d\n", i)
		}
	}
}

// reshardOnce splits, merges or rescales, at random.
func reshardOnce(ctx context.Context, s *xredis.Sharded, rng *rand.Rand) error {
	open, err := s.ListShards(ctx, xstream.ShardFilter{Type: xstream.FilterAtLatest})
	if err != nil {
		return err
	}
	sortByStart(open)
	r := rng.IntN(10)
	switch {
	case r < 2:
		lo, hi := (len(open)+1)/2, min(2*len(open), 8)
		return s.UpdateShardCount(ctx, lo+rng.IntN(hi-lo+1))
	case (r < 6 && len(open) < 8) || len(open) == 1:
		sh := open[rng.IntN(len(open))]
		start, end := toBig(sh.HashKeyRange.StartingHashKey), toBig(sh.HashKeyRange.EndingHashKey)
		mid := new(big.Int).Rsh(new(big.Int).Add(start, end), 1)
		return s.SplitShard(ctx, sh.ShardID, mid.String())
	default:
		i := rng.IntN(len(open) - 1)
		return s.MergeShards(ctx, open[i].ShardID, open[i+1].ShardID)
	}
}

func toBig(h xstream.HashKey) *big.Int {
	b := new(big.Int).SetUint64(h.Hi)
	return b.Lsh(b, 64).Or(b, new(big.Int).SetUint64(h.Lo))
}

func sortByStart(in []xstream.ShardInfo) {
	for i := 1; i < len(in); i++ {
		for j := i; j > 0 && in[j].HashKeyRange.StartingHashKey.Less(in[j-1].HashKeyRange.StartingHashKey); j-- {
			in[j], in[j-1] = in[j-1], in[j]
		}
	}
}

// processStream skips the test in -short mode; else it creates a
// sharded stream of the given shards on the cluster, for a test with
// helper processes, and returns the cluster's addresses, an engine and
// the stream.
func processStream(t *testing.T, shards int) ([]string, xredis.Engine, *xredis.Sharded) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts processes")
	}
	addrs := serverAddrs(t, "cluster")
	e := newEngine(t, "cluster")
	s, err := xredis.CreateSharded(bg(), e, shardedName(t), xstream.ShardedArgs{Shards: shards})
	require.NoError(t, err)
	return addrs, e, s
}

// helper starts this binary in a role.
func helper(t *testing.T, addrs []string, stream, role string, env ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestShardedHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), "XREDIS_SHARDED_ROLE="+role, "XREDIS_ADDRS="+strings.Join(addrs, ","), "XREDIS_STREAM="+stream)
	cmd.Env = append(cmd.Env, env...)
	cmd.Stderr = os.Stderr
	return cmd
}

// TestShardedMultiProcess: three producer processes put records with
// per-key sequence numbers while a resharder process splits, merges and
// rescales at random (50 reshards), and then a second resharder is
// killed (SIGKILL) after 10 reshards, midway through whatever it was
// doing, and a third one takes over (completing what the killed one left)
// and does 20 more. A parent-before-child reader in this process reads
// everything meanwhile: no record is lost or read twice, and each key's
// records come in order. At the end the OPEN shards partition the key
// space.
func TestShardedMultiProcess(t *testing.T) {
	addrs, e, s := processStream(t, 2)
	name := s.Name()

	stop := "{" + name + "}:stop"
	var producers []*exec.Cmd
	var counts []*strings.Builder
	for p := range procProducers {
		cmd := helper(t, addrs, name, "producer", "XREDIS_PRODUCER="+strconv.Itoa(p), "XREDIS_STOP="+stop)
		var out strings.Builder
		cmd.Stdout = &out
		require.NoError(t, cmd.Start())
		producers = append(producers, cmd)
		counts = append(counts, &out)
	}
	runResharder := func(n int, env ...string) *exec.Cmd {
		return helper(t, addrs, name, "resharder", append(env, "XREDIS_N="+strconv.Itoa(n))...)
	}

	// The reader.
	ctx, cancel := context.WithTimeout(bg(), 3*time.Minute)
	defer cancel()
	want := -1 // known once the producers stopped
	next := map[string]int{}
	readErr := make(chan error, 1)
	var mu sync.Mutex
	total := 0
	go func() {
		r, err := s.NewReader(ctx)
		if err != nil {
			readErr <- err
			return
		}
		for {
			mu.Lock()
			done := total == want
			mu.Unlock()
			if done {
				readErr <- nil
				return
			}
			recs, err := r.Read(ctx, xstream.ReadArgs{Count: 100, Block: time.Second})
			if err != nil {
				readErr <- err
				return
			}
			mu.Lock()
			for _, rec := range recs {
				if got := rec.Fields[0].Value; got != strconv.Itoa(next[rec.PartitionKey]) {
					mu.Unlock()
					readErr <- fmt.Errorf("key %s: record %s after %d (shard %s, %s)", rec.PartitionKey, got, next[rec.PartitionKey], rec.ShardID, rec.SequenceNumber)
					return
				}
				next[rec.PartitionKey]++
				total++
			}
			mu.Unlock()
		}
	}()

	first := runResharder(50)
	require.NoError(t, first.Run(), "the first resharder")

	killed := runResharder(-1)
	out, err := killed.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, killed.Start())
	lines := bufio.NewScanner(out)
	for i := 0; i < 10 && lines.Scan(); i++ {
	}
	require.NoError(t, killed.Process.Kill())
	killed.Wait()

	third := runResharder(20, "XREDIS_TAKEOVER=1")
	require.NoError(t, third.Run(), "the resharder that takes over")

	c := e.Client()
	require.NoError(t, c.Do(bg(), c.B().Set().Key(stop).Value("1").Build()).Error())
	perProducer := make([]int, procProducers)
	for p, cmd := range producers {
		require.NoError(t, cmd.Wait(), "a producer")
		_, err := fmt.Sscanf(counts[p].String(), "records %d", &perProducer[p])
		require.NoError(t, err, "producer output %q", counts[p].String())
	}
	mu.Lock()
	want = 0
	for _, n := range perProducer {
		want += n * procKeys
	}
	mu.Unlock()
	require.NoError(t, <-readErr)
	mu.Lock()
	require.Equal(t, want, total)
	for p, n := range perProducer {
		for k := range procKeys {
			require.Equal(t, n, next["p"+strconv.Itoa(p)+"k"+strconv.Itoa(k)], "every record of producer %d's key %d read once", p, k)
		}
	}
	mu.Unlock()
	c.Do(bg(), c.B().Del().Key(stop).Build())

	requirePartition(t, s)
	open, err := s.ListShards(bg(), xstream.ShardFilter{Type: xstream.FilterAtLatest})
	require.NoError(t, err)
	stored := 0
	all := storedRecords(t, s) // no record after its shard's end
	for _, ids := range all {
		stored += len(ids)
	}
	require.Equal(t, want, stored, "the shards hold every record put, once")
	t.Logf("%d records by %d producers over %d shards (%d OPEN)", total, procProducers, len(all), len(open))
}

// TestShardedConcurrentReshards: two engines reshard one stream at once;
// each call succeeds or fails with ErrResourceInUse, and the OPEN shards
// always partition the key space.
func TestShardedConcurrentReshards(t *testing.T) {
	eachShardedKind(t, func(t *testing.T, kind string) {
		a, _ := newSharded(t, kind, xstream.ShardedArgs{Shards: 2})
		b, err := xredis.OpenSharded(bg(), newEngine(t, kind), a.Name())
		require.NoError(t, err)
		var wg sync.WaitGroup
		results := make([][]error, 2)
		for i, s := range []*xredis.Sharded{a, b} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(i), 1))
				for range 20 {
					results[i] = append(results[i], reshardOnce(bg(), s, rng))
				}
			}()
		}
		wg.Wait()
		done := 0
		for _, errs := range results {
			for _, err := range errs {
				if err != nil {
					require.ErrorIs(t, err, xstream.ErrResourceInUse)
					continue
				}
				done++
			}
		}
		require.Positive(t, done)
		requirePartition(t, a)
		st, err := b.Status(bg())
		require.NoError(t, err)
		require.Equal(t, xstream.StreamActive, st, "no lock left behind")
		t.Logf("%d of 40 reshards done", done)
	})
}

// requirePartition fails the test unless the OPEN shards of s, by
// starting key, partition the key space.
func requirePartition(t *testing.T, s *xredis.Sharded) {
	t.Helper()
	open, err := s.ListShards(bg(), xstream.ShardFilter{Type: xstream.FilterAtLatest})
	require.NoError(t, err)
	sortByStart(open)
	at := new(big.Int)
	for _, sh := range open {
		require.Zero(t, toBig(sh.HashKeyRange.StartingHashKey).Cmp(at), "a gap before %s", sh.ShardID)
		at = toBig(sh.HashKeyRange.EndingHashKey)
		at.Add(at, big.NewInt(1))
	}
	require.Zero(t, at.Cmp(new(big.Int).Lsh(big.NewInt(1), 128)))
}

// TestShardedClaimKilledConsumer: a consumer process of a StrictOrder
// group reads the records of key K and is killed (SIGKILL) without
// acknowledging them; a split puts K's next records in a child, which the
// group holds back. A consumer in this process that reads with Claim
// (ClaimMinIdle 200 ms, Block 20 ms) takes the dead one's records over in
// the first read that starts 200 ms after they were delivered, and once
// it acknowledges them its next read delivers the child's records: the
// dead consumer held the child back for the idle time plus one read.
func TestShardedClaimKilledConsumer(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	const idle = 200 * time.Millisecond
	addrs := serverAddrs(t, "cluster")
	e := newEngine(t, "cluster")
	name := shardedName(t)
	s, err := xredis.CreateSharded(bg(), e, name, xstream.ShardedArgs{Shards: 1})
	require.NoError(t, err)
	require.NoError(t, s.CreateGroup(bg(), "g", xstream.ShardGroupOptions{StrictOrder: true}))
	for i := range 5 {
		_, err := s.Put(bg(), "K", xstream.PutArgs{}, xstream.Fields("n", strconv.Itoa(i))...)
		require.NoError(t, err)
	}

	dead := helper(t, addrs, name, "consumer")
	out, err := dead.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, dead.Start())
	t.Cleanup(func() { dead.Process.Kill(); dead.Wait() })
	lines := bufio.NewScanner(out)
	require.True(t, lines.Scan(), "the consumer process said nothing")
	read := time.Now() // its records were delivered before
	require.Equal(t, "read 5", lines.Text())
	require.NoError(t, dead.Process.Kill())
	dead.Wait()

	require.NoError(t, s.SplitShard(bg(), "shardId-000000000000", new(big.Int).Lsh(big.NewInt(1), 127).String()))
	var kids []xstream.PutResult
	for i := 5; i < 7; i++ {
		r, err := s.Put(bg(), "K", xstream.PutArgs{}, xstream.Fields("n", strconv.Itoa(i))...)
		require.NoError(t, err)
		kids = append(kids, r)
	}

	ctx, cancel := context.WithTimeout(bg(), time.Minute)
	defer cancel()
	claim := xstream.ReadGroupArgs{Claim: true, ClaimMinIdle: idle, Block: 20 * time.Millisecond}
	reads := 0
	var got []xstream.Record
	for len(got) == 0 {
		start := time.Now()
		got, err = s.ReadGroup(ctx, "g", "live", claim)
		require.NoError(t, err)
		reads++
		if len(got) == 0 {
			require.Less(t, start.Sub(read), idle+5*time.Millisecond, "a read that started ClaimMinIdle after the delivery took nothing")
		}
	}
	took := time.Since(read)
	require.Len(t, got, 5)
	for i, r := range got {
		require.Equal(t, xstream.Fields("n", strconv.Itoa(i)), r.Fields, "taken over in put order")
		require.Equal(t, int64(1), r.Deliveries)
	}
	n, err := s.Ack(bg(), "g", refsOfRecords(got)...)
	require.NoError(t, err)
	require.Equal(t, int64(5), n)
	next, err := s.ReadGroup(ctx, "g", "live", xstream.ReadGroupArgs{})
	require.NoError(t, err)
	require.Len(t, next, 2, "the child's records, in the next read")
	for i, r := range next {
		require.Equal(t, kids[i].SequenceNumber, r.SequenceNumber)
	}
	t.Logf("the dead consumer's records taken over %s after their delivery, in read %d", took.Round(time.Millisecond), reads)
}

func refsOfRecords(recs []xstream.Record) []xstream.RecordRef {
	out := make([]xstream.RecordRef, len(recs))
	for i, r := range recs {
		out[i] = xstream.RecordRef{ShardID: r.ShardID, SequenceNumber: r.SequenceNumber}
	}
	return out
}
