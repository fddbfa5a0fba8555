package xstream

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/xstreamgo/xstream/internal/wal"
)

// Benchmarks of durable DBs. Disks here are noisy (an fdatasync takes
// 0.2 to 60 ms), so each reports a ratio to a baseline measured in the
// same run, interleaved with it.

// benchRecord is the framed size of the log record of one benchmark Add
// (object number, effect, ID delta, two values against the block's names).
var benchRecord = make([]byte, 32)

// fsyncRound writes n records of benchRecord's size to f, each followed
// by an fdatasync, and returns the time it took.
func fsyncRound(b *testing.B, seg *wal.Segment, n int) time.Duration {
	frame := wal.AppendFrame(nil, benchRecord)
	start := time.Now()
	for range n {
		if _, err := seg.Write(frame); err != nil {
			b.Fatal(err)
		}
		if err := seg.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	return time.Since(start)
}

// BenchmarkFsyncBaseline writes a record of the size of an Add's and
// fdatasyncs it, in a loop: the physical floor of a durable Add under
// SyncAlways on this machine.
func BenchmarkFsyncBaseline(b *testing.B) {
	seg, err := wal.CreateSegment(b.TempDir(), 1)
	if err != nil {
		b.Fatal(err)
	}
	defer seg.Close()
	b.ResetTimer()
	fsyncRound(b, seg, b.N)
}

// BenchmarkDurableAdd adds entries to a durable DB from n writers (each
// to its own stream) under each sync policy. It reports adds/fsync, and
// for one writer the ratio to a baseline interleaved with the adds: under
// always to BenchmarkFsyncBaseline's write and fdatasync (x-fsync), under
// everysec and no to an in-memory Add (x-mem).
func BenchmarkDurableAdd(b *testing.B) {
	for _, p := range []SyncPolicy{SyncAlways, SyncEverySecond, SyncNo} {
		for _, n := range []int{1, 64, 256} {
			b.Run(fmt.Sprintf("%s/writers=%d", p, n), func(b *testing.B) { benchDurableAdd(b, p, n) })
		}
	}
}

func benchDurableAdd(b *testing.B, p SyncPolicy, writers int) {
	dir := b.TempDir()
	db, err := Open(filepath.Join(dir, "db"), WithSync(p), WithAutoSnapshot(-1))
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	es := benchEntries()
	streams := make([]*Stream, writers)
	for i := range streams {
		streams[i] = db.Stream(fmt.Sprintf("s%d", i))
	}
	mem := NewStream()
	var seg *wal.Segment
	if p == SyncAlways && writers == 1 {
		if seg, err = wal.CreateSegment(dir, 1); err != nil {
			b.Fatal(err)
		}
		defer seg.Close()
	}
	j := db.dur.j
	syncs0 := j.syncs.Load()
	b.ReportAllocs()
	b.ResetTimer()
	if writers == 1 {
		// Chunks of adds interleaved with chunks of the baseline.
		chunk := 1 << 12
		if p == SyncAlways {
			chunk = 16
		}
		var add, base time.Duration
		for done := 0; done < b.N; {
			n := min(chunk, b.N-done)
			start := time.Now()
			for i := done; i < done+n; i++ {
				if _, err := streams[0].Add(AddArgs{}, es[i%benchKinds]...); err != nil {
					b.Fatal(err)
				}
			}
			add += time.Since(start)
			done += n
			b.StopTimer()
			if seg != nil {
				base += fsyncRound(b, seg, n)
			} else {
				start := time.Now()
				for i := range n {
					mem.Add(AddArgs{}, es[i%benchKinds]...)
				}
				base += time.Since(start)
			}
			b.StartTimer()
		}
		b.StopTimer()
		if seg != nil {
			b.ReportMetric(float64(add)/float64(base), "x-fsync")
		} else {
			b.ReportMetric(float64(add)/float64(base), "x-mem")
		}
	} else {
		var next atomic.Int64
		var wg sync.WaitGroup
		for w := range writers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				s := streams[w]
				for i := next.Add(1); i <= int64(b.N); i = next.Add(1) {
					if _, err := s.Add(AddArgs{}, es[i%benchKinds]...); err != nil {
						b.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		b.StopTimer()
	}
	if syncs := j.syncs.Load() - syncs0; syncs > 0 {
		b.ReportMetric(float64(b.N)/float64(syncs), "adds/fsync")
	}
	runtime.KeepAlive(mem)
}

// BenchmarkRecovery opens a durable DB of 10M entries (a snapshot of 9M
// and a log of 1M) and reports the seconds and MB/s of the open, the disk
// bytes per entry and the heap bytes per entry of the recovered DB. The DB
// is built once per process.
func BenchmarkRecovery(b *testing.B) {
	for _, n := range []int{1_000_000, 10_000_000} {
		if testing.Short() && n > 1_000_000 {
			continue
		}
		b.Run(fmt.Sprintf("entries=%dM", n/1_000_000), func(b *testing.B) { benchRecovery(b, n) })
	}
}

func benchRecovery(b *testing.B, n int) {
	dir := filepath.Join(b.TempDir(), "db")
	db, err := Open(dir, WithSync(SyncNo), WithAutoSnapshot(-1))
	if err != nil {
		b.Fatal(err)
	}
	es := benchEntries()
	s := db.Stream("sensors")
	logged := n / 10
	for i := range n {
		if i == n-logged {
			if err := db.Snapshot(); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := s.Add(AddArgs{}, es[i%benchKinds]...); err != nil {
			b.Fatal(err)
		}
	}
	if err := db.Close(); err != nil {
		b.Fatal(err)
	}
	var disk int64
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if fi, err := e.Info(); err == nil {
			disk += fi.Size()
		}
	}
	var heap float64
	b.ResetTimer()
	for range b.N {
		before := readHeap()
		b.StartTimer()
		db, err := Open(dir, WithSync(SyncNo), WithAutoSnapshot(-1))
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		after := readHeap()
		heap += float64(int64(after.inuse-before.inuse)) / float64(n)
		if got := db.Stream("sensors").Len(); got != int64(n) {
			b.Fatalf("recovered %d entries, want %d", got, n)
		}
		if err := db.Close(); err != nil {
			b.Fatal(err)
		}
	}
	sec := b.Elapsed().Seconds() / float64(b.N)
	b.ReportMetric(sec, "s/open")
	b.ReportMetric(float64(disk)/1e6/sec, "MB/s")
	b.ReportMetric(float64(disk)/float64(n), "disk-bytes/entry")
	b.ReportMetric(heap/float64(b.N), "heap-bytes/entry")
}
