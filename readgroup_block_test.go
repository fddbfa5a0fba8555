package xstream

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type gtResult struct {
	who string
	es  []Entry
	err error
}

// gtBlockedRead starts a blocking ReadGroup ">" and waits until it is
// blocked.
func gtBlockedRead(ctx context.Context, s *Stream, group, consumer string, args ReadGroupArgs, out chan<- gtResult) {
	go func() {
		es, err := s.ReadGroup(ctx, group, consumer, ">", args)
		out <- gtResult{consumer, es, err}
	}()
	synctest.Wait()
}

func gtAdd(t *testing.T, s *Stream, id string) {
	t.Helper()
	_, err := s.Add(AddArgs{ID: id}, Field{"k", id})
	require.NoError(t, err)
}

func TestReadGroupBlockFirstComeFirstServed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStream()
		require.NoError(t, s.CreateGroup("g", "$", GroupOptions{}))
		require.NoError(t, s.CreateGroup("other", "$", GroupOptions{}))
		ctx := context.Background()
		out := make(chan gtResult, 4)
		args := ReadGroupArgs{Count: 1, Block: BlockForever}
		gtBlockedRead(ctx, s, "g", "first", args, out)
		gtBlockedRead(ctx, s, "g", "second", args, out)
		gtBlockedRead(ctx, s, "other", "third", args, out)

		gtAdd(t, s, "1")
		synctest.Wait()
		got := map[string][]ID{}
		for range 2 {
			r := <-out
			require.NoError(t, r.err)
			got[r.who] = gtIDs(r.es)
		}
		assert.Equal(t, map[string][]ID{"first": {gtID(1)}, "third": {gtID(1)}}, got)
		select {
		case r := <-out:
			t.Fatalf("second reader woke without an entry: %+v", r)
		default:
		}

		gtAdd(t, s, "2")
		r := <-out
		require.NoError(t, r.err)
		assert.Equal(t, "second", r.who)
		assert.Equal(t, []ID{gtID(2)}, gtIDs(r.es))
		sum, _ := s.Pending("g")
		assert.Equal(t, []ConsumerPending{{"first", 1}, {"second", 1}}, sum.Consumers)
		s.mu.RLock()
		assert.Empty(t, s.gwaiters)
		s.mu.RUnlock()
	})
}

func TestReadGroupBlockCountSplitsBatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Add with a trim of several entries at once: one Add serves the
		// first reader up to its count and the next with the rest.
		db := NewDB()
		require.NoError(t, db.CreateGroup("s", "g", "$", GroupOptions{MkStream: true}))
		s := db.Stream("s")
		out := make(chan gtResult, 2)
		gtBlockedRead(context.Background(), s, "g", "a", ReadGroupArgs{Count: 2, Block: BlockForever}, out)
		gtBlockedRead(context.Background(), s, "g", "b", ReadGroupArgs{Count: 2, Block: BlockForever}, out)
		// Move the group back over three entries added while nobody waited.
		s.mu.Lock()
		for i := uint64(1); i <= 3; i++ {
			s.appendLocked(ID{i, 0}, []Field{{"k", "v"}})
		}
		s.mu.Unlock()
		require.NoError(t, s.SetGroupID("g", "0", GroupOptions{}))
		got := map[string][]ID{}
		for range 2 {
			r := <-out
			got[r.who] = gtIDs(r.es)
		}
		assert.Equal(t, map[string][]ID{"a": {gtID(1), gtID(2)}, "b": {gtID(3)}}, got)
	})
}

func TestReadGroupBlockCancelAndTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStream()
		require.NoError(t, s.CreateGroup("g", "$", GroupOptions{}))
		ctx, cancel := context.WithCancel(context.Background())
		out := make(chan gtResult, 2)
		gtBlockedRead(ctx, s, "g", "c", ReadGroupArgs{Block: BlockForever}, out)
		cancel()
		r := <-out
		require.ErrorIs(t, r.err, context.Canceled)
		assert.Nil(t, r.es)

		start := time.Now()
		gtBlockedRead(context.Background(), s, "g", "c", ReadGroupArgs{Block: 2 * time.Second}, out)
		r = <-out
		require.NoError(t, r.err)
		assert.Nil(t, r.es)
		assert.Equal(t, 2*time.Second, time.Since(start))

		// Nobody is left waiting, and a later Add stays undelivered.
		gtAdd(t, s, "1")
		sum, _ := s.Pending("g")
		assert.Zero(t, sum.Count)
		s.mu.RLock()
		assert.Empty(t, s.gwaiters)
		s.mu.RUnlock()
	})
}

