package xstream_test

import (
	"fmt"
	"testing"

	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/xstreamtest"
)

// BenchmarkLeaseWorkers: records per second through lease workers in
// this process against the parent-before-child reader on the same
// in-memory sharded stream (see xstreamtest.BenchLeaseWorkers).
func BenchmarkLeaseWorkers(b *testing.B) {
	for _, shards := range []int{1, 4} {
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("local/shards=%d/workers=%d", shards, workers), func(b *testing.B) {
				ss, err := xstream.NewShardedStream(xstream.ShardedArgs{Shards: shards})
				if err != nil {
					b.Fatal(err)
				}
				xstreamtest.BenchLeaseWorkers(b, xstream.LocalSharded(ss), func(string) xstream.LeaseTable { return xstream.NewLeaseTable() }, workers)
			})
		}
	}
}
