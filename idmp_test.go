package xstream

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// idem returns the AddArgs of an IDMP add.
func idem(producer, iid string) AddArgs {
	return AddArgs{Idempotency: Idempotency{Producer: producer, ID: iid}}
}

// idemAuto returns the AddArgs of an IDMPAUTO add.
func idemAuto(producer string) AddArgs {
	return AddArgs{Idempotency: Idempotency{Producer: producer, Auto: true}}
}

func mustAddArgs(t testing.TB, s *Stream, args AddArgs, fields ...Field) ID {
	t.Helper()
	id, err := s.Add(args, fields...)
	require.NoError(t, err)
	return id
}

// clockedStream returns a checked stream on a test clock at 1000 s.
func clockedStream(t testing.TB) (*Stream, *testClock) {
	clk := newTestClock(1_000_000)
	s := NewStream(WithClock(clk.now))
	checkStream(t, s)
	return s, clk
}

func TestIdempotentRepeatReturnsFirstID(t *testing.T) {
	s, clk := clockedStream(t)
	require.Nil(t, must(s.Info()).Idempotence, "a stream that never used idempotence")
	require.Equal(t, IdempotenceInfo{IdempotenceConfig: IdempotenceConfig{100 * time.Second, 100}}, s.IdempotenceInfo(), "the defaults")
	mustAdd(t, s, "")
	require.Nil(t, must(s.Info()).Idempotence, "a plain add")
	id1 := mustAddArgs(t, s, idem("p1", "payment-abc"), Fields("amount", "100", "currency", "USD")...)
	clk.advance(time.Millisecond)
	id2 := mustAddArgs(t, s, idem("p1", "payment-abc"), Fields("amount", "200", "currency", "EUR")...)
	require.Equal(t, id1, id2)
	require.EqualValues(t, 2, s.Len())
	es, err := s.Range("-", "+", 0)
	require.NoError(t, err)
	require.Equal(t, Fields("amount", "100", "currency", "USD"), es[1].Fields, "the first add's fields stay")
	info := must(s.Info())
	require.Equal(t, &IdempotenceInfo{
		IdempotenceConfig: IdempotenceConfig{DefaultIdempotenceDuration, DefaultIdempotenceMaxSize},
		Producers:         1, Tracked: 1, Added: 1, Duplicates: 1,
	}, info.Idempotence)
	require.EqualValues(t, 2, info.EntriesAdded)
	require.Equal(t, *info.Idempotence, s.IdempotenceInfo())

	// Different IDs and producers are different adds; producers are
	// kept apart.
	a := mustAddArgs(t, s, idem("p1", "req-2"), Fields("f", "v")...)
	b := mustAddArgs(t, s, idem("p2", "payment-abc"), Fields("f", "v")...)
	require.NotEqual(t, id1, a)
	require.NotEqual(t, id1, b)
	require.Equal(t, b, mustAddArgs(t, s, idem("p2", "payment-abc"), Fields("f", "dup")...))
	require.EqualValues(t, 4, s.Len())
	idmp := s.IdempotenceInfo()
	require.Equal(t, 2, idmp.Producers)
	require.Equal(t, 3, idmp.Tracked)
	require.EqualValues(t, 3, idmp.Added)
	require.EqualValues(t, 2, idmp.Duplicates)

	// Binary-safe IDs: "a\x00b" and "a" differ.
	c := mustAddArgs(t, s, idem("p\x00", "a\x00b"), Fields("f", "v")...)
	require.NotEqual(t, c, mustAddArgs(t, s, idem("p\x00", "a"), Fields("f", "v")...))
	require.Equal(t, c, mustAddArgs(t, s, idem("p\x00", "a\x00b"), Fields("f", "v")...))
}

