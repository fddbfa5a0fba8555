package xstream_test

import (
	"context"
	"fmt"
	"time"

	"github.com/xstreamgo/xstream"
)

// shardExampleClock returns a clock standing at t, moved by the returned function.
func shardExampleClock(t time.Time) (func() time.Time, func(time.Duration)) {
	now := t
	return func() time.Time { return now }, func(d time.Duration) { now = now.Add(d) }
}

func ExampleShardedStream_Put() {
	ss, _ := xstream.NewShardedStream(xstream.ShardedArgs{Shards: 4})
	res, _ := ss.Put("sensor-1234", xstream.PutArgs{}, xstream.Fields("temperature", "19.8")...)
	fmt.Println(res.ShardID)
	fmt.Println(xstream.PartitionHashKey("sensor-1234"))
	// Output:
	// shardId-000000000002
	// 238521215309924302645228059098765635007
}

func ExampleShardedStream_SplitShard() {
	ss, _ := xstream.NewShardedStream(xstream.ShardedArgs{Shards: 1})
	_ = ss.SplitShard("shardId-000000000000", "170141183460469231731687303715884105728")
	shards, _ := ss.ListShards(xstream.ShardFilter{})
	for _, s := range shards {
		fmt.Println(s.ShardID, s.State, s.ParentShardID, s.HashKeyRange)
	}
	// Output:
	// shardId-000000000000 CLOSED  0-340282366920938463463374607431768211455
	// shardId-000000000001 OPEN shardId-000000000000 0-170141183460469231731687303715884105727
	// shardId-000000000002 OPEN shardId-000000000000 170141183460469231731687303715884105728-340282366920938463463374607431768211455
}

func ExampleShardedStream_GetRecords() {
	now, _ := shardExampleClock(time.UnixMilli(1_700_000_000_000))
	ss, _ := xstream.NewShardedStream(xstream.ShardedArgs{Shards: 1}, xstream.WithClock(now))
	_, _ = ss.Put("a", xstream.PutArgs{}, xstream.Fields("n", "1")...)
	_, _ = ss.Put("b", xstream.PutArgs{}, xstream.Fields("n", "2")...)
	_ = ss.SplitShard("shardId-000000000000", "1000")

	it, _ := ss.GetShardIterator("shardId-000000000000", xstream.IteratorArgs{Type: xstream.TrimHorizon})
	for it != nil {
		res, _ := ss.GetRecords(it, 1)
		for _, r := range res.Records {
			fmt.Println(r.SequenceNumber, r.PartitionKey, r.Fields)
		}
		if res.NextShardIterator == nil {
			for _, c := range res.ChildShards {
				fmt.Println("child", c.ShardID, c.ParentShards)
			}
		}
		it = res.NextShardIterator
	}
	// Output:
	// 1700000000000-1 a [{n 1}]
	// 1700000000000-2 b [{n 2}]
	// child shardId-000000000001 [shardId-000000000000]
	// child shardId-000000000002 [shardId-000000000000]
}

func ExampleShardReader() {
	ss, _ := xstream.NewShardedStream(xstream.ShardedArgs{Shards: 2})
	for i := range 3 {
		_, _ = ss.Put("user-7", xstream.PutArgs{}, xstream.Fields("n", fmt.Sprint(i))...)
	}
	_ = ss.UpdateShardCount(4)
	_, _ = ss.Put("user-7", xstream.PutArgs{}, xstream.Fields("n", "3")...)

	r, _ := ss.NewReader()
	recs, _ := r.Read(context.Background(), xstream.ReadArgs{})
	for _, rec := range recs {
		fmt.Println(rec.PartitionKey, rec.Fields[0].Value)
	}
	// Resume elsewhere from the checkpoints: nothing is read twice.
	r2, _ := ss.NewReader(r.Checkpoints()...)
	recs, _ = r2.Read(context.Background(), xstream.ReadArgs{})
	fmt.Println(len(recs), "more")
	// Output:
	// user-7 0
	// user-7 1
	// user-7 2
	// user-7 3
	// 0 more
}

