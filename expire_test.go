package xstream

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var expT0 = time.UnixMilli(1_700_000_000_000)

func expiresAt(t *testing.T, db *DB, name string) (time.Time, bool) {
	t.Helper()
	s, ok := db.Lookup(name)
	require.True(t, ok, "no stream %q", name)
	return s.ExpiresAt()
}

func TestSetExpiry(t *testing.T) {
	db := NewDB(WithClock(newTestClock(expT0.UnixMilli()).now))
	renameDB(t, db)
	_, ok := expiresAt(t, db, "a")
	require.False(t, ok, "no expiry by default")

	require.NoError(t, db.SetExpiry("a", expT0.Add(1500*time.Microsecond)))
	at, ok := expiresAt(t, db, "a")
	require.True(t, ok)
	require.Equal(t, expT0.Add(time.Millisecond), at, "kept to the millisecond")
	require.Equal(t, 1, db.Expiring())
	require.NoError(t, db.SetExpiry("a", expT0.Add(time.Second))) // again: still one
	require.NoError(t, db.SetExpiry("b", expT0))
	require.Equal(t, 2, db.Expiring())

	require.NoError(t, db.SetExpiry("a", time.Time{}))
	_, ok = expiresAt(t, db, "a")
	require.False(t, ok, "the zero time persists")
	require.Equal(t, 1, db.Expiring())

	// A missing stream: an error naming it, nothing changes.
	requireErr(t, db.SetExpiry("nope", expT0), ErrNoStream, "nope")
	require.Equal(t, 1, db.Expiring())
	require.Equal(t, []string{"a", "b"}, db.Names(""))
}

func TestRemoveExpired(t *testing.T) {
	db := NewDB(WithClock(newTestClock(expT0.UnixMilli()).now))
	renameDB(t, db)
	require.Nil(t, db.RemoveExpired(expT0.Add(time.Hour), "a", "b"), "nothing expires")
	require.NoError(t, db.SetExpiry("a", expT0.Add(time.Second)))

	require.Nil(t, db.RemoveExpired(expT0.Add(time.Second), "a", "b", "nope"), "still there at its expiry time")
	require.Equal(t, []string{"a", "b"}, db.Names(""))
	require.Equal(t, []string{"a"}, db.RemoveExpired(expT0.Add(time.Second+time.Millisecond), "a", "b", "nope"))
	require.Equal(t, []string{"b"}, db.Names(""))
	require.Equal(t, 0, db.Expiring())
}

func TestRemoveExpiredBlockedReaders(t *testing.T) {
	ctx := context.Background()
	db := NewDB(WithClock(newTestClock(expT0.UnixMilli()).now))
	renameDB(t, db)
	_, err := db.ReadGroup(ctx, "g", "c", ReadGroupArgs{}, "a", ">") // drain
	require.NoError(t, err)
	group := inBackground(func() ([]StreamEntries, error) {
		return db.ReadGroup(ctx, "g", "c", ReadGroupArgs{Block: BlockForever}, "a", ">")
	})
	read := inBackground(func() ([]StreamEntries, error) {
		return db.Read(ctx, ReadArgs{Block: BlockForever}, "a", "$")
	})
	waitBlocked(t, db, "a", 2)
	require.NoError(t, db.SetExpiry("a", expT0))
	require.Equal(t, []string{"a"}, db.RemoveExpired(expT0.Add(time.Millisecond), "a"))
	r := <-group
	requireErr(t, r.err, ErrNoStream, "a", "expired")
	_, err = db.Add("a", AddArgs{ID: "9-1"}, Fields("f", "v")...) // a new stream a
	require.NoError(t, err)
	r = <-read
	require.NoError(t, r.err)
	require.Equal(t, []string{"9-1"}, ids(r.out[0].Entries))
}