func TestIdempotentAutoHashesPairsInAnyOrder(t *testing.T) {
	s, _ := clockedStream(t)
	id := mustAddArgs(t, s, idemAuto("p1"), Fields("field1", "a", "field2", "b", "field3", "c")...)
	require.Equal(t, id, mustAddArgs(t, s, idemAuto("p1"), Fields("field2", "b", "field3", "c", "field1", "a")...))
	require.EqualValues(t, 1, s.Len())
	distinct := [][]Field{
		Fields("field3", "c", "field1", "x", "field2", "b"), // a value differs
		Fields("field1", "a", "field2", "b"),                // a pair less
		Fields("fieldX", "a", "field2", "b", "field3", "c"), // a name differs
		Fields("field1", "ab", "field2", "", "field3", "c"), // bytes move between values
		Fields("f", "v", "f", "v"),                          // a repeated pair
		Fields("f", "v"),
		Fields("f", ""),
		Fields("", "f"),
	}
	seen := map[ID]bool{id: true}
	for _, fs := range distinct {
		got := mustAddArgs(t, s, idemAuto("p1"), fs...)
		require.False(t, seen[got], "%q was taken for a repeat", fs)
		seen[got] = true
		require.Equal(t, got, mustAddArgs(t, s, idemAuto("p1"), fs...), "%q repeated", fs)
	}
	// Another producer with the same pairs adds.
	require.NotEqual(t, id, mustAddArgs(t, s, idemAuto("p2"), Fields("field1", "a", "field2", "b", "field3", "c")...))
	require.EqualValues(t, len(distinct)+2, s.Len())
	// IDMP and IDMPAUTO of one producer share its IDs: the auto ID is
	// the hash, which an IDMP add may give explicitly.
	iid := autoIID(Fields("k", "v"))
	first := mustAddArgs(t, s, idem("p3", iid), Fields("other", "fields")...)
	require.Equal(t, first, mustAddArgs(t, s, idemAuto("p3"), Fields("k", "v")...))
}

func TestIdempotentBadArguments(t *testing.T) {
	s, _ := clockedStream(t)
	mustAddArgs(t, s, idem("p1", "x"), Fields("f", "v")...)
	before := snap(t, s)
	cases := []struct {
		args     AddArgs
		fields   []Field
		sentinel error
		names    []string
	}{
		{AddArgs{Idempotency: Idempotency{ID: "x"}}, Fields("f", "v"), ErrInvalidArgument, []string{"empty producer", `"x"`}},
		{AddArgs{Idempotency: Idempotency{Auto: true}}, Fields("f", "v"), ErrInvalidArgument, []string{"empty producer"}},
		{idem("p1", ""), Fields("f", "v"), ErrInvalidArgument, []string{"empty idempotent ID", `"p1"`}},
		{AddArgs{Idempotency: Idempotency{Producer: "p1", ID: "x", Auto: true}}, Fields("f", "v"), ErrInvalidArgument, []string{"with Auto", `"x"`}},
		{AddArgs{ID: "5-1", Idempotency: Idempotency{Producer: "p1", ID: "x"}}, Fields("f", "v"), ErrIdempotentWithID, []string{"auto-generated", `"p1"`}},
		{AddArgs{ID: "5", Idempotency: Idempotency{Producer: "p1", Auto: true}}, Fields("f", "v"), ErrIdempotentWithID, []string{`"p1"`}},
		{AddArgs{ID: "5-*", Idempotency: Idempotency{Producer: "p1", ID: "x"}}, Fields("f", "v"), ErrIdempotentWithID, nil},
		// A bad ID is reported before the idempotency, as Redis does.
		{AddArgs{ID: "f", Idempotency: Idempotency{Producer: "p1", ID: "x"}}, Fields("f", "v"), ErrInvalidID, nil},
		{idem("p1", "x"), nil, ErrNoFields, nil},
		{AddArgs{Trim: TrimArgs{Strategy: TrimMaxLen, MaxLen: -1}, Idempotency: Idempotency{Producer: "p1", ID: "y"}}, Fields("f", "v"), ErrInvalidArgument, nil},
	}
	for _, c := range cases {
		_, err := s.Add(c.args, c.fields...)
		requireErr(t, err, c.sentinel, c.names...)
		requireUnchanged(t, s, before)
	}
}

