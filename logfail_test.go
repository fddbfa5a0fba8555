package xstream

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream/internal/wal"
)

// The log of a durable DB when the disk fails (see DB.Err): the rules
// tested here, with failures injected into the log's segment file
// (wal.Faults); logfail_disk_test.go makes a disk full for real.

// diskFaults fails the writes and syncs of a DB's log on demand.
type diskFaults struct {
	mu       sync.Mutex
	writeErr error // writes fail, after half their bytes, with it
	syncErr  error // syncs fail with it
	failed   int   // writes and syncs failed so far
}

func (d *diskFaults) set(writeErr, syncErr error) {
	d.mu.Lock()
	d.writeErr, d.syncErr = writeErr, syncErr
	d.mu.Unlock()
}

func (d *diskFaults) failures() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.failed
}

// inject makes db's log segment (and, through rotations, the next ones)
// ask d before each write and sync.
func (d *diskFaults) inject(db *DB) {
	j := db.dur.j
	j.mu.Lock()
	defer j.mu.Unlock()
	j.seg.SetFaults(&wal.Faults{
		Write: func(n int) (int, error) {
			d.mu.Lock()
			defer d.mu.Unlock()
			if d.writeErr == nil {
				return n, nil
			}
			d.failed++
			return n / 2, d.writeErr
		},
		Sync: func() error {
			d.mu.Lock()
			defer d.mu.Unlock()
			if d.syncErr != nil {
				d.failed++
			}
			return d.syncErr
		},
	})
}

// openFaulty opens a durable DB in dir with the policy and injects d.
func openFaulty(t *testing.T, dir string, policy SyncPolicy, d *diskFaults, opts ...Option) *DB {
	t.Helper()
	db, err := Open(dir, append([]Option{WithSync(policy)}, opts...)...)
	require.NoError(t, err)
	d.inject(db)
	return db
}

// reopenIDs opens the DB of dir again and returns the IDs of its stream
// "s".
func reopenIDs(t *testing.T, dir string) []ID {
	t.Helper()
	db, err := Open(dir)
	require.NoError(t, err)
	defer db.Close()
	s, ok := db.Lookup("s")
	require.True(t, ok, "no stream s after the reopen")
	return idsOf(must(s.Range("-", "+", 0)))
}

// requireKept checks that every ID of want is in got (in O(n), where
// require.Subset is quadratic).
func requireKept(t *testing.T, got, want []ID) {
	t.Helper()
	kept := make(map[ID]bool, len(got))
	for _, id := range got {
		kept[id] = true
	}
	for _, id := range want {
		require.True(t, kept[id], "entry %s lost (%d of %d kept)", id, len(kept), len(want))
	}
}

// addNumbered adds n entries "n" 0 … n-1 to the stream "s" of db and
// returns their IDs.
func addNumbered(db *DB, n int) []ID {
	ids := make([]ID, 0, n)
	for i := range n {
		ids = append(ids, must(db.Add("s", AddArgs{}, Fields("n", fmt.Sprint(i))...)))
	}
	return ids
}

// requireLogFailed checks that err is the log's failure, wrapping ENOSPC.
func requireLogFailed(t *testing.T, err error, what string) {
	t.Helper()
	require.Error(t, err, what)
	require.ErrorIs(t, err, ErrLogFailed, what)
	require.ErrorIs(t, err, syscall.ENOSPC, what)
}

