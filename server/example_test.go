package server_test

import (
	"context"
	"fmt"
	"os"

	"github.com/redis/go-redis/v9"
	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/server"
)

// A server on a free loopback port, used through go-redis as a Redis
// would be. In a test, server.RunT(t) does the Start and the Close.
func Example() {
	srv := server.New(server.Options{})
	if err := srv.Start(); err != nil {
		panic(err)
	}
	defer srv.Close()

	ctx := context.Background()
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()

	rdb.XAdd(ctx, &redis.XAddArgs{Stream: "orders", ID: "1-1", Values: []string{"item", "book"}})
	rdb.XGroupCreate(ctx, "orders", "billing", "0")
	res, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{
		Group: "billing", Consumer: "w1", Streams: []string{"orders", ">"}, Count: 10,
	}).Result()
	if err != nil {
		panic(err)
	}
	for _, m := range res[0].Messages {
		fmt.Println(m.ID, m.Values["item"])
	}
	n, _ := rdb.XAck(ctx, "orders", "billing", "1-1").Result()
	fmt.Println("acked", n)

	// The same stream, seen through the xstream API.
	s, _ := srv.DB(0).Lookup("orders")
	fmt.Println("length", s.Len())
	// Output:
	// 1-1 book
	// acked 1
	// length 1
}

// A server keeping its databases in a directory, closed and started again
// on it: the second one has the stream, the group and its pending entry.
// In a test, server.RunTWith(t, server.Options{Dir: dir}) twice does the
// same (Close the first one before the second).
func Example_restart() {
	dir, err := os.MkdirTemp("", "xstream-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	ctx := context.Background()

	srv := server.New(server.Options{Dir: dir, AppendFsync: xstream.SyncEverySecond})
	if err := srv.Start(); err != nil {
		panic(err)
	}
	rdb := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	rdb.XAdd(ctx, &redis.XAddArgs{Stream: "orders", ID: "1-1", Values: []string{"item", "book"}})
	rdb.XAdd(ctx, &redis.XAddArgs{Stream: "orders", ID: "2-1", Values: []string{"item", "pen"}})
	rdb.XGroupCreate(ctx, "orders", "billing", "0")
	rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "billing", Consumer: "w1", Streams: []string{"orders", ">"}, Count: 1})
	rdb.Close()
	if err := srv.Close(); err != nil { // syncs the log
		panic(err)
	}

	srv = server.New(server.Options{Dir: dir})
	if err := srv.Start(); err != nil {
		panic(err)
	}
	defer srv.Close()
	rdb = redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer rdb.Close()
	msgs, _ := rdb.XRange(ctx, "orders", "-", "+").Result()
	for _, m := range msgs {
		fmt.Println(m.ID, m.Values["item"])
	}
	pending, _ := rdb.XPending(ctx, "orders", "billing").Result()
	fmt.Println("pending", pending.Count, pending.Consumers)
	// Output:
	// 1-1 book
	// 2-1 pen
	// pending 1 map[w1:1]
}
