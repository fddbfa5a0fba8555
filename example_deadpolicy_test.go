package xstream_test

import (
	"context"
	"fmt"

	"github.com/xstreamgo/xstream"
)

// A group with a dead-letter policy: an entry may be delivered three
// times; the claim that would deliver it a fourth time moves it to
// "jobs.dead" instead, with where it came from.
func ExampleDeadLetterPolicy() {
	db := xstream.NewDB()
	db.Add("jobs", xstream.AddArgs{ID: "1-0"}, xstream.Field{Name: "job", Value: "resize"})
	jobs := db.Stream("jobs")
	jobs.CreateGroup("workers", "0", xstream.GroupOptions{
		DeadLetter: xstream.DeadLetterPolicy{MaxDeliveries: 3, Stream: "jobs.dead"},
	})
	jobs.ReadGroup(context.Background(), "workers", "alice", ">", xstream.ReadGroupArgs{})
	for i := range 3 { // 1-0 keeps failing; bob takes it over
		es, _ := jobs.Claim("workers", "bob", 0, []string{"1-0"}, xstream.ClaimArgs{})
		fmt.Println("claim", i+1, "got", len(es))
	}
	dead, _ := db.Lookup("jobs.dead")
	es, _ := dead.Range("-", "+", 0)
	for _, f := range es[0].Fields {
		fmt.Println(f.Name, f.Value)
	}
	g := jobs.Groups()[0]
	fmt.Println("pending", g.Pending, "dead-lettered", g.DeadLettered)
	// Output:
	// claim 1 got 1
	// claim 2 got 1
	// claim 3 got 0
	// dead-letter-stream jobs
	// dead-letter-group workers
	// dead-letter-id 1-0
	// dead-letter-consumer bob
	// dead-letter-deliveries 3
	// job resize
	// pending 0 dead-lettered 1
}
