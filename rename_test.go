package xstream

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// renameDB has "a" with entries 1-1 and 2-1, a group g that read 1-1 (to
// consumer c, pending), and "b" with entry 5-1.
func renameDB(t *testing.T, db *DB) {
	t.Helper()
	ctx := context.Background()
	for _, id := range []string{"1-1", "2-1"} {
		_, err := db.Add("a", AddArgs{ID: id}, Fields("f", id)...)
		require.NoError(t, err)
	}
	require.NoError(t, db.CreateGroup("a", "g", "0", GroupOptions{}))
	_, err := db.ReadGroup(ctx, "g", "c", ReadGroupArgs{Count: 1}, "a", ">")
	require.NoError(t, err)
	_, err = db.Add("b", AddArgs{ID: "5-1"}, Fields("f", "b")...)
	require.NoError(t, err)
}

func TestRenameMovesEverything(t *testing.T) {
	db := NewDB(WithClock(newTestClock(1_700_000_000_000).now))
	renameDB(t, db)
	a, _ := db.Lookup("a")
	before := snap(t, a)

	ok, err := db.Rename("a", "z", false)
	require.NoError(t, err)
	require.True(t, ok)
	_, found := db.Lookup("a")
	require.False(t, found, "the old name is gone")
	z, found := db.Lookup("z")
	require.True(t, found)
	require.Same(t, a, z, "the same stream, under its new name")
	require.Equal(t, "z", z.Name())
	require.Equal(t, before, snap(t, z), "entries, groups and pending entries moved")
	require.Equal(t, []string{"b", "z"}, db.Names(""))
}

func TestRenameReplace(t *testing.T) {
	db := NewDB(WithClock(newTestClock(1_700_000_000_000).now))
	renameDB(t, db)
	a, _ := db.Lookup("a")
	b, _ := db.Lookup("b")
	before := snap(t, b)

	// RENAMENX onto an existing stream changes nothing.
	ok, err := db.Rename("a", "b", false)
	require.NoError(t, err)
	require.False(t, ok)
	got, _ := db.Lookup("b")
	require.Same(t, b, got)
	requireUnchanged(t, b, before)
	got, _ = db.Lookup("a")
	require.Same(t, a, got)

	// RENAME replaces it.
	ok, err = db.Rename("a", "b", true)
	require.NoError(t, err)
	require.True(t, ok)
	got, _ = db.Lookup("b")
	require.Same(t, a, got)
	require.Equal(t, 1, db.Len())
	_, err = db.Add("b", AddArgs{ID: "3-1"}, Fields("f", "v")...)
	require.NoError(t, err, "adds go to the renamed stream (last ID 2-1)")
}

func TestRenameSameName(t *testing.T) {
	db := NewDB(WithClock(newTestClock(1_700_000_000_000).now))
	renameDB(t, db)
	a, _ := db.Lookup("a")
	before := snap(t, a)
	for _, replace := range []bool{true, false} {
		ok, err := db.Rename("a", "a", replace)
		require.NoError(t, err)
		require.Equal(t, replace, ok)
		requireUnchanged(t, a, before)
	}
}

func TestRenameMissing(t *testing.T) {
	db := NewDB(WithClock(newTestClock(1_700_000_000_000).now))
	renameDB(t, db)
	b, _ := db.Lookup("b")
	before := snap(t, b)
	for _, replace := range []bool{true, false} {
		ok, err := db.Rename("nope", "b", replace)
		require.False(t, ok)
		requireErr(t, err, ErrNoStream, "nope")
		requireUnchanged(t, b, before)
		require.Equal(t, []string{"a", "b"}, db.Names(""))
	}
}

// waitBlocked waits until n calls wait on the stream called name.
func waitBlocked(t *testing.T, db *DB, name string, n int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if s, ok := db.Lookup(name); ok && s.Blocked() == n {
			return
		}
		require.False(t, time.Now().After(deadline), "never %d blocked on %q", n, name)
		runtime.Gosched()
	}
}

type readResult struct {
	out []StreamEntries
	err error
}

