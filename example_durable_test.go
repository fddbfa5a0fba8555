package xstream_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/xstreamgo/xstream"
)

// A durable DB keeps its streams, groups and pending entries in a
// directory: closed and opened again (or killed and opened again), it
// holds what it held.
func ExampleOpen() {
	dir, err := os.MkdirTemp("", "xstream-example-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)

	db, err := xstream.Open(dir, xstream.WithSync(xstream.SyncAlways))
	if err != nil {
		log.Fatal(err)
	}
	db.Add("orders", xstream.AddArgs{ID: "1-1"}, xstream.Fields("item", "book")...)
	db.Add("orders", xstream.AddArgs{ID: "2-1"}, xstream.Fields("item", "pen")...)
	db.CreateGroup("orders", "shipping", "0", xstream.GroupOptions{})
	db.Stream("orders").ReadGroup(context.Background(), "shipping", "alice", ">", xstream.ReadGroupArgs{Count: 1})
	if err := db.Close(); err != nil {
		log.Fatal(err)
	}

	db, err = xstream.Open(dir)
	if err != nil {
		log.Fatal(err)
	}
	defer db.Close()
	s := db.Stream("orders")
	es, _ := s.Range("-", "+", 0)
	p, _ := s.Pending("shipping")
	fmt.Println(len(es), "entries; pending:", p.Count, "to", p.Consumers[0].Name)
	// Output: 2 entries; pending: 1 to alice
}
