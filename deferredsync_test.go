package xstream

import (
	"context"
	"fmt"
	"syscall"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/require"
)

// WithDeferredSync under SyncAlways: the calls that change the DB return
// before their change is on disk, DB.Sync makes the changes before it
// durable with one fdatasync, and readers still see only what is on disk.
// In a synctest bubble the background writer's ticker does not fire
// while the test runs, so every sync counted is one the test asked for.
func TestDeferredSync(t *testing.T) {
	synctest.Test(t, testDeferredSync)
}

func testDeferredSync(t *testing.T) {
	dir := t.TempDir()
	var d diskFaults
	db := openFaulty(t, dir, SyncAlways, &d, WithDeferredSync())
	j := db.dur.j
	ids := addNumbered(db, 100)
	require.NoError(t, db.CreateGroup("s", "g", "0", GroupOptions{}))
	require.Zero(t, j.syncs.Load(), "no call waited for a sync")
	require.LessOrEqual(t, j.synced.Load(), j.last(), "the changes are not on disk yet")

	// A read of changes not on disk syncs them first.
	s, _ := db.Lookup("s")
	es, err := s.Range("-", "+", 0)
	require.NoError(t, err)
	require.Equal(t, ids, idsOf(es))
	require.Equal(t, int64(1), j.syncs.Load())
	require.Greater(t, j.synced.Load(), j.last())

	// Sync makes the changes before it durable, with one fdatasync.
	for i := range 10 {
		ids = append(ids, must(db.Add("s", AddArgs{}, Fields("n", fmt.Sprint(100+i))...)))
	}
	require.Equal(t, int64(1), j.syncs.Load())
	require.NoError(t, db.Sync())
	require.Equal(t, int64(2), j.syncs.Load())
	require.Greater(t, j.synced.Load(), j.last())
	require.NoError(t, db.Sync(), "nothing to sync")
	require.Equal(t, int64(2), j.syncs.Load())

	// Blocking reads wait for what they read too; the calls of sharded
	// streams are not deferred.
	ids = append(ids, must(db.Add("s", AddArgs{}, Fields("n", "110")...)))
	es, err = s.Read(context.Background(), ids[len(ids)-2].String(), ReadArgs{Block: -1})
	require.NoError(t, err)
	require.Equal(t, ids[len(ids)-1:], idsOf(es))
	require.Greater(t, j.synced.Load(), j.last())
	ss := must(db.CreateShardedStream("k", ShardedArgs{Shards: 1}))
	must(ss.Put("p", PutArgs{}, Fields("n", "0")...))
	require.Greater(t, j.synced.Load(), j.last())
	require.NoError(t, db.Close())
	require.Equal(t, ids, reopenIDs(t, dir))

	// Without the option, every call waits for its sync; under the other
	// policies the option changes nothing.
	db = openFaulty(t, t.TempDir(), SyncAlways, &d)
	must(db.Add("s", AddArgs{}, Fields("n", "0")...))
	require.Greater(t, db.dur.j.synced.Load(), db.dur.j.last())
	require.NoError(t, db.Close())
	db = openFaulty(t, t.TempDir(), SyncEverySecond, &d, WithDeferredSync())
	require.False(t, db.dur.j.deferSync)
	require.NoError(t, db.Close())
}

// WithDeferredSync when the disk fails: a call returns nil, and the Sync
// that was to make its change durable fails with ErrLogFailed; no reader
// (a Range, a blocked reader woken by the change) is handed the change in
// doubt; later changes are refused. After a failed write the change is
// kept once a write succeeds; after a failed sync the log is broken.
func TestDeferredSyncFails(t *testing.T) {
	t.Run("write", func(t *testing.T) { synctest.Test(t, testDeferredSyncFailedWrite) })
	t.Run("sync", func(t *testing.T) { synctest.Test(t, testDeferredSyncFailedSync) })
}

// openDeferred opens a DB with WithDeferredSync under SyncAlways in a new
// directory, with d injected, and adds one entry to stream "s", synced.
func openDeferred(t *testing.T, d *diskFaults) (dir string, db *DB, acked []ID) {
	dir = t.TempDir()
	db = openFaulty(t, dir, SyncAlways, d, WithDeferredSync())
	acked = []ID{must(db.Add("s", AddArgs{}, Fields("n", "0")...))}
	require.NoError(t, db.Sync())
	return dir, db, acked
}

func testDeferredSyncFailedWrite(t *testing.T) {
	var d diskFaults
	dir, db, acked := openDeferred(t, &d)
	s, _ := db.Lookup("s")

	errs := make(chan error, 1)
	go func() {
		_, err := s.Read(context.Background(), "$", ReadArgs{Block: -1})
		errs <- err
	}()
	synctest.Wait()
	d.set(syscall.ENOSPC, nil)
	doubt, err := db.Add("s", AddArgs{}, Fields("n", "doubt")...)
	require.NoError(t, err, "the call does not wait for the disk")
	requireLogFailed(t, <-errs, "the reader woken by the change in doubt")
	requireLogFailed(t, db.Sync(), "Sync")
	_, err = s.Range("-", "+", 0)
	requireLogFailed(t, err, "Range of the change in doubt")
	_, err = db.Add("s", AddArgs{}, Fields("n", "refused")...)
	requireLogFailed(t, err, "Add while the log fails")
	require.Equal(t, int64(2), s.Len())

	d.set(nil, nil)
	require.NoError(t, db.Sync())
	es, err := s.Range("-", "+", 0)
	require.NoError(t, err)
	require.Equal(t, append(acked, doubt), idsOf(es), "the change in doubt was kept")
	require.NoError(t, db.Close())
	require.Equal(t, append(acked, doubt), reopenIDs(t, dir))
}

func testDeferredSyncFailedSync(t *testing.T) {
	var d diskFaults
	dir, db, acked := openDeferred(t, &d)
	d.set(nil, syscall.EIO)
	_, err := db.Add("s", AddArgs{}, Fields("n", "doubt")...)
	require.NoError(t, err)
	require.ErrorIs(t, db.Sync(), syscall.EIO)
	s, _ := db.Lookup("s")
	_, err = s.Range("-", "+", 0)
	require.ErrorIs(t, err, ErrLogFailed)
	d.set(nil, nil)
	require.ErrorIs(t, db.Sync(), ErrLogFailed, "a failed sync cannot be retried")
	_, err = db.Add("s", AddArgs{}, Fields("n", "refused")...)
	require.ErrorIs(t, err, syscall.EIO)
	require.ErrorIs(t, db.Close(), syscall.EIO)
	require.Subset(t, reopenIDs(t, dir), acked)
}
