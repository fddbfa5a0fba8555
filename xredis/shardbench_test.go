package xredis_test

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/xredis"
)

// BenchmarkShardedPut compares Sharded.Put (routed by MD5 against the
// cached map, a guarded EVALSHA on the shard's node) by 64 concurrent
// producers with plain XADD through the raw client, one key per producer
// spread over the slots, in the same run, on the three-master cluster
// (XREDIS_BENCH_KIND=redis for a standalone server). The sharded stream
// has 6 shards. See BENCHMARKS.md.
//
//	go test -run '^$' -bench BenchmarkShardedPut -benchtime 2s -count 5 .
func BenchmarkShardedPut(b *testing.B) {
	e := newEngine(b, benchKind("cluster"))
	c := e.Client()
	ctx := context.Background()
	s, err := xredis.CreateSharded(ctx, e, shardedName(b), xstream.ShardedArgs{Shards: 6})
	if err != nil {
		b.Fatal(err)
	}
	fields := xstream.Fields("sensor-id", "1234", "temperature", "19.8")
	const callers = 64
	run := func(b *testing.B, fn func(producer int64, i int)) {
		b.ReportAllocs()
		b.SetParallelism(parallelism(callers))
		var next atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			p := next.Add(1)
			for i := 0; pb.Next(); i++ {
				fn(p, i)
			}
		})
	}
	sharded := func(b *testing.B) {
		run(b, func(p int64, i int) {
			pk := "p" + strconv.FormatInt(p, 10) + "-" + strconv.Itoa(i%16)
			if _, err := s.Put(ctx, pk, xstream.PutArgs{}, fields...); err != nil {
				b.Fatal(err)
			}
		})
	}
	k := keys(b)
	raw := func(b *testing.B) {
		run(b, func(p int64, _ int) {
			key := "{" + k("xadd") + strconv.FormatInt(p, 10) + "}"
			cmd := c.B().Xadd().Key(key).Id("*").FieldValue().FieldValue("sensor-id", "1234").FieldValue("temperature", "19.8").Build()
			if _, err := c.Do(ctx, cmd).ToString(); err != nil {
				b.Fatal(err)
			}
		})
	}
	if os.Getenv("XREDIS_BENCH_ORDER") == "raw-first" {
		b.Run("64/xadd", raw)
		b.Run("64/sharded", sharded)
	} else {
		b.Run("64/sharded", sharded)
		b.Run("64/xadd", raw)
	}
}

// BenchmarkShardedSplit times SplitShard of a shard holding no record
// against one holding 1,000,000, in the same run, on the cluster
// (XREDIS_BENCH_KIND=redis: standalone): a split moves no record, so the
// two should cost the same. Each iteration makes a stream of one shard
// and fills it with the timer stopped.
//
//	go test -run '^$' -bench BenchmarkShardedSplit -benchtime 3x .
func BenchmarkShardedSplit(b *testing.B) {
	e := newEngine(b, benchKind("cluster"))
	c := e.Client()
	ctx := context.Background()
	for _, records := range []int{0, 1_000_000} {
		b.Run("records="+strconv.Itoa(records), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				s, err := xredis.CreateSharded(ctx, e, shardedName(b), xstream.ShardedArgs{Shards: 1})
				if err != nil {
					b.Fatal(err)
				}
				fill(b, c, s.StreamKey(0), records)
				runtime.GC() // not the fill's garbage in the split's time
				b.StartTimer()
				if err := s.SplitShard(ctx, "shardId-000000000000", "170141183460469231731687303715884105728"); err != nil {
					b.Fatal(err)
				}
				b.StopTimer()
				c.Do(ctx, c.B().Del().Key(s.StreamKey(0)).Build())
				b.StartTimer()
			}
		})
	}
}
