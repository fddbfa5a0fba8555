// Command sensors shows the classic sensor stream: it adds temperature
// readings, queries a time window by millisecond bounds, pages through the
// stream, and follows it with a blocking reader, as tail -f does.
package main

import (
	"context"
	"fmt"
	"log"
	"strconv"
	"sync"
	"time"

	"github.com/xstreamgo/xstream"
)

func main() {
	// A clock we control, so the output is the same on every run: one
	// reading every 250 ms from 2026-01-01 00:00:00 UTC.
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	var mu sync.Mutex
	now := start
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	tick := func() { mu.Lock(); now = now.Add(250 * time.Millisecond); mu.Unlock() }

	s := xstream.NewStream(xstream.WithClock(clock))
	for i := range 40 {
		temp := 19.0 + float64(i%10)/10
		_, err := s.Add(xstream.AddArgs{},
			xstream.Fields("sensor-id", strconv.Itoa(1000+i%3), "temperature", strconv.FormatFloat(temp, 'f', 1, 64))...)
		if err != nil {
			log.Fatal(err)
		}
		tick()
	}
	fmt.Println("readings:", s.Len())

	// A time window: bare millisecond bounds cover whole milliseconds.
	from := start.Add(2 * time.Second).UnixMilli()
	to := start.Add(3*time.Second - time.Millisecond).UnixMilli()
	window, err := s.Range(strconv.FormatInt(from, 10), strconv.FormatInt(to, 10), 0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("second 2 to 3: %d readings\n", len(window))
	for _, e := range window {
		fmt.Println(" ", e.ID, e.Fields)
	}

	// Paging: each page starts after the last ID of the previous one.
	pages, next := 0, "-"
	for {
		page, err := s.Range(next, "+", 15)
		if err != nil {
			log.Fatal(err)
		}
		if len(page) == 0 {
			break
		}
		pages++
		next = "(" + page[len(page)-1].ID.String()
	}
	fmt.Println("pages of 15:", pages)

	// tail -f: a reader blocks for entries newer than "$" while a producer
	// adds three more readings.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	got := make(chan []xstream.Entry)
	ready := make(chan struct{})
	go func() {
		var all []xstream.Entry
		last := s.LastID().String() // what "$" means now
		close(ready)
		for len(all) < 3 {
			es, err := s.Read(ctx, last, xstream.ReadArgs{Block: xstream.BlockForever})
			if err != nil {
				log.Fatal(err)
			}
			all = append(all, es...)
			last = es[len(es)-1].ID.String()
		}
		got <- all
	}()
	<-ready
	for i := range 3 {
		tick()
		if _, err := s.Add(xstream.AddArgs{}, xstream.Fields("sensor-id", "1000", "temperature", fmt.Sprintf("2%d.0", i))...); err != nil {
			log.Fatal(err)
		}
	}
	for _, e := range <-got {
		fmt.Println("tail:", e.ID, e.Fields)
	}
}