// inBackground runs a read in a goroutine; its result comes on the
// channel.
func inBackground(read func() ([]StreamEntries, error)) <-chan readResult {
	done := make(chan readResult, 1)
	go func() {
		out, err := read()
		done <- readResult{out, err}
	}()
	return done
}

func TestRenameBlockedReaders(t *testing.T) {
	ctx := context.Background()
	t.Run("Read of src waits for a new src", func(t *testing.T) {
		db := NewDB(WithClock(newTestClock(1_700_000_000_000).now))
		renameDB(t, db)
		done := inBackground(func() ([]StreamEntries, error) { return db.Read(ctx, ReadArgs{Block: BlockForever}, "a", "$") })
		waitBlocked(t, db, "a", 1)
		_, err := db.Rename("a", "z", true)
		require.NoError(t, err)
		_, err = db.Add("z", AddArgs{ID: "9-1"}, Fields("f", "z")...)
		require.NoError(t, err)
		select {
		case r := <-done:
			t.Fatalf("served by the renamed stream: %v %v", r.out, r.err)
		default:
		}
		_, err = db.Add("a", AddArgs{ID: "10-1"}, Fields("f", "new")...) // after $ (2-1), as in Redis
		require.NoError(t, err)
		r := <-done
		require.NoError(t, r.err)
		require.Equal(t, "a", r.out[0].Stream)
		require.Equal(t, []string{"10-1"}, ids(r.out[0].Entries))
	})
	t.Run("Read of dst reads the renamed stream", func(t *testing.T) {
		db := NewDB(WithClock(newTestClock(1_700_000_000_000).now))
		renameDB(t, db)
		done := inBackground(func() ([]StreamEntries, error) { return db.Read(ctx, ReadArgs{Block: BlockForever}, "a", "$") })
		waitBlocked(t, db, "a", 1)
		_, err := db.Rename("b", "a", true) // b's 5-1 is after a's $ (2-1)
		require.NoError(t, err)
		r := <-done
		require.NoError(t, r.err)
		require.Equal(t, "a", r.out[0].Stream)
		require.Equal(t, []string{"5-1"}, ids(r.out[0].Entries))
	})
	t.Run("ReadGroup of src ends with ErrNoStream", func(t *testing.T) {
		db := NewDB(WithClock(newTestClock(1_700_000_000_000).now))
		renameDB(t, db)
		_, err := db.ReadGroup(ctx, "g", "c", ReadGroupArgs{}, "a", ">") // drain
		require.NoError(t, err)
		done := inBackground(func() ([]StreamEntries, error) {
			return db.ReadGroup(ctx, "g", "c", ReadGroupArgs{Block: BlockForever}, "a", ">")
		})
		waitBlocked(t, db, "a", 1)
		_, err = db.Rename("a", "z", true)
		require.NoError(t, err)
		r := <-done
		requireErr(t, r.err, ErrNoStream, "a", "z")
	})
	t.Run("ReadGroup of dst: the renamed stream's group serves it", func(t *testing.T) {
		db := NewDB(WithClock(newTestClock(1_700_000_000_000).now))
		renameDB(t, db)
		require.NoError(t, db.CreateGroup("b", "g", "$", GroupOptions{}))
		done := inBackground(func() ([]StreamEntries, error) {
			return db.ReadGroup(ctx, "g", "c", ReadGroupArgs{Block: BlockForever}, "b", ">")
		})
		waitBlocked(t, db, "b", 1)
		_, err := db.Rename("a", "b", true) // a's g has 2-1 not yet delivered
		require.NoError(t, err)
		r := <-done
		require.NoError(t, r.err)
		require.Equal(t, "b", r.out[0].Stream)
		require.Equal(t, []string{"2-1"}, ids(r.out[0].Entries))
	})
	t.Run("ReadGroup of dst: no such group on the renamed stream", func(t *testing.T) {
		db := NewDB(WithClock(newTestClock(1_700_000_000_000).now))
		renameDB(t, db)
		require.NoError(t, db.CreateGroup("b", "other", "$", GroupOptions{}))
		done := inBackground(func() ([]StreamEntries, error) {
			return db.ReadGroup(ctx, "other", "c", ReadGroupArgs{Block: BlockForever}, "b", ">")
		})
		waitBlocked(t, db, "b", 1)
		_, err := db.Rename("a", "b", true)
		require.NoError(t, err)
		r := <-done
		requireErr(t, r.err, ErrNoGroup, "other")
	})
	t.Run("ReadGroup of dst: the renamed stream has nothing new yet", func(t *testing.T) {
		db := NewDB(WithClock(newTestClock(1_700_000_000_000).now))
		renameDB(t, db)
		require.NoError(t, db.CreateGroup("b", "g", "$", GroupOptions{}))
		_, err := db.ReadGroup(ctx, "g", "c", ReadGroupArgs{}, "a", ">") // drain a's g
		require.NoError(t, err)
		done := inBackground(func() ([]StreamEntries, error) {
			return db.ReadGroup(ctx, "g", "c", ReadGroupArgs{Block: time.Minute}, "b", ">")
		})
		waitBlocked(t, db, "b", 1)
		_, err = db.Rename("a", "b", true)
		require.NoError(t, err)
		waitBlocked(t, db, "b", 1) // waits again, on the renamed stream
		_, err = db.Add("b", AddArgs{ID: "7-1"}, Fields("f", "v")...)
		require.NoError(t, err)
		r := <-done
		require.NoError(t, r.err)
		require.Equal(t, []string{"7-1"}, ids(r.out[0].Entries))
	})
}

