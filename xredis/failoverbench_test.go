package xredis

import (
	"context"
	"testing"

	"github.com/redis/rueidis"
	"github.com/xstreamgo/xstream/server"
)

// BenchmarkFailoverClient: what the failover client (the copy of each
// command's arguments it keeps to send again) costs over the raw rueidis
// client, for one command (Do) and a pipeline of 10 (DoMulti, as
// PutRecords and AddBatch send), on xstream's server in this process.
// Compare allocs/op between raw and failover.
//
//	go test -run '^$' -bench BenchmarkFailoverClient -benchmem .
func BenchmarkFailoverClient(b *testing.B) {
	srv := server.RunT(b)
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{srv.Addr()}, DisableCache: true})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	fc := newFailoverClient(c, replicaWait{})
	ctx := context.Background()
	cmds := func(n int) []rueidis.Completed {
		out := make([]rueidis.Completed, n)
		for i := range out {
			out[i] = c.B().Xadd().Key("s").Id("*").FieldValue().FieldValue("a", "1").FieldValue("b", "2").Build()
		}
		return out
	}
	for _, cl := range []struct {
		name string
		c    rueidis.Client
	}{{"raw", c}, {"failover", fc}} {
		b.Run("Do/"+cl.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := cl.c.Do(ctx, cmds(1)[0]).Error(); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("DoMulti10/"+cl.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, r := range cl.c.DoMulti(ctx, cmds(10)...) {
					if err := r.Error(); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
