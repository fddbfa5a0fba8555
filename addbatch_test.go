package xstream

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream/internal/store"
)

// batchRun drives TestAddBatchLikeAdds: one stream takes AddBatch calls,
// the other the same entries as Adds one by one.
type batchRun struct {
	t       *testing.T
	r       *rand.Rand
	clk     *testClock
	batch   *Stream
	adds    *Stream
	history []batchCall  // the calls that succeeded, to rebuild adds
	limits  store.Limits // small block limits, so that batches span blocks
	lastMs  int64
}

type batchCall struct {
	ms      int64
	args    AddArgs
	entries [][]Field
	read    int // ReadGroup count after the call
}

func (x *batchRun) entry() []Field {
	names := []string{"sensor-id", "temperature", "a"}
	k := 1 + x.r.IntN(3)
	if x.r.IntN(3) > 0 {
		k = 2 // mostly the master names, as real streams have
	}
	fs := make([]Field, k)
	for i := range fs {
		fs[i] = Field{names[i%len(names)], strconv.Itoa(x.r.IntN(2000) - 1000)}
	}
	return fs
}

func (x *batchRun) args() AddArgs {
	var a AddArgs
	switch x.r.IntN(6) {
	case 0:
		a.ID = "*"
	case 1:
		a.ID = strconv.FormatInt(x.lastMs+int64(x.r.IntN(3))-1, 10) + "-*"
	case 2:
		a.ID = strconv.FormatInt(x.lastMs+int64(x.r.IntN(3)), 10) + "-" + strconv.Itoa(x.r.IntN(3))
	}
	switch x.r.IntN(6) {
	case 0:
		a.Trim = TrimArgs{Strategy: TrimMaxLen, MaxLen: int64(x.r.IntN(60))}
	case 1:
		a.Trim = TrimArgs{Strategy: TrimMaxLen, MaxLen: int64(x.r.IntN(60)), Approx: true}
		if x.r.IntN(2) == 0 {
			a.Trim.Limit = int64(1 + x.r.IntN(30))
		}
	case 2:
		a.Trim = TrimArgs{Strategy: TrimMinID, MinID: strconv.FormatInt(x.lastMs-int64(x.r.IntN(5)), 10), Approx: x.r.IntN(2) == 0}
	}
	if a.Trim.Strategy != TrimNone {
		a.Trim.Policy = DeletePolicy(x.r.IntN(3))
	}
	return a
}

// apply adds c's entries to s one Add at a time, then reads c.read
// entries in group "g"; it returns the error of the first Add that fails.
func apply(s *Stream, clk *testClock, c batchCall) error {
	clk.set(c.ms)
	for _, e := range c.entries {
		if _, err := s.Add(c.args, e...); err != nil {
			return err
		}
	}
	return readGroup(s, c.read)
}

func readGroup(s *Stream, n int) error {
	if n == 0 {
		return nil
	}
	_, err := s.ReadGroup(context.Background(), "g", "c", ">", ReadGroupArgs{Count: n})
	return err
}

// newStream returns an empty stream with x's limits and a group "g".
func (x *batchRun) newStream() *Stream {
	s := NewStream(WithClock(x.clk.now))
	s.st.SetLimits(x.limits)
	require.NoError(x.t, s.CreateGroup("g", "0", GroupOptions{}))
	return s
}

func (x *batchRun) step(i int) {
	ms := x.lastMs + int64(x.r.IntN(4)) - 1
	c := batchCall{ms: ms, args: x.args(), entries: make([][]Field, 1+x.r.IntN(12)), read: x.r.IntN(4)}
	for j := range c.entries {
		c.entries[j] = x.entry()
	}
	desc := strconv.Itoa(i) + ": " + strconv.Quote(c.args.ID) + " " + trimDesc(c.args.Trim) + " x" + strconv.Itoa(len(c.entries))
	x.clk.set(ms)
	before := snap(x.t, x.batch)
	got, err := x.batch.AddBatch(c.args, c.entries...)
	wantErr := apply(x.adds, x.clk, batchCall{ms: ms, args: c.args, entries: c.entries})
	if wantErr != nil {
		require.Error(x.t, err, desc)
		require.Equal(x.t, sentinelOf(wantErr), sentinelOf(err), "%s: %v against %v", desc, err, wantErr)
		assert.Nil(x.t, got, desc)
		requireUnchanged(x.t, x.batch, before)
		x.rebuild() // the Adds before the failing one stay: start adds over
		return
	}
	require.NoError(x.t, err, desc)
	require.Len(x.t, got, len(c.entries), desc)
	require.Equal(x.t, x.adds.LastID(), got[len(got)-1], desc)
	for j := 1; j < len(got); j++ {
		require.True(x.t, got[j-1].Less(got[j]), desc)
	}
	require.NoError(x.t, readGroup(x.batch, c.read), desc)
	require.NoError(x.t, readGroup(x.adds, c.read), desc)
	x.history = append(x.history, c)
	x.lastMs = max(x.lastMs, ms)
	x.compare(desc)
}

