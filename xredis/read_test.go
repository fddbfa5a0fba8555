package xredis_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/xredis"
)

// crossSlot returns n stream names that lie in n different hash slots
// (and, in the test cluster, on more than one node).
func crossSlot(t *testing.T, n int) []string {
	k := tagged(t)
	out := make([]string, n)
	for i := range out {
		out[i] = k(string(rune('a'+i)), "s")
	}
	return out
}

func keySlot(t *testing.T, e xredis.Engine, key string) int64 {
	n, err := e.Client().Do(bg(), e.Client().B().ClusterKeyslot().Key(key).Build()).AsInt64()
	require.NoError(t, err)
	return n
}

func add(t *testing.T, e xstream.Engine, stream, id string, kv ...string) xstream.ID {
	t.Helper()
	got, err := e.Add(bg(), stream, xstream.AddArgs{ID: id}, xstream.Fields(kv...)...)
	require.NoError(t, err)
	return got
}

// TestCrossSlotRead reads streams of different hash slots in one call: a
// cluster answers CROSSSLOT to such a command, the engine splits it.
func TestCrossSlotRead(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string, e xredis.Engine) {
		ss := crossSlot(t, 4)
		if kind == "cluster" {
			slots := map[int64]bool{}
			for _, s := range ss {
				slots[keySlot(t, e, s)] = true
			}
			require.Len(t, slots, 4)
			// The raw command fails.
			err := e.Client().Do(bg(), e.Client().B().Arbitrary("XREAD", "STREAMS").Args(ss[0], ss[1], "0", "0").Build()).Error()
			require.ErrorContains(t, err, "CROSSSLOT")
		}
		for i, s := range ss {
			add(t, e, s, "1-1", "i", string(rune('0'+i)))
			add(t, e, s, "2-2", "i", string(rune('0'+i)))
		}
		// Streams come back in the order given, skipping those with
		// nothing after their ID; a stream given twice comes twice.
		out, err := e.Read(bg(), xstream.ReadArgs{Count: 1}, ss[3], "0", ss[0], "1-1", ss[2], "2-2", ss[1], "0", ss[3], "1-1")
		require.NoError(t, err)
		got := []string{}
		for _, se := range out {
			got = append(got, se.Stream+"@"+se.Entries[0].ID.String())
			require.Len(t, se.Entries, 1)
		}
		require.Equal(t, []string{ss[3] + "@1-1", ss[0] + "@2-2", ss[1] + "@1-1", ss[3] + "@2-2"}, got)

		// ReadGroup too, and every group read delivers.
		for _, s := range ss {
			require.NoError(t, e.CreateGroup(bg(), s, "g", "0", xstream.GroupOptions{}))
		}
		out, err = e.ReadGroup(bg(), "g", "c", xstream.ReadGroupArgs{}, ss[2], ">", ss[0], ">", ss[1], "0")
		require.NoError(t, err)
		require.Len(t, out, 3)
		require.Equal(t, ss[2], out[0].Stream)
		require.Len(t, out[0].Entries, 2)
		require.Equal(t, ss[0], out[1].Stream)
		require.Equal(t, ss[1], out[2].Stream)
		require.Empty(t, out[2].Entries, "an empty history is returned")

		// A missing group on one slot fails the call before anything is
		// delivered on the others.
		_, err = e.ReadGroup(bg(), "g", "c", xstream.ReadGroupArgs{}, ss[1], ">", crossSlot(t, 1)[0], ">")
		require.ErrorIs(t, err, xstream.ErrNoGroup)
		sum, err := e.Pending(bg(), ss[1], "g")
		require.NoError(t, err)
		require.Zero(t, sum.Count)
	})
}

// TestBlockingRead: a blocked read across slots wakes on any of them,
// "$" is resolved once (entries added between slices are not missed),
// "+" waits for a first entry, a timeout returns nothing.
func TestBlockingRead(t *testing.T) {
	for _, kind := range kinds {
		t.Run(kind, func(t *testing.T) {
			e := newEngine(t, kind, xredis.WithBlockSlice(30*time.Millisecond))
			ss := crossSlot(t, 3)
			add(t, e, ss[0], "1-1", "a", "1")

			// A timeout.
			start := time.Now()
			out, err := e.Read(bg(), xstream.ReadArgs{Block: 100 * time.Millisecond}, ss[0], "$", ss[1], "$")
			require.NoError(t, err)
			require.Nil(t, out)
			require.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond)
			require.Less(t, time.Since(start), 2*time.Second)

			// Woken by an entry on the last stream, many slices in.
			done := make(chan []xstream.StreamEntries)
			go func() {
				out, err := e.Read(bg(), xstream.ReadArgs{Block: xstream.BlockForever}, ss[0], "$", ss[1], "$", ss[2], "+")
				assert.NoError(t, err) // (require would stop this goroutine only)
				done <- out
			}()
			commands := 1 // one XREAD for the streams of one server
			if kind == "cluster" {
				commands = 3 // one per slot
			}
			waitBlocked(t, kind, e, commands, ss[0])
			add(t, e, ss[1], "7-7", "b", "2")
			out = <-done
			require.Equal(t, []xstream.StreamEntries{{Stream: ss[1], Entries: []xstream.Entry{{ID: xstream.ID{Ms: 7, Seq: 7}, Fields: xstream.Fields("b", "2")}}}}, out)

			// "+" on an empty stream waits for its first entry, and
			// returns the last when several came.
			go func() {
				out, err := e.Read(bg(), xstream.ReadArgs{Block: 5 * time.Second}, ss[2], "+")
				assert.NoError(t, err) // (require would stop this goroutine only)
				done <- out
			}()
			if kind != "xstream" {
				// (xstream's server shows the readers of streams that
				// exist only; there, an add before the read returns the
				// same last entry.)
				waitBlocked(t, kind, e, 1, ss[2])
			}
			_, err = e.Client().DoMulti(bg(),
				e.Client().B().Arbitrary("XADD").Keys(ss[2]).Args("1-1", "c", "1").Build(),
				e.Client().B().Arbitrary("XADD").Keys(ss[2]).Args("1-2", "c", "2").Build(),
			)[1].ToString()
			require.NoError(t, err)
			out = <-done
			require.Len(t, out, 1)
			require.Len(t, out[0].Entries, 1)
			require.Equal(t, ss[2], out[0].Stream)
			require.Contains(t, []xstream.ID{{Ms: 1, Seq: 1}, {Ms: 1, Seq: 2}}, out[0].Entries[0].ID)
		})
	}
}

