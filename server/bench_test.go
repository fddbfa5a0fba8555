package server

import (
	"context"
	"strconv"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Benchmarks through go-redis of the xstream server and of miniredis, both
// in process, with the same workload: XADD, XRANGE COUNT 10 from the
// middle of a 10,000-entry stream, XREADGROUP COUNT 10 then XACK.
//
//	go test -run '^$' -bench GoRedis -benchtime 2s

func benchServers(b *testing.B, fn func(b *testing.B, rdb *redis.Client)) {
	b.Run("xstream", func(b *testing.B) {
		srv := RunT(b)
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: 2})
		defer rdb.Close()
		fn(b, rdb)
	})
	b.Run("miniredis", func(b *testing.B) {
		mr := miniredis.RunT(b)
		rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), Protocol: 2})
		defer rdb.Close()
		fn(b, rdb)
	})
}

func fill(b *testing.B, rdb *redis.Client, key string, n int) {
	ctx := context.Background()
	pipe := rdb.Pipeline()
	for i := 1; i <= n; i++ {
		pipe.XAdd(ctx, &redis.XAddArgs{Stream: key, ID: strconv.Itoa(i) + "-0", Values: []string{"sensor-id", "1234", "temperature", "19.8"}})
		if i%1000 == 0 {
			if _, err := pipe.Exec(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	if _, err := pipe.Exec(ctx); err != nil {
		b.Fatal(err)
	}
}

func BenchmarkGoRedisXAdd(b *testing.B) {
	benchServers(b, func(b *testing.B, rdb *redis.Client) {
		ctx := context.Background()
		args := &redis.XAddArgs{Stream: "s", Values: []string{"sensor-id", "1234", "temperature", "19.8"}}
		for b.Loop() {
			if err := rdb.XAdd(ctx, args).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkGoRedisXRange10(b *testing.B) {
	benchServers(b, func(b *testing.B, rdb *redis.Client) {
		ctx := context.Background()
		fill(b, rdb, "s", 10000)
		for b.Loop() {
			es, err := rdb.XRangeN(ctx, "s", "5000", "+", 10).Result()
			if err != nil || len(es) != 10 {
				b.Fatal(len(es), err)
			}
		}
	})
}

func BenchmarkGoRedisXReadGroup10(b *testing.B) {
	benchServers(b, func(b *testing.B, rdb *redis.Client) {
		ctx := context.Background()
		fill(b, rdb, "s", 10000)
		if err := rdb.XGroupCreate(ctx, "s", "g", "0").Err(); err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			res, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{"s", ">"}, Count: 10, Block: -1}).Result()
			if err == redis.Nil {
				// Consumed everything: start the group over.
				b.StopTimer()
				rdb.XGroupSetID(ctx, "s", "g", "0")
				b.StartTimer()
				continue
			}
			if err != nil {
				b.Fatal(err)
			}
			ids := make([]string, len(res[0].Messages))
			for i, m := range res[0].Messages {
				ids[i] = m.ID
			}
			if err := rdb.XAck(ctx, "s", "g", ids...).Err(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