func TestRenameDurable(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	dir := t.TempDir()
	db, err := Open(dir, WithClock(clk.now))
	require.NoError(t, err)
	renameDB(t, db)
	_, err = db.Rename("a", "b", true)
	require.NoError(t, err)
	_, err = db.Rename("b", "c", false)
	require.NoError(t, err)
	c, _ := db.Lookup("c")
	want := snap(t, c)
	require.NoError(t, db.Close())

	reopen := func() *DB {
		db := openT(t, dir, clk)
		require.Equal(t, []string{"c"}, db.Names(""))
		c, ok := db.Lookup("c")
		require.True(t, ok)
		require.Equal(t, want, snap(t, c))
		return db
	}
	db = reopen() // from the log
	require.NoError(t, db.Snapshot())
	require.NoError(t, db.Close())
	db = reopen() // from the snapshot
	_, err = db.Rename("c", "d", true)
	require.NoError(t, err)
	require.NoError(t, db.Close())
	db = openT(t, dir, clk)
	require.Equal(t, []string{"d"}, db.Names(""), "a rename after the snapshot replays")
}

// A DB call that found a stream by name and then waited for its lock
// while a Rename moved it does not write to the renamed stream: it looks
// the name up again (goneLocked), so DB.Add of the old name makes a new
// stream, as in Redis.
func TestRenameThenStaleLookup(t *testing.T) {
	db := NewDB()
	_, err := db.Add("a", AddArgs{ID: "1-1"}, Fields("f", "v")...)
	require.NoError(t, err)
	s, ok := db.Lookup("a")
	require.True(t, ok)
	renamed, err := db.Rename("a", "b", false)
	require.NoError(t, err)
	require.True(t, renamed)
	_, err = s.add(&AddArgs{ID: "2-1"}, Fields("f", "v"), true, "a")
	require.ErrorIs(t, err, errRemoved)
	_, err = s.addBatch(AddArgs{ID: "2-1"}, [][]Field{Fields("f", "v")}, true, "a")
	require.ErrorIs(t, err, errRemoved)
	require.ErrorIs(t, s.setIdempotence(IdempotenceConfig{Duration: time.Minute, MaxSize: 5}, true, "a"), errRemoved)
	require.Equal(t, int64(1), s.Len(), "the renamed stream is unchanged")

	_, err = db.Add("a", AddArgs{ID: "3-1"}, Fields("f", "v")...)
	require.NoError(t, err)
	na, _ := db.Lookup("a")
	nb, _ := db.Lookup("b")
	require.Equal(t, int64(1), na.Len())
	require.Equal(t, int64(1), nb.Len())
	require.Same(t, s, nb)
}
