package server

import (
	"testing"
	"time"

	"github.com/xstreamgo/xstream"
)

// BenchmarkClock compares the server's clock, which every XADD * and
// group command reads, with time.Now, what the DBs read before SetTime
// and FastForward existed (the core's own wall clock, time.Since a cached
// reading, is cheaper still), with the clock that times each command
// (slowClock) and with the failure check every command makes:
//
//	go test -run '^$' -bench BenchmarkClock -count 5
func BenchmarkClock(b *testing.B) {
	var sink int64
	b.Run("time.Now", func(b *testing.B) {
		for b.Loop() {
			sink += time.Now().UnixMilli()
		}
	})
	b.Run("Server.now", func(b *testing.B) {
		s := New(Options{})
		for b.Loop() {
			sink += s.now().UnixMilli()
		}
	})
	b.Run("Server.now-FastForward", func(b *testing.B) {
		s := New(Options{})
		s.FastForward(time.Hour)
		for b.Loop() {
			sink += s.now().UnixMilli()
		}
	})
	b.Run("slowClock", func(b *testing.B) { // what times each command (slowlog.go)
		s := New(Options{})
		for b.Loop() {
			ns, _ := s.slowClock()
			sink += ns
		}
	})
	b.Run("faults.failure-none-set", func(b *testing.B) {
		s := New(Options{})
		cmd := commands["xadd"]
		for b.Loop() {
			if _, ok := s.faults.failure(cmd); ok {
				sink++
			}
		}
	})
	// What XADD * costs a stream with the core's own wall clock (before)
	// and with the server's clock (now).
	fields := xstream.Fields("sensor-id", "1234", "temperature", "19.8")
	b.Run("Add-wall-clock", func(b *testing.B) {
		st := xstream.NewStream()
		for b.Loop() {
			st.Add(xstream.AddArgs{}, fields...)
		}
	})
	b.Run("Add-server-clock", func(b *testing.B) {
		st := xstream.NewStream(xstream.WithClock(New(Options{}).now))
		for b.Loop() {
			st.Add(xstream.AddArgs{}, fields...)
		}
	})
	_ = sink
}
