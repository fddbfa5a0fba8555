package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xstreamgo/xstream/xredis"
)

// TestParts runs the parts of the example at once, as separate processes
// would (each with an engine of its own), on the servers that
// XSTREAM_CLUSTER_ADDRS names: two producers and a resharder, then a
// reader that is stopped and started again from its saved checkpoints.
func TestParts(t *testing.T) {
	addrs := os.Getenv("XSTREAM_CLUSTER_ADDRS")
	if addrs == "" {
		t.Skip("XSTREAM_CLUSTER_ADDRS names no Redis servers")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	name := fmt.Sprintf("example-%d", time.Now().UnixNano())
	newPart := func() (part, *bytes.Buffer) {
		e, err := xredis.Dial(ctx, strings.Split(addrs, ",")...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close() })
		var out bytes.Buffer
		return part{e: e, name: name, out: &out}, &out
	}
	c, _ := newPart()
	if err := c.create(ctx); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	for _, f := range []func(p part) error{
		func(p part) error { return p.produce(ctx, "p1", 3, 200) },
		func(p part) error { return p.produce(ctx, "p2", 3, 200) },
		func(p part) error { return p.reshard(ctx, 9) },
	} {
		p, _ := newPart()
		wg.Add(1)
		go func() { defer wg.Done(); errs <- f(p) }()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	r, _ := newPart()
	next, err := r.read(ctx, "app", 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if len(next) != 6 {
		t.Fatalf("read %d keys, want 6", len(next))
	}
	for k, n := range next {
		if n != 200 {
			t.Fatalf("key %s: read up to %d, want 200", k, n)
		}
	}
	// Started again, the reader goes on from its checkpoints: nothing new.
	r2, out := newPart()
	again, err := r2.read(ctx, "app", 200*time.Millisecond)
	if err != nil || len(again) != 0 {
		t.Fatalf("a reader started again read %v (%v): %s", again, err, out)
	}
}
