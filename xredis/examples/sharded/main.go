// Command sharded runs the parts of a sharded stream on Redis as separate
// processes: one that creates the stream, producers, a resharder and
// readers, each started on its own, anywhere that reaches the servers.
//
//	go run ./examples/sharded -addrs 127.0.0.1:7000 -role create
//	go run ./examples/sharded -addrs 127.0.0.1:7000 -role produce -producer p1 &
//	go run ./examples/sharded -addrs 127.0.0.1:7000 -role produce -producer p2 &
//	go run ./examples/sharded -addrs 127.0.0.1:7000 -role reshard &
//	go run ./examples/sharded -addrs 127.0.0.1:7000 -role read -app billing
//
// A producer puts -n records under each of its -keys partition keys, each
// record numbered within its key. The resharder splits, merges and
// rescales the stream -n times. A reader reads the whole stream parents
// before children, checks that each key's records come in order, saves
// its checkpoints in Redis after each batch (so that a reader started
// again goes on where it stopped) and stops after -idle without records.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/xredis"
)

func main() {
	addrs := flag.String("addrs", os.Getenv("XSTREAM_CLUSTER_ADDRS"), "comma-separated addresses of Redis (Cluster) nodes")
	name := flag.String("name", "sensors", "the sharded stream")
	role := flag.String("role", "", "create, produce, reshard or read")
	producer := flag.String("producer", "p1", "produce: the producer's name, a prefix of its keys")
	keys := flag.Int("keys", 4, "produce: partition keys")
	n := flag.Int("n", 100, "produce: records per key; reshard: reshards")
	app := flag.String("app", "billing", "read: the application whose checkpoints are kept")
	idle := flag.Duration("idle", 3*time.Second, "read: stop after this long without records")
	flag.Parse()
	if *addrs == "" {
		log.Fatal("-addrs is required: the sharded stream lives on Redis")
	}
	ctx := context.Background()
	e, err := xredis.Dial(ctx, strings.Split(*addrs, ",")...)
	if err != nil {
		log.Fatal(err)
	}
	defer e.Close()
	p := part{e: e, name: *name, out: os.Stdout}
	switch *role {
	case "create":
		err = p.create(ctx)
	case "produce":
		err = p.produce(ctx, *producer, *keys, *n)
	case "reshard":
		err = p.reshard(ctx, *n)
	case "read":
		_, err = p.read(ctx, *app, *idle)
	default:
		err = fmt.Errorf("unknown -role %q", *role)
	}
	if err != nil {
		log.Fatal(err)
	}
}

// part is one process's part of the program.
type part struct {
	e    xredis.Engine
	name string
	out  io.Writer
}

func (p part) create(ctx context.Context) error {
	_, err := xredis.CreateSharded(ctx, p.e, p.name, xstream.ShardedArgs{Shards: 2})
	if errors.Is(err, xstream.ErrResourceInUse) {
		fmt.Fprintf(p.out, "%s exists\n", p.name)
		return nil
	}
	return err
}

func (p part) produce(ctx context.Context, producer string, keys, n int) error {
	s, err := xredis.OpenSharded(ctx, p.e, p.name)
	if err != nil {
		return err
	}
	for i := range n {
		for k := range keys {
			pk := producer + "-key" + strconv.Itoa(k)
			if _, err := s.Put(ctx, pk, xstream.PutArgs{}, xstream.Fields("n", strconv.Itoa(i))...); err != nil {
				return err
			}
		}
	}
	fmt.Fprintf(p.out, "%s put %d records\n", producer, n*keys)
	return nil
}

// reshard alternates splits of the widest OPEN shard, merges of the first
// two, and rescales; a reshard another process is making is waited out.
func (p part) reshard(ctx context.Context, n int) error {
	s, err := xredis.OpenSharded(ctx, p.e, p.name)
	if err != nil {
		return err
	}
	for i := 0; i < n; {
		open, err := s.ListShards(ctx, xstream.ShardFilter{Type: xstream.FilterAtLatest})
		if err != nil {
			return err
		}
		sort.Slice(open, func(a, b int) bool {
			return open[a].HashKeyRange.StartingHashKey.Less(open[b].HashKeyRange.StartingHashKey)
		})
		switch {
		case i%3 == 2:
			err = s.UpdateShardCount(ctx, max(1, (len(open)+1)/2))
		case i%3 == 0 || len(open) == 1:
			err = s.SplitShard(ctx, open[0].ShardID, midpoint(open[0].HashKeyRange))
		default:
			err = s.MergeShards(ctx, open[0].ShardID, open[1].ShardID)
		}
		if errors.Is(err, xstream.ErrResourceInUse) {
			time.Sleep(10 * time.Millisecond)
			continue
		}
		if err != nil {
			return err
		}
		i++
	}
	lin, err := s.Lineage(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(p.out, "%d reshards; lineage:\n%s", n, lin)
	return nil
}

// midpoint is the middle of r, in decimal.
func midpoint(r xstream.HashKeyRange) string {
	// (start + end) / 2 without overflow: start + (end - start) / 2.
	s, e := r.StartingHashKey, r.EndingHashKey
	dHi, dLo := e.Hi-s.Hi, e.Lo-s.Lo
	if e.Lo < s.Lo {
		dHi--
	}
	hLo := dLo>>1 | dHi<<63
	hHi := dHi >> 1
	lo := s.Lo + hLo
	hi := s.Hi + hHi
	if lo < s.Lo {
		hi++
	}
	return xstream.HashKey{Hi: hi, Lo: lo}.String()
}

// read reads from the application's checkpoints until idle passes
// without records, checking that each key's numbers follow each other,
// and returns the number after the last read of each key.
func (p part) read(ctx context.Context, app string, idle time.Duration) (map[string]int, error) {
	s, err := xredis.OpenSharded(ctx, p.e, p.name)
	if err != nil {
		return nil, err
	}
	cps, err := s.LoadCheckpoints(ctx, app)
	if err != nil {
		return nil, err
	}
	r, err := s.NewReader(ctx, cps...)
	if err != nil {
		return nil, err
	}
	next := map[string]int{} // a key's first record in this run sets its start
	total := 0
	for {
		recs, err := r.Read(ctx, xstream.ReadArgs{Count: 100, Block: idle})
		if err != nil {
			return nil, err
		}
		if len(recs) == 0 {
			break
		}
		for _, rec := range recs {
			got, err := strconv.Atoi(rec.Fields[0].Value)
			if err != nil {
				return nil, err
			}
			if want, seen := next[rec.PartitionKey]; seen && got != want {
				return nil, fmt.Errorf("key %s: record %d where %d was due", rec.PartitionKey, got, want)
			}
			next[rec.PartitionKey] = got + 1
			total++
		}
		if err := s.SaveCheckpoints(ctx, app, r.Checkpoints()); err != nil {
			return nil, err
		}
	}
	fmt.Fprintf(p.out, "%s read %d records, every key in order\n", app, total)
	return next, nil
}
