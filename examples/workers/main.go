// Command workers runs a job queue on a consumer group: a producer adds
// jobs, three workers share them, one worker dies holding jobs, a reaper
// recovers those with AutoClaim, and a poison job that keeps failing is
// moved to a dead-letter stream. It needs no set-up and stops by itself:
//
//	go run ./examples/workers
package main

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/xstreamgo/xstream"
)

const (
	jobs          = 30
	minIdle       = 300 * time.Millisecond // a job idle this long is taken over
	maxDeliveries = 3                      // then it is dead-lettered
)

func main() {
	db := xstream.NewDB()
	if err := db.CreateGroup("jobs", "workers", "$", xstream.GroupOptions{MkStream: true}); err != nil {
		log.Fatal(err)
	}
	src, dead := db.Stream("jobs"), db.Stream("jobs.dead")
	ctx, cancel := context.WithCancel(context.Background())
	var (
		mu   sync.Mutex
		done = map[string][]string{} // worker → jobs it completed
		wg   sync.WaitGroup
	)
	// handle processes one job; the poison job always fails.
	handle := func(who string, e xstream.Entry) bool {
		job := e.Fields[0].Value
		if strings.HasPrefix(job, "poison") {
			return false
		}
		mu.Lock()
		done[who] = append(done[who], job)
		mu.Unlock()
		_, err := src.AckIDs("workers", e.ID)
		return err == nil
	}

	for w := 1; w <= 3; w++ {
		name := fmt.Sprintf("worker-%d", w)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				es, err := src.ReadGroup(ctx, "workers", name, ">", xstream.ReadGroupArgs{Count: 4, Block: xstream.BlockForever})
				if errors.Is(err, context.Canceled) {
					return
				}
				if err != nil {
					log.Fatal(err)
				}
				if name == "worker-3" {
					fmt.Printf("%s took %d job(s) and died without acknowledging\n", name, len(es))
					return
				}
				for _, e := range es {
					handle(name, e)
				}
			}
		}()
	}

	// The reaper takes over idle jobs and dead-letters jobs delivered too
	// often.
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			moved, err := src.MoveDeadLetters("workers", xstream.DeadLetterArgs{MaxDeliveries: maxDeliveries, To: dead})
			if err != nil {
				log.Fatal(err)
			}
			for _, d := range moved {
				fmt.Printf("reaper: %s delivered %d times, moved to jobs.dead as %s\n", d.ID, d.Deliveries, d.DeadID)
			}
			res, err := src.AutoClaim("workers", "reaper", minIdle, "0", xstream.AutoClaimArgs{})
			if err != nil {
				log.Fatal(err)
			}
			for _, e := range res.Entries {
				handle("reaper", e)
			}
		}
	}()

	for i := 1; i <= jobs; i++ {
		job := fmt.Sprintf("job-%02d", i)
		if i == 17 {
			job = "poison-17"
		}
		if _, err := src.Add(xstream.AddArgs{}, xstream.Field{Name: "job", Value: job}); err != nil {
			log.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}

	// Wait until every job is acknowledged or dead-lettered.
	deadline := time.Now().Add(10 * time.Second)
	for {
		sum, err := src.Pending("workers")
		if err != nil {
			log.Fatal(err)
		}
		if sum.Count == 0 && src.Groups()[0].Lag == 0 {
			break
		}
		if time.Now().After(deadline) {
			log.Fatalf("jobs still pending: %+v", sum)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cancel()
	wg.Wait()

	total := 0
	var names []string
	for who := range done {
		names = append(names, who)
	}
	sort.Strings(names)
	for _, who := range names {
		fmt.Printf("%-8s completed %2d jobs\n", who, len(done[who]))
		total += len(done[who])
	}
	fmt.Printf("completed %d of %d jobs, %d dead letter(s)\n", total, jobs, dead.Len())
}
