package xredis_test

import (
	"context"
	"os"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"

	"github.com/redis/rueidis"
	"github.com/xstreamgo/xstream"
)

// BenchmarkEngine compares the engine's calls with the same commands sent
// through the raw rueidis client, in the same run, on the same server
// (standalone redis-server; XREDIS_BENCH_KIND=cluster or xstream for the
// others), by one caller and by 64 concurrent callers, whose commands
// rueidis pipelines. The raw side decodes what it reads with rueidis's
// own order-keeping decoders (AsXRangeSlices, AsXReadSlices), as a user
// of the client would. See BENCHMARKS.md.
//
//	go test -run '^$' -bench BenchmarkEngine -benchtime 2s -count 5 ./...
func BenchmarkEngine(b *testing.B) {
	e := newEngine(b, benchKind("redis"))
	c := e.Client()
	ctx := context.Background()
	k := keys(b)
	fields := xstream.Fields("sensor-id", "1234", "temperature", "19.8")
	seq := atomic.Int64{}

	// Range: a stream of 1000 entries.
	rangeKey := k("range")
	fill(b, c, rangeKey, 1000)

	for _, callers := range []int{1, 64} {
		run := func(b *testing.B, fn func()) {
			b.ReportAllocs()
			if callers == 1 {
				for b.Loop() {
					fn()
				}
				return
			}
			b.SetParallelism(parallelism(callers))
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					fn()
				}
			})
		}
		cs := "/" + strconv.Itoa(callers)

		// pair runs the engine's benchmark and the raw one, in the order
		// XREDIS_BENCH_ORDER says (raw-first, or the engine first), so
		// that runs can alternate it.
		pair := func(name string, engine, raw func(b *testing.B)) {
			if os.Getenv("XREDIS_BENCH_ORDER") == "raw-first" {
				b.Run(name+cs+"/raw", raw)
				b.Run(name+cs+"/engine", engine)
				return
			}
			b.Run(name+cs+"/engine", engine)
			b.Run(name+cs+"/raw", raw)
		}

		pair("Add", func(b *testing.B) {
			s := k("add-engine" + cs)
			defer c.Do(ctx, c.B().Del().Key(s).Build())
			run(b, func() {
				if _, err := e.Add(ctx, s, xstream.AddArgs{}, fields...); err != nil {
					b.Fatal(err)
				}
			})
		}, func(b *testing.B) {
			s := k("add-raw" + cs)
			defer c.Do(ctx, c.B().Del().Key(s).Build())
			run(b, func() {
				cmd := c.B().Xadd().Key(s).Id("*").FieldValue().FieldValue("sensor-id", "1234").FieldValue("temperature", "19.8").Build()
				if _, err := c.Do(ctx, cmd).ToString(); err != nil {
					b.Fatal(err)
				}
			})
		})

		pair("Range10", func(b *testing.B) {
			run(b, func() {
				if es, err := e.Range(ctx, rangeKey, "-", "+", 10); err != nil || len(es) != 10 {
					b.Fatal(len(es), err)
				}
			})
		}, func(b *testing.B) {
			run(b, func() {
				es, err := c.Do(ctx, c.B().Xrange().Key(rangeKey).Start("-").End("+").Count(10).Build()).AsXRangeSlices()
				if err != nil || len(es) != 10 {
					b.Fatal(len(es), err)
				}
			})
		})

		// ReadGroup COUNT 10 and an Ack of what it read, each caller a
		// consumer of its own, on a stream holding enough entries.
		readAck := func(b *testing.B, raw bool) {
			s := k("group" + cs + strconv.FormatBool(raw))
			defer c.Do(ctx, c.B().Del().Key(s).Build())
			fill(b, c, s, 10*b.N+1000)
			if err := e.CreateGroup(ctx, s, "g", "0", xstream.GroupOptions{}); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			b.ReportAllocs()
			body := func(consumer string) {
				if raw {
					res, err := c.Do(ctx, c.B().Xreadgroup().Group("g", consumer).Count(10).Streams().Key(s).Id(">").Build()).AsXReadSlices()
					if err != nil || len(res[s]) != 10 {
						b.Fatal(len(res[s]), err)
					}
					ids := make([]string, len(res[s]))
					for i, e := range res[s] {
						ids[i] = e.ID
					}
					if n, err := c.Do(ctx, c.B().Xack().Key(s).Group("g").Id(ids...).Build()).AsInt64(); err != nil || n != 10 {
						b.Fatal(n, err)
					}
					return
				}
				out, err := e.ReadGroup(ctx, "g", consumer, xstream.ReadGroupArgs{Count: 10}, s, ">")
				if err != nil || len(out) != 1 || len(out[0].Entries) != 10 {
					b.Fatal(out, err)
				}
				ids := make([]string, len(out[0].Entries))
				for i, e := range out[0].Entries {
					ids[i] = e.ID.String()
				}
				if n, err := e.Ack(ctx, s, "g", ids...); err != nil || n != 10 {
					b.Fatal(n, err)
				}
			}
			if callers == 1 {
				for range b.N {
					body("c")
				}
				return
			}
			b.SetParallelism(parallelism(callers))
			b.RunParallel(func(pb *testing.PB) {
				consumer := "c" + strconv.FormatInt(seq.Add(1), 10)
				for pb.Next() {
					body(consumer)
				}
			})
		}
		pair("ReadGroupAck", func(b *testing.B) { readAck(b, false) }, func(b *testing.B) { readAck(b, true) })
	}
}

// parallelism is the argument of SetParallelism for callers goroutines.
func parallelism(callers int) int {
	p := runtime.GOMAXPROCS(0)
	return (callers + p - 1) / p
}

// fill adds n entries to stream, 1000 per round trip.
func fill(b *testing.B, c rueidis.Client, stream string, n int) {
	for n > 0 {
		batch := min(n, 1000)
		cmds := make(rueidis.Commands, batch)
		for i := range cmds {
			cmds[i] = c.B().Xadd().Key(stream).Id("*").FieldValue().FieldValue("sensor-id", "1234").FieldValue("temperature", "19.8").Build()
		}
		for _, r := range c.DoMulti(context.Background(), cmds...) {
			if err := r.Error(); err != nil {
				b.Fatal(err)
			}
		}
		n -= batch
	}
}

// benchKind is the server kind a benchmark runs on: XREDIS_BENCH_KIND, or
// def.
func benchKind(def string) string {
	if k := os.Getenv("XREDIS_BENCH_KIND"); k != "" {
		return k
	}
	return def
}