// rebuild makes adds again from the calls that succeeded.
func (x *batchRun) rebuild() {
	x.adds = x.newStream()
	for _, c := range x.history {
		require.NoError(x.t, apply(x.adds, x.clk, c))
	}
	x.compare("after rebuild")
}

func (x *batchRun) compare(desc string) {
	require.Equal(x.t, snap(x.t, x.adds), snap(x.t, x.batch), desc)
	a, b := blocksOf(x.adds), blocksOf(x.batch)
	require.Equal(x.t, len(a), len(b), "%s: blocks", desc)
	for i := range a {
		require.Equal(x.t, a[i].Data(), b[i].Data(), "%s: block %d", desc, i)
	}
	checkStream(x.t, x.batch)
}

// sentinelOf returns the sentinel error err wraps.
func sentinelOf(err error) error {
	for _, s := range []error{ErrNoFields, ErrInvalidID, ErrZeroID, ErrIDTooSmall, ErrStreamExhausted, ErrTrimConflict, ErrInvalidArgument} {
		if errors.Is(err, s) {
			return s
		}
	}
	return err
}

// TestAddBatchLikeAdds: AddBatch leaves the stream (entries, counters,
// groups, storage blocks byte for byte) as the same Adds one after the
// other with the clock standing still, for random batches of auto, "ms-*"
// and explicit IDs with every kind of trim and delete policy; a batch that
// an Add of it would fail fails with the same error and changes nothing.
func TestAddBatchLikeAdds(t *testing.T) {
	for seed := range uint64(12) {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 9))
			x := &batchRun{t: t, r: r, clk: newTestClock(100), lastMs: 100, limits: store.Limits{MaxEntries: int32(2 + r.IntN(10))}}
			x.batch, x.adds = x.newStream(), x.newStream()
			for i := range 300 {
				x.step(i)
			}
		})
	}
}

// TestAddBatchBadInput: each bad batch fails with Add's error, checked in
// Add's order, and leaves the stream as it was.
func TestAddBatchBadInput(t *testing.T) {
	ok := reading("1234", "19.8")
	for _, tc := range []struct {
		name     string
		last     string // the stream's last ID
		args     AddArgs
		entries  [][]Field
		sentinel error
		names    []string
		addFails bool // Add of the first entry alone fails the same way
	}{
		{"no entries", "10-5", AddArgs{}, nil, ErrNoFields, nil, false},
		{"an entry without fields", "10-5", AddArgs{}, [][]Field{ok, {}, ok}, ErrNoFields, []string{"entry 1"}, false},
		{"fields before the ID", "10-5", AddArgs{ID: "bad"}, [][]Field{ok, nil}, ErrNoFields, nil, false},
		{"bad ID", "10-5", AddArgs{ID: "bad"}, [][]Field{ok}, ErrInvalidID, nil, true},
		{"zero ID", "10-5", AddArgs{ID: "0-0"}, [][]Field{ok}, ErrZeroID, nil, true},
		{"bad trim", "10-5", AddArgs{Trim: TrimArgs{Strategy: TrimMaxLen, MaxLen: -1}}, [][]Field{ok}, ErrInvalidArgument, nil, true},
		{"trim conflict", "10-5", AddArgs{Trim: TrimArgs{Strategy: TrimMaxLen, Limit: 5}}, [][]Field{ok}, ErrTrimConflict, nil, true},
		{"ID too small", "10-5", AddArgs{ID: "5-0"}, [][]Field{ok, ok}, ErrIDTooSmall, nil, true},
		{"ms-* too small", "10-5", AddArgs{ID: "9-*"}, [][]Field{ok, ok}, ErrIDTooSmall, nil, true},
		{"explicit ID twice", "10-5", AddArgs{ID: "20-1"}, [][]Field{ok, ok}, ErrIDTooSmall, []string{"20-1"}, false},
		{"sequence runs out half-way", "30-18446744073709551613", AddArgs{ID: "30-*"}, [][]Field{ok, ok, ok}, ErrIDTooSmall, []string{"exhausted"}, false},
		{"stream runs out half-way", "18446744073709551615-18446744073709551614", AddArgs{}, [][]Field{ok, ok}, ErrStreamExhausted, nil, false},
		{"idempotency", "10-5", AddArgs{Idempotency: Idempotency{Producer: "p1", ID: "i1"}}, [][]Field{ok}, ErrInvalidArgument, []string{"Idempotency", `"p1"`}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := NewStream(WithClock(newTestClock(10).now))
			mustAdd(t, s, tc.last, ok...)
			before := snap(t, s)
			got, err := s.AddBatch(tc.args, tc.entries...)
			requireErr(t, err, tc.sentinel, tc.names...)
			assert.Nil(t, got)
			requireUnchanged(t, s, before)
			if tc.addFails {
				_, err := s.Add(tc.args, tc.entries[0]...)
				requireErr(t, err, tc.sentinel)
			}
		})
	}
}

