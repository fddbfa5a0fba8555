package xstream

import (
	"context"
	"strconv"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadNoBlock(t *testing.T) {
	s := streamWith(t, "1", "2", "3")
	ctx := context.Background()
	got, err := s.Read(ctx, "1", ReadArgs{})
	require.NoError(t, err)
	assert.Equal(t, []string{"2-0", "3-0"}, ids(got))
	got, err = s.Read(ctx, "0-0", ReadArgs{Count: 2})
	require.NoError(t, err)
	assert.Equal(t, []string{"1-0", "2-0"}, ids(got))
	got, err = s.Read(ctx, "3", ReadArgs{})
	require.NoError(t, err)
	assert.Empty(t, got)
	got, err = s.Read(ctx, "$", ReadArgs{})
	require.NoError(t, err)
	assert.Empty(t, got, `"$" returns only entries added after the call`)
	got, err = s.Read(ctx, "+", ReadArgs{Count: 5})
	require.NoError(t, err)
	assert.Equal(t, []Entry{{ID{3, 0}, Fields("f", "3")}}, got, `"+" is the last entry`)
	_, err = s.Delete("3")
	require.NoError(t, err)
	got, err = s.Read(ctx, "+", ReadArgs{})
	require.NoError(t, err)
	assert.Equal(t, []string{"2-0"}, ids(got), `"+" is the last live entry`)
	got, err = s.Read(ctx, "1-0", ReadArgs{})
	require.NoError(t, err)
	assert.Equal(t, []string{"2-0"}, ids(got), "deleted entries are never returned")
	got, err = s.Read(ctx, "+", ReadArgs{})
	require.NoError(t, err)
	assert.Equal(t, []string{"2-0"}, ids(got))
	got, err = NewStream().Read(ctx, "+", ReadArgs{})
	require.NoError(t, err)
	assert.Empty(t, got)
}

func TestReadRejects(t *testing.T) {
	s := streamWith(t, "1")
	before := snap(t, s)
	for _, c := range []struct {
		after    string
		args     ReadArgs
		sentinel error
		name     string
	}{
		{"0", ReadArgs{Count: -1}, ErrInvalidArgument, "-1"},
		{"-", ReadArgs{}, ErrInvalidID, `"-"`},
		{"*", ReadArgs{}, ErrInvalidID, `"*"`},
		{"1-*", ReadArgs{}, ErrInvalidID, `"1-*"`},
		{"(1", ReadArgs{}, ErrInvalidID, `"(1"`},
		{">", ReadArgs{Block: BlockForever}, ErrInvalidID, `">"`},
		{"", ReadArgs{Block: time.Second}, ErrInvalidID, `""`},
	} {
		got, err := s.Read(context.Background(), c.after, c.args)
		requireErr(t, err, c.sentinel, c.name)
		assert.Nil(t, got)
	}
	requireUnchanged(t, s, before)
}

// outcome is what a call run by goRead returned.
type outcome[T any] struct {
	v   T
	err error
}

// goRead runs read in a goroutine and returns the channel of its outcome.
func goRead[T any](read func() (T, error)) <-chan outcome[T] {
	ch := make(chan outcome[T], 1)
	go func() {
		v, err := read()
		ch <- outcome[T]{v, err}
	}()
	return ch
}

// requireBlocked fails if ch has a value once every goroutine of the
// bubble is blocked.
func requireBlocked[T any](t *testing.T, ch <-chan T) {
	t.Helper()
	synctest.Wait()
	select {
	case v := <-ch:
		t.Fatalf("the reader returned %+v while it should be blocked", v)
	default:
	}
}

// advance moves the fake clock of the synctest bubble on by d, once every
// other goroutine of the bubble is blocked.
func advance(d time.Duration) { <-time.After(d) }

func waitersOf(s *Stream) []*waiter {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*waiter(nil), s.waiters.ws...)
}

func TestReadBlockWakesOnAdd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := streamWith(t, "1", "2")
		start := time.Now()
		r := goRead(func() ([]Entry, error) {
			return s.Read(t.Context(), "2", ReadArgs{Block: BlockForever})
		})
		requireBlocked(t, r)
		require.Len(t, waitersOf(s), 1)
		advance(3 * time.Second)
		requireBlocked(t, r)
		mustAdd(t, s, "3", Fields("k", "v")...)
		got := <-r
		require.NoError(t, got.err)
		assert.Equal(t, []Entry{{ID{3, 0}, Fields("k", "v")}}, got.v)
		assert.Equal(t, 3*time.Second, time.Since(start))
		assert.Empty(t, waitersOf(s), "no waiter is left behind")
	})
}

