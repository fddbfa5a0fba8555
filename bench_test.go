package xstream

import (
	"context"
	"fmt"
	"github.com/xstreamgo/xstream/internal/store"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Benchmarks of the sensor workload: entries {"sensor-id": 4 digits,
// "temperature": like "19.8"}. BENCHMARKS.md has the commands and numbers.

const benchKinds = 1024 // distinct prepared entries, cycled through

// benchEntries returns benchKinds prepared sensor entries. Their strings
// share one allocation and their fields another, so that the benchmarks'
// own data costs the garbage collector little.
var benchEntries = sync.OnceValue(func() [][]Field {
	r := rand.New(rand.NewPCG(1, 2))
	var text []byte
	for range benchKinds {
		t := 100 + r.IntN(300) // 10.0 .. 39.9
		text = fmt.Appendf(text, "%04d%d.%d", r.IntN(10000), t/10, t%10)
	}
	all := string(text) // 8 bytes an entry: 4 digits, then "dd.d"
	fields := make([]Field, 2*benchKinds)
	out := make([][]Field, benchKinds)
	for i := range out {
		v := all[8*i : 8*i+8]
		fields[2*i] = Field{"sensor-id", v[:4]}
		fields[2*i+1] = Field{"temperature", v[4:]}
		out[i] = fields[2*i : 2*i+2 : 2*i+2]
	}
	return out
})

// benchClock returns a clock for fast deterministic stream building: it
// moves one millisecond every perMs calls, so entry i gets the ID
// (i/perMs + 1)-(i%perMs).
func benchClock(perMs int) func() time.Time {
	n := 0
	return func() time.Time {
		ms := int64(n/perMs) + 1
		n++
		return time.UnixMilli(ms)
	}
}

const benchPerMs = 8

// benchID returns the ID of entry i of a stream built with benchClock.
func benchID(i int) ID { return ID{uint64(i/benchPerMs) + 1, uint64(i % benchPerMs)} }

// benchStream returns a stream of n sensor entries with benchID IDs.
func benchStream(n int) *Stream {
	es := benchEntries()
	s := NewStream(WithClock(benchClock(benchPerMs)))
	for i := range n {
		if _, err := s.Add(AddArgs{}, es[i%benchKinds]...); err != nil {
			panic(err)
		}
	}
	return s
}

// chanRoundTrips sends and receives n entries through the buffered channel
// ch in one goroutine and returns the time taken.
func chanRoundTrips(ch chan Entry, n int, es [][]Field) time.Duration {
	var sink Entry
	start := time.Now()
	for i := range n {
		ch <- Entry{Fields: es[i%benchKinds]}
		sink = <-ch
	}
	d := time.Since(start)
	runtime.KeepAlive(sink)
	return d
}

// BenchmarkAdd adds auto-ID entries to one growing stream from one
// goroutine. Between chunks of Adds, with the timer stopped, it runs as
// many channel round trips (as BenchmarkChanBaseline does) and reports the
// ratio of the two times as x-chan, so that the ratio comes from one run
// and the machine's noise hits both sides alike.
func BenchmarkAdd(b *testing.B) {
	es := benchEntries()
	benchAgainstChan(b, func(s *Stream, i, n int) {
		for ; n > 0; i, n = i+1, n-1 {
			if _, err := s.Add(AddArgs{}, es[i%benchKinds]...); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkAddBatch adds auto-ID entries to one growing stream in
// batches of benchBatch with AddBatch, one goroutine; one op is one entry.
// As BenchmarkAdd does, it runs as many channel round trips between
// chunks, with the timer stopped, and reports x-chan per entry.
func BenchmarkAddBatch(b *testing.B) {
	es := benchEntries()
	benchAgainstChan(b, func(s *Stream, i, n int) {
		for ; n > 0; i, n = i+benchBatch, n-benchBatch {
			j := i % benchKinds
			if _, err := s.AddBatch(AddArgs{}, es[j:j+min(benchBatch, n)]...); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchBatch is the number of entries of one AddBatch in
// BenchmarkAddBatch; benchKinds and the chunks of benchAgainstChan are
// multiples of it.
const benchBatch = 64

// benchAgainstChan runs add(s, i, n), which adds entries i to i+n-1 of
// the sensor workload to s, over b.N entries in chunks; between chunks,
// with the timer stopped, it runs as many channel round trips and it
// reports the ratio of the two times as x-chan and the channel's time
// per entry as chan-ns/op.
func benchAgainstChan(b *testing.B, add func(s *Stream, i, n int)) {
	s := NewStream()
	var r chanRatio
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(chanChunk, b.N-done)
		start := time.Now()
		add(s, done, n)
		r.timed(b, start, n)
		done += n
	}
	r.report(b)
	runtime.KeepAlive(s)
}

// chanChunk is the number of operations between two runs of channel round
// trips of a chanRatio.
const chanChunk = 1 << 14

// chanRatio times a benchmark's chunks of operations against as many
// channel round trips (as BenchmarkChanBaseline does) run between them
// with the timer stopped, so that a ratio comes from one run and the
// machine's noise hits both sides alike. Its zero value is ready.
type chanRatio struct {
	ch        chan Entry
	took, chs time.Duration
}

// timed adds the time since start of a chunk of n operations, then runs n
// channel round trips with b's timer stopped.
func (r *chanRatio) timed(b *testing.B, start time.Time, n int) {
	r.took += time.Since(start)
	b.StopTimer()
	if r.ch == nil {
		r.ch = make(chan Entry, 1024)
	}
	r.chs += chanRoundTrips(r.ch, n, benchEntries())
	b.StartTimer()
}

// report stops b's timer and reports the ratio of the chunks' time to
// the channel's as x-chan and the channel's time per op as chan-ns/op.
func (r *chanRatio) report(b *testing.B) {
	b.StopTimer()
	b.ReportMetric(float64(r.took)/float64(r.chs), "x-chan")
	b.ReportMetric(float64(r.chs.Nanoseconds())/float64(b.N), "chan-ns/op")
}

// BenchmarkChanBaseline is the yardstick of BenchmarkAdd: a buffered
// channel send and receive of the same entry.
func BenchmarkChanBaseline(b *testing.B) {
	es := benchEntries()
	ch := make(chan Entry, 1024)
	var sink Entry
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		ch <- Entry{Fields: es[i%benchKinds]}
		sink = <-ch
	}
	runtime.KeepAlive(sink)
}

// heapState is the live heap after a full collection.
type heapState struct {
	inuse, alloc, scan uint64
}

func readHeap() heapState {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	sample := []metrics.Sample{{Name: "/gc/scan/heap:bytes"}}
	metrics.Read(sample)
	var scan uint64
	if sample[0].Value.Kind() == metrics.KindUint64 {
		scan = sample[0].Value.Uint64()
	}
	return heapState{inuse: ms.HeapInuse, alloc: ms.HeapAlloc, scan: scan}
}

// BenchmarkAddMemory adds 1,000,000 entries (auto IDs, wall clock) to a new
// stream per iteration and reports the heap the stream holds per entry:
// bytes/entry from HeapInuse (spans in use), alloc-bytes/entry from
// HeapAlloc (live objects), and scan-bytes/entry from the runtime metric
// /gc/scan/heap:bytes (heap the collector must scan), each measured after
// a full collection before and after the adds.
func BenchmarkAddMemory(b *testing.B) {
	const n = 1_000_000
	es := benchEntries()
	var inuse, alloc, scan float64
	for range b.N {
		b.StopTimer()
		before := readHeap()
		b.StartTimer()
		s := NewStream()
		for i := range n {
			if _, err := s.Add(AddArgs{}, es[i%benchKinds]...); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		after := readHeap()
		if s.Len() != n {
			b.Fatalf("Len %d, want %d", s.Len(), n)
		}
		runtime.KeepAlive(s)
		inuse += float64(int64(after.inuse-before.inuse)) / n
		alloc += float64(int64(after.alloc-before.alloc)) / n
		scan += float64(int64(after.scan-before.scan)) / n
		b.StartTimer()
	}
	b.ReportMetric(inuse/float64(b.N), "bytes/entry")
	b.ReportMetric(alloc/float64(b.N), "alloc-bytes/entry")
	b.ReportMetric(scan/float64(b.N), "scan-bytes/entry")
}

// rangeStreams caches the streams of BenchmarkRangeSeek and
// BenchmarkRange, built once per process.
var (
	rangeStreamsMu sync.Mutex
	rangeStreams   = map[int]*Stream{}
)

func cachedStream(b *testing.B, n int) *Stream {
	rangeStreamsMu.Lock()
	defer rangeStreamsMu.Unlock()
	s, ok := rangeStreams[n]
	if !ok {
		start := time.Now()
		s = benchStream(n)
		b.Logf("built a stream of %d entries in %v", n, time.Since(start))
		rangeStreams[n] = s
	}
	return s
}

// idList is a list of ID strings in one allocation, cheap for the garbage
// collector however long it is.
type idList struct {
	text string
	ends []int32
}

func (l *idList) at(i int) string {
	i &= len(l.ends) - 1
	start := int32(0)
	if i > 0 {
		start = l.ends[i-1]
	}
	return l.text[start:l.ends[i]]
}

// randomStarts returns 1<<16 start IDs spread at random over the middle
// half of a stream of n entries.
func randomStarts(n int) *idList {
	r := rand.New(rand.NewPCG(3, 4))
	var text []byte
	ends := make([]int32, 1<<16)
	for i := range ends {
		text = benchID(n/4 + r.IntN(n/2)).AppendText(text)
		ends[i] = int32(len(text))
	}
	return &idList{string(text), ends}
}

// benchGarbage is where warmHeap drops its allocations.
var benchGarbage []byte

// warmHeap allocates and drops garbage until two garbage collections have
// run, so that the heap's pages up to the collector's goal are mapped. On
// the VM of BENCHMARKS.md the first touch of a page costs about 16 us (4 ns
// a byte), which would otherwise be charged to the first operations that
// allocate; a long-running process is past that point.
func warmHeap() {
	sample := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(sample)
	target := sample[0].Value.Uint64() + 2
	for sample[0].Value.Uint64() < target {
		for range 1024 {
			benchGarbage = make([]byte, 1024)
		}
		metrics.Read(sample)
	}
	benchGarbage = nil
}

// rangeSeekStreams returns the streams of BenchmarkRangeSeek, of 10k and
// 10M entries. Both are built before either is measured, so that both
// sizes run with the same heap and hence the same garbage collection rate.
var rangeSeekStreams = sync.OnceValues(func() (*Stream, *Stream) {
	small := benchStream(10_000)
	start := time.Now()
	large := benchStream(10_000_000)
	rangeSeekBuild = time.Since(start)
	return small, large
})

// rangeSeekBuild is how long building the 10M stream took.
var rangeSeekBuild time.Duration

// rangeSeek runs Range(start, "+", 10) for the starts i to i+n-1 and
// returns the time taken.
func rangeSeek(b *testing.B, s *Stream, starts *idList, i, n int) time.Duration {
	start := time.Now()
	for j := i; j < i+n; j++ {
		es, err := s.Range(starts.at(j), "+", 10)
		if err != nil || len(es) != 10 {
			b.Fatalf("Range: %d entries, %v", len(es), err)
		}
	}
	return time.Since(start)
}

// BenchmarkRangeSeek measures Range(start, "+", 10) with start an ID from
// the middle of the stream, changing at random between iterations, at
// 10,000 and at 10,000,000 entries. The 10M case also runs, untimed and
// in alternation with its own chunks, the 10k case with other start IDs,
// and reports the ratio of the two times as x-10k, and the time it took to
// build the 10M stream (with Add) as build-s.
func BenchmarkRangeSeek(b *testing.B) {
	small, large := rangeSeekStreams()
	b.Run("10k", func(b *testing.B) {
		starts := randomStarts(10_000)
		warmHeap()
		b.ReportAllocs()
		b.ResetTimer()
		rangeSeek(b, small, starts, 0, b.N)
	})
	b.Run("10M", func(b *testing.B) {
		const chunk = 1 << 11
		starts, smallStarts := randomStarts(10_000_000), randomStarts(10_000)
		warmHeap()
		var tl, ts time.Duration
		b.ReportAllocs()
		b.ResetTimer()
		for done := 0; done < b.N; done += chunk {
			n := min(chunk, b.N-done)
			tl += rangeSeek(b, large, starts, done, n)
			b.StopTimer()
			ts += rangeSeek(b, small, smallStarts, done+chunk/2, n)
			b.StartTimer()
		}
		b.StopTimer()
		b.ReportMetric(float64(tl)/float64(ts), "x-10k")
		b.ReportMetric(rangeSeekBuild.Seconds(), "build-s")
	})
}

// BenchmarkRange measures Range from a random start in a stream of 100,000
// entries for several counts; allocs/op stays constant (3).
func BenchmarkRange(b *testing.B) {
	const n = 100_000
	s := cachedStream(b, n)
	starts := randomStarts(n)
	for _, count := range []int{1, 10, 100} {
		b.Run("count-"+strconv.Itoa(count), func(b *testing.B) {
			warmHeap()
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				es, err := s.Range(starts.at(i), "+", count)
				if err != nil || len(es) != count {
					b.Fatalf("Range: %d entries, %v", len(es), err)
				}
			}
		})
	}
}

// BenchmarkRevRange is BenchmarkRange's count-10 case in descending order.
func BenchmarkRevRange(b *testing.B) {
	const n = 100_000
	s := cachedStream(b, n)
	starts := randomStarts(n)
	warmHeap()
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		es, err := s.RevRange(starts.at(i), "-", 10)
		if err != nil || len(es) != 10 {
			b.Fatalf("RevRange: %d entries, %v", len(es), err)
		}
	}
}

// BenchmarkDelete deletes one entry per operation, by ID, in random order,
// from a stream of b.N entries (built untimed).
func BenchmarkDelete(b *testing.B) {
	s := benchStream(b.N)
	ids := make([]string, b.N)
	for i, j := range rand.New(rand.NewPCG(5, 6)).Perm(b.N) {
		ids[i] = benchID(j).String()
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		if n, err := s.Delete(ids[i]); err != nil || n != 1 {
			b.Fatalf("Delete(%s) = %d, %v", ids[i], n, err)
		}
	}
	b.StopTimer()
	if s.Len() != 0 {
		b.Fatalf("Len %d after deleting everything", s.Len())
	}
}

// BenchmarkAddTrim measures Add with a MaxLen trim of 1000 in the same
// call on a stream kept at about 1000 entries: /exact (MaxLen), /approx
// (~ MaxLen, whole blocks) and /none (no trim, a growing stream). Between
// chunks of these Adds, with the timer stopped, it runs as many plain Adds
// (BenchmarkAdd's op) on a growing stream of its own and reports the ratio
// of the two times as x-add, so that the ratio comes from one run.
func BenchmarkAddTrim(b *testing.B) {
	for _, tc := range []struct {
		name string
		trim TrimArgs
	}{
		{"exact", TrimArgs{Strategy: TrimMaxLen, MaxLen: 1000}},
		{"approx", TrimArgs{Strategy: TrimMaxLen, MaxLen: 1000, Approx: true}},
		{"none", TrimArgs{}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			const chunk = 1 << 14
			es := benchEntries()
			s, plain := NewStream(), NewStream()
			args := AddArgs{Trim: tc.trim}
			var trimmed, ref time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for done := 0; done < b.N; {
				n := min(chunk, b.N-done)
				trimmed += benchAdds(b, s, args, es, done, n)
				b.StopTimer()
				ref += benchAdds(b, plain, AddArgs{}, es, done, n)
				b.StartTimer()
				done += n
			}
			b.StopTimer()
			b.ReportMetric(float64(trimmed)/float64(ref), "x-add")
			if l := s.Len(); tc.trim.Strategy != TrimNone && (l < 1000 && b.N >= 1000 || l > 1000+store.BlockMaxEntries) {
				b.Fatalf("Len %d after trimming to ~1000", l)
			}
		})
	}
}

// benchAdds adds entries i to i+n-1 of es (cycled) to s with args and
// returns the time taken.
func benchAdds(b *testing.B, s *Stream, args AddArgs, es [][]Field, i, n int) time.Duration {
	start := time.Now()
	for j := i; j < i+n; j++ {
		if _, err := s.Add(args, es[j%benchKinds]...); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start)
}

// BenchmarkReadWake measures the latency from the start of an Add to the
// moment a reader blocked in Read on the same stream has its entry. A
// reader goroutine blocks in Read; once it is parked among the stream's
// waiters the benchmark notes the time and calls Add; the reader notes the
// time when Read returns. It reports the median and 99th percentile.
func BenchmarkReadWake(b *testing.B) {
	es := benchEntries()
	s := NewStream()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	woke := make(chan time.Time)
	errc := make(chan error, 1)
	go func() {
		after := "0-0"
		for {
			got, err := s.Read(ctx, after, ReadArgs{Count: 1, Block: BlockForever})
			t := time.Now()
			if err != nil {
				errc <- err
				return
			}
			after = got[0].ID.String()
			select {
			case woke <- t:
			case <-ctx.Done():
				return
			}
		}
	}()
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		for !benchHasWaiter(s) {
			runtime.Gosched()
		}
		start := time.Now()
		if _, err := s.Add(AddArgs{}, es[i%benchKinds]...); err != nil {
			b.Fatal(err)
		}
		select {
		case t := <-woke:
			lat = append(lat, t.Sub(start))
		case err := <-errc:
			b.Fatal(err)
		}
	}
	b.StopTimer()
	cancel()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)/2].Nanoseconds()), "p50-ns")
	b.ReportMetric(float64(lat[len(lat)*99/100].Nanoseconds()), "p99-ns")
}

// benchHasWaiter reports whether a reader is blocked on s.
func benchHasWaiter(s *Stream) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.waiters.ws) > 0
}
