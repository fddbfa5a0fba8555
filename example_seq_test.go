package xstream_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/xstreamgo/xstream"
)

func ExampleEntry_Value() {
	s := xstream.NewStream()
	s.Add(xstream.AddArgs{ID: "1-0"}, xstream.Fields("order", "17", "tag", "gift", "tag", "express")...)
	es, _ := s.Range("-", "+", 0)
	order, ok := es[0].Value("order")
	fmt.Println(order, ok)
	_, ok = es[0].Value("coupon")
	fmt.Println(ok)
	fmt.Println(es[0].Values("tag"))
	// Output:
	// 17 true
	// false
	// [gift express]
}

// Scan walks a range without building one slice of it; the loop may stop
// early.
func ExampleStream_Scan() {
	s := xstream.NewStream()
	for i := 1; i <= 5; i++ {
		s.Add(xstream.AddArgs{ID: fmt.Sprintf("%d-0", i)}, xstream.Fields("n", fmt.Sprint(i*i))...)
	}
	entries, err := s.Scan("2", "+")
	if err != nil {
		panic(err)
	}
	for id, fields := range entries {
		fmt.Println(id, fields[0].Value)
		if id.Ms == 4 {
			break
		}
	}
	// A bad bound fails before any iteration.
	_, err = s.Scan("two", "+")
	fmt.Println(errors.Is(err, xstream.ErrInvalidID))
	// Output:
	// 2-0 4
	// 3-0 9
	// 4-0 16
	// true
}

// ScanNoCopy writes each entry somewhere at once, newest first here, with
// no copy of it: what it yields is valid until the loop body returns, so
// keeping a value takes strings.Clone.
func ExampleStream_ScanNoCopy() {
	s := xstream.NewStream()
	for i := 1; i <= 5; i++ {
		s.Add(xstream.AddArgs{ID: fmt.Sprintf("%d-0", i)}, xstream.Fields("n", fmt.Sprint(i*i))...)
	}
	entries, err := s.ScanNoCopy("-", "+", 3, true) // at most 3, from the end
	if err != nil {
		panic(err)
	}
	var w strings.Builder
	var newest string
	for id, fields := range entries {
		fmt.Fprintf(&w, "%s=%s ", id, fields[0].Value) // written out: no copy needed
		if newest == "" {
			newest = strings.Clone(fields[0].Value) // kept: cloned
		}
	}
	fmt.Println(strings.TrimSpace(w.String()))
	fmt.Println(newest)
	// Output:
	// 5-0=25 4-0=16 3-0=9
	// 25
}

// A DB holds streams by name; Add creates them, Read and ReadGroup take
// several at once.
func ExampleNewDB() {
	db := xstream.NewDB()
	db.Add("orders", xstream.AddArgs{ID: "1-0"}, xstream.Fields("item", "book")...)
	db.Add("orders", xstream.AddArgs{ID: "2-0"}, xstream.Fields("item", "pen")...)
	db.Add("payments", xstream.AddArgs{ID: "1-0"}, xstream.Fields("order", "1", "amount", "12.50")...)
	db.Add("audit:2026", xstream.AddArgs{ID: "1-0"}, xstream.Fields("who", "alice")...)
	fmt.Println(db.Len(), db.Names(""), db.Names("audit:"))

	// One group per stream, read in one call.
	db.CreateGroup("orders", "billing", "0", xstream.GroupOptions{})
	db.CreateGroup("payments", "billing", "0", xstream.GroupOptions{})
	res, _ := db.ReadGroup(context.Background(), "billing", "w1", xstream.ReadGroupArgs{},
		"orders", ">", "payments", ">")
	for _, se := range res {
		fmt.Println(se.Stream, len(se.Entries))
	}

	n, _ := db.Remove("audit:2026")
	fmt.Println(n, db.Names(""))
	// Output:
	// 3 [audit:2026 orders payments] [audit:2026]
	// orders 2
	// payments 1
	// 1 [orders payments]
}

// A worker reads its group until its context is cancelled, then returns:
// the read it is blocked in ends with ctx.Err(), no goroutine is left, and
// whatever it was given is processed and acknowledged first (an entry
// served as the context ended comes with a nil error, and is in the PEL).
func Example_worker() {
	s := xstream.NewStream()
	s.CreateGroup("workers", "$", xstream.GroupOptions{})

	worker := func(ctx context.Context, name string, done func(job string)) error {
		for ctx.Err() == nil {
			es, err := s.ReadGroup(ctx, "workers", name, ">", xstream.ReadGroupArgs{Count: 10, Block: xstream.BlockForever})
			for _, e := range es {
				job, _ := e.Value("job")
				done(job)
				s.AckIDs("workers", e.ID)
			}
			if err != nil && !errors.Is(err, context.Canceled) {
				return err
			}
		}
		return nil
	}

	ctx, cancel := context.WithCancel(context.Background())
	processed := make(chan string)
	var wg sync.WaitGroup
	var werr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		werr = worker(ctx, "w1", func(job string) { processed <- job })
	}()
	for _, job := range []string{"resize", "encode", "upload"} {
		s.Add(xstream.AddArgs{}, xstream.Fields("job", job)...)
	}
	for range 3 {
		fmt.Println("processed", <-processed)
	}
	cancel()
	wg.Wait() // the worker has returned
	sum, _ := s.Pending("workers")
	fmt.Println("stopped:", werr, "pending:", sum.Count, "blocked readers:", s.Blocked())
	// Output:
	// processed resize
	// processed encode
	// processed upload
	// stopped: <nil> pending: 0 blocked readers: 0
}

// A reaper takes over everything idle for a minute, following AutoClaim's
// cursor to the end.
func ExampleStream_AutoClaimSeq() {
	now := time.UnixMilli(1_700_000_000_000)
	s := exampleJobs(&now)
	s.ReadGroup(context.Background(), "workers", "alice", ">", xstream.ReadGroupArgs{})
	now = now.Add(2 * time.Minute)
	for e, err := range s.AutoClaimSeq("workers", "reaper", time.Minute, "0", xstream.AutoClaimArgs{Count: 2}) {
		if err != nil {
			panic(err)
		}
		job, _ := e.Value("job")
		fmt.Println("reaper took", e.ID, job)
	}
	// Output:
	// reaper took 1-0 resize
	// reaper took 2-0 encode
	// reaper took 3-0 upload
}

// A consumer's pending entries, for example to report or retry them after
// a restart.
func ExampleStream_PendingRangeSeq() {
	now := time.UnixMilli(1_700_000_000_000)
	s := exampleJobs(&now)
	s.ReadGroup(context.Background(), "workers", "alice", ">", xstream.ReadGroupArgs{Count: 2})
	s.ReadGroup(context.Background(), "workers", "bob", ">", xstream.ReadGroupArgs{})
	now = now.Add(30 * time.Second)
	for p, err := range s.PendingRangeSeq("workers", xstream.PendingArgs{Consumer: "alice"}) {
		if err != nil {
			panic(err)
		}
		fmt.Println(p.ID, p.Consumer, p.Idle, p.Deliveries)
	}
	// Output:
	// 1-0 alice 30s 1
	// 2-0 alice 30s 1
}
