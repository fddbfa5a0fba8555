// Command resharding walks through the scenario of the Kinesis resharding
// guide on an in-process sharded stream: put records, split a shard, merge
// two shards, see the parents CLOSED and the children OPEN, read a parent
// until its next iterator is nil before reading its children, and let the
// retention period expire the parents. A simulated clock stands in for
// the 24 hours of retention, so the program ends at once.
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"strconv"
	"sync"
	"time"

	"github.com/xstreamgo/xstream"
)

// clock is a simulated clock the program moves forward by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func main() {
	clk := &clock{t: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)}
	ss, err := xstream.NewShardedStream(xstream.ShardedArgs{Shards: 2}, xstream.WithClock(clk.now))
	check(err)

	fmt.Println("1. Put 20 records with 5 partition keys into 2 shards")
	put(ss, clk, 20)
	printShards(ss)

	fmt.Println("\n2. Split shardId-000000000000 at the middle of its hash key range")
	shards, err := ss.ListShards(xstream.ShardFilter{Type: xstream.FilterAtLatest})
	check(err)
	r := shards[0].HashKeyRange
	mid, err := xstream.ParseHashKey("85070591730234615865843651857942052864") // 2^126
	check(err)
	fmt.Printf("   range %s, new starting hash key %s\n", r, mid)
	check(ss.SplitShard("shardId-000000000000", mid.String()))
	printShards(ss)
	put(ss, clk, 10)

	fmt.Println("\n3. Merge the upper child of the split with its neighbour shardId-000000000001")
	check(ss.MergeShards("shardId-000000000003", "shardId-000000000001"))
	put(ss, clk, 10)
	printShards(ss)
	fmt.Print("\nLineage:\n", ss.Lineage())

	fmt.Println("\n4. Read the parent shardId-000000000000 until its next iterator is nil, then its children")
	children := readShard(ss, "shardId-000000000000")
	for _, c := range children {
		fmt.Printf("   child %s (parents %v, range %s):\n", c.ShardID, c.ParentShards, c.HashKeyRange)
		readShard(ss, c.ShardID)
	}

	fmt.Println("\n   A parent-before-child reader over the whole stream keeps each key's order:")
	reader, err := ss.NewReader()
	check(err)
	last := map[string]int{}
	total := 0
	for {
		recs, err := reader.Read(context.Background(), xstream.ReadArgs{Count: 8})
		check(err)
		if len(recs) == 0 {
			break
		}
		for _, rec := range recs {
			n, _ := strconv.Atoi(rec.Fields[0].Value)
			if n < last[rec.PartitionKey] {
				log.Fatalf("key %s out of order", rec.PartitionKey)
			}
			last[rec.PartitionKey] = n
			total++
		}
	}
	fmt.Printf("   read %d records in put order per key; checkpoints:\n", total)
	for _, cp := range reader.Checkpoints() {
		fmt.Printf("     %s seq %s shard-end %v\n", cp.ShardID, cp.SequenceNumber, cp.ShardEnd)
	}

	fmt.Println("\n5. Let 24 hours pass: records past retention are dropped, the CLOSED parents expire")
	clk.advance(xstream.DefaultRetention + time.Minute)
	printShards(ss)
	_, err = ss.GetShardIterator("shardId-000000000000", xstream.IteratorArgs{Type: xstream.TrimHorizon})
	fmt.Printf("   GetShardIterator(shardId-000000000000): %v (expired: %v)\n", err, errors.Is(err, xstream.ErrShardExpired))
	fmt.Print("\nLineage:\n", ss.Lineage())
}

// readShard prints a shard's records, GetRecords after GetRecords, until a
// CLOSED shard's next iterator is nil (it then returns the child shards) or
// an OPEN shard has nothing more.
func readShard(ss *xstream.ShardedStream, id string) []xstream.ChildShard {
	it, err := ss.GetShardIterator(id, xstream.IteratorArgs{Type: xstream.TrimHorizon})
	check(err)
	for {
		res, err := ss.GetRecords(it, 4)
		check(err)
		for _, rec := range res.Records {
			fmt.Printf("     %s %s %s=%s\n", rec.SequenceNumber, rec.PartitionKey, rec.Fields[0].Name, rec.Fields[0].Value)
		}
		if res.NextShardIterator == nil {
			fmt.Printf("     end of CLOSED shard %s: next iterator nil, %d child shards\n", id, len(res.ChildShards))
			return res.ChildShards
		}
		if len(res.Records) == 0 {
			fmt.Printf("     (no more records in OPEN shard %s for now)\n", id)
			return nil
		}
		it = res.NextShardIterator
	}
}

// put puts n records over five partition keys, one a second.
func put(ss *xstream.ShardedStream, clk *clock, n int) {
	for i := range n {
		key := "user-" + strconv.Itoa(i%5)
		_, err := ss.Put(key, xstream.PutArgs{}, xstream.Fields("n", strconv.Itoa(seq[key]))...)
		check(err)
		seq[key]++
		clk.advance(time.Second)
	}
}

var seq = map[string]int{}

func printShards(ss *xstream.ShardedStream) {
	shards, err := ss.ListShards(xstream.ShardFilter{})
	check(err)
	for _, s := range shards {
		fmt.Printf("   %s %-6s parent=%q adjacent=%q seq %s..", s.ShardID, s.State, s.ParentShardID, s.AdjacentParentShardID, s.SequenceNumberRange.StartingSequenceNumber)
		if s.State != xstream.ShardOpen {
			fmt.Print(s.SequenceNumberRange.EndingSequenceNumber)
		}
		fmt.Println()
	}
}

func check(err error) {
	if err != nil {
		log.Fatal(err)
	}
}
