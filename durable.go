package xstream

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/xstreamgo/xstream/internal/wal"
)

// Durable DBs.
//
// Open keeps a DB in a directory: a snapshot of its whole state, and a log
// of the changes made since, whose records the operations of ops.go,
// groupops.go and shardops.go write as they apply them (record.go). Open
// loads the snapshot, replays the log (replay.go) and goes on appending to
// it; Snapshot (snapshot.go) writes a new snapshot and drops the log
// behind it. The on-disk format is package internal/wal's.

// Options of Open.

// WithSync sets the sync policy of a durable DB (default SyncEverySecond).
// A DB made by NewDB ignores it.
func WithSync(p SyncPolicy) Option {
	return Option{func(c *config) { c.sync = p }}
}

// WithMustExist makes Open fail with ErrDBNotFound, creating nothing,
// when the directory does not hold a DB yet. Without it Open creates the
// directory and a new DB.
func WithMustExist() Option {
	return Option{func(c *config) { c.mustExist = true }}
}

// WithTruncateCorrupt makes Open load a log that has a corrupt record
// followed by valid ones (which Open otherwise refuses with ErrCorrupt):
// it keeps every change before the corrupt record, moves the rest of that
// segment aside (to its name plus ".corrupt") and drops the segments after
// it, as Redis does with aof-load-truncated and a truncated AOF. Changes
// are lost: use it after reading the error, not by default.
func WithTruncateCorrupt() Option {
	return Option{func(c *config) { c.truncateCorrupt = true }}
}

// WithAutoSnapshot sets the log size past which a durable DB takes a
// snapshot by itself: when the log written since the last snapshot is
// larger than both minBytes and the last snapshot's size. The default is
// 64 MiB, as Redis's auto-aof-rewrite-min-size; a negative minBytes turns
// automatic snapshots off.
func WithAutoSnapshot(minBytes int64) Option {
	return Option{func(c *config) { c.autoSnapshot, c.autoSnapshotSet = minBytes, true }}
}

const defaultAutoSnapshot = 64 << 20

// WithDeferredSync makes the calls that change a durable DB under
// SyncAlways return once their change is applied and its record is in
// the log's buffer, without waiting for the disk: the program makes them
// durable together with DB.Sync, which writes and fdatasyncs every change
// committed before it, and acknowledges them only once Sync returned nil.
// A server can so sync once for all the requests it served in a pass of
// its event loop before it replies to any, as Redis does under
// appendfsync always; without it each call waits for a sync (concurrent
// calls share one), and one goroutine serving many clients waits once a
// request.
//
// Until a Sync that began after the call returned nil, its change may be
// lost by a crash. When that Sync fails with ErrLogFailed, the change is
// in doubt, as that of a SyncAlways call that failed (see DB.Err): kept
// if a later write of the log succeeds, lost if a sync failed or the
// process ends first. What such a call returns may show changes not on
// disk yet (the entries a ReadGroup delivers, which it records as
// pending): Sync before handing it on. Calls that only read (Range,
// Read, blocking or not, Pending, Info, ...) are not deferred: as under
// SyncAlways, they never return a change that is not on disk (they sync
// the log first, sharing the fdatasync with any in progress, and fail
// with the log's error when that fails). Neither are the calls of
// sharded streams. The calls fail as under the other policies: with
// ErrClosed, or ErrLogFailed while the log fails, changing nothing. The
// background writer still syncs the log once a second. Under
// SyncEverySecond and SyncNo, and for a DB made by NewDB, the option
// changes nothing.
func WithDeferredSync() Option {
	return Option{func(c *config) { c.deferSync = true }}
}

// durable is the part of a DB that lives in its directory.
type durable struct {
	dir  string
	lock *wal.DirLock
	j    *journal

	snapMu sync.Mutex // one snapshot or backup at a time
	// manifest is the manifest on disk. A log rotation changes it when
	// its writer switches segments (which may be a later flush, when the
	// snapshot that asked for it failed), a snapshot when it is done.
	manMu    sync.Mutex
	manifest wal.Manifest
	snapSize atomic.Int64 // bytes of the current snapshot

	lastSave   atomic.Int64 // Unix seconds of the last snapshot (or of the open)
	saveStatus atomic.Bool  // the last snapshot failed
	saving     atomic.Bool  // a snapshot runs

	bgMu     sync.Mutex // orders starting background snapshots with Close
	bgClosed bool
	bg       sync.WaitGroup

	cuts []LogCut // what Open dropped from the log (logcut.go)
}