func TestRemoveExpiredSample(t *testing.T) {
	db := NewDB(WithClock(newTestClock(expT0.UnixMilli()).now))
	for _, name := range []string{"k1", "k2", "k3", "k4", "keep"} {
		_, err := db.Add(name, AddArgs{}, Fields("f", "v")...)
		require.NoError(t, err)
	}
	for i, name := range []string{"k1", "k2", "k3", "k4"} {
		require.NoError(t, db.SetExpiry(name, expT0.Add(time.Duration(i)*time.Second)))
	}
	sampled, removed := db.RemoveExpiredSample(expT0.Add(1500*time.Millisecond), 10)
	require.Equal(t, 4, sampled)
	require.ElementsMatch(t, []string{"k1", "k2"}, removed)
	require.Equal(t, []string{"k3", "k4", "keep"}, db.Names(""))
	sampled, _ = db.RemoveExpiredSample(expT0, 1)
	require.Equal(t, 1, sampled, "at most n")
	sampled, removed = db.RemoveExpiredSample(expT0.Add(time.Hour), 0)
	require.Zero(t, sampled)
	require.Nil(t, removed)
	_, removed = db.RemoveExpiredSample(expT0.Add(time.Hour), 10)
	require.ElementsMatch(t, []string{"k3", "k4"}, removed)
	require.Equal(t, []string{"keep"}, db.Names(""))
	require.Equal(t, 0, db.Expiring())
}

// SampleExpiry sums the time left of the streams it keeps; one at its
// expiry time, kept, has none.
func TestSampleExpiryTTL(t *testing.T) {
	db := NewDB(WithClock(newTestClock(expT0.UnixMilli()).now))
	for i, name := range []string{"k0", "k1", "k2", "k3"} {
		_, err := db.Add(name, AddArgs{}, Fields("f", "v")...)
		require.NoError(t, err)
		require.NoError(t, db.SetExpiry(name, expT0.Add(time.Duration(i)*time.Second)))
	}
	_, err := db.Add("none", AddArgs{}, Fields("f", "v")...)
	require.NoError(t, err)
	x := db.SampleExpiry(expT0.Add(time.Second), 10)
	require.Equal(t, 4, x.Sampled)
	require.Equal(t, []string{"k0"}, x.Removed)
	require.Equal(t, 2, x.TTLs) // k1 is at its expiry: kept, nothing left
	require.Equal(t, 3*time.Second, x.TTLSum)
	require.Equal(t, []string{"k1", "k2", "k3", "none"}, db.Names(""))
	require.Equal(t, ExpirySample{}, db.SampleExpiry(expT0, 0))
}

func TestExpiryRenameAndRemove(t *testing.T) {
	db := NewDB(WithClock(newTestClock(expT0.UnixMilli()).now))
	renameDB(t, db)
	require.NoError(t, db.SetExpiry("a", expT0.Add(time.Second)))
	require.NoError(t, db.SetExpiry("b", expT0.Add(time.Minute)))
	_, err := db.Rename("a", "b", true) // b and its expiry go; a's comes along
	require.NoError(t, err)
	at, ok := expiresAt(t, db, "b")
	require.True(t, ok)
	require.Equal(t, expT0.Add(time.Second), at)
	require.Equal(t, 1, db.Expiring())
	db.Remove("b")
	require.Equal(t, 0, db.Expiring())
	_, err = db.Add("b", AddArgs{}, Fields("f", "v")...)
	require.NoError(t, err)
	_, ok = expiresAt(t, db, "b")
	require.False(t, ok, "a new stream of the name has no expiry")
}

func TestExpiryDurable(t *testing.T) {
	clk := newTestClock(expT0.UnixMilli())
	dir := t.TempDir()
	db, err := Open(dir, WithClock(clk.now))
	require.NoError(t, err)
	renameDB(t, db)
	_, err = db.Add("c", AddArgs{}, Fields("f", "v")...)
	require.NoError(t, err)
	require.NoError(t, db.SetExpiry("a", expT0.Add(time.Second)))
	require.NoError(t, db.SetExpiry("b", expT0.Add(time.Minute)))
	require.NoError(t, db.SetExpiry("b", time.Time{}))
	require.NoError(t, db.SetExpiry("c", expT0))
	require.Equal(t, []string{"c"}, db.RemoveExpired(expT0.Add(time.Millisecond), "c"))
	require.NoError(t, db.Close())

	check := func(db *DB) {
		t.Helper()
		require.Equal(t, []string{"a", "b"}, db.Names(""))
		at, ok := expiresAt(t, db, "a")
		require.True(t, ok)
		require.Equal(t, expT0.Add(time.Second), at)
		_, ok = expiresAt(t, db, "b")
		require.False(t, ok)
		require.Equal(t, 1, db.Expiring())
	}
	db = openT(t, dir, clk) // from the log
	check(db)
	require.NoError(t, db.Snapshot())
	require.NoError(t, db.Close())
	db = openT(t, dir, clk) // from the snapshot
	check(db)
	require.NoError(t, db.SetExpiry("b", expT0.Add(time.Hour)))
	require.NoError(t, db.Close())
	db = openT(t, dir, clk) // the snapshot and the log after it
	require.Equal(t, 2, db.Expiring())
}

