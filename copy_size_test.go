package xstream

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A Copy or Restore is logged as one record; one larger than the log
// takes would break the log for every later write. These tests lower the
// limit (1 GiB) of a durable DB's journal to 4 KiB.

const testMaxRecord = 4096

// openSmallRecords opens the durable DB in dir with records bounded by
// testMaxRecord.
func openSmallRecords(t *testing.T, dir string, clk *testClock) *DB {
	t.Helper()
	db := openT(t, dir, clk)
	db.dur.j.maxRecord = testMaxRecord
	return db
}

// overRecordStream gives the stream called name of db 200 entries of 40 bytes
// (each logged by a record of its own) and a group with one entry
// pending: about 10 KB as one record.
func overRecordStream(t *testing.T, db *DB, name string) {
	t.Helper()
	for i := 1; i <= 200; i++ {
		_, err := db.Add(name, AddArgs{ID: strconv.Itoa(i)}, Field{"f", strings.Repeat("v", 40)})
		require.NoError(t, err)
	}
	require.NoError(t, db.CreateGroup(name, "g", "0", GroupOptions{}))
	_, err := db.ReadGroup(context.Background(), "g", "c", ReadGroupArgs{Count: 1}, name, ">")
	require.NoError(t, err)
}

// TestCopyTooLargeForLog copies a stream whose copy is larger than a
// record of the log takes, onto an existing stream with replace and into
// another durable DB: each fails with ErrInvalidArgument naming the
// stream, the record's size and the limit, changes nothing (the
// destination and expiries stay), and later writes, a Copy that fits and
// a restart work.
func TestCopyTooLargeForLog(t *testing.T) {
	clk := newTestClock(expT0.UnixMilli())
	dir, dir2 := t.TempDir(), t.TempDir()
	db, other := openSmallRecords(t, dir, clk), openSmallRecords(t, dir2, clk)
	overRecordStream(t, db, "big")
	require.NoError(t, db.SetExpiry("big", expT0.Add(time.Hour)))
	_, err := db.Add("dst", AddArgs{ID: "1"}, Field{"f", "dst"})
	require.NoError(t, err)
	_, err = other.Add("x", AddArgs{ID: "1"}, Field{"f", "x"})
	require.NoError(t, err)
	big, _ := db.Lookup("big")
	dst, _ := db.Lookup("dst")
	x, _ := other.Lookup("x")
	bigWant, dstWant, xWant := snap(t, big), snap(t, dst), snap(t, x)

	for _, tc := range []struct {
		to      *DB
		name    string
		replace bool
	}{{db, "dst", true}, {db, "new", false}, {other, "x", true}, {other, "new", true}} {
		ok, err := db.Copy("big", tc.to, tc.name, tc.replace)
		require.False(t, ok)
		requireErr(t, err, ErrInvalidArgument, `Copy of "big"`, "bytes", strconv.Itoa(testMaxRecord))
	}
	require.Equal(t, []string{"big", "dst"}, db.Names(""))
	require.Equal(t, []string{"x"}, other.Names(""))
	requireUnchanged(t, big, bigWant)
	requireUnchanged(t, dst, dstWant)
	requireUnchanged(t, x, xWant)
	require.Equal(t, 1, db.Expiring())
	require.Zero(t, other.Expiring())
	nd, _ := db.Lookup("dst")
	require.Same(t, dst, nd, "dst was not replaced")

	// The log still takes writes, and a Copy that fits.
	_, err = db.Add("dst", AddArgs{ID: "2"}, Field{"f", "after"})
	require.NoError(t, err)
	ok, err := db.Copy("dst", other, "x", true)
	require.NoError(t, err)
	require.True(t, ok)
	dstWant = snap(t, dst)
	require.NoError(t, db.Close())
	require.NoError(t, other.Close())

	db, other = openT(t, dir, clk), openT(t, dir2, clk)
	require.Equal(t, []string{"big", "dst"}, db.Names(""))
	big, _ = db.Lookup("big")
	dst, _ = db.Lookup("dst")
	requireUnchanged(t, big, bigWant)
	requireUnchanged(t, dst, dstWant)
	x, _ = other.Lookup("x")
	requireUnchanged(t, x, dstWant)
	require.Equal(t, []string{"x"}, other.Names(""))
}

// TestRestoreTooLargeForLog restores an image larger than a record of the
// log takes, with replace over an existing stream and under a new name:
// each fails with ErrInvalidArgument naming the name, the record's size
// and the limit, and changes nothing; a Restore that fits, later writes
// and a restart work.
func TestRestoreTooLargeForLog(t *testing.T) {
	clk := newTestClock(expT0.UnixMilli())
	dir := t.TempDir()
	db := openSmallRecords(t, dir, clk)
	_, err := db.Add("s", AddArgs{ID: "1"}, Field{"f", "s"})
	require.NoError(t, err)
	s, _ := db.Lookup("s")
	want := snap(t, s)
	img := restoreImage()
	for i := 7; i < 200; i++ {
		img.Entries = append(img.Entries, Entry{ID: ID{uint64(i), 0}, Fields: []Field{{"f", strings.Repeat("v", 40)}}})
	}
	img.LastID, img.EntriesAdded = ID{199, 0}, 300
	for _, name := range []string{"s", "new"} {
		ok, err := db.Restore(name, img, true)
		require.False(t, ok)
		requireErr(t, err, ErrInvalidArgument, "Restore of "+strconv.Quote(name), "bytes", strconv.Itoa(testMaxRecord))
	}
	require.Equal(t, []string{"s"}, db.Names(""))
	ns, _ := db.Lookup("s")
	require.Same(t, s, ns)
	requireUnchanged(t, s, want)
	require.Zero(t, db.Expiring(), "the image's expiry is not kept")

	ok, err := db.Restore("small", restoreImage(), false)
	require.NoError(t, err)
	require.True(t, ok)
	_, err = db.Add("s", AddArgs{ID: "2"}, Field{"f", "after"})
	require.NoError(t, err)
	want = snap(t, s)
	small, _ := db.Lookup("small")
	smallWant := snap(t, small)
	require.NoError(t, db.Close())

	db = openT(t, dir, clk)
	require.Equal(t, []string{"s", "small"}, db.Names(""))
	s, _ = db.Lookup("s")
	requireUnchanged(t, s, want)
	small, _ = db.Lookup("small")
	requireUnchanged(t, small, smallWant)
}
