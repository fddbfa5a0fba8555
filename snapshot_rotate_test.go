package xstream

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream/internal/wal"
)

// Snapshot rotates the log to a new segment named after the LSN of the
// next record (snapshot.go, snapshotLocked: d.j.rotate with
// wal.CreateSegment(d.dir, base)), and CreateSegment refuses a name that
// exists (O_EXCL). When no record was committed since the segment of that
// name was made, the rotation asks for it again and Snapshot fails.

// A second snapshot with no change since the first asks for the segment
// the first one made, which is the current one.
func TestSnapshotTwiceWithoutChanges(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	db := openT(t, t.TempDir(), clk)
	_, err := db.Add("s", AddArgs{}, Fields("k", "v")...)
	require.NoError(t, err)
	require.NoError(t, db.Snapshot())
	require.NoError(t, db.Snapshot(), "a second snapshot with nothing changed since the first")
}

// A crash of the process inside a rotation, after CreateSegment made the
// new segment and before the writer recorded it in the manifest, leaves a
// segment that the manifest does not name. Open keeps it, and until a
// record is committed every snapshot fails on it.
func TestSnapshotAfterCrashInRotation(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	dir := t.TempDir()
	db, err := Open(dir, WithClock(clk.now))
	require.NoError(t, err)
	_, err = db.Add("s", AddArgs{}, Fields("k", "v")...)
	require.NoError(t, err)
	next, _ := db.dur.j.mark()
	require.NoError(t, db.Close())

	// What the killed rotation left: the new segment, made and synced.
	seg, err := wal.CreateSegment(dir, next)
	require.NoError(t, err)
	require.NoError(t, seg.Close())
	_, err = os.Stat(filepath.Join(dir, wal.SegmentName(next)))
	require.NoError(t, err)

	db = openT(t, dir, clk)
	require.Equal(t, int64(1), mustLookup(t, db, "s").Len())
	require.NoError(t, db.Snapshot(), "the first snapshot after the crash")
}

func mustLookup(t testing.TB, db *DB, name string) *Stream {
	t.Helper()
	s, ok := db.Lookup(name)
	require.True(t, ok, "no stream %q", name)
	return s
}
