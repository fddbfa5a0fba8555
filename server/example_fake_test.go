package server_test

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/server"
)

// Moving the clock: an entry delivered and not acknowledged becomes
// claimable by another consumer once it has been idle long enough.
func ExampleServer_FastForward() {
	srv := server.New(server.Options{})
	if err := srv.Start(); err != nil {
		panic(err)
	}
	defer srv.Close()
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()

	srv.SetTime(time.UnixMilli(1_700_000_000_000))
	id, _ := rdb.XAdd(ctx, &redis.XAddArgs{Stream: "jobs", Values: []string{"n", "1"}}).Result()
	fmt.Println("added", id)
	rdb.XGroupCreate(ctx, "jobs", "workers", "0")
	rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "workers", Consumer: "w1", Streams: []string{"jobs", ">"}})

	claim := func() int {
		msgs, _, _ := rdb.XAutoClaim(ctx, &redis.XAutoClaimArgs{
			Stream: "jobs", Group: "workers", Consumer: "w2", MinIdle: time.Minute, Start: "0",
		}).Result()
		return len(msgs)
	}
	fmt.Println("claimed at once:", claim())
	srv.FastForward(time.Minute)
	fmt.Println("claimed a minute later:", claim())
	// Output:
	// added 1700000000000-0
	// claimed at once: 0
	// claimed a minute later: 1
}

// Injected failures, for a service's error paths.
func ExampleServer_FailNext() {
	srv := server.New(server.Options{})
	if err := srv.Start(); err != nil {
		panic(err)
	}
	defer srv.Close()
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), MaxRetries: -1})
	defer rdb.Close()
	add := func() error {
		return rdb.XAdd(ctx, &redis.XAddArgs{Stream: "s", Values: []string{"f", "v"}}).Err()
	}

	srv.FailNext(1, "ERR disk full")
	fmt.Println(add())
	fmt.Println(add())
	srv.FailCommand("XADD", "READONLY You can't write against a read only replica.")
	fmt.Println(add())
	srv.FailCommand("XADD", "")
	srv.SetError("LOADING Redis is loading the dataset in memory")
	fmt.Println(rdb.XLen(ctx, "s").Err())
	srv.SetError("")
	fmt.Println(rdb.XLen(ctx, "s").Val())
	// Output:
	// ERR disk full
	// <nil>
	// READONLY You can't write against a read only replica.
	// LOADING Redis is loading the dataset in memory
	// 1
}

// Restarting a server on the same address: the client reconnects and
// finds the data.
func ExampleServer_Restart() {
	srv := server.New(server.Options{})
	if err := srv.Start(); err != nil {
		panic(err)
	}
	defer srv.Close()
	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	srv.DB(0).Add("s", xstream.AddArgs{ID: "1-1"}, xstream.Fields("f", "v")...)

	if err := srv.Restart(); err != nil {
		panic(err)
	}
	fmt.Println(rdb.XLen(ctx, "s").Val())
	// Output:
	// 1
}
