package server

import (
	"strconv"
	"testing"

	"github.com/xstreamgo/xstream"
)

// BenchmarkServeSlowlog is BenchmarkServe's PING and XRANGE-COUNT-10
// with the slow log off (-1) and at Redis's default threshold (10000 µs;
// no command is slow enough to be logged). Commands are timed either
// way, for INFO commandstats (slowlog.go's Timing).
// Compare with BenchmarkServe of a build without the slow log:
//
//	go test -run '^$' -bench 'BenchmarkServeSlowlog|BenchmarkServe/(PING|XRANGE-COUNT-10)$'
func BenchmarkServeSlowlog(b *testing.B) {
	for _, cmd := range []struct {
		name string
		req  string
		fill bool
	}{
		{"PING", resp("PING"), false},
		{"XRANGE-COUNT-10", resp("XRANGE", "bench", "50000", "+", "COUNT", "10"), true},
	} {
		for _, tc := range []struct {
			name      string
			threshold int64
		}{{"off", -1}, {"default", 10000}} {
			b.Run(cmd.name+"/"+tc.name, func(b *testing.B) {
				srv := New(Options{})
				if cmd.fill {
					s := srv.DB(0).Stream("bench")
					for i := 1; i <= 100_000; i++ {
						s.Add(xstream.AddArgs{ID: strconv.Itoa(i) + "-0"}, xstream.Fields("sensor-id", "1234", "temperature", "19.8")...)
					}
				}
				srv.slow.threshold.Store(tc.threshold)
				serveMemory(b, srv, []byte(cmd.req), false)
				srv.cancel()
			})
		}
	}
}
