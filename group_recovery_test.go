package xstream

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCrashRecovery runs producers and a consumer group in which some
// consumers stop without acknowledging what they took; a reaper claims
// their idle entries with AutoClaim. In the end every entry is processed
// and acknowledged, and only entries of stopped consumers are processed
// twice. Time is synctest's: idle times are exact and nothing sleeps.
func TestCrashRecovery(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const (
			producers   = 3
			perProducer = 200
			total       = producers * perProducer
			minIdle     = 2 * time.Second
		)
		db := NewDB() // the clock is synctest's fake time.Now
		require.NoError(t, db.CreateGroup("jobs", "workers", "$", GroupOptions{MkStream: true}))
		s := db.Stream("jobs")
		ctx, cancel := context.WithCancel(context.Background())

		var (
			mu          sync.Mutex
			processedBy = map[string][]string{} // job → consumers that processed it
			stopped     = map[string]bool{}
			acked       atomic.Int64
			allDone     = make(chan struct{})
		)
		process := func(who string, es []Entry) {
			mu.Lock()
			defer mu.Unlock()
			for _, e := range es {
				assert.Len(t, e.Fields, 1)
				processedBy[e.Fields[0].Value] = append(processedBy[e.Fields[0].Value], who)
			}
		}
		ack := func(es []Entry) {
			ids := make([]string, len(es))
			for i, e := range es {
				ids[i] = e.ID.String()
			}
			n, err := s.Ack("workers", ids...)
			assert.NoError(t, err)
			if acked.Add(n) == total {
				close(allDone)
			}
		}

		var wg sync.WaitGroup
		// Workers; w1 and w3 stop for good after their first batch,
		// processing half of it (at least one entry) and acknowledging
		// none of it.
		for w := range 4 {
			name := fmt.Sprintf("w%d", w)
			crashes := w%2 == 1
			wg.Go(func() {
				for {
					es, err := s.ReadGroup(ctx, "workers", name, ">", ReadGroupArgs{Count: 7, Block: BlockForever})
					if err != nil {
						assert.ErrorIs(t, err, context.Canceled)
						return
					}
					if crashes {
						process(name, es[:(len(es)+1)/2])
						mu.Lock()
						stopped[name] = true
						mu.Unlock()
						return
					}
					process(name, es)
					ack(es)
				}
			})
		}
		synctest.Wait() // every worker is blocked in ReadGroup
		for p := range producers {
			wg.Go(func() {
				for i := range perProducer {
					_, err := db.Add("jobs", AddArgs{}, Field{"job", fmt.Sprintf("%d-%d", p, i)})
					assert.NoError(t, err)
					if i%50 == 0 {
						<-time.After(100 * time.Millisecond) // spread the load over time
					}
				}
			})
		}
		// The reaper claims entries idle for minIdle.
		wg.Go(func() {
			tick := time.NewTicker(time.Second)
			defer tick.Stop()
			cursor := "0"
			for {
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
				for {
					res, err := s.AutoClaim("workers", "reaper", minIdle, cursor, AutoClaimArgs{Count: 10})
					if !assert.NoError(t, err) {
						return
					}
					for _, e := range res.Entries {
						rows, err := s.PendingRange("workers", PendingArgs{Start: e.ID.String(), End: e.ID.String()})
						if assert.NoError(t, err) && assert.Len(t, rows, 1) {
							assert.Equal(t, "reaper", rows[0].Consumer)
							assert.GreaterOrEqual(t, rows[0].Deliveries, int64(2))
						}
					}
					assert.Empty(t, res.Deleted)
					process("reaper", res.Entries)
					if len(res.Entries) > 0 {
						ack(res.Entries)
					}
					cursor = res.Next.String()
					if res.Next.IsZero() {
						break
					}
				}
			}
		})

		<-allDone
		cancel()
		wg.Wait()

		sum, err := s.Pending("workers")
		require.NoError(t, err)
		assert.Zero(t, sum.Count)
		assert.Equal(t, int64(total), s.Len())
		require.Len(t, processedBy, total, "every job processed")
		require.Equal(t, map[string]bool{"w1": true, "w3": true}, stopped)
		dups, byStopped := 0, 0
		for job, who := range processedBy {
			if stopped[who[0]] {
				byStopped++
			}
			if len(who) == 1 {
				continue
			}
			dups++
			require.Len(t, who, 2, job)
			assert.True(t, stopped[who[0]], "job %s processed twice, first by %s, which did not stop", job, who[0])
			assert.Equal(t, "reaper", who[1], job)
		}
		assert.Equal(t, byStopped, dups, "exactly the jobs the stopped workers processed ran twice")
		assert.Positive(t, dups)
		info := s.Groups()[0]
		assert.Equal(t, int64(total), info.EntriesRead)
		assert.Equal(t, int64(0), info.Lag)
	})
}