func TestSetExpiryIf(t *testing.T) {
	db := NewDB(WithClock(newTestClock(expT0.UnixMilli()).now))
	_, err := db.Add("k", AddArgs{}, Fields("f", "v")...)
	require.NoError(t, err)
	at := func(s int) time.Time { return expT0.Add(time.Duration(s) * time.Second) }
	expiry := func() int64 {
		s, _ := db.Lookup("k")
		e, ok := s.ExpiresAt()
		if !ok {
			return 0
		}
		return e.Sub(expT0).Milliseconds() / 1000
	}
	for _, tc := range []struct {
		at   int
		cond ExpiryCond
		set  bool
		then int64
	}{
		{10, ExpiryXX, false, 0}, // none to replace
		{10, ExpiryGT, false, 0}, // none is infinite
		{10, ExpiryLT, true, 10}, // earlier than infinite
		{20, ExpiryNX, false, 10},
		{5, ExpiryGT, false, 10},
		{20, ExpiryGT | ExpiryXX, true, 20},
		{30, ExpiryLT, false, 20},
		{20, ExpiryLT, false, 20}, // not earlier
		{15, ExpiryXX, true, 15},
		{0, ExpiryXX, true, 0}, // the zero time: no expiry
		{40, ExpiryNX, true, 40},
		{50, 0, true, 50},
	} {
		when := time.Time{}
		if tc.at != 0 {
			when = at(tc.at)
		}
		set, err := db.SetExpiryIf("k", when, tc.cond)
		require.NoError(t, err)
		require.Equal(t, tc.set, set, "%+v", tc)
		require.Equal(t, tc.then, expiry(), "%+v", tc)
	}
	for _, bad := range []ExpiryCond{ExpiryNX | ExpiryXX, ExpiryNX | ExpiryGT, ExpiryGT | ExpiryLT} {
		set, err := db.SetExpiryIf("k", at(99), bad)
		requireErr(t, err, ErrInvalidArgument, "k", "do not go together")
		require.False(t, set)
		require.Equal(t, int64(50), expiry(), "unchanged")
	}
	set, err := db.SetExpiryIf("nosuch", at(1), ExpiryNX)
	requireErr(t, err, ErrNoStream, "nosuch")
	require.False(t, set)
}

// Of many SetExpiryIf NX at once, one sets the expiry.
func TestSetExpiryIfConcurrent(t *testing.T) {
	oneWins(t, func(db *DB, name string, i int) bool {
		set, _ := db.SetExpiryIf(name, expT0.Add(time.Duration(i+1)*time.Hour), ExpiryNX)
		return set
	})
}

// oneWins runs, in each of 100 rounds on a new stream without an expiry,
// call from 8 goroutines at once (i is the goroutine's number), and fails
// the test unless exactly one reports true.
func oneWins(t *testing.T, call func(db *DB, name string, i int) bool) {
	db := NewDB()
	for round := range 100 {
		name := "k" + strconv.Itoa(round)
		_, err := db.Add(name, AddArgs{}, Fields("f", "v")...)
		require.NoError(t, err)
		var wins atomic.Int32
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if call(db, name, i) {
					wins.Add(1)
				}
			}()
		}
		wg.Wait()
		require.Equal(t, int32(1), wins.Load(), "round %d", round)
	}
}

