package xstream

import (
	"context"
	"math/rand/v2"
	"runtime"
	"strconv"
	"testing"
	"time"
)

// gbFields is the benchmark entry: {"sensor-id": 4 digits, "temperature"}.
func gbFields(i int) []Field {
	return []Field{{"sensor-id", strconv.Itoa(1000 + i%9000)}, {"temperature", "19.8"}}
}

// gbStream returns a stream with n entries (IDs 1-0 … n-0) and a group
// "g" at 0.
func gbStream(b *testing.B, n int) *Stream {
	b.Helper()
	s := NewStream()
	for i := 1; i <= n; i++ {
		if _, err := s.Add(AddArgs{ID: strconv.Itoa(i)}, gbFields(i)...); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.CreateGroup("g", "0", GroupOptions{}); err != nil {
		b.Fatal(err)
	}
	return s
}

// BenchmarkReadGroupAck consumes a 100,000-entry stream in batches of 100:
// ReadGroup ">" then AckIDs of the batch. One op is one message. Between
// chunks of about chanChunk messages, with the timer stopped, it runs as
// many channel round trips and reports the ratio of the times as x-chan
// (as BenchmarkAdd does).
func BenchmarkReadGroupAck(b *testing.B) {
	const entries, batch = 100_000, 100
	s := gbStream(b, entries)
	ctx := context.Background()
	ids := make([]ID, 0, batch)
	var r chanRatio
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		start, n := time.Now(), 0
		for n < chanChunk && done < b.N {
			es, err := s.ReadGroup(ctx, "g", "c", ">", ReadGroupArgs{Count: batch})
			if err != nil {
				b.Fatal(err)
			}
			if len(es) == 0 {
				// The whole stream was consumed: start over.
				if err := s.SetGroupID("g", "0", GroupOptions{}); err != nil {
					b.Fatal(err)
				}
				continue
			}
			ids = ids[:0]
			for _, e := range es {
				ids = append(ids, e.ID)
			}
			if k, err := s.AckIDs("g", ids...); err != nil || k != int64(len(ids)) {
				b.Fatal(k, err)
			}
			done += len(es)
			n += len(es)
		}
		r.timed(b, start, n)
	}
	r.report(b)
}

// pelSizes are the PEL sizes of the PEL benchmarks.
var pelSizes = []struct {
	name string
	n    int
}{{"1k", 1_000}, {"1M", 1_000_000}}

// gbPending returns a stream whose group "g" has n entries pending, owned
// by consumers a and b in turn, and their IDs as strings in random order.
func gbPending(b *testing.B, n int) (*Stream, []string) {
	b.Helper()
	s := gbStream(b, n)
	for i := 0; i < n; i += 1000 {
		c := "a"
		if i/1000%2 == 1 {
			c = "b"
		}
		if _, err := s.ReadGroup(context.Background(), "g", c, ">", ReadGroupArgs{Count: 1000}); err != nil {
			b.Fatal(err)
		}
	}
	ids := make([]string, n)
	for i := range ids {
		ids[i] = strconv.Itoa(i+1) + "-0"
	}
	rng := rand.New(rand.NewPCG(1, 2))
	rng.Shuffle(len(ids), func(i, j int) { ids[i], ids[j] = ids[j], ids[i] })
	return s, ids
}

func BenchmarkAck(b *testing.B) {
	for _, size := range pelSizes {
		b.Run(size.name, func(b *testing.B) {
			s, ids := gbPending(b, size.n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				k := i % len(ids)
				if k == 0 && i > 0 {
					b.StopTimer() // all acknowledged: make them pending again
					if err := s.SetGroupID("g", "0", GroupOptions{}); err != nil {
						b.Fatal(err)
					}
					if _, err := s.ReadGroup(context.Background(), "g", "a", ">", ReadGroupArgs{NoAck: false}); err != nil {
						b.Fatal(err)
					}
					b.StartTimer()
				}
				if n, err := s.Ack("g", ids[k]); err != nil || n != 1 {
					b.Fatal(n, err)
				}
			}
		})
	}
}

func BenchmarkClaim(b *testing.B) {
	for _, size := range pelSizes {
		b.Run(size.name, func(b *testing.B) {
			s, ids := gbPending(b, size.n)
			consumers := []string{"a", "b"}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				es, err := s.Claim("g", consumers[i%2], 0, ids[i%len(ids):i%len(ids)+1], ClaimArgs{JustID: true})
				if err != nil || len(es) != 1 {
					b.Fatal(len(es), err)
				}
			}
		})
	}
}

func BenchmarkPendingRange(b *testing.B) {
	for _, size := range pelSizes {
		b.Run(size.name, func(b *testing.B) {
			s, ids := gbPending(b, size.n)
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				rows, err := s.PendingRange("g", PendingArgs{Start: ids[i%len(ids)], Count: 10})
				if err != nil || len(rows) == 0 {
					b.Fatal(len(rows), err)
				}
			}
		})
	}
}

func BenchmarkAutoClaim(b *testing.B) {
	for _, size := range pelSizes {
		b.Run(size.name, func(b *testing.B) {
			s, ids := gbPending(b, size.n)
			consumers := []string{"a", "b"}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				res, err := s.AutoClaim("g", consumers[i%2], 0, ids[i%len(ids)], AutoClaimArgs{Count: 10, JustID: true})
				if err != nil || len(res.Entries) == 0 {
					b.Fatal(len(res.Entries), err)
				}
			}
		})
	}
}

// BenchmarkPendingMemory delivers entries into a PEL (one op is one entry
// delivered by ReadGroup in batches of 1000) and reports the heap that
// 1,000,000 pending entries take, per entry: the group's PEL record plus
// the consumer's PEL entry.
func BenchmarkPendingMemory(b *testing.B) {
	const n = 1_000_000
	s := gbStream(b, n)
	ctx := context.Background()
	fill := func() {
		for i := 0; i < n; i += 1000 {
			if _, err := s.ReadGroup(ctx, "g", "c", ">", ReadGroupArgs{Count: 1000}); err != nil {
				b.Fatal(err)
			}
		}
	}
	reset := func() {
		if !must(s.DestroyGroup("g")) {
			b.Fatal("no group")
		}
		if err := s.CreateGroup("g", "0", GroupOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for done := 0; done < b.N; done += 1000 {
		es, err := s.ReadGroup(ctx, "g", "c", ">", ReadGroupArgs{Count: 1000})
		if err != nil {
			b.Fatal(err)
		}
		if len(es) == 0 {
			b.StopTimer()
			reset()
			b.StartTimer()
		}
	}
	b.StopTimer()
	reset()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fill()
	runtime.GC()
	runtime.ReadMemStats(&after)
	b.ReportMetric(float64(after.HeapInuse-before.HeapInuse)/n, "bytes/pending")
	runtime.KeepAlive(s)
}
