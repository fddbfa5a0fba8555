package xstream

import "fmt"

// Renaming streams (Redis RENAME and RENAMENX).

// errRenamedOnto ends the wait of a DB.ReadGroup whose stream a Rename
// replaced: the read looks at the name again, as Redis serves a blocked
// XREADGROUP from the stream renamed onto its key, or fails it with
// NOGROUP when that stream lacks the group. A Stream.ReadGroup blocked on
// the replaced stream sees it as ErrNoStream.
var errRenamedOnto = fmt.Errorf("%w: replaced by a rename", ErrNoStream)

// Rename gives the stream called src the name dst, with its entries,
// groups and pending entries, as Redis RENAME does. A stream already
// called dst is removed first, as by Remove, when replace is set (RENAME);
// without replace (RENAMENX) Rename then changes nothing and returns
// false. Renaming a stream to its own name changes nothing and returns
// replace. Rename fails with ErrNoStream, changing nothing, when there is
// no stream called src.
//
// Blocked readers follow Redis 7.0: a DB.Read waiting on src goes on
// waiting for a new stream called src, and one waiting on dst reads the
// renamed stream from where it was; a DB.ReadGroup waiting on src ends
// with ErrNoStream, and one waiting on the replaced dst is served by the
// renamed stream if it has the reader's group, and otherwise ends with
// ErrNoGroup. A *Stream keeps working after a Rename and reports its new
// Name.
//
// In a durable DB the rename is logged (and the removal of the replaced
// stream before it) and survives a restart; it waits for a snapshot or
// backup in progress to end. O(log n) in the number of streams, plus the
// wakeups of the blocked readers. Safe for concurrent use.
func (db *DB) Rename(src, dst string, replace bool) (bool, error) {
	if err := db.gate.write(); err != nil {
		return false, err
	}
	if d := db.dur; d != nil {
		// A snapshot copies the streams one by one after listing them:
		// no name may move between the listing and the copies.
		d.snapMu.Lock()
	}
	db.mu.Lock()
	renamed, j, last, err := db.renameLocked(src, dst, replace)
	db.mu.Unlock()
	if d := db.dur; d != nil {
		d.snapMu.Unlock()
	}
	if j != nil {
		if serr := j.settle(last); serr != nil && err == nil {
			return false, serr
		}
	}
	return renamed, err
}

// renameLocked is Rename under db.mu; it returns the journal and the LSN
// to settle (nil in memory or when nothing changed).
func (db *DB) renameLocked(src, dst string, replace bool) (bool, *journal, uint64, error) {
	s, ok := db.lookupLocked(src)
	if !ok {
		return false, nil, 0, errorf(ErrNoStream, "Rename %q: no such stream", src)
	}
	if src == dst {
		return replace, nil, 0, nil
	}
	var j *journal
	var last uint64
	if old, ok := db.lookupLocked(dst); ok {
		if !replace {
			return false, nil, 0, nil
		}
		j, last = db.removeLocked(old, errRenamedOnto)
	}
	db.streams.Delete(src)
	s.mu.Lock()
	s.name.Store(&dst)
	db.insertLocked(s)
	s.waiters.wake() // readers of src look at that name again
	s.failGroupWaitersLocked(nil, errorf(ErrNoStream, "stream %q was renamed to %q", src, dst))
	if l := s.log; l != nil {
		l.begin(effRename)
		l.str(dst)
		j, last = l.j, max(last, l.commit())
	}
	s.mu.Unlock()
	return true, j, last, nil
}