// RemoveIfExpiry removes the stream when its expiry meets the condition
// against the time given, and changes nothing when it does not.
func TestRemoveIfExpiry(t *testing.T) {
	db := NewDB(WithClock(newTestClock(expT0.UnixMilli()).now))
	at := func(s int) time.Time { return expT0.Add(time.Duration(s) * time.Second) }
	for _, tc := range []struct {
		expiry  int // seconds after expT0; 0: none
		at      int
		cond    ExpiryCond
		removed bool
	}{
		{0, -5, 0, true},
		{0, -5, ExpiryNX, true},
		{10, -5, ExpiryNX, false},
		{0, -5, ExpiryXX, false},
		{10, -5, ExpiryXX, true},
		{0, -5, ExpiryGT, false}, // none is infinite
		{10, -5, ExpiryGT, false},
		{-10, -5, ExpiryGT | ExpiryXX, true},
		{-5, -5, ExpiryGT, false}, // not later
		{0, -5, ExpiryLT, true},
		{10, -5, ExpiryLT, true},
		{-10, -5, ExpiryLT, false},
		{-5, -5, ExpiryLT, false}, // not earlier
	} {
		_, err := db.Add("k", AddArgs{}, Fields("f", "v")...)
		require.NoError(t, err)
		if tc.expiry != 0 {
			require.NoError(t, db.SetExpiry("k", at(tc.expiry)))
		}
		removed, err := db.RemoveIfExpiry("k", at(tc.at), tc.cond)
		require.NoError(t, err)
		require.Equal(t, tc.removed, removed, "%+v", tc)
		s, ok := db.Lookup("k")
		require.Equal(t, !tc.removed, ok, "%+v", tc)
		if ok {
			e, has := s.ExpiresAt()
			require.Equal(t, tc.expiry != 0, has, "%+v: expiry unchanged", tc)
			if has {
				require.Equal(t, at(tc.expiry), e, "%+v: expiry unchanged", tc)
			}
			require.Equal(t, int64(1), s.Len())
		}
		db.Remove("k")
	}
	require.Equal(t, 0, db.Expiring())

	_, err := db.Add("k", AddArgs{}, Fields("f", "v")...)
	require.NoError(t, err)
	for _, bad := range []ExpiryCond{ExpiryNX | ExpiryXX, ExpiryNX | ExpiryLT, ExpiryGT | ExpiryLT} {
		removed, err := db.RemoveIfExpiry("k", at(-1), bad)
		requireErr(t, err, ErrInvalidArgument, "RemoveIfExpiry", "k", "do not go together")
		require.False(t, removed)
		_, ok := db.Lookup("k")
		require.True(t, ok, "unchanged")
	}
	removed, err := db.RemoveIfExpiry("nosuch", at(-1), ExpiryNX)
	requireErr(t, err, ErrNoStream, "nosuch")
	require.False(t, removed)
	require.Equal(t, []string{"k"}, db.Names(""))
}

// RemoveIfExpiry's removal is in the log: the stream stays removed after
// a reopen; one it kept stays with its expiry.
func TestRemoveIfExpiryDurable(t *testing.T) {
	clk := newTestClock(expT0.UnixMilli())
	dir := t.TempDir()
	db, err := Open(dir, WithClock(clk.now))
	require.NoError(t, err)
	for _, name := range []string{"a", "b"} {
		_, err = db.Add(name, AddArgs{}, Fields("f", "v")...)
		require.NoError(t, err)
		require.NoError(t, db.SetExpiry(name, expT0.Add(time.Hour)))
	}
	removed, err := db.RemoveIfExpiry("a", expT0.Add(-time.Second), ExpiryXX)
	require.NoError(t, err)
	require.True(t, removed)
	removed, err = db.RemoveIfExpiry("b", expT0.Add(-time.Second), ExpiryNX)
	require.NoError(t, err)
	require.False(t, removed)
	require.NoError(t, db.Close())
	db = openT(t, dir, clk)
	require.Equal(t, []string{"b"}, db.Names(""))
	at, ok := expiresAt(t, db, "b")
	require.True(t, ok)
	require.Equal(t, expT0.Add(time.Hour), at)
}

// Of RemoveIfExpiry NX and SetExpiryIf NX calls at once, one passes:
// the removal's condition is checked under the lock that SetExpiryIf
// takes to set the expiry.
func TestRemoveIfExpiryConcurrent(t *testing.T) {
	oneWins(t, func(db *DB, name string, i int) bool {
		if i%2 == 0 {
			removed, _ := db.RemoveIfExpiry(name, expT0.Add(-time.Hour), ExpiryNX)
			return removed
		}
		set, _ := db.SetExpiryIf(name, expT0.Add(time.Duration(i)*time.Hour), ExpiryNX)
		return set
	})
}
