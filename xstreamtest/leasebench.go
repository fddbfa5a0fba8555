package xstreamtest

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xstreamgo/xstream"
)

// RunLeaseWorkerBenchmarks runs BenchLeaseWorkers as the sub-benchmarks
// "<kind>/shards=S/workers=W" for 1 and 4 shards and 1 and 2 workers,
// each on a sharded stream of S shards that newStream makes, with the
// lease tables (one per application) it returns.
func RunLeaseWorkerBenchmarks(b *testing.B, kind string, newStream func(b *testing.B, shards int) (xstream.ShardedEngine, func(app string) xstream.LeaseTable)) {
	for _, shards := range []int{1, 4} {
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/shards=%d/workers=%d", kind, shards, workers), func(b *testing.B) {
				e, tables := newStream(b, shards)
				BenchLeaseWorkers(b, e, tables, workers)
			})
		}
	}
}

// BenchLeaseWorkers measures how many records per second go through lease
// workers (xstream.Worker) against the parent-before-child reader on the
// same stream, in one run: it puts b.N records of 64 partition keys into
// e (PutRecords, 500 at a time, untimed), reads them all with a reader
// (NewReader, Read with Count 1000), and processes them all with
// workers xstream.Workers sharing a new table from newTable (of an
// application of its own each time), whose
// processors count the records and checkpoint after each batch of 1000:
// three times each, alternating, after an untimed reading. The workers'
// time runs from the first ProcessRecords call to the one that completes
// b.N (their start, a renewal period, is left out). It reports the
// medians: reader-rec/s, worker-rec/s and worker/reader (the ratio of
// the two), and ns/op for the workers. The benchmark's own timer runs
// over the reader and the workers, their start included, so that b.N
// grows with the time they take.
func BenchLeaseWorkers(b *testing.B, e xstream.ShardedEngine, newTable func(app string) xstream.LeaseTable, workers int) {
	ctx := context.Background()
	b.StopTimer()
	batch := make([]xstream.PutRecordsEntry, 0, 500)
	for i := 0; i < b.N; i++ {
		batch = append(batch, xstream.PutRecordsEntry{PartitionKey: "k" + strconv.Itoa(i%64), Fields: xstream.Fields("n", strconv.Itoa(i))})
		if len(batch) == cap(batch) || i == b.N-1 {
			if _, failed, err := e.PutRecords(ctx, batch); err != nil || failed > 0 {
				b.Fatalf("PutRecords: %d failed, %v", failed, err)
			}
			batch = batch[:0]
		}
	}

	// Rounds of a reader pass and a workers pass, after an untimed
	// reading that grows the heap to what reading the stream takes
	// (whichever came first would pay for it: fresh pages cost about
	// 4 ns a byte here), each pass after a collection; the medians count.
	readAll(b, e, ctx)
	b.StartTimer()
	var readers, works []time.Duration
	for round := range benchRounds {
		runtime.GC()
		start := time.Now()
		readAll(b, e, ctx)
		readers = append(readers, time.Since(start))
		runtime.GC()
		works = append(works, processAll(b, e, newTable("bench"+strconv.Itoa(round)), workers, round))
	}
	slices.Sort(readers)
	slices.Sort(works)
	reader, work := readers[benchRounds/2], works[benchRounds/2]
	b.ReportMetric(float64(b.N)/reader.Seconds(), "reader-rec/s")
	b.ReportMetric(float64(b.N)/work.Seconds(), "worker-rec/s")
	b.ReportMetric(reader.Seconds()/work.Seconds(), "worker/reader")
	b.ReportMetric(float64(work.Nanoseconds())/float64(b.N), "ns/op")
}

// benchRounds is how many times BenchLeaseWorkers times each side.
const benchRounds = 3

// processAll processes the whole stream with workers sharing table, and
// returns the time from their first ProcessRecords call to the one that
// completed the stream.
func processAll(b *testing.B, e xstream.ShardedEngine, table xstream.LeaseTable, workers, round int) time.Duration {
	wctx, cancel := context.WithCancel(context.Background())
	var count atomic.Int64
	var first, last atomic.Int64 // Unix ns
	var once sync.Once
	all := make(chan struct{})
	proc := func(string) xstream.ShardProcessor {
		return &countProc{count: &count, first: &first, want: int64(b.N), done: func() {
			once.Do(func() { last.Store(time.Now().UnixNano()); close(all) })
		}}
	}
	var wg sync.WaitGroup
	for i := range workers {
		w, err := xstream.NewWorker(e, table, proc, xstream.WorkerOptions{ID: "bench" + strconv.Itoa(round) + "." + strconv.Itoa(i),
			LeaseDuration: 3 * time.Second, RenewPeriod: 100 * time.Millisecond, IdleWait: 10 * time.Millisecond})
		if err != nil {
			b.Fatal(err)
		}
		wg.Go(func() { w.Run(wctx) })
	}
	<-all
	cancel()
	wg.Wait()
	return time.Duration(last.Load() - first.Load())
}

// countProc counts records and checkpoints after each batch.
type countProc struct {
	count, first *atomic.Int64
	want         int64
	done         func()
}

func (p *countProc) Initialize(context.Context, string, xstream.Checkpoint) error { return nil }

func (p *countProc) ProcessRecords(ctx context.Context, records []xstream.Record, cp *xstream.Checkpointer, _ int64) error {
	p.first.CompareAndSwap(0, time.Now().UnixNano())
	if p.count.Add(int64(len(records))) >= p.want {
		p.done()
	}
	return cp.Checkpoint(ctx)
}

func (p *countProc) ShardEnded(ctx context.Context, cp *xstream.Checkpointer) error {
	return cp.Checkpoint(ctx)
}

func (p *countProc) LeaseLost(context.Context) {}

func (p *countProc) Shutdown(ctx context.Context, cp *xstream.Checkpointer) { cp.Checkpoint(ctx) }

// readAll reads the whole stream with a new reader.
func readAll(b *testing.B, e xstream.ShardedEngine, ctx context.Context) {
	r, err := e.NewReader(ctx)
	if err != nil {
		b.Fatal(err)
	}
	for n := 0; n < b.N; {
		recs, err := r.Read(ctx, xstream.ReadArgs{Count: 1000, Block: time.Second})
		if err != nil {
			b.Fatal(err)
		}
		n += len(recs)
	}
}
