package xredis_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/redis/rueidis"
	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/xredis"
)

// open returns the in-process DB without addresses, else an engine on
// the Redis server or cluster at addrs: the one line that differs.
func open(ctx context.Context, addrs []string) (xstream.Engine, error) {
	if len(addrs) == 0 {
		return xstream.Local(xstream.NewDB()), nil // in this process
	}
	return xredis.Dial(ctx, addrs...) // a standalone server, or any nodes of a cluster
}

// work is the same code on both: three streams (in three hash slots of a
// cluster), one group, one read over all of them.
func work(ctx context.Context, e xstream.Engine) error {
	streams := []string{"orders:{eu}", ">", "orders:{us}", ">", "orders:{asia}", ">"}
	for i := 0; i < len(streams); i += 2 {
		e.CreateGroup(ctx, streams[i], "billing", "$", xstream.GroupOptions{MkStream: true})
	}
	for {
		res, err := e.ReadGroup(ctx, "billing", "worker-1",
			xstream.ReadGroupArgs{Count: 20, Block: xstream.BlockForever}, streams...)
		if err != nil {
			return err
		}
		for _, se := range res {
			for _, en := range se.Entries {
				// ... process en.Fields, in the order they were added
				e.Ack(ctx, se.Stream, "billing", en.ID.String())
			}
		}
	}
}

// The program of docs/redis-engine.md's "From one process to many".
func Example() {
	ctx := context.Background()
	e, err := open(ctx, []string{"127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002"})
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()
	if err := work(ctx, e); err != nil {
		log.Fatal(err)
	}
}

func ExampleNew() {
	ctx := context.Background()
	e, err := xredis.New(ctx, rueidis.ClientOption{
		InitAddress: []string{"127.0.0.1:6379"},
		Password:    "secret",
	})
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()
	fmt.Println(e.Server().Name, e.Server().Version)
	if _, ok := e.(xstream.NackEngine); !ok {
		fmt.Println("this server has no XNACK: xstream.Nack fails with errors.ErrUnsupported")
	}
}

func ExampleNewWithClient() {
	ctx := context.Background()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{"127.0.0.1:6379"}})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close() // the engine's Close leaves it open
	e, err := xredis.NewWithClient(ctx, c, xredis.WithBlockSlice(time.Second))
	if err != nil {
		log.Fatal(err)
	}
	id, err := e.Add(ctx, "sensors", xstream.AddArgs{}, xstream.Fields("sensor-id", "1234", "temperature", "19.8")...)
	fmt.Println(id, err)
}

// A process creates the sharded stream once; producers, resharders and
// readers in other processes open it by name (see ExampleOpenSharded).
func ExampleCreateSharded() {
	ctx := context.Background()
	e, err := xredis.Dial(ctx, "127.0.0.1:7000", "127.0.0.1:7001", "127.0.0.1:7002")
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()
	s, err := xredis.CreateSharded(ctx, e, "sensors", xstream.ShardedArgs{Shards: 4, Retention: 48 * time.Hour})
	if errors.Is(err, xstream.ErrResourceInUse) {
		s, err = xredis.OpenSharded(ctx, e, "sensors") // made by another process
	}
	if err != nil {
		log.Fatal(err)
	}
	shards, err := s.ListShards(ctx, xstream.ShardFilter{Type: xstream.FilterAtLatest})
	fmt.Println(len(shards), err)
}

// A producer, a resharder and a reader: any of them may run in a process
// of its own.
func ExampleOpenSharded() {
	ctx := context.Background()
	e, err := xredis.Dial(ctx, "127.0.0.1:7000")
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()
	s, err := xredis.OpenSharded(ctx, e, "sensors")
	if err != nil {
		log.Fatal(err)
	}
	// Produce.
	res, err := s.Put(ctx, "sensor-1234", xstream.PutArgs{}, xstream.Fields("temperature", "19.8")...)
	fmt.Println(res.ShardID, res.SequenceNumber, err)
	// Reshard: refused with ErrResourceInUse while another process does.
	if err := s.UpdateShardCount(ctx, 8); err != nil && !errors.Is(err, xstream.ErrResourceInUse) {
		log.Fatal(err)
	}
	// Read, parents before children, from the checkpoints of "billing".
	cps, err := s.LoadCheckpoints(ctx, "billing")
	if err != nil {
		log.Fatal(err)
	}
	r, err := s.NewReader(ctx, cps...)
	if err != nil {
		log.Fatal(err)
	}
	recs, err := r.Read(ctx, xstream.ReadArgs{Count: 100, Block: time.Second})
	if err != nil {
		log.Fatal(err)
	}
	for _, rec := range recs {
		fmt.Println(rec.PartitionKey, rec.Fields) // in put order for each key
	}
	if err := s.SaveCheckpoints(ctx, "billing", r.Checkpoints()); err != nil {
		log.Fatal(err)
	}
}