// newLog returns the log of a new object of the DB.
func (d *durable) newLog() *objLog {
	return &objLog{j: d.j, obj: d.j.newObj()}
}

// Open opens the durable DB kept in dir, creating dir and an empty DB when
// there is none (unless WithMustExist). It loads the last snapshot and
// replays the log after it, so the DB holds every change that reached the
// log. Bytes at the end of the log that are not a whole record, as a
// crash in the middle of a write leaves them, are cut off, and LogCuts
// says what was cut: log it. A damaged record known to have been on disk
// is refused instead, as ErrCorrupt: one followed by valid records, or by
// the mark the log writes after each fdatasync (and at Close). Damage to
// records written after the last fdatasync, or to the last ones when a
// crash of the machine lost their mark, cannot be told from a torn write:
// it is cut and reported. The options apply as to NewDB, and WithSync,
// WithMustExist, WithTruncateCorrupt and WithAutoSnapshot choose how the
// DB is kept. Until Close, no other process (nor this one) can open dir.
//
// Open fails, changing nothing on disk, with ErrDBNotFound (no DB in dir,
// WithMustExist), ErrLocked (dir is open elsewhere), ErrNotDB (dir holds
// files that are not an xstream DB's), ErrVersion (written by a newer
// xstream) or ErrCorrupt (a damaged file: the message names it and the
// offset), or an error of the file system. Recovery reads the snapshot at
// disk speed and replays the log at about a million changes a second.
func Open(dir string, opts ...Option) (*DB, error) {
	cfg := newConfig(opts)
	if !cfg.autoSnapshotSet {
		cfg.autoSnapshot = defaultAutoSnapshot
	}
	if cfg.sync > SyncNo {
		return nil, errorf(ErrInvalidArgument, "unknown SyncPolicy %d", cfg.sync)
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		if cfg.mustExist {
			return nil, errorf(ErrDBNotFound, "%s does not exist", dir)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	lockPath := filepath.Join(dir, wal.LockName)
	oldLock, statErr := os.ReadFile(lockPath)
	lock, err := wal.LockDir(dir)
	if err != nil {
		return nil, mapWalErr(err)
	}
	db, err := openLocked(dir, cfg, lock)
	if err != nil {
		// A refused Open leaves the directory as it was.
		if errors.Is(statErr, fs.ErrNotExist) {
			os.Remove(lockPath)
		} else if statErr == nil {
			os.WriteFile(lockPath, oldLock, 0o600)
		}
		lock.Unlock()
		return nil, err
	}
	// The replay's operations are not what the DB did since it opened.
	for _, st := range db.allStreams() {
		st.mu.Lock()
		st.resetCountersLocked()
		st.mu.Unlock()
	}
	return db, nil
}

// openLocked opens the DB of dir, which the caller has locked.
func openLocked(dir string, cfg config, lock *wal.DirLock) (*DB, error) {
	m, err := wal.ReadManifest(dir)
	fresh := errors.Is(err, fs.ErrNotExist)
	if err != nil && !fresh {
		return nil, mapWalErr(err)
	}
	if fresh && cfg.mustExist {
		return nil, errorf(ErrDBNotFound, "%s holds no DB (no %s)", dir, wal.ManifestName)
	}
	db := newDB(cfg)
	d := &durable{dir: dir, lock: lock}
	db.dur = d
	r := newReplayer(db)
	var seg *wal.Segment
	next := uint64(1)
	var logSize int64
	if fresh {
		if err := removeStrays(dir); err != nil {
			return nil, err
		}
		if seg, err = wal.CreateSegment(dir, next); err != nil {
			return nil, err
		}
		m = wal.Manifest{Logs: []string{filepath.Base(seg.Path())}}
		if err := wal.WriteManifest(dir, m); err != nil {
			seg.Close()
			os.Remove(seg.Path())
			return nil, err
		}
	} else {
		if seg, next, logSize, err = r.recover(dir, &m, cfg.truncateCorrupt); err != nil {
			return nil, err
		}
		// Leftovers of an interrupted write, once the DB is known good.
		err := wal.RemoveTemps(dir)
		if err == nil {
			err = removeUnlisted(dir, m)
		}
		if err != nil {
			seg.Close()
			return nil, err
		}
	}
	d.manifest = m
	if m.Snapshot != "" {
		if fi, err := os.Stat(filepath.Join(dir, m.Snapshot)); err == nil {
			d.snapSize.Store(fi.Size())
		}
	}
	d.lastSave.Store(time.Now().Unix())
	d.j = newJournal(db.gate, cfg.sync, seg, next, logSize, func() { db.autoSnapshot() })
	d.j.deferSync = cfg.deferSync && cfg.sync == SyncAlways
	r.attach(d.j)
	d.j.start()
	return db, nil
}

// removeStrays removes the empty log segment of a DB whose creation was
// cut short before its manifest was written: nothing was ever
// acknowledged from it. A directory that holds a snapshot or a segment
// with records but no manifest lost its manifest: that is ErrNotDB, and
// nothing is removed.
func removeStrays(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	var strays []string
	for _, e := range ents {
		name := e.Name()
		_, isLog := wal.ParseSegmentName(name)
		_, isSnap := wal.ParseSnapshotName(name)
		if !isLog && !isSnap {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			return err
		}
		if isSnap || fi.Size() > wal.HeaderSize {
			return errorf(ErrNotDB, "%s holds %s but no %s: the manifest is lost (restore it, or move the files away)", dir, name, wal.ManifestName)
		}
		strays = append(strays, name)
	}
	for _, name := range strays {
		if err := os.Remove(filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

// removeUnlisted removes the segment and snapshot files that the manifest
// does not list: those of a snapshot or a log switch that a crash cut
// short before the manifest named them. Nothing in them was acknowledged.
func removeUnlisted(dir string, m wal.Manifest) error {
	listed := map[string]bool{m.Snapshot: true}
	for _, l := range m.Logs {
		listed[l] = true
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		name := e.Name()
		_, isLog := wal.ParseSegmentName(name)
		_, isSnap := wal.ParseSnapshotName(name)
		if (isLog || isSnap) && !listed[name] {
			if err := os.Remove(filepath.Join(dir, name)); err != nil {
				return err
			}
		}
	}
	return nil
}

// mapWalErr turns an error of package wal into one of this package's
// sentinels, keeping its message.
func mapWalErr(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, wal.ErrLocked):
		return wrapped{ErrLocked, err}
	case errors.Is(err, wal.ErrVersion):
		return wrapped{ErrVersion, err}
	case errors.Is(err, wal.ErrNotOurs):
		return wrapped{ErrNotDB, err}
	case errors.Is(err, wal.ErrCorrupt):
		return wrapped{ErrCorrupt, err}
	}
	return err
}

// wrapped is err, which also matches sentinel.
type wrapped struct{ sentinel, err error }

func (w wrapped) Error() string   { return w.err.Error() }
func (w wrapped) Unwrap() []error { return []error{w.sentinel, w.err} }

// background runs f in a goroutine that Close waits for, unless the DB
// is closing; it reports whether it started f.
func (d *durable) background(f func()) bool {
	d.bgMu.Lock()
	defer d.bgMu.Unlock()
	if d.bgClosed {
		return false
	}
	d.bg.Add(1)
	go func() {
		defer d.bg.Done()
		f()
	}()
	return true
}

// Durable reports whether the DB keeps its data in a directory (Open).
func (db *DB) Durable() bool { return db.dur != nil }

// Flush writes every change made so far to the OS, without waiting for the
// disk: once it returns, a crash of the process loses none of them (a
// crash of the OS still may, unless SyncAlways). A server calls it before
// it sends the replies of a batch of commands, as Redis writes its AOF
// before replying. While the log fails (see Err) it writes again what
// could not be written, and returns ErrLogFailed when that fails too. It
// fails with ErrClosed after Close. A DB made by NewDB has nothing to
// flush. O(buffered log).
func (db *DB) Flush() error {
	if err := db.gate.read(); err != nil {
		return err
	}
	if db.dur == nil {
		return nil
	}
	return db.dur.j.flush(false)
}

// Sync writes every change made so far and waits until it is on disk
// (fdatasync), whatever the sync policy; a Sync running in another
// goroutine, or a SyncAlways call's, shares one fdatasync with it. It
// fails as Flush does: with ErrClosed, or with ErrLogFailed when the log
// could not be written or synced (see Err). With WithDeferredSync it is
// what makes the changes of the calls before it durable.
func (db *DB) Sync() error {
	if err := db.gate.read(); err != nil {
		return err
	}
	if db.dur == nil {
		return nil
	}
	return db.dur.j.flush(true)
}

// Err returns the log's error while writing it fails (the disk is full,
// say), wrapping ErrLogFailed and the error of the file system, and nil
// while it works. What a durable DB does when the disk fails:
//
//   - Every call that would change the DB fails with the error, changing
//     nothing (as Redis refuses writes with MISCONF); reads go on.
//   - What was accepted before stays in memory, and the log writes it
//     again once a second (and at each Flush, Sync and Close). Once a
//     write succeeds, Err returns nil and the DB takes changes again, with
//     nothing accepted lost: no reopen is needed. A program may wait for
//     that, free space meanwhile, or call Close and reopen later.
//   - Under SyncAlways a call returns nil only once its change is on disk
//     (with WithDeferredSync, the DB.Sync after it returns nil only
//     then). A call (or Sync) whose change could not be synced returns
//     the error: its
//     change is then in doubt, as after a timeout (it is kept if a later
//     write of the log succeeds, and lost if the process ends first; an
//     idempotent Add makes a retry safe). No reader is handed it until it
//     is on disk: a read that would return it fails with the error.
//   - Under SyncEverySecond and SyncNo, calls that returned nil before
//     the failure are kept once a write succeeds, and lost if the process
//     ends first (as the policy allows for the last second).
//   - A failed fdatasync cannot be retried (the kernel may have dropped
//     the pages it did not write): the log is then broken until the DB is
//     opened again; what was not synced before is taken as lost, and Close
//     returns the error. Reopening replays what reached the disk.
func (db *DB) Err() error {
	if db.dur == nil {
		return nil
	}
	return db.dur.j.failed()
}

// Close closes the DB: every later call on it (and on its streams and
// sharded streams) fails with ErrClosed, and calls blocked in Read,
// ReadGroup or a ShardReader return ErrClosed at once. A durable DB then
// waits for a snapshot in progress, writes and syncs the log, and releases
// the directory, even when writing fails: it returns the log's error
// then, and what the log could not write is lost (a call racing with
// Close either is kept or fails with ErrClosed). Calling Close again does
// nothing and returns nil.
func (db *DB) Close() error {
	if !db.gate.close() {
		return nil
	}
	d := db.dur
	if d == nil {
		return nil
	}
	d.bgMu.Lock()
	d.bgClosed = true
	d.bgMu.Unlock()
	d.bg.Wait()
	d.snapMu.Lock()
	defer d.snapMu.Unlock()
	err := d.j.close()
	if uerr := d.lock.Unlock(); err == nil {
		err = uerr
	}
	return err
}

// PersistenceInfo describes how a durable DB is kept, with what Redis's
// INFO persistence section reports.
type PersistenceInfo struct {
	Dir            string
	Sync           SyncPolicy
	LastSave       time.Time // the last snapshot (or the open, when none was taken since)
	LastSaveFailed bool      // the last snapshot failed
	Saving         bool      // a snapshot is being written
	LogBytes       int64     // log written since the last snapshot
	SnapshotBytes  int64     // size of the current snapshot
	WriteErr       error     // the log's error, if writing it failed
}

// Persistence describes how the DB is kept; ok is false for a DB made by
// NewDB. O(1).
func (db *DB) Persistence() (info PersistenceInfo, ok bool) {
	d := db.dur
	if d == nil {
		return PersistenceInfo{}, false
	}
	return PersistenceInfo{
		Dir:            d.dir,
		Sync:           d.j.policy,
		LastSave:       time.Unix(d.lastSave.Load(), 0),
		LastSaveFailed: d.saveStatus.Load(),
		Saving:         d.saving.Load(),
		LogBytes:       d.j.logSize.Load(),
		SnapshotBytes:  d.snapSize.Load(),
		WriteErr:       d.j.failed(),
	}, true
}
