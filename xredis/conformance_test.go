package xredis_test

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/xstreamgo/xstream/server"
	"github.com/xstreamgo/xstream/xredis"
	"github.com/xstreamgo/xstream/xstreamtest"
)

// TestConformance runs the core's conformance suite on each server, with
// the capabilities the engine found there: Redis 7.0 and Valkey 8.0 lack
// XNACK and XDELEX/XACKDEL, xstream's server has them. "+" in Read (Redis
// 7.4) works everywhere, being read with XREVRANGE, and dead letters are
// moved on the client side. The engine of each kind is shared by the
// suite's tests, each of which has a hash tag of its own, and streams in
// other slots for the reads over several slots.
func TestConformance(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			var (
				once sync.Once
				e    xredis.Engine
			)
			seq := 0
			factory := func(t *testing.T) xstreamtest.Target {
				once.Do(func() { e = newEngine(t, kind) })
				if t.Skipped() || e == nil {
					t.SkipNow()
				}
				seq++
				tag := fmt.Sprintf("conf%d.%d", keySeq.Add(1), seq)
				prefix := "{" + tag + "}:"
				used := map[uint16]bool{xredis.Slot(prefix): true}
				slotPrefixes := map[int]string{}
				return xstreamtest.Target{
					Engine: e,
					Prefix: prefix,
					SlotPrefix: func(i int) string {
						if p, ok := slotPrefixes[i]; ok {
							return p
						}
						for n := 0; ; n++ {
							p := "{" + tag + "." + strconv.Itoa(i) + "." + strconv.Itoa(n) + "}:"
							if s := xredis.Slot(p); !used[s] {
								used[s] = true
								slotPrefixes[i] = p
								return p
							}
						}
					},
				}
			}
			// The first engine is made inside a subtest; its cleanup
			// would close it at that subtest's end: make it here.
			e = newEngine(t, kind)
			once.Do(func() {})
			info := e.Server()
			xstreamtest.Run(t, factory, xstreamtest.Caps{
				Nack:        info.Nack,
				DeleteEx:    info.DeleteEx,
				DeadLetters: true,
				ReadLast:    true,
			})
		})
	}
}

// TestConformanceClock runs the suite on xstream's server with a clock
// that the suite moves (Target.Advance), for the cases of idle times and
// auto IDs that a real clock cannot check.
func TestConformanceClock(t *testing.T) {
	var (
		mu  sync.Mutex
		now = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	)
	srv := server.New(server.Options{Clock: func() time.Time {
		mu.Lock()
		defer mu.Unlock()
		return now
	}})
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	e, err := xredis.Dial(bg(), srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	xstreamtest.Run(t, func(t *testing.T) xstreamtest.Target {
		return xstreamtest.Target{
			Engine: e,
			Prefix: fmt.Sprintf("{clock%d}:", keySeq.Add(1)),
			Advance: func(d time.Duration) {
				mu.Lock()
				now = now.Add(d)
				mu.Unlock()
			},
		}
	}, xstreamtest.Caps{Nack: true, DeleteEx: true, DeadLetters: true, ReadLast: true})
}