func TestIdempotenceWindowByTime(t *testing.T) {
	s, clk := clockedStream(t)
	require.NoError(t, s.SetIdempotence(IdempotenceConfig{Duration: 5 * time.Second}))
	id := mustAddArgs(t, s, idem("p1", "req-1"), Fields("f", "v")...)
	require.Equal(t, clk.now().UnixMilli(), int64(id.Ms))
	clk.advance(5*time.Second - time.Millisecond)
	require.Equal(t, id, mustAddArgs(t, s, idem("p1", "req-1"), Fields("f", "v")...), "1ms before the window ends")
	clk.advance(time.Millisecond)
	again := mustAddArgs(t, s, idem("p1", "req-1"), Fields("f", "v")...)
	require.NotEqual(t, id, again, "the window is 5s from the entry's ms")
	require.EqualValues(t, 2, s.Len())
	require.Equal(t, 1, s.IdempotenceInfo().Tracked, "the aged ID was dropped")
	require.Equal(t, again, mustAddArgs(t, s, idem("p1", "req-1"), Fields("f", "v")...))

	// Another producer's add drops the aged IDs of every producer, and
	// the producers left with none, once a second at most.
	mustAddArgs(t, s, idem("p2", "a"), Fields("f", "v")...)
	require.Equal(t, IdempotenceInfo{IdempotenceConfig: IdempotenceConfig{5 * time.Second, 100}, Producers: 2, Tracked: 2, Added: 3, Duplicates: 2}, s.IdempotenceInfo())
	clk.advance(time.Hour)
	mustAddArgs(t, s, idem("p2", "b"), Fields("f", "v")...)
	require.Equal(t, IdempotenceInfo{IdempotenceConfig: IdempotenceConfig{5 * time.Second, 100}, Producers: 1, Tracked: 1, Added: 4, Duplicates: 2}, s.IdempotenceInfo(),
		"p1 and its aged req-1 forgotten, p2's a dropped")
	clk.advance(4500 * time.Millisecond)
	mustAddArgs(t, s, idem("p1", "x"), Fields("f", "v")...) // a sweep; b is 4.5s old
	clk.advance(500 * time.Millisecond)
	mustAddArgs(t, s, idem("p1", "y"), Fields("f", "v")...)
	require.Equal(t, 2, s.IdempotenceInfo().Producers, "no sweep within the second: p2's aged b held")
	clk.advance(500 * time.Millisecond)
	mustAddArgs(t, s, idem("p1", "z"), Fields("f", "v")...)
	require.Equal(t, 1, s.IdempotenceInfo().Producers, "the sweep a second after the last")

	// The window counts from the entry's ID: with the clock set back
	// (the ID stays ahead of it) nothing ages.
	old := mustAddArgs(t, s, idem("p1", "back"), Fields("f", "v")...)
	clk.advance(-2 * time.Hour)
	require.Equal(t, old, mustAddArgs(t, s, idem("p1", "back"), Fields("f", "v")...))
}

func TestIdempotenceWindowBySize(t *testing.T) {
	s, clk := clockedStream(t)
	mustAddArgs(t, s, idem("p1", "init"), Fields("f", "init")...)
	require.NoError(t, s.SetIdempotence(IdempotenceConfig{MaxSize: 3, Duration: 60 * time.Second}))
	var p1, p2 []ID
	for i := 1; i <= 3; i++ {
		p1 = append(p1, mustAddArgs(t, s, idem("p1", fmt.Sprint("req-", i)), Fields("f", "v")...))
		clk.advance(time.Millisecond)
	}
	for i := 1; i <= 3; i++ {
		p2 = append(p2, mustAddArgs(t, s, idem("p2", fmt.Sprint("req-", i)), Fields("f", "v")...))
	}
	for i := 1; i <= 3; i++ {
		require.Equal(t, p1[i-1], mustAddArgs(t, s, idem("p1", fmt.Sprint("req-", i)), Fields("f", "dup")...))
		require.Equal(t, p2[i-1], mustAddArgs(t, s, idem("p2", fmt.Sprint("req-", i)), Fields("f", "dup")...), "each producer has its own max size")
	}
	mustAddArgs(t, s, idem("p1", "req-4"), Fields("f", "v")...)
	require.NotEqual(t, p1[0], mustAddArgs(t, s, idem("p1", "req-1"), Fields("f", "new")...), "req-1 was the oldest")
	require.NotEqual(t, p1[1], mustAddArgs(t, s, idem("p1", "req-2"), Fields("f", "new")...), "req-2 went for the new req-1")
	require.Equal(t, 6, s.IdempotenceInfo().Tracked)
	require.EqualValues(t, 1+3+3+3, s.Len())

	// Wraparound: the last 8 of 100 are remembered.
	s2, _ := clockedStream(t)
	mustAddArgs(t, s2, idem("p1", "init"), Fields("f", "init")...)
	require.NoError(t, s2.SetIdempotence(IdempotenceConfig{MaxSize: 8}))
	var got []ID
	for i := 1; i <= 100; i++ {
		got = append(got, mustAddArgs(t, s2, idem("p1", fmt.Sprint("req-", i)), Fields("f", "v")...))
	}
	for i := 93; i <= 100; i++ {
		require.Equal(t, got[i-1], mustAddArgs(t, s2, idem("p1", fmt.Sprint("req-", i)), Fields("f", "dup")...))
	}
	for i := 1; i <= 92; i++ {
		require.NotEqual(t, got[i-1], mustAddArgs(t, s2, idem("p1", fmt.Sprint("req-", i)), Fields("f", "new")...))
	}
	require.EqualValues(t, 193, s2.Len())
	info := s2.IdempotenceInfo()
	require.Equal(t, 8, info.Tracked)
	require.EqualValues(t, 1+100+92, info.Added)
	require.EqualValues(t, 8, info.Duplicates)
}

