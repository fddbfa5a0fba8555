package server_test

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"
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
