package xstream

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Tests of defects found by the corruption tests, each as small as it
// can be. They fail until the defect is fixed.

// TestSnapshotShardedGroupNotOnItsShards: the snapshot loader
// (snapload.go, loadSharded and loadStream) does not check that the
// groups a snapshotSharded record lists are the groups of its shards'
// streams. A snapshot whose sharded stream names a group that its shards
// do not have (here "billing" renamed "bimling" in the snapSharded
// record, the checksum made right) loads without error, and the DB then
// fails on that group: Pending and ReadGroup return ErrNoGroup for a
// group the sharded stream lists, and the shards keep a "billing" group
// the sharded stream does not know. A damaged record that the checksum
// does not catch (or a bug of the writer) gives a DB that does not hold
// together instead of ErrCorrupt. TestSnapshotDecodeChecks finds the same
// through the names of groups in snapSharded and in snapGroup records.
func TestSnapshotShardedGroupNotOnItsShards(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	dir := t.TempDir()
	db := openT(t, dir, clk)
	ss, err := db.CreateShardedStream("orders", ShardedArgs{Shards: 1})
	require.NoError(t, err)
	require.NoError(t, ss.CreateGroup("billing", ShardGroupOptions{}))
	_, err = ss.Put("k", PutArgs{}, Fields("n", "1")...)
	require.NoError(t, err)
	require.NoError(t, db.Snapshot())
	m := db.dur.manifest
	require.NoError(t, db.Close())

	path := filepath.Join(dir, m.Snapshot)
	snap := readDirFiles(t, dir)[m.Snapshot]
	// The sharded stream's record lists the group by name; the shard's
	// stream's snapGroup record names it again. Rename the first only.
	i := bytes.Index(snap, []byte("billing"))
	require.Positive(t, i)
	damaged := bytes.Clone(snap)
	copy(damaged[i:], "bimling")
	require.Positive(t, bytes.Index(damaged[i+7:], []byte("billing")), "the shard's group comes after")
	writeAt(t, path, reframe(damaged), 0)

	db, err = Open(dir, WithClock(clk.now))
	if err == nil {
		defer db.Close()
		ss, _ := db.ShardedStream("orders")
		_, perr := ss.Pending("bimling")
		t.Logf("loaded; Pending of the group the sharded stream lists: %v", perr)
	}
	requireErr(t, err, ErrCorrupt, path)
}

// TestSnapshotWithNoNewRecord: Snapshot fails when no record was written
// since the current log segment was made: on a new DB, after a reopen
// that changed nothing, or called twice in a row. snapshotLocked
// (snapshot.go) rotates the log to a segment named after the next LSN
// (journal.rotate → wal.CreateSegment(dir, base)), which is the name of
// the current segment when it holds no record yet, and CreateSegment,
// which opens with O_EXCL, fails with "file exists". Nothing is damaged
// (the journal and the manifest are left as they were) but the snapshot
// is not taken: an explicit Snapshot returns the error, and a background
// one (SnapshotInBackground, auto snapshots) sets LastSaveFailed.
func TestSnapshotWithNoNewRecord(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	// snapshotThenUse snapshots db, then checks that the DB still takes
	// records and keeps them across a reopen, whatever Snapshot said.
	snapshotThenUse := func(t *testing.T, dir string, db *DB) {
		assert.NoError(t, db.Snapshot())
		_, err := db.Add("s", AddArgs{}, Fields("after", "the snapshot")...)
		require.NoError(t, err)
		want := dumpState(t, db)
		require.NoError(t, db.Close())
		db = openT(t, dir, clk)
		require.Equal(t, want, dumpState(t, db))
	}
	t.Run("new DB", func(t *testing.T) {
		dir := t.TempDir()
		snapshotThenUse(t, dir, openT(t, dir, clk))
	})
	t.Run("twice in a row", func(t *testing.T) {
		dir := t.TempDir()
		db := openT(t, dir, clk)
		_, err := db.Add("s", AddArgs{}, Fields("a", "1")...)
		require.NoError(t, err)
		require.NoError(t, db.Snapshot())
		snapshotThenUse(t, dir, db)
	})
	t.Run("after a reopen", func(t *testing.T) {
		dir := t.TempDir()
		db := openT(t, dir, clk)
		_, err := db.Add("s", AddArgs{}, Fields("a", "1")...)
		require.NoError(t, err)
		require.NoError(t, db.Snapshot())
		require.NoError(t, db.Close())
		snapshotThenUse(t, dir, openT(t, dir, clk))
	})
}