func TestSetIdempotence(t *testing.T) {
	s, _ := clockedStream(t)
	id1 := mustAddArgs(t, s, idem("p1", "req-1"), Fields("f", "v")...)
	mustAddArgs(t, s, idem("p2", "req-1"), Fields("f", "v")...)
	require.Equal(t, id1, mustAddArgs(t, s, idem("p1", "req-1"), Fields("f", "v")...))

	// The values the stream has: nothing forgotten.
	require.NoError(t, s.SetIdempotence(IdempotenceConfig{Duration: 100 * time.Second, MaxSize: 100}))
	require.NoError(t, s.SetIdempotence(IdempotenceConfig{MaxSize: 100}))
	require.Equal(t, id1, mustAddArgs(t, s, idem("p1", "req-1"), Fields("f", "v")...))
	require.Equal(t, IdempotenceInfo{IdempotenceConfig: IdempotenceConfig{100 * time.Second, 100}, Producers: 2, Tracked: 2, Added: 2, Duplicates: 2}, s.IdempotenceInfo())

	// A change forgets every producer's IDs, keeps the counters.
	require.NoError(t, s.SetIdempotence(IdempotenceConfig{Duration: 60 * time.Second}))
	require.Equal(t, IdempotenceInfo{IdempotenceConfig: IdempotenceConfig{60 * time.Second, 100}, Added: 2, Duplicates: 2}, s.IdempotenceInfo())
	n := s.Len()
	new1 := mustAddArgs(t, s, idem("p1", "req-1"), Fields("f", "v")...)
	require.NotEqual(t, id1, new1)
	require.Equal(t, n+1, s.Len())
	require.Equal(t, new1, mustAddArgs(t, s, idem("p1", "req-1"), Fields("f", "v")...))
	require.NoError(t, s.SetIdempotence(IdempotenceConfig{MaxSize: 5000}))
	require.Equal(t, IdempotenceInfo{IdempotenceConfig: IdempotenceConfig{60 * time.Second, 5000}, Added: 3, Duplicates: 3}, s.IdempotenceInfo())
	// The limits themselves are allowed.
	require.NoError(t, s.SetIdempotence(IdempotenceConfig{Duration: time.Second, MaxSize: 1}))
	require.NoError(t, s.SetIdempotence(IdempotenceConfig{Duration: 24 * time.Hour, MaxSize: 10000}))

	mustAddArgs(t, s, idem("p1", "req-9"), Fields("f", "v")...)
	before := snap(t, s)
	for _, c := range []struct {
		c     IdempotenceConfig
		names []string
	}{
		{IdempotenceConfig{}, []string{"neither"}},
		{IdempotenceConfig{Duration: -time.Second}, []string{"-1s"}},
		{IdempotenceConfig{Duration: 24*time.Hour + time.Second}, []string{"24h0m1s"}},
		{IdempotenceConfig{Duration: 1500 * time.Millisecond, MaxSize: 7}, []string{"1.5s", "7"}},
		{IdempotenceConfig{Duration: time.Millisecond}, []string{"1ms"}},
		{IdempotenceConfig{MaxSize: -1}, []string{"-1"}},
		{IdempotenceConfig{MaxSize: 10001, Duration: 5 * time.Second}, []string{"10001", "5s"}},
	} {
		requireErr(t, s.SetIdempotence(c.c), ErrInvalidArgument, c.names...)
		requireUnchanged(t, s, before)
	}
}

