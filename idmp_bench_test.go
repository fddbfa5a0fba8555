package xstream

import (
	"fmt"
	"runtime"
	"testing"
	"time"
)

// BenchmarkAddIdempotent measures idempotent adds against plain ones in
// the same run: each sub-benchmark times chunks of its adds on one stream
// interleaved with as many plain Adds (AddArgs{}) of the same fields on
// another, and reports the ratio (x-plain) and the plain time
// (plain-ns/op). new: IDMP adds of new idempotent IDs of 10 producers, so
// each producer holds the max size (100) and every add evicts one;
// repeat: IDMP adds that repeat a remembered ID (nothing is added); auto:
// IDMPAUTO adds of new field values (the hash of the fields each time).
// The memory sub-benchmark remembers b.N IDs of 16 bytes (the length of
// IDMPAUTO's) for up to 10 producers at the max size 10000, and reports
// the heap held per remembered ID (B/tracked-id); its ns/op includes
// making each ID's string.
func BenchmarkAddIdempotent(b *testing.B) {
	const kinds = 1 << 12
	iids := make([]string, kinds)
	values := make([]string, kinds)
	for i := range iids {
		iids[i] = fmt.Sprintf("req-%012d", i)
		values[i] = fmt.Sprintf("%d.5", i)
	}
	producers := [10]string{"p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9"}
	modes := []struct {
		name string
		args func(i int) (AddArgs, []Field)
	}{
		{"new", func(i int) (AddArgs, []Field) {
			return idem(producers[i%10], iids[i%kinds]), reading("1234", values[i%kinds])
		}},
		{"repeat", func(i int) (AddArgs, []Field) {
			return idem(producers[i%10], "req-once"), reading("1234", values[i%kinds])
		}},
		{"auto", func(i int) (AddArgs, []Field) {
			return idemAuto(producers[i%10]), reading(values[(i/kinds)%kinds], values[i%kinds])
		}},
	}
	for _, m := range modes {
		b.Run(m.name, func(b *testing.B) {
			const chunk = 1 << 12
			s, plain := NewStream(), NewStream()
			var idt, pt time.Duration
			b.ReportAllocs()
			b.ResetTimer()
			for done := 0; done < b.N; {
				n := min(chunk, b.N-done)
				start := time.Now()
				for i := done; i < done+n; i++ {
					args, fs := m.args(i)
					if _, err := s.Add(args, fs...); err != nil {
						b.Fatal(err)
					}
				}
				idt += time.Since(start)
				b.StopTimer()
				start = time.Now()
				for i := done; i < done+n; i++ {
					_, fs := m.args(i)
					if _, err := plain.Add(AddArgs{}, fs...); err != nil {
						b.Fatal(err)
					}
				}
				pt += time.Since(start)
				b.StartTimer()
				done += n
			}
			b.StopTimer()
			b.ReportMetric(float64(idt)/float64(pt), "x-plain")
			b.ReportMetric(float64(pt.Nanoseconds())/float64(b.N), "plain-ns/op")
			runtime.KeepAlive(s)
		})
	}
	b.Run("memory", func(b *testing.B) {
		s := NewStream()
		if err := s.SetIdempotence(IdempotenceConfig{MaxSize: MaxIdempotenceMaxSize}); err != nil {
			b.Fatal(err)
		}
		before := heapInUse()
		b.ResetTimer()
		for i := range b.N {
			k := idmpKey{producers[i/MaxIdempotenceMaxSize%10], fmt.Sprintf("%016d", i)}
			s.mu.Lock()
			s.idmpTrackLocked(k, ID{1, uint64(i)}, 1)
			s.mu.Unlock()
		}
		b.StopTimer()
		b.ReportMetric(float64(heapInUse()-before)/float64(s.IdempotenceInfo().Tracked), "B/tracked-id")
		runtime.KeepAlive(s)
	})
}

// heapInUse returns the live heap after a collection.
func heapInUse() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
