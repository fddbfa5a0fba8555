package server

import (
	"bufio"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
)

// BenchmarkLoop compares, in the same run, a server with one event loop
// (Options.EventLoops 1; on systems other than Linux it has none) and one
// with a goroutine per client, under unpipelined requests from 50 clients
// at once over loopback, as redis-benchmark -c 50 sends them: ns/op is
// per request, of all the clients together. The clients are goroutines of
// the same process, so their own wake-ups are counted too (the
// redis-benchmark runs of BENCHMARKS.md have none).
//
//	go test -run '^$' -bench BenchmarkLoop -count 5
func BenchmarkLoop(b *testing.B) {
	reqs := []struct{ name, req string }{
		{"XADD", resp("XADD", "s", "*", "sensor-id", "1234", "temperature", "19.8")},
		{"XRANGE10", resp("XRANGE", "s", "-", "+", "COUNT", "10")},
	}
	for _, r := range reqs {
		for _, loops := range []int{-1, 1} {
			name := r.name + "/goroutines"
			if loops > 0 {
				name = r.name + "/loop"
			}
			b.Run(name, func(b *testing.B) { benchLoop(b, loops, r.req) })
		}
	}
}

func benchLoop(b *testing.B, loops int, req string) {
	srv := New(Options{EventLoops: loops, Logger: slog.New(slog.DiscardHandler)})
	if err := srv.Start(); err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	const clients = 50
	conns := make([]net.Conn, clients)
	for i := range conns {
		nc, err := net.Dial("tcp", srv.Addr())
		if err != nil {
			b.Fatal(err)
		}
		defer nc.Close()
		conns[i] = nc
	}
	fill := bufio.NewReader(conns[0])
	for range 100 {
		conns[0].Write([]byte(resp("XADD", "s", "*", "f", "v")))
		if _, err := readReply(fill); err != nil {
			b.Fatal(err)
		}
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	b.ResetTimer()
	for _, nc := range conns {
		wg.Go(func() {
			rd := bufio.NewReader(nc)
			for next.Add(1) <= int64(b.N) {
				if _, err := nc.Write([]byte(req)); err != nil {
					b.Error(err)
					return
				}
				r, err := readReply(rd)
				if err != nil || r.kind == '-' {
					b.Errorf("reply %+v, %v", r, err)
					return
				}
			}
		})
	}
	wg.Wait()
}
