package xstream_test

import (
	"testing"

	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/xstreamtest"
)

// BenchmarkLeaseWorkers: records per second through lease workers in
// this process against the parent-before-child reader on the same
// in-memory sharded stream (see xstreamtest.BenchLeaseWorkers).
func BenchmarkLeaseWorkers(b *testing.B) {
	xstreamtest.RunLeaseWorkerBenchmarks(b, "local", func(b *testing.B, shards int) (xstream.ShardedEngine, func(string) xstream.LeaseTable) {
		ss, err := xstream.NewShardedStream(xstream.ShardedArgs{Shards: shards})
		if err != nil {
			b.Fatal(err)
		}
		return xstream.LocalSharded(ss), func(string) xstream.LeaseTable { return xstream.NewLeaseTable() }
	})
}
