package server

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

// Benchmarks through go-redis of the xstream server and of miniredis, both
// in process on loopback, with the same workload for both:
//
//	BenchmarkGoRedis/<workload>/<form>/<server>
//
// Workloads: XAdd (XADD * with two fields), XRange10 (XRANGE 5000 + COUNT 10
// on a 10,000-entry stream), XReadGroup10Ack (XREADGROUP COUNT 10 then XACK
// of the 10 entries read; one op is the two commands). Forms: unpipelined
// (one command per round trip, bound by the loopback on small machines),
// pipelined (pipeBatch commands per go-redis Pipeline Exec, so that the
// servers' own cost dominates) and parallel (b.RunParallel: several
// goroutines share one go-redis client and its connection pool, as a
// service's tests would). ns/op is per op; ns/cmd divides by the commands
// of an op.
//
//	go test -run '^$' -bench GoRedis -benchtime 2s -count 3

// pipeBatch is the number of commands sent per Pipeline Exec.
const pipeBatch = 100

// benchParallelism multiplies GOMAXPROCS for the goroutines of the
// parallel form.
const benchParallelism = 4

// fillLen is the length of the streams XRange10 and XReadGroup10Ack read.
const fillLen = 10000

var benchFields = []string{"sensor-id", "1234", "temperature", "19.8"}

// benchWork is one workload. setup prepares the stream key (before the
// timer starts) and returns the state of one goroutine; queue issues the
// commands of one op on c, a client (run at once) or a pipeline (run at
// Exec), and returns a check of their replies, called once they are in.
type benchWork struct {
	name      string
	cmdsPerOp int
	shared    bool // all goroutines of the parallel form use one stream
	setup     func(b *testing.B, rdb *redis.Client, key string) benchState
}

type benchState interface {
	queue(ctx context.Context, c redis.Cmdable) func() error
}

var benchWorks = []benchWork{
	{name: "XAdd", cmdsPerOp: 1, shared: true, setup: func(b *testing.B, rdb *redis.Client, key string) benchState {
		return &xaddState{args: &redis.XAddArgs{Stream: key, Values: benchFields}}
	}},
	{name: "XRange10", cmdsPerOp: 1, shared: true, setup: func(b *testing.B, rdb *redis.Client, key string) benchState {
		fill(b, rdb, key, fillLen)
		return &xrangeState{key: key}
	}},
	{name: "XReadGroup10Ack", cmdsPerOp: 2, setup: func(b *testing.B, rdb *redis.Client, key string) benchState {
		fill(b, rdb, key, fillLen)
		if err := rdb.XGroupCreate(context.Background(), key, "g", "0").Err(); err != nil {
			b.Fatal(err)
		}
		return &xreadgroupState{key: key, next: 1}
	}},
}

type xaddState struct{ args *redis.XAddArgs }

func (s *xaddState) queue(ctx context.Context, c redis.Cmdable) func() error {
	cmd := c.XAdd(ctx, s.args)
	return func() error {
		if cmd.Err() == nil && cmd.Val() == "" {
			return errors.New("XADD returned no ID")
		}
		return cmd.Err()
	}
}

type xrangeState struct{ key string }

func (s *xrangeState) queue(ctx context.Context, c redis.Cmdable) func() error {
	cmd := c.XRangeN(ctx, s.key, "5000", "+", 10)
	return func() error {
		es, err := cmd.Result()
		if err != nil {
			return err
		}
		if len(es) != 10 || es[0].ID != "5000-0" || es[9].ID != "5009-0" || len(es[0].Values) != 2 {
			return fmt.Errorf("XRANGE: unexpected reply %v", es)
		}
		return nil
	}
}

// xreadgroupState knows which 10 entries the group delivers next (the
// stream holds 1-0 .. fillLen-0), so that XACK can be queued in the same
// pipeline; the replies are checked against it. After the last entries the
// group starts over with XGROUP DESTROY and CREATE (miniredis has no
// XGROUP SETID): two extra commands per fillLen/10 ops, the same for both
// servers.
type xreadgroupState struct {
	key  string
	next int
}