func ExampleShardedStream_Lineage() {
	now, _ := shardExampleClock(time.UnixMilli(1_700_000_000_000))
	ss, _ := xstream.NewShardedStream(xstream.ShardedArgs{Shards: 2}, xstream.WithClock(now))
	_ = ss.MergeShards("shardId-000000000000", "shardId-000000000001")
	fmt.Print(ss.Lineage())
	// Output:
	// shardId-000000000000 CLOSED keys 0-170141183460469231731687303715884105727 seq 1700000000000-0..1700000000000-0
	//   └─ shardId-000000000002 OPEN keys 0-340282366920938463463374607431768211455 seq 1700000000000-0.. (merge of shardId-000000000000 and shardId-000000000001)
	// shardId-000000000001 CLOSED keys 170141183460469231731687303715884105728-340282366920938463463374607431768211455 seq 1700000000000-0..1700000000000-0
	//   └─ shardId-000000000002 (merged, see above)
}

func ExampleShardedStream_SetRetention() {
	now, advance := shardExampleClock(time.UnixMilli(1_700_000_000_000))
	ss, _ := xstream.NewShardedStream(xstream.ShardedArgs{Shards: 1, Retention: time.Hour}, xstream.WithClock(now))
	_, _ = ss.Put("a", xstream.PutArgs{}, xstream.Fields("n", "1")...)
	_ = ss.SplitShard("shardId-000000000000", "1000")
	advance(2 * time.Hour)
	shards, _ := ss.ListShards(xstream.ShardFilter{})
	fmt.Println(len(shards), "shards listed")
	_, err := ss.GetShardIterator("shardId-000000000000", xstream.IteratorArgs{})
	fmt.Println(err)
	// Output:
	// 2 shards listed
	// xstream: shard is expired: shard shardId-000000000000 is EXPIRED: its records are past the retention period
}

func ExampleShardedStream_ScanShard() {
	ss, _ := xstream.NewShardedStream(xstream.ShardedArgs{Shards: 1})
	for _, k := range []string{"a", "b", "c"} {
		_, _ = ss.Put(k, xstream.PutArgs{}, xstream.Fields("key", k)...)
	}
	for rec, err := range ss.ScanShard("shardId-000000000000", xstream.IteratorArgs{Type: xstream.TrimHorizon}) {
		if err != nil {
			fmt.Println(err)
			break
		}
		fmt.Println(rec.PartitionKey, rec.Fields)
	}
	// Output:
	// a [{key a}]
	// b [{key b}]
	// c [{key c}]
}

func ExampleShardedStream_ReadGroup() {
	ss, _ := xstream.NewShardedStream(xstream.ShardedArgs{Shards: 1})
	_ = ss.CreateGroup("billing", xstream.ShardGroupOptions{StrictOrder: true})
	_, _ = ss.Put("order-1", xstream.PutArgs{}, xstream.Fields("event", "created")...)
	_ = ss.SplitShard("shardId-000000000000", "170141183460469231731687303715884105728")
	_, _ = ss.Put("order-1", xstream.PutArgs{}, xstream.Fields("event", "paid")...)

	ctx := context.Background()
	recs, _ := ss.ReadGroup(ctx, "billing", "worker-1", xstream.ReadGroupArgs{})
	fmt.Println(len(recs), recs[0].Fields[0].Value, recs[0].ShardID)
	// The child shard waits until the parent's record is acknowledged.
	more, _ := ss.ReadGroup(ctx, "billing", "worker-1", xstream.ReadGroupArgs{})
	fmt.Println(len(more))
	_, _ = ss.Ack("billing", xstream.RecordRef{ShardID: recs[0].ShardID, SequenceNumber: recs[0].SequenceNumber})
	more, _ = ss.ReadGroup(ctx, "billing", "worker-1", xstream.ReadGroupArgs{})
	fmt.Println(len(more), more[0].Fields[0].Value, more[0].ShardID)
	// Output:
	// 1 created shardId-000000000000
	// 0
	// 1 paid shardId-000000000001
}
