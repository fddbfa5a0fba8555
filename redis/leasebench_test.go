package xredis_test

import (
	"fmt"
	"testing"

	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/xstreamtest"
)

// BenchmarkLeaseWorkers: records per second through lease workers (in
// this process, their leases in the cluster) against the
// parent-before-child reader on the same sharded stream of the 3-master
// cluster the tests start (see xstreamtest.BenchLeaseWorkers).
func BenchmarkLeaseWorkers(b *testing.B) {
	for _, shards := range []int{1, 4} {
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("cluster/shards=%d/workers=%d", shards, workers), func(b *testing.B) {
				s, _ := newSharded(b, "cluster", xstream.ShardedArgs{Shards: shards})
				xstreamtest.BenchLeaseWorkers(b, s, func(app string) xstream.LeaseTable {
					lt, err := s.LeaseTable(app)
					if err != nil {
						b.Fatal(err)
					}
					return lt
				}, workers)
			})
		}
	}
}