// TestAddBatchIDs: a batch's auto IDs share the one clock reading; "ms-*"
// takes the next sequences of ms.
func TestAddBatchIDs(t *testing.T) {
	clk := newTestClock(1000)
	s := NewStream(WithClock(clk.now))
	e := reading("1234", "19.8")
	got, err := s.AddBatch(AddArgs{}, e, e, e)
	require.NoError(t, err)
	assert.Equal(t, []ID{{1000, 0}, {1000, 1}, {1000, 2}}, got)
	clk.set(900) // behind the last ID: the IDs after it
	got, err = s.AddBatch(AddArgs{ID: "*"}, e, e)
	require.NoError(t, err)
	assert.Equal(t, []ID{{1000, 3}, {1000, 4}}, got)
	got, err = s.AddBatch(AddArgs{ID: "1000-*"}, e, e)
	require.NoError(t, err)
	assert.Equal(t, []ID{{1000, 5}, {1000, 6}}, got)
	got, err = s.AddBatch(AddArgs{ID: "2000-7"}, e)
	require.NoError(t, err)
	assert.Equal(t, []ID{{2000, 7}}, got)
	assert.EqualValues(t, 8, s.Len())
	assert.EqualValues(t, 8, must(s.Info()).EntriesAdded)
}

// TestAddBatchIDsCarry: auto IDs after a last ID near the end of its
// millisecond's sequences end it exactly, or go on in the next
// millisecond from sequence 0, as Adds one after the other do.
func TestAddBatchIDsCarry(t *testing.T) {
	const top = math.MaxUint64
	for _, tc := range []struct {
		last string
		n    int
		want []ID
	}{
		{"1000-18446744073709551612", 3, []ID{{1000, top - 2}, {1000, top - 1}, {1000, top}}},
		{"1000-18446744073709551613", 3, []ID{{1000, top - 1}, {1000, top}, {1001, 0}}},
		{"1000-18446744073709551614", 3, []ID{{1000, top}, {1001, 0}, {1001, 1}}},
		{"1000-18446744073709551615", 2, []ID{{1001, 0}, {1001, 1}}},
	} {
		batch, adds := NewStream(WithClock(newTestClock(900).now)), NewStream(WithClock(newTestClock(900).now))
		e := reading("1234", "19.8")
		mustAdd(t, batch, tc.last, e...)
		mustAdd(t, adds, tc.last, e...)
		got, err := batch.AddBatch(AddArgs{}, slices.Repeat([][]Field{e}, tc.n)...)
		require.NoError(t, err)
		assert.Equal(t, tc.want, got, "after %s", tc.last)
		for i := range tc.n {
			id, err := adds.Add(AddArgs{}, e...)
			require.NoError(t, err)
			assert.Equal(t, tc.want[i], id, "Add %d after %s", i, tc.last)
		}
	}
}

// TestAddBatchWakesReaders: a reader blocked on the stream is woken once
// the whole batch is in, and sees all of it.
func TestAddBatchWakesReaders(t *testing.T) {
	s := NewStream()
	done := make(chan []Entry, 1)
	go func() {
		es, err := s.Read(context.Background(), "$", ReadArgs{Count: 10, Block: BlockForever})
		if err != nil {
			es = nil
		}
		done <- es
	}()
	for !benchHasWaiter(s) {
		time.Sleep(time.Millisecond)
	}
	e := reading("1234", "19.8")
	got, err := s.AddBatch(AddArgs{}, e, e, e)
	require.NoError(t, err)
	es := <-done
	require.Len(t, es, 3)
	for i := range es {
		assert.Equal(t, got[i], es[i].ID)
	}
}

// TestAddBatchDurable: in a durable DB a batch (with its trims) is one
// record of the log, and a reopened DB holds what the batch left.
func TestAddBatchDurable(t *testing.T) {
	dir := t.TempDir()
	clk := newTestClock(5000)
	db := openT(t, dir, clk)
	s := db.Stream("temps")
	mustAdd(t, s, "", reading("1", "2")...)
	s.mu.Lock()
	lsn := s.log.lsn
	s.mu.Unlock()
	entries := make([][]Field, 250)
	for i := range entries {
		entries[i] = reading(strconv.Itoa(1000+i), "19."+strconv.Itoa(i%10))
	}
	_, err := s.AddBatch(AddArgs{Trim: TrimArgs{Strategy: TrimMaxLen, MaxLen: 120}}, entries...)
	require.NoError(t, err)
	s.mu.Lock()
	assert.Equal(t, lsn+1, s.log.lsn, "one record for the batch")
	s.mu.Unlock()
	want := snap(t, s)
	require.NoError(t, db.Close())

	db2 := openT(t, dir, clk)
	s2, ok := db2.Lookup("temps")
	require.True(t, ok)
	assert.Equal(t, want, snap(t, s2))
	assert.EqualValues(t, 120, s2.Len())
}