func TestIdempotentAddAndTrimDelete(t *testing.T) {
	s, clk := clockedStream(t)
	id := mustAddArgs(t, s, idem("p1", "a"), Fields("f", "1")...)
	clk.advance(time.Millisecond)
	mustAdd(t, s, "", Fields("f", "2")...)

	// A repeat does not trim, even with a trim that would remove entries.
	trim := AddArgs{Trim: TrimArgs{Strategy: TrimMaxLen, MaxLen: 1}, Idempotency: Idempotency{Producer: "p1", ID: "a"}}
	require.Equal(t, id, mustAddArgs(t, s, trim, Fields("f", "3")...))
	require.EqualValues(t, 2, s.Len())
	// A new ID adds and trims.
	trim.Idempotency.ID = "b"
	b := mustAddArgs(t, s, trim, Fields("f", "4")...)
	require.EqualValues(t, 1, s.Len())

	// The trimmed entry's ID is still remembered: the repeat adds
	// nothing and returns the gone entry's ID.
	require.Equal(t, id, mustAddArgs(t, s, idem("p1", "a"), Fields("f", "5")...))
	n, err := s.Delete(b.String())
	require.NoError(t, err)
	require.EqualValues(t, 1, n)
	require.Equal(t, b, mustAddArgs(t, s, idem("p1", "b"), Fields("f", "6")...))
	require.EqualValues(t, 0, s.Len())
}

func TestDBIdempotence(t *testing.T) {
	db := NewDB()
	_, err := db.Add("s", AddArgs{NoMkStream: true, Idempotency: Idempotency{Producer: "p", ID: "i"}}, Fields("f", "v")...)
	requireErr(t, err, ErrNoStream, `"s"`)
	requireErr(t, db.SetIdempotence("s", IdempotenceConfig{MaxSize: 3}), ErrNoStream, `"s"`)
	requireErr(t, db.SetIdempotence("s", IdempotenceConfig{}), ErrInvalidArgument, "neither")
	require.Zero(t, db.Len(), "nothing created")

	id, err := db.Add("s", idem("p", "i"), Fields("f", "v")...)
	require.NoError(t, err)
	again, err := db.Add("s", AddArgs{NoMkStream: true, Idempotency: Idempotency{Producer: "p", ID: "i"}}, Fields("f", "v")...)
	require.NoError(t, err)
	require.Equal(t, id, again)
	require.NoError(t, db.SetIdempotence("s", IdempotenceConfig{MaxSize: 3}))
	s, _ := db.Lookup("s")
	require.Equal(t, 3, s.IdempotenceInfo().MaxSize)

	// Through the Engine.
	e := Local(db)
	require.NoError(t, SetIdempotence(context.Background(), e, "s", IdempotenceConfig{Duration: 7 * time.Second}))
	info, err := e.Info(context.Background(), "s")
	require.NoError(t, err)
	require.Equal(t, IdempotenceConfig{7 * time.Second, 3}, info.Idempotence.IdempotenceConfig)
	requireErr(t, SetIdempotence(context.Background(), bareEngine{e}, "s", IdempotenceConfig{MaxSize: 1}), errors.ErrUnsupported, "SetIdempotence")

	// A stream removed from its DB is not set through the DB.
	old := s
	db.Remove("s")
	requireErr(t, db.SetIdempotence("s", IdempotenceConfig{MaxSize: 9}), ErrNoStream)
	require.Equal(t, 3, old.IdempotenceInfo().MaxSize)
}

func TestIdempotentConcurrentRepeats(t *testing.T) {
	s, _ := clockedStream(t)
	const workers, rounds = 8, 50
	got := make([][]ID, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for r := range rounds {
				id, err := s.Add(idem(fmt.Sprint("p", r%3), fmt.Sprint("req-", r)), Fields("w", fmt.Sprint(w))...)
				if err != nil {
					t.Error(err)
					return
				}
				got[w] = append(got[w], id)
			}
		})
	}
	wg.Wait()
	require.EqualValues(t, rounds, s.Len(), "one entry per idempotent ID")
	for w := 1; w < workers; w++ {
		require.Equal(t, got[0], got[w])
	}
	info := s.IdempotenceInfo()
	require.EqualValues(t, rounds, info.Added)
	require.EqualValues(t, (workers-1)*rounds, info.Duplicates)
}

