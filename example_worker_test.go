package xstream_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/xstreamgo/xstream"
)

// printer is a ShardProcessor that collects what it processes and
// checkpoints after each batch.
type printer struct {
	mu   *sync.Mutex
	seen *[]string
	all  func() // called once every record was processed
}

func (p printer) Initialize(ctx context.Context, shardID string, from xstream.Checkpoint) error {
	return nil
}

func (p printer) ProcessRecords(ctx context.Context, records []xstream.Record, cp *xstream.Checkpointer, millisBehindLatest int64) error {
	p.mu.Lock()
	for _, r := range records {
		*p.seen = append(*p.seen, r.PartitionKey+" "+r.Fields[0].Value)
	}
	if len(*p.seen) == 4 {
		p.all()
	}
	p.mu.Unlock()
	return cp.Checkpoint(ctx) // a lost lease gives ErrLeaseLost: stop, another worker goes on
}

func (p printer) ShardEnded(ctx context.Context, cp *xstream.Checkpointer) error {
	return cp.Checkpoint(ctx) // required: the children wait for it
}

func (p printer) LeaseLost(ctx context.Context) {}

func (p printer) Shutdown(ctx context.Context, cp *xstream.Checkpointer) { cp.Checkpoint(ctx) }

// A worker processes a sharded stream shard by shard. Run it in each
// process that shares the work, with the same lease table (here one in
// the DB; xredis.Sharded.LeaseTable on Redis): the shards are spread
// over the workers, and taken over when one dies.
func ExampleWorker() {
	db := xstream.NewDB()
	ss, _ := db.CreateShardedStream("orders", xstream.ShardedArgs{Shards: 2})
	for _, k := range []string{"alice", "bob"} {
		for _, item := range []string{"book", "pen"} {
			ss.Put(k, xstream.PutArgs{}, xstream.Fields("item", item)...)
		}
	}
	leases, _ := db.LeaseTable("orders", "billing")

	ctx, stop := context.WithCancel(context.Background())
	var mu sync.Mutex
	var seen []string
	w, _ := xstream.NewWorker(xstream.LocalSharded(ss), leases, func(shardID string) xstream.ShardProcessor {
		return printer{mu: &mu, seen: &seen, all: stop}
	}, xstream.WorkerOptions{LeaseDuration: time.Second, IdleWait: 10 * time.Millisecond})
	w.Run(ctx) // until stop: then each processor's Shutdown checkpoints

	slices.Sort(seen)
	fmt.Println(seen)
	ls, _ := leases.Leases(context.Background())
	for _, l := range ls {
		if !l.SequenceNumber.IsZero() {
			fmt.Printf("%s: checkpointed, owner %q\n", l.ShardID, l.Owner)
		}
	}
	// Output:
	// [alice book alice pen bob book bob pen]
	// shardId-000000000000: checkpointed, owner ""
	// shardId-000000000001: checkpointed, owner ""
}
