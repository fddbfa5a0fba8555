package xredis_test

import (
	"testing"

	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/xstreamtest"
)

// BenchmarkLeaseWorkers: records per second through lease workers (in
// this process, their leases in the cluster) against the
// parent-before-child reader on the same sharded stream of the 3-master
// cluster the tests start (see xstreamtest.BenchLeaseWorkers).
func BenchmarkLeaseWorkers(b *testing.B) {
	xstreamtest.RunLeaseWorkerBenchmarks(b, "cluster", func(b *testing.B, shards int) (xstream.ShardedEngine, func(string) xstream.LeaseTable) {
		s, _ := newSharded(b, "cluster", xstream.ShardedArgs{Shards: shards})
		return s, func(app string) xstream.LeaseTable {
			lt, err := s.LeaseTable(app)
			if err != nil {
				b.Fatal(err)
			}
			return lt
		}
	})
}
