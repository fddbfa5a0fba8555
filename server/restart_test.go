package server

import (
	"context"
	"errors"
	"net"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// restartFixture writes two entries and a group with one pending entry.
func restartFixture(t *testing.T, ctx context.Context, rdb *redis.Client) {
	t.Helper()
	for _, id := range []string{"1-1", "1-2"} {
		if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: id, Values: []string{"n", id}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := rdb.XGroupCreate(ctx, "s", "g", "0").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{"s", ">"}, Count: 1}).Err(); err != nil {
		t.Fatal(err)
	}
}

// checkFixture checks, through a client that reconnects, what
// restartFixture wrote.
func checkFixture(t *testing.T, ctx context.Context, rdb *redis.Client) {
	t.Helper()
	msgs, err := rdb.XRange(ctx, "s", "-", "+").Result()
	if err != nil || len(msgs) != 2 || msgs[0].ID != "1-1" || msgs[1].Values["n"] != "1-2" {
		t.Fatalf("XRANGE after Restart: %v, %v", msgs, err)
	}
	pend, err := rdb.XPending(ctx, "s", "g").Result()
	if err != nil || pend.Count != 1 || pend.Lower != "1-1" || pend.Consumers["c"] != 1 {
		t.Fatalf("XPENDING after Restart: %+v, %v", pend, err)
	}
	// The group's cursor is kept: the next read gets 1-2.
	res, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{"s", ">"}, Count: 10}).Result()
	if err != nil || len(res) != 1 || len(res[0].Messages) != 1 || res[0].Messages[0].ID != "1-2" {
		t.Fatalf("XREADGROUP > after Restart: %v, %v", res, err)
	}
}

// An in-memory server keeps its DBs, and its address, across Restart; a
// go-redis client reconnects by itself.
func TestRestartInMemory(t *testing.T) {
	srv := RunT(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()}) // default retries
	defer rdb.Close()
	restartFixture(t, ctx, rdb)
	addr, db := srv.Addr(), srv.DB(0)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if srv.Addr() != addr || srv.DB(0) != db {
		t.Fatalf("after Restart: address %s (was %s), DB changed %v", srv.Addr(), addr, srv.DB(0) != db)
	}
	checkFixture(t, ctx, rdb)
}

// A durable server closes its DBs and opens them again from disk.
func TestRestartDurable(t *testing.T) {
	srv := RunTWith(t, Options{Dir: t.TempDir()})
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	restartFixture(t, ctx, rdb)
	old := srv.DB(0)
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	// A new DB, which Open filled from the directory (the old one had to
	// be closed: it held the directory's lock).
	if srv.DB(0) == old || srv.DB(0) == nil {
		t.Fatal("Restart kept the durable DB open instead of opening it again")
	}
	checkFixture(t, ctx, rdb)
	// What the second life wrote survives a third.
	if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: "1-3", Values: []string{"n", "1-3"}}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if n, err := rdb.XLen(ctx, "s").Result(); err != nil || n != 3 {
		t.Fatalf("XLEN after the second Restart: %d, %v", n, err)
	}
}

// As with miniredis: Close, then Restart. The clock and the failures
// injected stay.
func TestRestartAfterClose(t *testing.T) {
	srv := RunT(t)
	ctx := context.Background()
	srv.SetTime(time.UnixMilli(5_000))
	if err := srv.FailCommand("XLEN", "ERR still failing"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := net.Dial("tcp", srv.Addr()); err == nil {
		t.Fatal("a closed server accepts connections")
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	rdb := newGoRedis(t, srv)
	if id, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []string{"f", "v"}}).Result(); err != nil || id != "5000-0" {
		t.Fatalf("XADD * after Restart: %q, %v; want 5000-0", id, err)
	}
	wantErr(t, rdb.XLen(ctx, "s").Err(), "ERR still failing")
}

// A read blocked at Restart replies as if its timeout had passed; the
// client then reads on.
func TestRestartEndsBlockedReads(t *testing.T) {
	srv := RunT(t)
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	if err := rdb.XGroupCreateMkStream(ctx, "s", "g", "$").Err(); err != nil {
		t.Fatal(err)
	}
	s, _ := srv.DB(0).Lookup("s")
	got := make(chan error, 1)
	go func() {
		got <- rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{"s", ">"}, Block: 0}).Err()
	}()
	for s.Blocked() != 1 {
		runtime.Gosched()
	}
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; !errors.Is(err, redis.Nil) {
		t.Fatalf("blocked XREADGROUP at Restart: %v, want redis.Nil", err)
	}
	if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: "s", ID: "1-1", Values: []string{"f", "v"}}).Err(); err != nil {
		t.Fatal(err)
	}
}

func TestRestartErrors(t *testing.T) {
	// Never started.
	srv := New(Options{})
	if err := srv.Restart(); err == nil || err.Error() != "xstream server: Restart of a server never started" {
		t.Fatalf("Restart before Start: %v", err)
	}
	if srv.Addr() != "" {
		t.Fatalf("Addr before Start: %q", srv.Addr())
	}

	// The address taken while the server was closed: Restart fails, the
	// server stays closed, the data stays for a later Restart.
	srv = RunT(t)
	ctx := context.Background()
	rdb := newGoRedis(t, srv)
	if err := addOne(ctx, rdb, "1-1"); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Restart(); !errors.As(err, new(*net.OpError)) {
		ln.Close()
		t.Fatalf("Restart on a taken address: %v, want a *net.OpError", err)
	}
	ln.Close()
	if err := srv.Restart(); err != nil {
		t.Fatal(err)
	}
	wantXLen(t, srv, 1)
	if n, err := rdb.XLen(ctx, "s").Result(); err != nil || n != 1 {
		t.Fatalf("XLEN: %d, %v", n, err)
	}
}

// Restart may run beside commands, Addr, DB and Close (go test -race).
func TestRestartConcurrent(t *testing.T) {
	srv := RunTWith(t, Options{Dir: t.TempDir()})
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: 10})
	defer rdb.Close()
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(2)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			rdb.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []string{"f", "v"}}) // may fail at a restart
			if db := srv.DB(0); db != nil {
				db.Len()
			}
			_ = srv.Addr()
		}
	}()
	go func() {
		defer wg.Done()
		defer close(stop)
		for range 3 {
			if err := srv.Restart(); err != nil {
				t.Error(err)
			}
		}
	}()
	wg.Wait()
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
}
