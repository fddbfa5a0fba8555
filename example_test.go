package xstream_test

import (
	"context"
	"fmt"
	"time"

	"github.com/xstreamgo/xstream"
)

func ExampleStream_Add() {
	// A fixed clock makes auto IDs predictable.
	now := time.UnixMilli(1700000000000)
	s := xstream.NewStream(xstream.WithClock(func() time.Time { return now }))

	id, _ := s.Add(xstream.AddArgs{}, xstream.Fields("sensor-id", "1234", "temperature", "19.8")...)
	fmt.Println(id)
	id, _ = s.Add(xstream.AddArgs{ID: "*"}, xstream.Fields("sensor-id", "1234", "temperature", "19.9")...)
	fmt.Println(id) // same millisecond: next sequence
	id, _ = s.Add(xstream.AddArgs{ID: "1700000000005-*"}, xstream.Fields("sensor-id", "1234", "temperature", "20.0")...)
	fmt.Println(id)
	id, _ = s.Add(xstream.AddArgs{ID: "1700000000007-3"}, xstream.Fields("sensor-id", "1234", "temperature", "20.1")...)
	fmt.Println(id)

	_, err := s.Add(xstream.AddArgs{ID: "1700000000007-3"}, xstream.Fields("sensor-id", "1234")...)
	fmt.Println(err)
	// Output:
	// 1700000000000-0
	// 1700000000000-1
	// 1700000000005-0
	// 1700000000007-3
	// xstream: the ID specified in XADD is equal or smaller than the target stream top item: "1700000000007-3" resolves to 1700000000007-3, last ID is 1700000000007-3
}

// sensorStream returns a stream with one reading per second from ms 1000.
func sensorStream() *xstream.Stream {
	s := xstream.NewStream()
	for i, temp := range []string{"19.8", "19.9", "20.1", "20.4", "20.2"} {
		id := fmt.Sprintf("%d-0", 1000*(i+1))
		s.Add(xstream.AddArgs{ID: id}, xstream.Fields("sensor-id", "1234", "temperature", temp)...)
	}
	return s
}

func ExampleStream_Range() {
	s := sensorStream()

	// A time window with bare-ms bounds: from 2000 to 4000 inclusive.
	es, _ := s.Range("2000", "4000", 0)
	for _, e := range es {
		fmt.Println(e.ID, e.Fields[1].Value)
	}

	// Paging through with count and an exclusive start.
	fmt.Println("pages:")
	start := "-"
	for {
		page, _ := s.Range(start, "+", 2)
		if len(page) == 0 {
			break
		}
		fmt.Println(len(page), "from", page[0].ID)
		start = "(" + page[len(page)-1].ID.String()
	}
	// Output:
	// 2000-0 19.9
	// 3000-0 20.1
	// 4000-0 20.4
	// pages:
	// 2 from 1000-0
	// 2 from 3000-0
	// 1 from 5000-0
}

func ExampleStream_RevRange() {
	s := sensorStream()
	// The last two readings, newest first.
	es, _ := s.RevRange("+", "-", 2)
	for _, e := range es {
		fmt.Println(e.ID, e.Fields[1].Value)
	}
	// Output:
	// 5000-0 20.2
	// 4000-0 20.4
}

func ExampleStream_Read() {
	s := sensorStream()
	ctx := context.Background()

	// Without Block, Read returns what is there after the ID.
	es, _ := s.Read(ctx, "4000-0", xstream.ReadArgs{})
	fmt.Println(len(es), es[0].ID)

	// With Block, a reader waits for the next entry, like tail -f.
	done := make(chan []xstream.Entry)
	go func() {
		es, _ := s.Read(ctx, "5000-0", xstream.ReadArgs{Block: xstream.BlockForever})
		done <- es
	}()
	s.Add(xstream.AddArgs{ID: "6000-0"}, xstream.Fields("sensor-id", "1234", "temperature", "20.0")...)
	es = <-done
	fmt.Println(es[0].ID, es[0].Fields)
	// Output:
	// 1 5000-0
	// 6000-0 [{sensor-id 1234} {temperature 20.0}]
}

func ExampleDB_Read() {
	db := xstream.NewDB()
	db.Add("orders", xstream.AddArgs{ID: "1-0"}, xstream.Fields("item", "book")...)

	// Wait on two streams, one of which does not exist yet.
	done := make(chan []xstream.StreamEntries)
	go func() {
		res, _ := db.Read(context.Background(), xstream.ReadArgs{Block: xstream.BlockForever},
			"orders", "1-0", "payments", "0-0")
		done <- res
	}()
	db.Add("payments", xstream.AddArgs{ID: "7-0"}, xstream.Fields("order", "1", "amount", "12.50")...)
	for _, se := range <-done {
		fmt.Println(se.Stream, se.Entries[0].ID, se.Entries[0].Fields)
	}
	fmt.Println(db.Names(""))
	// Output:
	// payments 7-0 [{order 1} {amount 12.50}]
	// [orders payments]
}

func ExampleStream_Trim() {
	s := xstream.NewStream()
	for i := 1; i <= 1000; i++ {
		s.Add(xstream.AddArgs{ID: fmt.Sprint(i)}, xstream.Fields("n", fmt.Sprint(i))...)
	}
	// Exact: keep the newest 300.
	n, _ := s.Trim(xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 300})
	fmt.Println("removed", n, "left", s.Len())
	// Approximate: whole storage blocks only, never fewer than 150 left.
	n, _ = s.Trim(xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 150, Approx: true})
	fmt.Println("at least 150 left:", s.Len() >= 150, "removed some:", n > 0)
	// By ID: drop everything before 900-0.
	s.Trim(xstream.TrimArgs{Strategy: xstream.TrimMinID, MinID: "900"})
	first, _ := s.Range("-", "+", 1)
	fmt.Println("first", first[0].ID)
	// Output:
	// removed 700 left 300
	// at least 150 left: true removed some: true
	// first 900-0
}

func ExampleStream_Delete() {
	s := sensorStream()
	n, _ := s.Delete("1000-0", "3000-0", "9999-0")
	fmt.Println("deleted", n)
	info, _ := s.Info()
	fmt.Println(info.Length, info.RecordedFirstEntryID, info.MaxDeletedEntryID)
	// Output:
	// deleted 2
	// 3 2000-0 3000-0
}

func ExampleStream_Info() {
	s := sensorStream()
	s.Delete("5000-0")
	info, _ := s.Info()
	fmt.Println("length", info.Length)
	fmt.Println("last-generated-id", info.LastGeneratedID)
	fmt.Println("max-deleted-entry-id", info.MaxDeletedEntryID)
	fmt.Println("entries-added", info.EntriesAdded)
	fmt.Println("recorded-first-entry-id", info.RecordedFirstEntryID)
	fmt.Println("first-entry", info.FirstEntry.ID, "last-entry", info.LastEntry.ID)
	// Output:
	// length 4
	// last-generated-id 5000-0
	// max-deleted-entry-id 5000-0
	// entries-added 5
	// recorded-first-entry-id 1000-0
	// first-entry 1000-0 last-entry 4000-0
}
