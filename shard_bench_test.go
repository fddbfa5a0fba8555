package xstream

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"
)

// shardBenchFields is the entry of the core's Add benchmarks: a 4-digit sensor
// ID and a temperature.
var shardBenchFields = Fields("sensor-id", "1234", "temperature", "19.8")

// BenchmarkShardedPut puts records with 1,000 distinct partition keys into
// a 4-shard stream; the baseline sub-benchmarks add the same entry to a
// plain Stream and hash the keys, in the same run. The ratio sub-benchmark
// reports Put's time over that of an Add of the entry Put stores plus the
// MD5 of its key (see putRatio).
func BenchmarkShardedPut(b *testing.B) {
	keys := make([]string, 1000)
	for i := range keys {
		keys[i] = "sensor-" + strconv.Itoa(i)
	}
	b.Run("baseline-Stream.Add", func(b *testing.B) {
		s := NewStream()
		b.ReportAllocs()
		for b.Loop() {
			if _, err := s.Add(AddArgs{}, shardBenchFields...); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("baseline-Stream.Add-with-key", func(b *testing.B) {
		addWithKey(b, NewStream(), keys)
	})
	// The same Add with stream-node-max-bytes 16384 instead of 4096:
	// its blocks still end at 100 entries, by the count, but no entry
	// takes the storage's path for blocks near the bound on bytes, where
	// it computes the block's exact listpack size (see Blocks.fitsBytes).
	b.Run("baseline-Stream.Add-with-key-16k-node", func(b *testing.B) {
		s := NewStream(WithNodeSize(100, 16384))
		n := addWithKey(b, s, keys)
		if got, want := s.st.NumBlocks(), (n+99)/100; got != want {
			b.Fatalf("%d entries in %d blocks, want %d of 100", n, got, want)
		}
	})
	b.Run("md5", func(b *testing.B) {
		i := 0
		var sink HashKey
		for b.Loop() {
			sink = sink.add(PartitionHashKey(keys[i%len(keys)]))
			i++
		}
		_ = sink
	})
	b.Run("Put", func(b *testing.B) {
		ss, err := NewShardedStream(ShardedArgs{Shards: 4})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := ss.Put(keys[i%len(keys)], PutArgs{}, shardBenchFields...); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("Put-explicit-hash-key", func(b *testing.B) {
		ss, err := NewShardedStream(ShardedArgs{Shards: 4})
		if err != nil {
			b.Fatal(err)
		}
		hks := make([]string, len(keys))
		for i, k := range keys {
			hks[i] = PartitionHashKey(k).String()
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := ss.Put(keys[i%len(keys)], PutArgs{ExplicitHashKey: hks[i%len(hks)]}, shardBenchFields...); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("Put-64-shards", func(b *testing.B) {
		ss, err := NewShardedStream(ShardedArgs{Shards: 64})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			if _, err := ss.Put(keys[i%len(keys)], PutArgs{}, shardBenchFields...); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
	b.Run("ratio", func(b *testing.B) { putRatio(b, keys) })
	b.Run("ratio-parts", func(b *testing.B) { putParts(b, keys) })
}

// addWithKey adds the entry Put stores (the partition key first, then
// the fields) to s in a b.Loop, the keys in turn, and returns how many.
func addWithKey(b *testing.B, s *Stream, keys []string) int {
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		k := keys[i%len(keys)]
		if _, err := s.Add(AddArgs{}, Field{partitionKeyField, k}, shardBenchFields[0], shardBenchFields[1]); err != nil {
			b.Fatal(err)
		}
		i++
	}
	return i
}

// putRatio times b.N Puts into a 4-shard stream in rounds of 512 and,
// after each round with the timer stopped, as many Adds of the entry Put
// stores (the fields with the partition key first) to a plain Stream and
// as many MD5s of the keys. It reports Put's time over the sum of the
// other two as x-add+md5, so that the ratio comes from one run and the
// machine's noise hits all three alike; the median of the rounds' ratios
// as x-add+md5-median, which a round slowed by another process moves
// less; and the two baselines' ns/op.
func putRatio(b *testing.B, keys []string) {
	const chunk = 512
	ss, err := NewShardedStream(ShardedArgs{Shards: 4})
	if err != nil {
		b.Fatal(err)
	}
	s := NewStream()
	var tPut, tAdd, tMD5 time.Duration
	var ratios []float64
	var sink HashKey
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(chunk, b.N-done)
		dPut := timePuts(b, ss, keys, done, n)
		b.StopTimer()
		start := time.Now()
		for i := done; i < done+n; i++ {
			if _, err := s.Add(AddArgs{}, Field{partitionKeyField, keys[i%len(keys)]}, shardBenchFields[0], shardBenchFields[1]); err != nil {
				b.Fatal(err)
			}
		}
		dAdd := time.Since(start)
		start = time.Now()
		for i := done; i < done+n; i++ {
			sink = sink.add(PartitionHashKey(keys[i%len(keys)]))
		}
		dMD5 := time.Since(start)
		tPut, tAdd, tMD5 = tPut+dPut, tAdd+dAdd, tMD5+dMD5
		ratios = append(ratios, float64(dPut)/float64(dAdd+dMD5))
		done += n
		b.StartTimer()
	}
	b.StopTimer()
	_ = sink
	slices.Sort(ratios)
	b.ReportMetric(float64(tPut)/float64(tAdd+tMD5), "x-add+md5")
	b.ReportMetric(ratios[len(ratios)/2], "x-add+md5-median")
	b.ReportMetric(float64(tAdd.Nanoseconds())/float64(b.N), "add-ns/op")
	b.ReportMetric(float64(tMD5.Nanoseconds())/float64(b.N), "md5-ns/op")
}

// timePuts returns the time of Puts of the records done to done+n-1 (by
// key, as the ratio benchmarks number them) into ss.
func timePuts(b *testing.B, ss *ShardedStream, keys []string, done, n int) time.Duration {
	start := time.Now()
	for i := done; i < done+n; i++ {
		if _, err := ss.Put(keys[i%len(keys)], PutArgs{}, shardBenchFields...); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start)
}

// putParts splits the ratio of putRatio in two, from rounds of 512 Puts
// into a 4-shard stream and, with the timer stopped, as many MD5s of the
// keys each followed by an Add of the entry Put stores, to one of four
// plain Streams picked by the hash as Put picks its shard (x4), and to
// one plain Stream by the same code (x1). It reports the medians of the
// rounds' ratios: Put over x4 as x-add4+md5-median, what Put's own layer
// costs (routing, the shard's checks, the PutResult, the entry's copy);
// and x4 over x1 as add4/add1-median, what spreading the entries over
// four streams costs the Adds.
func putParts(b *testing.B, keys []string) {
	const chunk = 512
	ss, err := NewShardedStream(ShardedArgs{Shards: 4})
	if err != nil {
		b.Fatal(err)
	}
	// Four shards of equal width: the shard of h is h.Hi>>62.
	four := []*Stream{NewStream(), NewStream(), NewStream(), NewStream()}
	one := NewStream()
	hashAdd := func(streams []*Stream, mask uint64, done, n int) time.Duration {
		start := time.Now()
		for i := done; i < done+n; i++ {
			k := keys[i%len(keys)]
			s := streams[PartitionHashKey(k).Hi>>62&mask]
			if _, err := s.Add(AddArgs{}, Field{partitionKeyField, k}, shardBenchFields[0], shardBenchFields[1]); err != nil {
				b.Fatal(err)
			}
		}
		return time.Since(start)
	}
	var own, spread []float64
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(chunk, b.N-done)
		dPut := timePuts(b, ss, keys, done, n)
		b.StopTimer()
		d4 := hashAdd(four, 3, done, n)
		d1 := hashAdd([]*Stream{one, one, one, one}, 0, done, n)
		own = append(own, float64(dPut)/float64(d4))
		spread = append(spread, float64(d4)/float64(d1))
		done += n
		b.StartTimer()
	}
	b.StopTimer()
	for i, sh := range ss.open {
		if four[i].Len() != sh.s.Len() {
			b.Fatalf("shard %d holds %d records, its plain stream %d", i, sh.s.Len(), four[i].Len())
		}
	}
	slices.Sort(own)
	slices.Sort(spread)
	b.ReportMetric(own[len(own)/2], "x-add4+md5-median")
	b.ReportMetric(spread[len(spread)/2], "add4/add1-median")
}

// BenchmarkSplitShard splits a shard holding 10,000 or 1,000,000
// records. Between iterations, untimed, the split is undone so that each
// iteration splits the same full shard.
func BenchmarkSplitShard(b *testing.B) {
	for _, bc := range []struct {
		name string
		n    int
	}{{"10k", 10_000}, {"1M", 1_000_000}} {
		b.Run(bc.name, func(b *testing.B) {
			ss, err := NewShardedStream(ShardedArgs{Shards: 1})
			if err != nil {
				b.Fatal(err)
			}
			for range bc.n {
				if _, err := ss.Put("k", PutArgs{}, shardBenchFields...); err != nil {
					b.Fatal(err)
				}
			}
			mid := uniformWidth(2).String()
			b.ReportAllocs()
			for b.Loop() {
				if err := ss.SplitShard(shardID(0), mid); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				ss.undoReshards()
				b.StartTimer()
			}
			if l := ss.shards[0].s.Len(); l != int64(bc.n) {
				b.Fatalf("shard holds %d records, want %d", l, bc.n)
			}
		})
	}
}

// undoReshards makes the stream's first shard the only one again, OPEN.
// Benchmarks only: it assumes the stream was made with one shard.
func (ss *ShardedStream) undoReshards() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	sh := ss.shards[0]
	sh.state, sh.children, sh.endSeq, sh.sealed = ShardOpen, nil, ID{}, false
	clear(ss.shards[1:])
	ss.shards, ss.live, ss.open = ss.shards[:1], ss.live[:1], append(ss.open[:0], sh)
	ss.publishLocked()
}

// BenchmarkShardReader reads records waiting in 4 shards with a
// parent-before-child reader, 1,000 a Read; it reports records per second.
func BenchmarkShardReader(b *testing.B) {
	const total = 1_000_000
	var clockMs int64 = 1_700_000_000_000
	clk := func() time.Time { return time.UnixMilli(clockMs) }
	ss, err := NewShardedStream(ShardedArgs{Shards: 4}, WithClock(clk))
	if err != nil {
		b.Fatal(err)
	}
	for i := range total {
		if _, err := ss.Put("sensor-"+strconv.Itoa(i%1000), PutArgs{}, shardBenchFields...); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	r, err := ss.NewReader()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	read := 0
	for b.Loop() {
		rs, err := r.Read(ctx, ReadArgs{Count: 1000})
		if err != nil {
			b.Fatal(err)
		}
		if len(rs) == 0 {
			b.StopTimer()
			if r, err = ss.NewReader(); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			continue
		}
		read += len(rs)
	}
	b.ReportMetric(float64(read)/b.Elapsed().Seconds(), "records/s")
}

// BenchmarkShardedClaim claims 10 records of a two-shard stream, turn by
// turn for two consumers, so that each call moves all ten.
//
//	go test -run '^$' -bench BenchmarkShardedClaim -benchmem
func BenchmarkShardedClaim(b *testing.B) {
	ss, err := NewShardedStream(ShardedArgs{Shards: 2})
	if err != nil {
		b.Fatal(err)
	}
	for i := range 10 {
		if _, err := ss.Put("key-"+strconv.Itoa(i), PutArgs{}, Field{"n", strconv.Itoa(i)}); err != nil {
			b.Fatal(err)
		}
	}
	if err := ss.CreateGroup("g", ShardGroupOptions{}); err != nil {
		b.Fatal(err)
	}
	var refs []RecordRef
	for {
		rs, err := ss.ReadGroup(context.Background(), "g", "a", ReadGroupArgs{Count: 10})
		if err != nil {
			b.Fatal(err)
		}
		if len(rs) == 0 {
			break
		}
		for _, r := range rs {
			refs = append(refs, RecordRef{ShardID: r.ShardID, SequenceNumber: r.SequenceNumber})
		}
	}
	if len(refs) != 10 {
		b.Fatal(len(refs), "records pending")
	}
	consumers := []string{"b", "a"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		rs, err := ss.Claim("g", consumers[i%2], 0, refs, ClaimArgs{JustID: true})
		if err != nil || len(rs) != 10 {
			b.Fatal(len(rs), err)
		}
	}
}

// BenchmarkShardedReadGroupGate is a ReadGroup of a StrictOrder group that
// finds nothing new on a stream with a long lineage: 4 OPEN shards and
// 120 CLOSED ones (20 rescalings between 4 and 8 shards, 10 records put
// before each), every record delivered and acknowledged. It measures what
// deciding which shards the group may read costs a call.
//
//	go test -run '^$' -bench BenchmarkShardedReadGroupGate -benchmem
func BenchmarkShardedReadGroupGate(b *testing.B) {
	ss, err := NewShardedStream(ShardedArgs{Shards: 4})
	if err != nil {
		b.Fatal(err)
	}
	if err := ss.CreateGroup("g", ShardGroupOptions{StrictOrder: true}); err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	for i := range 20 {
		for k := range 10 {
			if _, err := ss.Put("key-"+strconv.Itoa(k), PutArgs{}, Field{"n", strconv.Itoa(i)}); err != nil {
				b.Fatal(err)
			}
		}
		if err := ss.UpdateShardCount(8 >> (i % 2)); err != nil {
			b.Fatal(err)
		}
		rs, err := ss.ReadGroup(ctx, "g", "c", ReadGroupArgs{})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := ss.Ack("g", refsOf(rs)...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		rs, err := ss.ReadGroup(ctx, "g", "c", ReadGroupArgs{Count: 10})
		if err != nil || len(rs) != 0 {
			b.Fatal(len(rs), err)
		}
	}
	b.ReportMetric(float64(len(ss.live)), "live-shards")
}
