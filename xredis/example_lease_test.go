package xredis_test

import (
	"context"
	"log"
	"os/signal"
	"syscall"
	"time"

	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/xredis"
)

// billing processes the records of one shard.
type billing struct{}

func (billing) Initialize(ctx context.Context, shardID string, from xstream.Checkpoint) error {
	return nil
}

func (billing) ProcessRecords(ctx context.Context, recs []xstream.Record, cp *xstream.Checkpointer, millisBehind int64) error {
	for _, r := range recs {
		_ = r // ... in put order for each partition key
	}
	return cp.Checkpoint(ctx) // fails with ErrLeaseLost once another worker took the shard
}

func (billing) ShardEnded(ctx context.Context, cp *xstream.Checkpointer) error {
	return cp.Checkpoint(ctx) // required: the children wait for it
}

func (billing) LeaseLost(ctx context.Context) {}

func (billing) Shutdown(ctx context.Context, cp *xstream.Checkpointer) { cp.Checkpoint(ctx) }

// Each process that shares the work runs a worker of the application
// "billing": the shards are leased to one worker at a time, balanced
// over the live workers, and taken over within the lease duration plus a
// renewal period when a worker dies.
func ExampleSharded_LeaseTable() {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	e, err := xredis.Dial(ctx, "127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002")
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()
	s, err := xredis.OpenSharded(ctx, e, "orders")
	if err != nil {
		log.Fatal(err)
	}
	leases, err := s.LeaseTable("billing") // the hash xs:{orders}:leases:billing
	if err != nil {
		log.Fatal(err)
	}
	w, err := xstream.NewWorker(s, leases, func(shardID string) xstream.ShardProcessor { return billing{} },
		xstream.WorkerOptions{LeaseDuration: 10 * time.Second, OnError: func(shardID string, err error) { log.Println(shardID, err) }})
	if err != nil {
		log.Fatal(err)
	}
	if err := w.Run(ctx); err != nil { // until SIGTERM: then the leases are given up
		log.Fatal(err)
	}
}