func TestReadBlockReturnsAtOnceWhenDataIsThere(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := streamWith(t, "1", "2")
		start := time.Now()
		got, err := s.Read(t.Context(), "1", ReadArgs{Block: time.Hour})
		require.NoError(t, err)
		assert.Equal(t, []string{"2-0"}, ids(got))
		assert.Zero(t, time.Since(start))
	})
}

func TestReadBlockTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := streamWith(t, "1")
		start := time.Now()
		r := goRead(func() ([]Entry, error) {
			return s.Read(t.Context(), "$", ReadArgs{Block: 5 * time.Second})
		})
		advance(2 * time.Second)
		// An entry that is trimmed away at once wakes the reader, which
		// finds nothing and waits on: the timeout counts from the call.
		_, err := s.Add(AddArgs{Trim: TrimArgs{Strategy: TrimMaxLen}}, Fields("f", "v")...)
		require.NoError(t, err)
		requireBlocked(t, r)
		got := <-r
		require.NoError(t, got.err, "a timeout is no error")
		assert.Nil(t, got.v)
		assert.Equal(t, 5*time.Second, time.Since(start))
		assert.Empty(t, waitersOf(s))
	})
}

func TestReadContextCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := streamWith(t, "1")
		ctx, cancel := context.WithCancel(t.Context())
		start := time.Now()
		r := goRead(func() ([]Entry, error) {
			return s.Read(ctx, "$", ReadArgs{Block: BlockForever})
		})
		requireBlocked(t, r)
		cancel()
		got := <-r
		assert.ErrorIs(t, got.err, context.Canceled)
		assert.Nil(t, got.v)
		assert.Zero(t, time.Since(start), "cancelling returns at once")
		assert.Empty(t, waitersOf(s))

		ctx, cancel = context.WithTimeout(t.Context(), 2*time.Second)
		defer cancel()
		got2, err := s.Read(ctx, "$", ReadArgs{Block: time.Hour})
		assert.ErrorIs(t, err, context.DeadlineExceeded)
		assert.Nil(t, got2)
		assert.Equal(t, 2*time.Second, time.Since(start))
	})
}

func TestReadDollarSemantics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := streamWith(t, "1", "2")
		r := goRead(func() ([]Entry, error) {
			return s.Read(t.Context(), "$", ReadArgs{Block: BlockForever})
		})
		requireBlocked(t, r)
		// "$" was the last ID at call time: entries added since are new,
		// even with the reader woken several times.
		mustAdd(t, s, "5")
		got := <-r
		require.NoError(t, got.err)
		assert.Equal(t, []string{"5-0"}, ids(got.v))

		// "$" on an emptied stream is its last ID, not 0-0.
		_, err := s.Trim(TrimArgs{Strategy: TrimMaxLen})
		require.NoError(t, err)
		r = goRead(func() ([]Entry, error) {
			return s.Read(t.Context(), "$", ReadArgs{Block: BlockForever})
		})
		requireBlocked(t, r)
		mustAdd(t, s, "6")
		got = <-r
		require.NoError(t, got.err)
		assert.Equal(t, []string{"6-0"}, ids(got.v))
	})
}

func TestReadPlusSemantics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStream()
		r := goRead(func() ([]Entry, error) {
			return s.Read(t.Context(), "+", ReadArgs{Block: BlockForever})
		})
		requireBlocked(t, r)
		mustAdd(t, s, "1")
		got := <-r
		require.NoError(t, got.err)
		assert.Equal(t, []string{"1-0"}, ids(got.v), `"+" on an empty stream waits for the next entry`)

		mustAdd(t, s, "2")
		got2, err := s.Read(t.Context(), "+", ReadArgs{Block: BlockForever})
		require.NoError(t, err)
		assert.Equal(t, []string{"2-0"}, ids(got2), `"+" returns the last entry without waiting`)

		_, err = s.Delete("1", "2")
		require.NoError(t, err)
		r = goRead(func() ([]Entry, error) {
			return s.Read(t.Context(), "+", ReadArgs{Block: BlockForever})
		})
		requireBlocked(t, r)
		mustAdd(t, s, "3")
		got = <-r
		require.NoError(t, got.err)
		assert.Equal(t, []string{"3-0"}, ids(got.v))
	})
}

// addAtOnce adds entries ms-0 for each ms under one lock, as a MULTI
// would, waking blocked readers once they are all in.
func addAtOnce(s *Stream, ms ...uint64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, m := range ms {
		s.appendLocked(ID{m, 0}, Fields("f", strconv.FormatUint(m, 10)))
	}
	s.waiters.wake()
}

