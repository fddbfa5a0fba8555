package xstream

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestCopy(t *testing.T) {
	clk := newTestClock(expT0.UnixMilli())
	db, other := NewDB(WithClock(clk.now)), NewDB(WithClock(clk.now))
	renameDB(t, db)
	_, err := db.Add("a", AddArgs{ID: "3-1"}, Fields("f", "3")...)
	require.NoError(t, err)
	a, _ := db.Lookup("a")
	_, err = a.DeleteIDs(ID{3, 1}) // the max deleted ID is copied too
	require.NoError(t, err)
	require.NoError(t, db.SetExpiry("a", expT0.Add(time.Hour)))
	want := snap(t, a)

	for _, tc := range []struct {
		to   *DB
		name string
	}{{db, "z"}, {other, "a"}} {
		ok, err := db.Copy("a", tc.to, tc.name, false)
		require.NoError(t, err)
		require.True(t, ok)
		c, found := tc.to.Lookup(tc.name)
		require.True(t, found)
		require.NotSame(t, a, c)
		require.Equal(t, want, snap(t, c), "entries, counters, groups and pending entries")
		at, _ := c.ExpiresAt()
		require.Equal(t, expT0.Add(time.Hour), at)
	}
	// The copy is a stream of its own.
	_, err = db.Add("z", AddArgs{ID: "9-1"}, Fields("f", "v")...)
	require.NoError(t, err)
	requireUnchanged(t, a, want)

	// Without replace an existing destination stays; with it, it goes.
	b, _ := db.Lookup("b")
	bWant := snap(t, b)
	ok, err := db.Copy("a", db, "b", false)
	require.NoError(t, err)
	require.False(t, ok)
	requireUnchanged(t, b, bWant)
	ok, err = db.Copy("a", db, "b", true)
	require.NoError(t, err)
	require.True(t, ok)
	nb, _ := db.Lookup("b")
	require.Equal(t, want, snap(t, nb))
	require.Equal(t, 3, db.Expiring())
}

func TestCopyBadInput(t *testing.T) {
	db := NewDB(WithClock(newTestClock(expT0.UnixMilli()).now))
	renameDB(t, db)
	a, _ := db.Lookup("a")
	want := snap(t, a)
	ok, err := db.Copy("nope", db, "z", true)
	require.False(t, ok)
	requireErr(t, err, ErrNoStream, "nope")
	ok, err = db.Copy("a", db, "a", true)
	require.False(t, ok)
	requireErr(t, err, ErrInvalidArgument, "a")
	requireUnchanged(t, a, want)
	require.Equal(t, []string{"a", "b"}, db.Names(""))
}

func TestCopyBlockedReaders(t *testing.T) {
	ctx := context.Background()
	db := NewDB(WithClock(newTestClock(expT0.UnixMilli()).now))
	renameDB(t, db)
	require.NoError(t, db.CreateGroup("b", "g", "$", GroupOptions{}))
	done := inBackground(func() ([]StreamEntries, error) {
		return db.ReadGroup(ctx, "g", "c", ReadGroupArgs{Block: BlockForever}, "b", ">")
	})
	waitBlocked(t, db, "b", 1)
	_, err := db.Copy("a", db, "b", true) // a's g has 2-1 not yet delivered
	require.NoError(t, err)
	r := <-done
	require.NoError(t, r.err)
	require.Equal(t, []string{"2-1"}, ids(r.out[0].Entries))
}

func TestCopyDurable(t *testing.T) {
	clk := newTestClock(expT0.UnixMilli())
	dir, dir2 := t.TempDir(), t.TempDir()
	db, err := Open(dir, WithClock(clk.now))
	require.NoError(t, err)
	other, err := Open(dir2, WithClock(clk.now))
	require.NoError(t, err)
	renameDB(t, db)
	require.NoError(t, db.SetExpiry("a", expT0.Add(time.Hour)))
	a, _ := db.Lookup("a")
	want := snap(t, a)
	_, err = db.Copy("a", db, "b", true)
	require.NoError(t, err)
	_, err = db.Copy("a", other, "x", false)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	require.NoError(t, other.Close())

	for _, tc := range []struct{ dir, name string }{{dir, "b"}, {dir2, "x"}} {
		db := openT(t, tc.dir, clk)
		c, ok := db.Lookup(tc.name)
		require.True(t, ok)
		require.Equal(t, want, snap(t, c))
		at, _ := c.ExpiresAt()
		require.Equal(t, expT0.Add(time.Hour), at)
	}
}
