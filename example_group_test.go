package xstream_test

import (
	"context"
	"fmt"
	"time"

	"github.com/xstreamgo/xstream"
)

// exampleJobs returns a stream with three jobs (IDs 1-0, 2-0, 3-0) and a
// consumer group "workers" that starts from the beginning; time comes from
// *now.
func exampleJobs(now *time.Time) *xstream.Stream {
	s := xstream.NewStream(xstream.WithClock(func() time.Time { return *now }))
	for i, job := range []string{"resize", "encode", "upload"} {
		s.Add(xstream.AddArgs{ID: fmt.Sprint(i + 1)}, xstream.Field{Name: "job", Value: job})
	}
	s.CreateGroup("workers", "0", xstream.GroupOptions{})
	return s
}

func ExampleStream_ReadGroup() {
	now := time.UnixMilli(1_700_000_000_000)
	s := exampleJobs(&now)
	ctx := context.Background()

	// ">" delivers entries no consumer of the group has seen.
	es, _ := s.ReadGroup(ctx, "workers", "alice", ">", xstream.ReadGroupArgs{Count: 2})
	for _, e := range es {
		fmt.Println("alice got", e.ID, e.Fields[0].Value)
	}
	es, _ = s.ReadGroup(ctx, "workers", "bob", ">", xstream.ReadGroupArgs{})
	fmt.Println("bob got", es[0].ID)

	// An ID reads the consumer's own pending entries (after a restart).
	es, _ = s.ReadGroup(ctx, "workers", "alice", "0", xstream.ReadGroupArgs{})
	fmt.Println("alice still has", len(es), "pending")
	// Output:
	// alice got 1-0 resize
	// alice got 2-0 encode
	// bob got 3-0
	// alice still has 2 pending
}

func ExampleStream_ReadGroupDeliveries() {
	now := time.UnixMilli(1_700_000_000_000)
	s := exampleJobs(&now)
	ctx := context.Background()
	s.ReadGroup(ctx, "workers", "alice", ">", xstream.ReadGroupArgs{Count: 1})
	now = now.Add(time.Minute) // alice is gone

	// bob takes over what is idle for 30 s, then reads new entries.
	es, ds, _ := s.ReadGroupDeliveries(ctx, "workers", "bob", ">", xstream.ReadGroupArgs{Claim: true, ClaimMinIdle: 30 * time.Second})
	for i, e := range es {
		fmt.Println(e.ID, e.Fields[0].Value, "idle", ds[i].Idle, "delivered", ds[i].Deliveries)
	}
	// Output:
	// 1-0 resize idle 1m0s delivered 1
	// 2-0 encode idle 0s delivered 0
	// 3-0 upload idle 0s delivered 0
}

func ExampleStream_Ack() {
	now := time.UnixMilli(1_700_000_000_000)
	s := exampleJobs(&now)
	es, _ := s.ReadGroup(context.Background(), "workers", "alice", ">", xstream.ReadGroupArgs{})
	n, _ := s.Ack("workers", es[0].ID.String(), es[1].ID.String())
	fmt.Println("acknowledged", n)
	sum, _ := s.Pending("workers")
	fmt.Println("pending", sum.Count, "from", sum.Lowest, "to", sum.Highest, sum.Consumers)
	// Output:
	// acknowledged 2
	// pending 1 from 3-0 to 3-0 [{alice 1}]
}

func ExampleStream_AckIDs() {
	now := time.UnixMilli(1_700_000_000_000)
	s := exampleJobs(&now)
	es, _ := s.ReadGroup(context.Background(), "workers", "alice", ">", xstream.ReadGroupArgs{})
	// The IDs a read returned go back as they are, with no formatting.
	n, _ := s.AckIDs("workers", es[0].ID, es[2].ID)
	fmt.Println("acknowledged", n)
	// Output:
	// acknowledged 2
}

func ExampleStream_PendingRange() {
	now := time.UnixMilli(1_700_000_000_000)
	s := exampleJobs(&now)
	s.ReadGroup(context.Background(), "workers", "alice", ">", xstream.ReadGroupArgs{Count: 1})
	now = now.Add(time.Minute)
	s.ReadGroup(context.Background(), "workers", "bob", ">", xstream.ReadGroupArgs{})
	rows, _ := s.PendingRange("workers", xstream.PendingArgs{MinIdle: 30 * time.Second})
	for _, r := range rows {
		fmt.Println(r.ID, r.Consumer, r.Idle, r.Deliveries)
	}
	// Output:
	// 1-0 alice 1m0s 1
}

func ExampleStream_Claim() {
	now := time.UnixMilli(1_700_000_000_000)
	s := exampleJobs(&now)
	s.ReadGroup(context.Background(), "workers", "alice", ">", xstream.ReadGroupArgs{Count: 1})
	now = now.Add(time.Minute) // alice went quiet
	es, _ := s.Claim("workers", "bob", 30*time.Second, []string{"1-0"}, xstream.ClaimArgs{})
	fmt.Println("bob claimed", es[0].ID, es[0].Fields[0].Value)
	rows, _ := s.PendingRange("workers", xstream.PendingArgs{})
	fmt.Println(rows[0].Consumer, rows[0].Deliveries)
	// Output:
	// bob claimed 1-0 resize
	// bob 2
}