func (s *xreadgroupState) queue(ctx context.Context, c redis.Cmdable) func() error {
	first := s.next
	ids := make([]string, 10)
	for i := range ids {
		ids[i] = strconv.Itoa(first+i) + "-0"
	}
	read := c.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c", Streams: []string{s.key, ">"}, Count: 10, Block: -1})
	ack := c.XAck(ctx, s.key, "g", ids...)
	s.next += 10
	var destroy *redis.IntCmd
	var create *redis.StatusCmd
	if s.next > fillLen {
		destroy = c.XGroupDestroy(ctx, s.key, "g")
		create = c.XGroupCreate(ctx, s.key, "g", "0")
		s.next = 1
	}
	return func() error {
		res, err := read.Result()
		if err != nil {
			return err
		}
		if len(res) != 1 || len(res[0].Messages) != 10 || res[0].Messages[0].ID != ids[0] || res[0].Messages[9].ID != ids[9] {
			return fmt.Errorf("XREADGROUP: want %s .. %s, got %v", ids[0], ids[9], res)
		}
		if n, err := ack.Result(); err != nil || n != 10 {
			return fmt.Errorf("XACK %s .. %s: got %d, %v", ids[0], ids[9], n, err)
		}
		if destroy != nil {
			if n, err := destroy.Result(); err != nil || n != 1 {
				return fmt.Errorf("XGROUP DESTROY: got %d, %v", n, err)
			}
			return create.Err()
		}
		return nil
	}
}

// BenchmarkGoRedis compares the xstream server with miniredis; see the
// comment at the top of this file.
func BenchmarkGoRedis(b *testing.B) {
	for _, w := range benchWorks {
		b.Run(w.name, func(b *testing.B) {
			b.Run("unpipelined", func(b *testing.B) { benchServers(b, w, benchUnpipelined) })
			b.Run("pipelined", func(b *testing.B) { benchServers(b, w, benchPipelined) })
			b.Run("parallel", func(b *testing.B) { benchServers(b, w, benchParallel) })
		})
	}
}

func benchServers(b *testing.B, w benchWork, form func(*testing.B, benchWork, *redis.Client)) {
	b.Run("xstream", func(b *testing.B) {
		srv := RunT(b)
		rdb := redis.NewClient(&redis.Options{Addr: srv.Addr(), Protocol: 2})
		defer rdb.Close()
		form(b, w, rdb)
	})
	b.Run("miniredis", func(b *testing.B) {
		mr := miniredis.RunT(b)
		rdb := redis.NewClient(&redis.Options{Addr: mr.Addr(), Protocol: 2})
		defer rdb.Close()
		form(b, w, rdb)
	})
}

func reportPerCmd(b *testing.B, w benchWork) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*w.cmdsPerOp), "ns/cmd")
}

func benchUnpipelined(b *testing.B, w benchWork, rdb *redis.Client) {
	ctx := context.Background()
	st := w.setup(b, rdb, "s")
	b.ReportAllocs()
	for b.Loop() {
		if err := st.queue(ctx, rdb)(); err != nil {
			b.Fatal(err)
		}
	}
	reportPerCmd(b, w)
}

func benchPipelined(b *testing.B, w benchWork, rdb *redis.Client) {
	ctx := context.Background()
	st := w.setup(b, rdb, "s")
	pipe := rdb.Pipeline()
	perExec := pipeBatch / w.cmdsPerOp
	checks := make([]func() error, 0, perExec)
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		checks = checks[:0]
		for i := 0; i < perExec && done < b.N; i++ {
			checks = append(checks, st.queue(ctx, pipe))
			done++
		}
		if _, err := pipe.Exec(ctx); err != nil {
			b.Fatal(err)
		}
		for _, check := range checks {
			if err := check(); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	reportPerCmd(b, w)
}

func benchParallel(b *testing.B, w benchWork, rdb *redis.Client) {
	ctx := context.Background()
	// RunParallel starts benchParallelism*GOMAXPROCS goroutines; each takes
	// a state prepared here.
	states := make([]benchState, benchParallelism*runtime.GOMAXPROCS(0))
	for i := range states {
		if w.shared && i > 0 {
			states[i] = states[0]
			continue
		}
		states[i] = w.setup(b, rdb, "s"+strconv.Itoa(i))
	}
	var taken atomic.Int32
	b.SetParallelism(benchParallelism)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		st := states[taken.Add(1)-1]
		for pb.Next() {
			if err := st.queue(ctx, rdb)(); err != nil {
				b.Error(err)
				return
			}
		}
	})
	b.StopTimer()
	reportPerCmd(b, w)
}

// fill adds the entries 1-0 .. n-0 to key, 1,000 per pipeline.
func fill(b *testing.B, rdb *redis.Client, key string, n int) {
	ctx := context.Background()
	pipe := rdb.Pipeline()
	for i := 1; i <= n; i++ {
		pipe.XAdd(ctx, &redis.XAddArgs{Stream: key, ID: strconv.Itoa(i) + "-0", Values: benchFields})
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