// Under SyncAlways, an Add whose record cannot be written fails; no
// reader is handed its entry; later changes are refused before they
// change anything; a flush that succeeds once space is back makes the DB
// take changes again, and then the entry of the failed Add is kept (its
// error meant "in doubt"); a reopen finds everything acknowledged and
// everything read.
func TestLogFailSyncAlwaysRecovers(t *testing.T) {
	dir := t.TempDir()
	var d diskFaults
	db := openFaulty(t, dir, SyncAlways, &d)
	var acked []ID
	for i := range 3 {
		id, err := db.Add("s", AddArgs{}, Fields("n", fmt.Sprint(i))...)
		require.NoError(t, err)
		acked = append(acked, id)
	}
	require.NoError(t, db.CreateGroup("s", "g", "0", GroupOptions{}))
	s, _ := db.Lookup("s")

	d.set(syscall.ENOSPC, nil)
	_, err := db.Add("s", AddArgs{}, Fields("n", "doubt")...)
	requireLogFailed(t, err, "the Add whose record could not be written")
	requireLogFailed(t, db.Err(), "Err")
	info, _ := db.Persistence()
	requireLogFailed(t, info.WriteErr, "Persistence")
	require.Equal(t, int64(4), s.Len(), "the change stays in memory, in doubt")

	// No reader is handed the entry in doubt.
	_, err = s.Range("-", "+", 0)
	requireLogFailed(t, err, "Range")
	_, err = s.Read(context.Background(), "0", ReadArgs{})
	requireLogFailed(t, err, "Read")
	_, err = db.Read(context.Background(), ReadArgs{}, "s", "0")
	requireLogFailed(t, err, "DB.Read")
	_, err = s.Info()
	requireLogFailed(t, err, "Info")
	seq, err := s.Scan("-", "+")
	require.NoError(t, err)
	for id := range seq {
		t.Fatalf("Scan yielded %s while the log fails", id)
	}

	// Every change is refused before it changes anything.
	_, err = db.Add("s", AddArgs{}, Fields("n", "refused")...)
	requireLogFailed(t, err, "Add while failing")
	_, err = db.Add("other", AddArgs{}, Fields("n", "refused")...)
	requireLogFailed(t, err, "Add of a new stream while failing")
	_, err = s.ReadGroup(context.Background(), "g", "c", ">", ReadGroupArgs{})
	requireLogFailed(t, err, "ReadGroup while failing")
	_, err = db.Remove("s")
	requireLogFailed(t, err, "Remove while failing")
	err = s.CreateGroup("g2", "0", GroupOptions{})
	requireLogFailed(t, err, "CreateGroup while failing")
	_, err = s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 1})
	requireLogFailed(t, err, "Trim while failing")
	require.Equal(t, int64(4), s.Len())
	_, ok := db.Lookup("other")
	require.False(t, ok, "a refused Add creates nothing")
	require.Len(t, s.Groups(), 1)
	require.Error(t, db.Sync(), "a flush while the disk is still full fails")

	// Space is back: the next flush writes the records that failed.
	d.set(nil, nil)
	require.NoError(t, db.Sync())
	require.NoError(t, db.Err())
	es, err := s.Range("-", "+", 0)
	require.NoError(t, err)
	require.Len(t, es, 4, "the entry in doubt was kept")
	read := idsOf(es)
	id, err := db.Add("s", AddArgs{}, Fields("n", "after")...)
	require.NoError(t, err)
	acked = append(acked, id)
	require.NoError(t, db.Close())

	got := reopenIDs(t, dir)
	require.Subset(t, got, acked, "every acknowledged entry")
	require.Subset(t, got, read, "every entry read")
	require.Len(t, got, 5)
}

// Under SyncAlways, when the disk never comes back, Close fails, and a
// reopen finds everything acknowledged, nothing else: the write that
// failed was cut back off the file.
func TestLogFailSyncAlwaysClose(t *testing.T) {
	dir := t.TempDir()
	var d diskFaults
	db := openFaulty(t, dir, SyncAlways, &d)
	acked := addNumbered(db, 5)
	d.set(syscall.ENOSPC, nil)
	for range 3 {
		_, err := db.Add("s", AddArgs{}, Fields("n", "lost")...)
		requireLogFailed(t, err, "Add")
	}
	requireLogFailed(t, db.Close(), "Close")
	require.Positive(t, d.failures())

	require.Equal(t, acked, reopenIDs(t, dir))
}

// Under SyncAlways, blocked readers woken by an Add whose record fails
// are not handed the entry: a plain reader fails with the log's error,
// and so does a ReadGroup that the Add served.
func TestLogFailSyncAlwaysBlockedReaders(t *testing.T) {
	synctest.Test(t, testLogFailSyncAlwaysBlockedReaders)
}

func testLogFailSyncAlwaysBlockedReaders(t *testing.T) {
	var d diskFaults
	db := openFaulty(t, t.TempDir(), SyncAlways, &d)
	defer db.Close()
	_, err := db.Add("s", AddArgs{}, Fields("n", "0")...)
	require.NoError(t, err)
	require.NoError(t, db.CreateGroup("s", "g", "$", GroupOptions{}))
	s, _ := db.Lookup("s")

	errs := make(chan error, 3)
	go func() {
		_, err := s.Read(context.Background(), "$", ReadArgs{Block: -1})
		errs <- err
	}()
	go func() {
		_, err := db.ReadGroup(context.Background(), "g", "c", ReadGroupArgs{Block: -1}, "s", ">")
		errs <- err
	}()
	go func() {
		_, err := s.ReadGroup(context.Background(), "g", "c2", ">", ReadGroupArgs{Block: -1})
		errs <- err
	}()
	synctest.Wait()
	require.Equal(t, 3, s.Blocked())
	d.set(syscall.ENOSPC, nil)
	_, err = db.Add("s", AddArgs{}, Fields("n", "doubt")...)
	requireLogFailed(t, err, "Add")
	for range 2 {
		requireLogFailed(t, <-errs, "a reader woken by the failed Add")
	}
	d.set(nil, nil)
	require.NoError(t, db.Sync())
	// The third reader was not served (the Add served one group reader);
	// with the log back, the next Add serves it.
	_, err = db.Add("s", AddArgs{}, Fields("n", "1")...)
	require.NoError(t, err)
	require.NoError(t, <-errs)
}