// A blocked "+" is resolved again when the reader looks again, as Redis
// runs a blocked XREAD again: it returns the last entry then, alone,
// whatever Count, even when several entries came at once.
func TestReadPlusResolvedWhenWoken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStream()
		r := goRead(func() ([]Entry, error) {
			return s.Read(t.Context(), "+", ReadArgs{Block: BlockForever, Count: 5})
		})
		requireBlocked(t, r)
		addAtOnce(s, 1, 2, 3)
		got := <-r
		require.NoError(t, got.err)
		assert.Equal(t, []string{"3-0"}, ids(got.v))

		// A stream emptied by deletes: the same, not the entries after
		// its last ID.
		_, err := s.Delete("1", "2", "3")
		require.NoError(t, err)
		r = goRead(func() ([]Entry, error) {
			return s.Read(t.Context(), "+", ReadArgs{Block: BlockForever})
		})
		requireBlocked(t, r)
		addAtOnce(s, 4, 5)
		got = <-r
		require.NoError(t, got.err)
		assert.Equal(t, []string{"5-0"}, ids(got.v))
	})
}

// DB.Read resolves "+" of a stream that does not exist yet in the same
// way once it does.
func TestDBReadPlusOfMissingStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := NewDB()
		r := goRead(func() ([]StreamEntries, error) {
			return db.Read(t.Context(), ReadArgs{Block: BlockForever, Count: 9}, "later", "+")
		})
		requireBlocked(t, r)
		s := db.Stream("later")
		requireBlocked(t, r)
		addAtOnce(s, 7, 8)
		got := <-r
		require.NoError(t, got.err)
		require.Len(t, got.v, 1)
		assert.Equal(t, []string{"8-0"}, ids(got.v[0].Entries))
	})
}

func TestReadBlockCount(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := streamWith(t, "1", "2", "3")
		got, err := s.Read(t.Context(), "0", ReadArgs{Block: BlockForever, Count: 2})
		require.NoError(t, err)
		assert.Equal(t, []string{"1-0", "2-0"}, ids(got))
		got, err = s.Read(t.Context(), "2", ReadArgs{Block: BlockForever, Count: 2})
		require.NoError(t, err)
		assert.Equal(t, []string{"3-0"}, ids(got))
	})
}

// TestReadFIFO checks that blocked readers queue in arrival order, that a
// reader leaving keeps the order of the others, and that one Add serves
// them all.
func TestReadFIFO(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := streamWith(t, "1")
		ctx2, cancel2 := context.WithCancel(t.Context())
		ctxs := []context.Context{t.Context(), ctx2, t.Context()}
		var rs []<-chan outcome[[]Entry]
		ws := []*waiter{}
		for i, ctx := range ctxs {
			rs = append(rs, goRead(func() ([]Entry, error) {
				return s.Read(ctx, "$", ReadArgs{Block: BlockForever})
			}))
			synctest.Wait()
			got := waitersOf(s)
			require.Len(t, got, i+1)
			require.Equal(t, ws, got[:i], "a new reader queues behind the others")
			ws = got
		}
		cancel2()
		got := <-rs[1]
		assert.ErrorIs(t, got.err, context.Canceled)
		assert.Equal(t, []*waiter{ws[0], ws[2]}, waitersOf(s))

		mustAdd(t, s, "2")
		for _, i := range []int{0, 2} {
			got := <-rs[i]
			require.NoError(t, got.err)
			assert.Equal(t, []string{"2-0"}, ids(got.v))
		}
		assert.Empty(t, waitersOf(s))
	})
}