// TestAddBatchTooLargeForTheLog: a durable batch that would be a record
// larger than the log takes fails with ErrInvalidArgument and changes
// nothing (the log stays usable).
func TestAddBatchTooLargeForTheLog(t *testing.T) {
	db := openT(t, t.TempDir(), newTestClock(5000))
	s := db.Stream("big")
	mustAdd(t, s, "", reading("1", "2")...)
	before := snap(t, s)
	value := strings.Repeat("x", 1<<20) // shared by every entry: 1 MiB of memory
	entries := make([][]Field, 1100)
	for i := range entries {
		entries[i] = []Field{{"v", value}}
	}
	_, err := s.AddBatch(AddArgs{}, entries...)
	requireErr(t, err, ErrInvalidArgument)
	requireUnchanged(t, s, before)
	_, err = s.AddBatch(AddArgs{}, entries[:3]...)
	require.NoError(t, err)
	require.NoError(t, db.Err())
}

// TestAddBatchConcurrent: batches added from several goroutines at once,
// beside single Adds, do not interleave: each batch's entries are
// consecutive in the stream, and nothing is lost.
func TestAddBatchConcurrent(t *testing.T) {
	s := NewStream()
	const writers, batches, size = 4, 50, 7
	e := reading("1234", "19.8")
	entries := make([][]Field, size)
	for i := range entries {
		entries[i] = e
	}
	var wg sync.WaitGroup
	got := make([][][]ID, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range batches {
				ids, err := s.AddBatch(AddArgs{}, entries...)
				if err != nil {
					t.Error(err)
					return
				}
				got[w] = append(got[w], ids)
				if _, err := s.Add(AddArgs{}, e...); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	all, err := s.Range("-", "+", 0)
	require.NoError(t, err)
	require.Len(t, all, writers*batches*(size+1))
	pos := make(map[ID]int, len(all))
	for i, en := range all {
		pos[en.ID] = i
	}
	for _, bs := range got {
		for _, ids := range bs {
			first := pos[ids[0]]
			for j, id := range ids {
				require.Equal(t, first+j, pos[id], "batch %v interleaved", ids)
			}
		}
	}
}

// TestDBAddBatch: DB.AddBatch creates a missing stream (not with
// NoMkStream), a failed batch creates nothing, and in a durable DB a new
// stream and its batch are one record that a reopen finds.
func TestDBAddBatch(t *testing.T) {
	e := reading("1234", "19.8")
	db := NewDB(WithClock(newTestClock(42).now))
	_, err := db.AddBatch("s", AddArgs{NoMkStream: true}, e, e)
	requireErr(t, err, ErrNoStream, `"s"`)
	_, err = db.AddBatch("s", AddArgs{ID: "5-1"}, e, e)
	requireErr(t, err, ErrIDTooSmall, `"5-1"`)
	_, err = db.AddBatch("s", AddArgs{})
	requireErr(t, err, ErrNoFields)
	assert.Zero(t, db.Len(), "a failed batch creates nothing")
	ids, err := db.AddBatch("s", AddArgs{}, e, e)
	require.NoError(t, err)
	assert.Equal(t, []ID{{42, 0}, {42, 1}}, ids)
	ids, err = db.AddBatch("s", AddArgs{NoMkStream: true}, e)
	require.NoError(t, err)
	assert.Equal(t, []ID{{42, 2}}, ids)
	assert.EqualValues(t, 3, db.Stream("s").Len())

	dir := t.TempDir()
	clk := newTestClock(7)
	d := openT(t, dir, clk)
	next := func() uint64 {
		d.dur.j.mu.Lock()
		defer d.dur.j.mu.Unlock()
		return d.dur.j.next
	}
	before := next()
	_, err = d.AddBatch("new", AddArgs{Trim: TrimArgs{Strategy: TrimMaxLen, MaxLen: 2}}, e, e, e)
	require.NoError(t, err)
	assert.Equal(t, before+1, next(), "the new stream and its batch are one record")
	want := snap(t, d.Stream("new"))
	require.NoError(t, d.Close())
	d2 := openT(t, dir, clk)
	s, ok := d2.Lookup("new")
	require.True(t, ok)
	assert.Equal(t, want, snap(t, s))
	assert.EqualValues(t, 2, s.Len())
}