// After a failed fdatasync the log is broken (the kernel may have dropped
// what it did not write): every change is refused until the DB is opened
// again, even once syncs would succeed, and Close fails.
func TestLogFailSyncBreaks(t *testing.T) {
	for _, policy := range []SyncPolicy{SyncAlways, SyncEverySecond} {
		t.Run(policy.String(), func(t *testing.T) {
			dir := t.TempDir()
			var d diskFaults
			db := openFaulty(t, dir, policy, &d)
			acked := []ID{must(db.Add("s", AddArgs{}, Fields("n", "0")...))}
			require.NoError(t, db.Sync())
			d.set(nil, syscall.EIO)
			_, err := db.Add("s", AddArgs{}, Fields("n", "1")...)
			if policy == SyncAlways {
				require.ErrorIs(t, err, ErrLogFailed)
				require.ErrorIs(t, err, syscall.EIO)
			} else {
				require.NoError(t, err)
				require.ErrorIs(t, db.Sync(), syscall.EIO)
			}
			d.set(nil, nil)
			require.ErrorIs(t, db.Sync(), ErrLogFailed, "a failed sync cannot be retried")
			_, err = db.Add("s", AddArgs{}, Fields("n", "2")...)
			require.ErrorIs(t, err, syscall.EIO)
			require.ErrorIs(t, db.Err(), syscall.EIO)
			require.ErrorIs(t, db.Close(), syscall.EIO)

			require.Subset(t, reopenIDs(t, dir), acked)
		})
	}
}

// Under SyncEverySecond and SyncNo, a failed write of the log refuses
// later changes; what was accepted before stays buffered and is written
// once a flush succeeds; Close then loses nothing.
func TestLogFailBufferedPolicies(t *testing.T) {
	for _, policy := range []SyncPolicy{SyncEverySecond, SyncNo} {
		t.Run(policy.String(), func(t *testing.T) {
			dir := t.TempDir()
			var d diskFaults
			db := openFaulty(t, dir, policy, &d)
			var acked []ID
			add := func(v string) error {
				id, err := db.Add("s", AddArgs{}, Fields("n", v)...)
				if err == nil {
					acked = append(acked, id)
				}
				return err
			}
			for i := range 10 {
				require.NoError(t, add(fmt.Sprint(i)))
			}
			require.NoError(t, db.Flush())
			d.set(syscall.ENOSPC, nil)
			for i := range 10 {
				require.NoError(t, add(fmt.Sprint("buffered ", i)), "accepted before the failure is known")
			}
			requireLogFailed(t, db.Flush(), "Flush")
			requireLogFailed(t, add("refused"), "Add while failing")
			requireLogFailed(t, db.Err(), "Err")
			s, _ := db.Lookup("s")
			require.Equal(t, int64(20), s.Len())
			es, err := s.Range("-", "+", 0)
			require.NoError(t, err, "reads go on")
			require.Len(t, es, 20)

			d.set(nil, nil)
			require.NoError(t, db.Flush())
			require.NoError(t, db.Err())
			require.NoError(t, add("after"))
			require.NoError(t, db.Close())

			require.Equal(t, acked, reopenIDs(t, dir))
		})
	}
}

// Close after the disk came back writes what was buffered, even when no
// flush ran in between.
func TestLogFailCloseAfterRecovery(t *testing.T) {
	dir := t.TempDir()
	var d diskFaults
	db := openFaulty(t, dir, SyncEverySecond, &d)
	acked := []ID{must(db.Add("s", AddArgs{}, Fields("n", "0")...))}
	d.set(syscall.ENOSPC, nil)
	requireLogFailed(t, db.Flush(), "Flush")
	d.set(nil, nil)
	require.NoError(t, db.Close())
	require.Equal(t, acked, reopenIDs(t, dir))
}

// The background writer retries the log each second: a DB whose disk
// comes back takes changes again by itself, as Redis does after a
// MISCONF.
func TestLogFailRecoversByItself(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var d diskFaults
		db := openFaulty(t, t.TempDir(), SyncEverySecond, &d)
		defer db.Close()
		_, err := db.Add("s", AddArgs{}, Fields("n", "0")...)
		require.NoError(t, err)
		d.set(syscall.ENOSPC, nil)
		time.Sleep(1500 * time.Millisecond) // the background write fails
		requireLogFailed(t, db.Err(), "Err")
		_, err = db.Add("s", AddArgs{}, Fields("n", "refused")...)
		requireLogFailed(t, err, "Add")
		d.set(nil, nil)
		time.Sleep(time.Second) // the next background write succeeds
		require.NoError(t, db.Err())
		_, err = db.Add("s", AddArgs{}, Fields("n", "1")...)
		require.NoError(t, err)
	})
}

