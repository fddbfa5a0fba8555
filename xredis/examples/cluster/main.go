// Command cluster runs the same program on a Redis Cluster and on the
// in-process DB: three regions' order streams, in three hash slots, a
// consumer group of workers that read all of them at once (one
// ReadGroup over streams that Redis alone would refuse with CROSSSLOT)
// and acknowledge what they processed, and a summary. The two engines
// differ in one constructor.
//
// On a cluster, give any of its nodes:
//
//	go run ./examples/cluster -addrs 127.0.0.1:7000,127.0.0.1:7001,127.0.0.1:7002
//
// Without addresses it runs on the in-process DB:
//
//	go run ./examples/cluster
//
// The streams it uses are deleted first and at the end.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/xredis"
)

func main() {
	addrs := flag.String("addrs", os.Getenv("XSTREAM_CLUSTER_ADDRS"), "comma-separated addresses of Redis Cluster nodes (or of one Redis server); none: the in-process DB")
	orders := flag.Int("orders", 300, "orders per region")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	// The one line that differs.
	var e xstream.Engine
	if *addrs != "" {
		var err error
		if e, err = xredis.Dial(ctx, strings.Split(*addrs, ",")...); err != nil {
			log.Fatal(err)
		}
	} else {
		e = xstream.Local(xstream.NewDB())
	}
	defer e.Close()

	if err := run(ctx, e, *orders, os.Stdout); err != nil {
		log.Fatal(err)
	}
}

// The regions' streams. The hash tags put them in different slots of a
// cluster (likely on different nodes).
var regions = []string{"orders:{eu}", "orders:{us}", "orders:{asia}"}

// run adds n orders to each region's stream, has three workers of the
// group "billing" process them all, and prints what each did.
func run(ctx context.Context, e xstream.Engine, n int, out io.Writer) error {
	if _, err := e.Remove(ctx, regions...); err != nil {
		return err
	}
	defer e.Remove(context.WithoutCancel(ctx), regions...)
	for _, r := range regions {
		if err := e.CreateGroup(ctx, r, "billing", "$", xstream.GroupOptions{MkStream: true}); err != nil {
			return err
		}
	}

	// Workers: read every region at once, process, acknowledge.
	var (
		mu     sync.Mutex
		counts = map[string]map[string]int{} // worker → region → orders
		total  int
		wg     sync.WaitGroup
		errs   = make(chan error, 3)
	)
	workCtx, stop := context.WithCancel(ctx)
	defer stop()
	streams := make([]string, 0, 2*len(regions))
	for _, r := range regions {
		streams = append(streams, r, ">")
	}
	for w := range 3 {
		name := "worker-" + strconv.Itoa(w+1)
		counts[name] = map[string]int{}
		wg.Go(func() {
			for {
				res, err := e.ReadGroup(workCtx, "billing", name, xstream.ReadGroupArgs{Count: 20, Block: xstream.BlockForever}, streams...)
				if workCtx.Err() != nil {
					return
				}
				if err != nil {
					errs <- err
					return
				}
				for _, se := range res {
					ids := make([]string, len(se.Entries))
					for i, en := range se.Entries {
						ids[i] = en.ID.String()
					}
					if _, err := e.Ack(ctx, se.Stream, "billing", ids...); err != nil {
						errs <- err
						return
					}
					mu.Lock()
					counts[name][se.Stream] += len(se.Entries)
					total += len(se.Entries)
					done := total == n*len(regions)
					mu.Unlock()
					if done {
						stop()
					}
				}
			}
		})
	}

	// The producer.
	for i := range n {
		for _, r := range regions {
			f := xstream.Fields("order", strconv.Itoa(i), "amount", strconv.Itoa(10+i%90))
			if _, err := e.Add(ctx, r, xstream.AddArgs{}, f...); err != nil {
				return err
			}
		}
	}
	wg.Wait()
	select {
	case err := <-errs:
		return err
	default:
	}

	// The summary.
	names := make([]string, 0, len(counts))
	for w := range counts {
		names = append(names, w)
	}
	sort.Strings(names)
	fmt.Fprintf(out, "%d orders processed:\n", total)
	for _, w := range names {
		fmt.Fprintf(out, "  %s:", w)
		for _, r := range regions {
			fmt.Fprintf(out, " %s %d", r, counts[w][r])
		}
		fmt.Fprintln(out)
	}
	for _, r := range regions {
		sum, err := e.Pending(ctx, r, "billing")
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s: %d pending\n", r, sum.Count)
	}
	return nil
}