// TestBlockingCancel: a read blocked forever ends as soon as its context
// is done, whatever the server does.
func TestBlockingCancel(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string, e xredis.Engine) {
		ss := crossSlot(t, 3)
		for _, s := range ss {
			add(t, e, s, "1-1", "a", "1")
			require.NoError(t, e.CreateGroup(bg(), s, "g", "$", xstream.GroupOptions{}))
		}
		for _, group := range []bool{false, true} {
			for _, streams := range [][]string{ss[:1], ss} {
				ctx, cancel := context.WithCancel(bg())
				time.AfterFunc(50*time.Millisecond, cancel)
				start := time.Now()
				var err error
				if group {
					pairs := []string{}
					for _, s := range streams {
						pairs = append(pairs, s, ">")
					}
					_, err = e.ReadGroup(ctx, "g", "c", xstream.ReadGroupArgs{Block: xstream.BlockForever}, pairs...)
				} else {
					pairs := []string{}
					for _, s := range streams {
						pairs = append(pairs, s, "$")
					}
					_, err = e.Read(ctx, xstream.ReadArgs{Block: xstream.BlockForever}, pairs...)
				}
				require.Equal(t, context.Canceled, err)
				require.Less(t, time.Since(start), time.Second, "group %v, %d streams", group, len(streams))
			}
		}
		// The engine still works.
		out, err := e.Read(bg(), xstream.ReadArgs{}, ss[0], "0")
		require.NoError(t, err)
		require.Len(t, out, 1)
	})
}

// TestReadGroupNothingLost races blocked group reads against the entries
// that serve them and against their end (a context done, or another
// slot's entries first): every entry the server delivered is returned by
// the read, none is left pending unseen. It needs CLIENT UNBLOCK, which
// xstream's server lacks (there the connection is closed).
func TestReadGroupNothingLost(t *testing.T) {
	for _, kind := range []string{"redis", "cluster", "valkey"} {
		t.Run(kind, func(t *testing.T) {
			e := newEngine(t, kind)
			ss := crossSlot(t, 2)
			for _, s := range ss {
				require.NoError(t, e.CreateGroup(bg(), s, "g", "$", xstream.GroupOptions{MkStream: true}))
			}
			returned := 0
			for i := range 60 {
				ctx, cancel := context.WithCancel(bg())
				var wg sync.WaitGroup
				wg.Go(func() {
					time.Sleep(time.Duration(i%7) * 300 * time.Microsecond)
					for _, s := range ss {
						add(t, e, s, "*", "i", "x")
					}
				})
				wg.Go(func() {
					time.Sleep(time.Duration(i%5) * 300 * time.Microsecond)
					if i%2 == 0 {
						cancel()
					}
				})
				out, err := e.ReadGroup(ctx, "g", "c", xstream.ReadGroupArgs{Block: 5 * time.Second}, ss[0], ">", ss[1], ">")
				if err != nil {
					require.Equal(t, context.Canceled, err)
				}
				for _, se := range out {
					returned += len(se.Entries)
				}
				wg.Wait()
				cancel()
				// What was not returned must still be undelivered: read it
				// now, without blocking.
				out, err = e.ReadGroup(bg(), "g", "c", xstream.ReadGroupArgs{}, ss[0], ">", ss[1], ">")
				require.NoError(t, err)
				for _, se := range out {
					returned += len(se.Entries)
				}
			}
			pending := int64(0)
			for _, s := range ss {
				sum, err := e.Pending(bg(), s, "g")
				require.NoError(t, err)
				pending += sum.Count
			}
			require.Equal(t, int64(returned), pending, "entries delivered but not returned")
			require.Equal(t, int64(120), pending)
		})
	}
}

// TestReadGroupDestroyed: a read blocked on a group that is destroyed
// ends with ErrNoGroup.
func TestReadGroupDestroyed(t *testing.T) {
	eachKind(t, func(t *testing.T, kind string, e xredis.Engine) {
		s := keys(t)("s")
		require.NoError(t, e.CreateGroup(bg(), s, "g", "$", xstream.GroupOptions{MkStream: true}))
		errc := make(chan error)
		go func() {
			_, err := e.ReadGroup(bg(), "g", "c", xstream.ReadGroupArgs{Block: 10 * time.Second}, s, ">")
			errc <- err
		}()
		waitBlocked(t, kind, e, 1, s)
		ok, err := e.DestroyGroup(bg(), s, "g")
		require.NoError(t, err)
		require.True(t, ok)
		select {
		case err := <-errc:
			require.ErrorIs(t, err, xstream.ErrNoGroup)
		case <-time.After(5 * time.Second):
			t.Fatal("the blocked read did not end")
		}
	})
}