// A failed write during a snapshot's switch of log segments keeps the
// switch pending: once the disk is back, the snapshot can be taken and
// nothing accepted is lost.
func TestLogFailDuringSnapshot(t *testing.T) {
	dir := t.TempDir()
	var d diskFaults
	db := openFaulty(t, dir, SyncEverySecond, &d)
	acked := addNumbered(db, 50)
	d.set(syscall.ENOSPC, nil)
	requireLogFailed(t, db.Snapshot(), "Snapshot")
	d.set(nil, nil)
	require.NoError(t, db.Flush())
	require.NoError(t, db.Snapshot())
	acked = append(acked, must(db.Add("s", AddArgs{}, Fields("n", "after")...)))
	require.NoError(t, db.Close())
	require.Equal(t, acked, reopenIDs(t, dir))
}

// A snapshot whose switch of log segments failed leaves the switch to
// the flush that succeeds once the disk is back, which records the new
// segment in the manifest: a second snapshot failing the same way then
// lists it too, and a reopen before any snapshot is done replays every
// segment in turn.
func TestLogFailSnapshotSwitchedByFlush(t *testing.T) {
	dir := t.TempDir()
	var d diskFaults
	db := openFaulty(t, dir, SyncNo, &d, WithAutoSnapshot(-1))
	var acked []ID
	add := func(n int) { acked = append(acked, addNumbered(db, n)...) }
	for range 2 {
		add(20)
		d.inject(db) // the newest segment
		d.set(syscall.ENOSPC, nil)
		requireLogFailed(t, db.Snapshot(), "Snapshot")
		d.set(nil, nil)
		require.NoError(t, db.Flush(), "the disk is back: the switch is done")
	}
	add(5)
	require.NoError(t, db.Close())
	require.Equal(t, acked, reopenIDs(t, dir))
}

// A write that fails while a snapshot asks for a switch of log segments
// goes back before the records committed meanwhile: the switch still
// comes after the records committed before it, so the old segment gets
// them all and the new one starts at the switch's record.
func TestLogFailRotationDuringFailedWrite(t *testing.T) {
	dir := t.TempDir()
	db, err := Open(dir, WithSync(SyncNo), WithAutoSnapshot(-1))
	require.NoError(t, err)
	entered, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	j := db.dur.j
	j.mu.Lock()
	j.seg.SetFaults(&wal.Faults{Write: func(n int) (int, error) {
		failed := false
		once.Do(func() {
			close(entered)
			<-release
			failed = true
		})
		if failed {
			return n / 2, syscall.ENOSPC
		}
		return n, nil
	}})
	j.mu.Unlock()
	var acked []ID
	add := func(n int) { acked = append(acked, addNumbered(db, n)...) }
	add(20)
	flushed := make(chan error, 1)
	go func() { flushed <- db.Flush() }()
	<-entered // the write of the 20 records is in progress
	add(10)
	snapped := make(chan error, 1)
	go func() { snapped <- db.Snapshot() }()
	for pending := false; !pending; runtime.Gosched() {
		j.mu.Lock()
		pending = j.rot != nil
		j.mu.Unlock()
	}
	add(5) // after the switch
	close(release)
	if err := <-flushed; err != nil { // nil when the background writer's write failed
		requireLogFailed(t, err, "the Flush whose write failed")
	}
	require.NoError(t, <-snapped, "the snapshot writes the records again")
	add(3)
	require.NoError(t, db.Close())
	require.Equal(t, acked, reopenIDs(t, dir))
}

// A log that breaks while a write is in progress (here a record too
// large to frame, which a call's own checks would have refused) stays
// broken when that write succeeds: later changes are refused with
// ErrLogFailed, and Close returns.
func TestLogBreakDuringWrite(t *testing.T) {
	db, err := Open(t.TempDir(), WithSync(SyncNo), WithAutoSnapshot(-1))
	require.NoError(t, err)
	j := db.dur.j
	var once sync.Once
	j.mu.Lock()
	j.seg.SetFaults(&wal.Faults{Write: func(n int) (int, error) {
		once.Do(func() { j.commit(make([]byte, j.maxRecord+1)) })
		return n, nil
	}})
	j.mu.Unlock()
	addNumbered(db, 3)
	require.ErrorIs(t, db.Flush(), ErrLogFailed)
	require.ErrorIs(t, db.Err(), ErrLogFailed, "the write that succeeded did not mend the log")
	_, err = db.Add("s", AddArgs{}, Fields("n", "after")...)
	require.ErrorIs(t, err, ErrLogFailed)
	closed := make(chan error, 1)
	go func() { closed <- db.Close() }()
	select {
	case err := <-closed:
		require.ErrorIs(t, err, ErrLogFailed)
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return")
	}
}
