package xstream

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"os"

	"github.com/xstreamgo/xstream/internal/wal"
)

// Backup writes a consistent copy of the DB to w: a snapshot followed by
// the log records made while it was taken, so that it holds the DB as it
// was at one moment (the end of the copy). Writers wait at most for the
// copy of one stream's blocks. Restore opens a DB from it. A DB made by
// NewDB can be backed up too: it is then copied with each stream under its
// lock, not at one moment across streams. It fails with ErrClosed after
// Close, and under SyncAlways while the log fails (DB.Err).
func (db *DB) Backup(w io.Writer) error {
	d := db.dur
	if d == nil {
		return errorf(ErrInvalidArgument, "Backup needs a durable DB (Open)")
	}
	d.snapMu.Lock()
	defer d.snapMu.Unlock()
	if err := db.gate.read(); err != nil {
		return err
	}
	if err := d.j.failed(); err != nil && d.j.policy == SyncAlways {
		return err // the DB holds changes that are not on disk
	}
	db.mu.RLock()
	base, off := d.j.mark()
	objs := db.listLocked()
	db.mu.RUnlock()
	return db.writeSnapshot(w, objs, base, off, true)
}

// Restore makes a durable DB in dir from a backup that Backup wrote, and
// opens it as Open does with opts. dir is created if needed and must not
// hold a DB already (ErrInvalidArgument). The backup is checked whole
// before anything is kept: a damaged one is an ErrCorrupt (or ErrNotDB,
// ErrVersion) error and leaves dir as it was.
func Restore(dir string, r io.Reader, opts ...Option) (*DB, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	lock, err := wal.LockDir(dir)
	if err != nil {
		return nil, mapWalErr(err)
	}
	if err := restoreLocked(dir, r, newConfig(opts)); err != nil {
		lock.Unlock()
		return nil, err
	}
	if err := lock.Unlock(); err != nil {
		return nil, err
	}
	return Open(dir, opts...)
}

func restoreLocked(dir string, r io.Reader, cfg config) error {
	if _, err := wal.ReadManifest(dir); !errors.Is(err, fs.ErrNotExist) {
		if err == nil {
			return errorf(ErrInvalidArgument, "%s already holds a DB", dir)
		}
		return mapWalErr(err)
	}
	var head [wal.HeaderSize]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return errorf(ErrNotDB, "the backup is too short for a header: %v", err)
	}
	hdr, err := wal.ParseHeader(head[:], wal.KindSnapshot)
	if err != nil {
		return mapWalErr(err)
	}
	rep := newReplayer(newDB(cfg))
	rep.db.dur = &durable{dir: dir}
	name := wal.SnapshotName(hdr.Base)
	err = wal.WriteFileAtomic(dir, name, func(w io.Writer) error {
		rep.where = "backup"
		return rep.loadSnapshot(io.TeeReader(io.MultiReader(bytes.NewReader(head[:]), r), w))
	})
	if err != nil {
		return err
	}
	next := max(hdr.Base, rep.lastLSN+1)
	seg, err := wal.CreateSegment(dir, next)
	if err != nil {
		os.Remove(dir + "/" + name)
		return err
	}
	if err := seg.Close(); err != nil {
		return err
	}
	return wal.WriteManifest(dir, wal.Manifest{Snapshot: name, Logs: []string{wal.SegmentName(next)}})
}