func ExampleStream_ClaimIDs() {
	now := time.UnixMilli(1_700_000_000_000)
	s := exampleJobs(&now)
	s.ReadGroup(context.Background(), "workers", "alice", ">", xstream.ReadGroupArgs{})
	now = now.Add(time.Minute) // alice went quiet
	// bob claims what PendingRange lists, by the IDs it returned.
	rows, _ := s.PendingRange("workers", xstream.PendingArgs{Count: 2})
	ids := make([]xstream.ID, len(rows))
	for i, r := range rows {
		ids[i] = r.ID
	}
	es, _ := s.ClaimIDs("workers", "bob", 30*time.Second, ids, xstream.ClaimArgs{JustID: true})
	for _, e := range es {
		fmt.Println("bob claimed", e.ID)
	}
	// Output:
	// bob claimed 1-0
	// bob claimed 2-0
}

func ExampleStream_AutoClaim() {
	now := time.UnixMilli(1_700_000_000_000)
	s := exampleJobs(&now)
	s.ReadGroup(context.Background(), "workers", "alice", ">", xstream.ReadGroupArgs{})
	now = now.Add(time.Minute)
	// A reaper takes over everything idle for 30 s, two at a time.
	cursor := "0"
	for {
		res, _ := s.AutoClaim("workers", "reaper", 30*time.Second, cursor, xstream.AutoClaimArgs{Count: 2})
		fmt.Println("claimed", len(res.Entries), "next", res.Next)
		if res.Next.IsZero() {
			break
		}
		cursor = res.Next.String()
	}
	// Output:
	// claimed 2 next 3-0
	// claimed 1 next 0-0
}

func ExampleStream_Nack() {
	now := time.UnixMilli(1_700_000_000_000)
	s := exampleJobs(&now)
	ctx := context.Background()
	es, _ := s.ReadGroup(ctx, "workers", "alice", ">", xstream.ReadGroupArgs{Count: 1})
	// alice shuts down: she gives her entry back, and it does not count.
	s.Nack("workers", xstream.NackSilent, []string{es[0].ID.String()}, xstream.NackArgs{})
	// Given back, it can be claimed at once, whatever the min idle time.
	res, _ := s.AutoClaim("workers", "bob", time.Hour, "-", xstream.AutoClaimArgs{})
	rows, _ := s.PendingRange("workers", xstream.PendingArgs{})
	fmt.Println("bob got", res.Entries[0].ID, "delivered", rows[0].Deliveries, "times")
	// Output:
	// bob got 1-0 delivered 1 times
}

func ExampleStream_MoveDeadLetters() {
	now := time.UnixMilli(1_700_000_000_000)
	s := exampleJobs(&now)
	dead := xstream.NewStream()
	s.ReadGroup(context.Background(), "workers", "alice", ">", xstream.ReadGroupArgs{Count: 1})
	for range 3 { // 1-0 keeps failing
		s.Claim("workers", "bob", 0, []string{"1-0"}, xstream.ClaimArgs{})
	}
	moved, _ := s.MoveDeadLetters("workers", xstream.DeadLetterArgs{MaxDeliveries: 3, To: dead})
	fmt.Println(moved[0].ID, moved[0].Consumer, moved[0].Deliveries)
	es, _ := dead.Range("-", "+", 0)
	for _, f := range es[0].Fields[2:] {
		fmt.Println(f.Name, f.Value)
	}
	// Output:
	// 1-0 bob 4
	// dead-letter-id 1-0
	// dead-letter-consumer bob
	// dead-letter-deliveries 4
	// job resize
}

func ExampleDB_ReadGroup() {
	db := xstream.NewDB()
	db.CreateGroup("orders", "billing", "$", xstream.GroupOptions{MkStream: true})
	db.CreateGroup("refunds", "billing", "$", xstream.GroupOptions{MkStream: true})
	db.Add("refunds", xstream.AddArgs{ID: "5-1"}, xstream.Field{Name: "amount", Value: "12"})

	out, _ := db.ReadGroup(context.Background(), "billing", "worker-1",
		xstream.ReadGroupArgs{Count: 10, Block: time.Second},
		"orders", ">", "refunds", ">")
	for _, se := range out {
		fmt.Println(se.Stream, se.Entries[0].ID)
	}
	// Output:
	// refunds 5-1
}

func ExampleStream_Groups() {
	now := time.UnixMilli(1_700_000_000_000)
	s := exampleJobs(&now)
	s.ReadGroup(context.Background(), "workers", "alice", ">", xstream.ReadGroupArgs{Count: 1})
	for _, g := range s.Groups() {
		fmt.Println(g.Name, "pending", g.Pending, "read", g.EntriesRead, "lag", g.Lag)
	}
	// Output:
	// workers pending 1 read 1 lag 2
}
