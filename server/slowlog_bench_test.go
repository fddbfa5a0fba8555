package server

import "testing"

// BenchmarkServeSlowlog is BenchmarkServe's PING under each timing of the
// slow log: off (-1), coarse (10000 µs, Redis's default: the coarse clock
// and its ticker) and precise (5000 µs: two clock reads per command; no
// command is slow enough to be logged). Compare with BenchmarkServe/PING
// of a build without the slow log:
//
//	go test -run '^$' -bench 'BenchmarkServeSlowlog|BenchmarkServe/PING$'
func BenchmarkServeSlowlog(b *testing.B) {
	for _, tc := range []struct {
		name      string
		threshold int64
	}{{"off", -1}, {"coarse", 10000}, {"precise", 5000}} {
		b.Run(tc.name, func(b *testing.B) {
			srv := New(Options{})
			srv.slow.threshold.Store(tc.threshold)
			serveMemory(b, srv, []byte(resp("PING")), false)
			srv.cancel()
			srv.slow.wg.Wait()
		})
	}
}