func TestDBReadBlocking(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := NewDB()
		_, err := db.Add("a", AddArgs{ID: "5"}, Fields("f", "a5")...)
		require.NoError(t, err)
		read := func() ([]StreamEntries, error) {
			return db.Read(t.Context(), ReadArgs{Block: BlockForever}, "a", "$", "later", "0")
		}

		// A stream that does not exist yet.
		r := goRead(read)
		requireBlocked(t, r)
		_, err = db.Add("later", AddArgs{ID: "1"}, Fields("f", "l1")...)
		require.NoError(t, err)
		got := <-r
		require.NoError(t, got.err)
		assert.Equal(t, []StreamEntries{{"later", []Entry{{ID{1, 0}, Fields("f", "l1")}}}}, got.v)
		require.True(t, must(db.Remove("later")) == 1)

		// An existing stream.
		r = goRead(read)
		requireBlocked(t, r)
		_, err = db.Add("a", AddArgs{ID: "6"}, Fields("f", "a6")...)
		require.NoError(t, err)
		got = <-r
		require.NoError(t, got.err)
		assert.Equal(t, []StreamEntries{{"a", []Entry{{ID{6, 0}, Fields("f", "a6")}}}}, got.v)

		// A missing stream created empty by Stream, then added to.
		r = goRead(read)
		requireBlocked(t, r)
		db.Stream("later")
		requireBlocked(t, r)
		_, err = db.Add("later", AddArgs{ID: "2"}, Fields("f", "l2")...)
		require.NoError(t, err)
		got = <-r
		require.NoError(t, got.err)
		assert.Equal(t, "later", got.v[0].Stream)

		// Timeout.
		start := time.Now()
		got2, err := db.Read(t.Context(), ReadArgs{Block: time.Minute}, "a", "$", "none", "$")
		require.NoError(t, err)
		assert.Nil(t, got2)
		assert.Equal(t, time.Minute, time.Since(start))

		// Cancellation.
		ctx, cancel := context.WithCancel(t.Context())
		r = goRead(func() ([]StreamEntries, error) {
			return db.Read(ctx, ReadArgs{Block: BlockForever}, "a", "$", "none", "$")
		})
		requireBlocked(t, r)
		cancel()
		got = <-r
		assert.ErrorIs(t, got.err, context.Canceled)

		// Nothing stays registered.
		for _, n := range db.Names("") {
			s, _ := db.Lookup(n)
			assert.Empty(t, waitersOf(s), n)
		}
		db.mu.Lock()
		assert.Empty(t, db.missing)
		db.mu.Unlock()
	})
}

func TestDBReadOtherStreamsNotWoken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := NewDB()
		x := db.Stream("x")
		r := goRead(func() ([]StreamEntries, error) {
			return db.Read(t.Context(), ReadArgs{Block: BlockForever}, "x", "$")
		})
		requireBlocked(t, r)
		ws := waitersOf(x)
		require.Len(t, ws, 1)
		for i := 1; i <= 10; i++ {
			_, err := db.Add("y", AddArgs{ID: strconv.Itoa(i)}, Fields("f", "v")...)
			require.NoError(t, err)
		}
		requireBlocked(t, r)
		assert.Equal(t, ws, waitersOf(x), "an Add on y leaves the readers of x alone")
		assert.Empty(t, ws[0].ch, "the reader of x was not notified")
		_, err := db.Add("x", AddArgs{ID: "1"}, Fields("f", "x1")...)
		require.NoError(t, err)
		got := <-r
		require.NoError(t, got.err)
		assert.Equal(t, "x", got.v[0].Stream)
	})
}

func TestDBRemoveWakesReaders(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := NewDB()
		_, err := db.Add("a", AddArgs{ID: "5"}, Fields("f", "old")...)
		require.NoError(t, err)
		old := db.Stream("a")
		r := goRead(func() ([]StreamEntries, error) {
			return db.Read(t.Context(), ReadArgs{Block: BlockForever}, "a", "$")
		})
		requireBlocked(t, r)
		require.Len(t, waitersOf(old), 1)
		require.Equal(t, 1, must(db.Remove("a")))
		requireBlocked(t, r)
		assert.Empty(t, waitersOf(old), "the reader left the removed stream")
		db.mu.Lock()
		require.Len(t, db.missing["a"].ws, 1, "the reader waits for a new stream of that name")
		db.mu.Unlock()

		// The reader's "$" was 5-0: an entry of the new stream at or below
		// it is not for this reader.
		_, err = db.Add("a", AddArgs{ID: "3"}, Fields("f", "new3")...)
		require.NoError(t, err)
		requireBlocked(t, r)
		_, err = db.Add("a", AddArgs{ID: "6"}, Fields("f", "new6")...)
		require.NoError(t, err)
		got := <-r
		require.NoError(t, got.err)
		assert.Equal(t, []StreamEntries{{"a", []Entry{{ID{6, 0}, Fields("f", "new6")}}}}, got.v)
	})
}

func TestStreamReadOnRemovedStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		db := NewDB()
		s := db.Stream("a")
		r := goRead(func() ([]Entry, error) {
			return s.Read(t.Context(), "$", ReadArgs{Block: BlockForever})
		})
		requireBlocked(t, r)
		db.Remove("a")
		requireBlocked(t, r)
		mustAdd(t, s, "1")
		got := <-r
		require.NoError(t, got.err)
		assert.Equal(t, []string{"1-0"}, ids(got.v), "a Stream's reader stays with that stream")
	})
}
