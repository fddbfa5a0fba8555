package xstream

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"
)

// BenchmarkLocal measures what the in-process adapter adds to the DB's
// calls: each operation runs through Local's Engine (the timed side, whose
// ns/op and allocs/op the benchmark reports) and, in alternating chunks
// with the timer stopped, as the direct call by name on a DB of its own
// (db.Add; db.Lookup and Stream.Range; db.ReadGroup, db.Lookup and
// Stream.Ack). It reports the ratio of the two times as x-direct (1.05:
// the adapter adds 5%) and the direct time as direct-ns/op, so that the
// ratio comes from one run and the machine's noise hits both sides alike.
func BenchmarkLocal(b *testing.B) {
	ctx := context.Background()
	es := benchEntries()

	b.Run("Add", func(b *testing.B) {
		e, direct := Local(NewDB()), NewDB()
		interleave(b, 1024, func(i int) {
			if _, err := e.Add(ctx, "s", AddArgs{}, es[i%benchKinds]...); err != nil {
				b.Fatal(err)
			}
		}, func(i int) {
			if _, err := direct.Add("s", AddArgs{}, es[i%benchKinds]...); err != nil {
				b.Fatal(err)
			}
		})
	})

	b.Run("Range-count-10", func(b *testing.B) {
		const n = 100_000
		db := NewDB(WithClock(benchClock(benchPerMs)))
		for i := range n {
			if _, err := db.Add("s", AddArgs{}, es[i%benchKinds]...); err != nil {
				b.Fatal(err)
			}
		}
		e := Local(db)
		starts := randomStarts(n)
		warmHeap()
		interleave(b, 256, func(i int) {
			if got, err := e.Range(ctx, "s", starts.at(i), "+", 10); err != nil || len(got) != 10 {
				b.Fatal(len(got), err)
			}
		}, func(i int) {
			s, _ := db.Lookup("s")
			if got, err := s.Range(starts.at(i), "+", 10); err != nil || len(got) != 10 {
				b.Fatal(len(got), err)
			}
		})
	})

	// One op is a ReadGroup ">" of 10 entries and the Ack of their IDs, on
	// a stream of 100,000 entries (IDs 1-0 ... 100000-0, as strings in
	// idStr) that starts over when consumed.
	b.Run("ReadGroup-Ack", func(b *testing.B) {
		const n, batch = 100_000, 10
		idStr := make([]string, n+1)
		for i := 1; i <= n; i++ {
			idStr[i] = strconv.Itoa(i) + "-0"
		}
		newDB := func() *DB {
			db := NewDB()
			for i := 1; i <= n; i++ {
				if _, err := db.Add("s", AddArgs{ID: idStr[i]}, es[i%benchKinds]...); err != nil {
					b.Fatal(err)
				}
			}
			if err := db.CreateGroup("s", "g", "0", GroupOptions{}); err != nil {
				b.Fatal(err)
			}
			return db
		}
		e, direct := Local(newDB()), newDB()
		viaIDs, directIDs := make([]string, 0, batch), make([]string, 0, batch)
		args := ReadGroupArgs{Count: batch}
		// consume reads and acknowledges a batch, or starts the group over.
		consume := func(res []StreamEntries, err error, ids *[]string, ack func(...string) (int64, error), reset func() error) {
			if err != nil {
				b.Fatal(err)
			}
			if len(res) == 0 {
				if err := reset(); err != nil {
					b.Fatal(err)
				}
				return
			}
			*ids = (*ids)[:0]
			for _, en := range res[0].Entries {
				*ids = append(*ids, idStr[en.ID.Ms])
			}
			if got, err := ack(*ids...); err != nil || got != int64(len(*ids)) {
				b.Fatal(got, err)
			}
		}
		interleave(b, 128, func(int) {
			res, err := e.ReadGroup(ctx, "g", "c", args, "s", ">")
			consume(res, err, &viaIDs,
				func(ids ...string) (int64, error) { return e.Ack(ctx, "s", "g", ids...) },
				func() error { return e.SetGroupID(ctx, "s", "g", "0", GroupOptions{}) })
		}, func(int) {
			res, err := direct.ReadGroup(ctx, "g", "c", args, "s", ">")
			s, _ := direct.Lookup("s")
			consume(res, err, &directIDs,
				func(ids ...string) (int64, error) { return s.Ack("g", ids...) },
				func() error { return s.SetGroupID("g", "0", GroupOptions{}) })
		})
	})
}

// interleave runs via for operations 0 ... b.N-1 in chunks, timed, and
// for each chunk direct for as many operations with the timer stopped. The
// chunks go via, direct, direct, via, via, direct, ...: each side runs two
// chunks in a row, after one stop or start of the timer (which reads the
// memory statistics, stopping the world), so that neither runs more often
// in the other's wake or in its own. It reports via's total time over
// direct's as x-direct, the median of the chunks' ratios as x-direct-p50
// (which a burst of other work on the machine during a few chunks does
// not move), and direct's time per operation as direct-ns/op.
func interleave(b *testing.B, chunk int, via, direct func(i int)) {
	var tv, td time.Duration
	var ratios []float64
	run := func(fn func(int), from, n int) time.Duration {
		start := time.Now()
		for i := from; i < from+n; i++ {
			fn(i)
		}
		return time.Since(start)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for k, done := 0, 0; done < b.N; k++ {
		n := min(chunk, b.N-done)
		var v, d time.Duration
		if k%2 == 0 {
			v = run(via, done, n)
			b.StopTimer()
			d = run(direct, done, n)
		} else {
			d = run(direct, done, n)
			b.StartTimer()
			v = run(via, done, n)
		}
		tv, td = tv+v, td+d
		ratios = append(ratios, float64(v)/float64(d))
		done += n
	}
	b.StopTimer()
	slices.Sort(ratios)
	b.ReportMetric(float64(tv)/float64(td), "x-direct")
	b.ReportMetric(ratios[len(ratios)/2], "x-direct-p50")
	b.ReportMetric(float64(td.Nanoseconds())/float64(b.N), "direct-ns/op")
}