func TestIdempotenceDurable(t *testing.T) {
	for _, viaSnapshot := range []bool{false, true} {
		t.Run(fmt.Sprint("snapshot=", viaSnapshot), func(t *testing.T) {
			dir := t.TempDir()
			clk := newTestClock(1_000_000)
			db, err := Open(dir, WithClock(clk.now))
			require.NoError(t, err)
			_, err = db.Add("s", AddArgs{}, Fields("plain", "entry")...)
			require.NoError(t, err)
			require.NoError(t, db.SetIdempotence("s", IdempotenceConfig{Duration: 75 * time.Second, MaxSize: 3}))
			var ids []ID
			for i := range 5 {
				id, err := db.Add("s", idem("p1", fmt.Sprint("req-", i)), Fields("f", "v")...)
				require.NoError(t, err)
				ids = append(ids, id)
				clk.advance(time.Second)
			}
			a, err := db.Add("s", idemAuto("p2"), Fields("k", "v", "k2", "v2")...)
			require.NoError(t, err)
			_, err = db.Add("s", idem("p1", "req-4"), Fields("f", "dup")...)
			require.NoError(t, err)
			if viaSnapshot {
				require.NoError(t, db.Snapshot())
			}
			s, _ := db.Lookup("s")
			before := s.IdempotenceInfo()
			dump := dumpDB(t, db)
			require.NoError(t, db.Close())

			db = openT(t, dir, clk)
			require.Equal(t, dump, dumpDB(t, db))
			checkDB(t, db)
			s, _ = db.Lookup("s")
			require.Equal(t, before, s.IdempotenceInfo())
			require.Equal(t, IdempotenceInfo{IdempotenceConfig: IdempotenceConfig{75 * time.Second, 3}, Producers: 2, Tracked: 4, Added: 6, Duplicates: 1}, before)
			n := s.Len()
			for i := 2; i < 5; i++ {
				id, err := db.Add("s", idem("p1", fmt.Sprint("req-", i)), Fields("f", "again")...)
				require.NoError(t, err)
				require.Equal(t, ids[i], id)
			}
			id, err := db.Add("s", idemAuto("p2"), Fields("k2", "v2", "k", "v")...)
			require.NoError(t, err)
			require.Equal(t, a, id)
			id, err = db.Add("s", idem("p1", "req-1"), Fields("f", "again")...)
			require.NoError(t, err)
			require.NotEqual(t, ids[1], id, "req-1 was evicted before the restart")
			require.Equal(t, n+1, s.Len())
			// The window goes on aging across the restart.
			clk.advance(75 * time.Second)
			id, err = db.Add("s", idem("p1", "req-4"), Fields("f", "late")...)
			require.NoError(t, err)
			require.NotEqual(t, ids[4], id)
		})
	}
}

// idmpDump describes the idempotence state of s, with the IDs it
// remembers producer by producer, oldest first, as a line of dumpDB and
// probeDB ("" for a stream without).
func idmpDump(s *Stream) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	c := s.copyIdmpLocked()
	if c == nil {
		return ""
	}
	slices.SortFunc(c.producers, func(a, b idmpProducerCopy) int { return cmp.Compare(a.name, b.name) })
	return fmt.Sprintf("  idempotence %+v %+v\n", s.idmpInfoLocked(), c.producers)
}

// A repeat is answered before the ID is made, as xaddCommand looks the ID
// up before it checks the stream's last ID: on an exhausted stream a
// repeat gets its ID, a new idempotent ID ErrStreamExhausted, with nothing
// changed.
func TestIdempotentRepeatOnExhaustedStream(t *testing.T) {
	s, _ := clockedStream(t)
	id := mustAddArgs(t, s, idem("p", "i"), Fields("f", "v")...)
	require.NoError(t, s.SetID(SetIDArgs{LastID: MaxID().String(), EntriesAdded: -1}))
	require.Equal(t, id, mustAddArgs(t, s, idem("p", "i"), Fields("f", "v")...))
	before := snap(t, s)
	_, err := s.Add(idem("p", "j"), Fields("f", "v")...)
	requireErr(t, err, ErrStreamExhausted, MaxID().String())
	requireUnchanged(t, s, before)
}

// The add that makes a stream in a durable DB can be idempotent: its
// record (creation, entry, remembered ID) survives a reopen.
func TestIdempotentAddMakesDurableStream(t *testing.T) {
	dir := t.TempDir()
	clk := newTestClock(1_000_000)
	db, err := Open(dir, WithClock(clk.now))
	require.NoError(t, err)
	id, err := db.Add("new", idem("p", "i"), Fields("f", "v")...)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	db = openT(t, dir, clk)
	again, err := db.Add("new", idem("p", "i"), Fields("f", "v")...)
	require.NoError(t, err)
	require.Equal(t, id, again)
	s, _ := db.Lookup("new")
	require.EqualValues(t, 1, s.Len())
	require.Equal(t, IdempotenceInfo{IdempotenceConfig: IdempotenceConfig{100 * time.Second, 100}, Producers: 1, Tracked: 1, Added: 1, Duplicates: 1}, s.IdempotenceInfo())
}