func TestReadGroupBlockWokenByAdminNotNack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := NewDB()
		require.NoError(t, db.CreateGroup("s", "g", "$", GroupOptions{MkStream: true}))
		s := db.Stream("s")
		out := make(chan gtResult, 1)
		forever := ReadGroupArgs{Block: BlockForever}

		gtBlockedRead(context.Background(), s, "g", "c", forever, out)
		assert.True(t, must(s.DestroyGroup("g")))
		r := <-out
		require.ErrorIs(t, r.err, ErrNoGroup)
		require.Contains(t, r.err.Error(), `"g"`)

		gtAdd(t, s, "1")
		require.NoError(t, s.CreateGroup("g", "$", GroupOptions{}))
		gtBlockedRead(context.Background(), s, "g", "c", forever, out)
		require.NoError(t, s.SetGroupID("g", "0", GroupOptions{}))
		r = <-out
		require.NoError(t, r.err)
		assert.Equal(t, []ID{gtID(1)}, gtIDs(r.es))

		// Nack gives 1 back, but a ">" read does not take given-back
		// entries (Redis's XNACK wakes only XREADGROUP CLAIM readers):
		// d waits on, and the next Add serves it.
		gtBlockedRead(context.Background(), s, "g", "d", forever, out)
		n, err := s.Nack("g", NackFail, []string{"1"}, NackArgs{})
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		synctest.Wait()
		require.Empty(t, out)
		gtAdd(t, s, "2")
		r = <-out
		require.NoError(t, r.err)
		assert.Equal(t, "d", r.who)
		assert.Equal(t, []ID{gtID(2)}, gtIDs(r.es))

		gtBlockedRead(context.Background(), s, "g", "c", forever, out)
		assert.Equal(t, 1, must(db.Remove("s")))
		r = <-out
		require.ErrorIs(t, r.err, ErrNoStream, "%+v", r)
	})
}

func TestDBReadGroupBlockSeveralStreams(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := NewDB()
		for _, name := range []string{"a", "b"} {
			require.NoError(t, db.CreateGroup(name, "g", "$", GroupOptions{MkStream: true}))
		}
		type res struct {
			out []StreamEntries
			err error
		}
		done := make(chan res, 1)
		go func() {
			out, err := db.ReadGroup(context.Background(), "g", "c", ReadGroupArgs{Block: BlockForever}, "a", ">", "b", ">")
			done <- res{out, err}
		}()
		synctest.Wait()
		_, err := db.Add("b", AddArgs{ID: "5"}, Field{"k", "v"})
		require.NoError(t, err)
		r := <-done
		require.NoError(t, r.err)
		require.Equal(t, []StreamEntries{{"b", []Entry{{gtID(5), []Field{{"k", "v"}}}}}}, r.out)
		for _, name := range []string{"a", "b"} {
			s := db.Stream(name)
			s.mu.RLock()
			assert.Empty(t, s.gwaiters, name)
			s.mu.RUnlock()
		}
		// An Add to the other stream now stays for the group.
		_, err = db.Add("a", AddArgs{ID: "1"}, Field{"k", "v"})
		require.NoError(t, err)
		sum, _ := db.Stream("a").Pending("g")
		assert.Zero(t, sum.Count)

		// Timeout and cancellation.
		ctx, cancel := context.WithCancel(context.Background())
		go func() {
			out, err := db.ReadGroup(ctx, "g", "c", ReadGroupArgs{Block: BlockForever}, "b", ">")
			done <- res{out, err}
		}()
		synctest.Wait()
		cancel()
		r = <-done
		require.ErrorIs(t, r.err, context.Canceled)
		out, err := db.ReadGroup(context.Background(), "g", "c", ReadGroupArgs{Block: time.Second}, "b", ">")
		require.NoError(t, err)
		assert.Nil(t, out)
	})
}

// TestReadGroupConcurrent runs producers and blocked consumers of two
// groups at once: each group gets every entry exactly once.
func TestReadGroupConcurrent(t *testing.T) {
	const producers, perProducer, consumers = 3, 300, 3
	s := NewStream()
	groups := []string{"g1", "g2"}
	for _, g := range groups {
		require.NoError(t, s.CreateGroup(g, "$", GroupOptions{}))
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type got struct {
		group string
		ids   []ID
	}
	results := make(chan got, 1024)
	var wg sync.WaitGroup
	for _, g := range groups {
		for c := range consumers {
			wg.Go(func() {
				name := fmt.Sprintf("c%d", c)
				for {
					es, err := s.ReadGroup(ctx, g, name, ">", ReadGroupArgs{Count: 10, Block: BlockForever})
					if err != nil {
						assert.ErrorIs(t, err, context.Canceled)
						return
					}
					ids := gtIDs(es)
					n, err := s.AckIDs(g, ids...)
					assert.NoError(t, err)
					assert.Equal(t, int64(len(ids)), n)
					results <- got{g, ids}
				}
			})
		}
	}
	for range producers {
		wg.Go(func() {
			for range perProducer {
				_, err := s.Add(AddArgs{}, Field{"k", "v"})
				assert.NoError(t, err)
			}
		})
	}
	seen := map[string]map[ID]int{"g1": {}, "g2": {}}
	for total := 0; total < 2*producers*perProducer; {
		r := <-results
		for _, id := range r.ids {
			seen[r.group][id]++
		}
		total += len(r.ids)
	}
	cancel()
	wg.Wait()
	all, err := s.Range("-", "+", 0)
	require.NoError(t, err)
	require.Len(t, all, producers*perProducer)
	for _, g := range groups {
		require.Len(t, seen[g], len(all), g)
		for _, e := range all {
			require.Equal(t, 1, seen[g][e.ID], "%s %s", g, e.ID)
		}
		sum, err := s.Pending(g)
		require.NoError(t, err)
		require.Zero(t, sum.Count)
	}
}
