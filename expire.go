package xstream

import (
	"sync/atomic"
	"time"
)

// Expiry of streams (Redis EXPIRE, PERSIST and the TTL they set).
//
// A stream of a DB may have an expiry time, in Unix milliseconds: the
// stream stays until something removes it, as Redis keeps an expired key
// until an access or its active cycle deletes it. The DB only keeps the
// time (in a durable DB through the log and snapshots, so it survives a
// restart) and removes what RemoveExpired and RemoveExpiredSample are
// asked to; deciding when to ask is the caller's (the server does it on
// every access to a key and in a background cycle). A Rename keeps the
// stream's expiry, a Remove drops it.

// expiries is the DB's index of the streams with an expiry.
type expiries struct {
	set map[*Stream]struct{} // guarded by db.mu
	n   atomic.Int64         // len(set), read without the lock
}

// setExpiryLocked sets s's expiry to ms (0: none) and keeps the index;
// the caller holds db.mu and s.mu.
func (db *DB) setExpiryLocked(s *Stream, ms int64) {
	s.expireMs = ms
	if ms == 0 {
		db.dropExpiryLocked(s)
		return
	}
	if db.exp.set == nil {
		db.exp.set = map[*Stream]struct{}{}
	}
	if _, ok := db.exp.set[s]; !ok {
		db.exp.set[s] = struct{}{}
		db.exp.n.Add(1)
	}
}

// setExpiryLoggedLocked is setExpiryLocked, with the change logged in a
// durable DB.
func (db *DB) setExpiryLoggedLocked(s *Stream, ms int64) {
	db.setExpiryLocked(s, ms)
	if l := s.log; l != nil {
		l.begin(effExpire)
		l.varint(ms)
	}
}

// dropExpiryLocked takes s out of the index; the caller holds db.mu.
func (db *DB) dropExpiryLocked(s *Stream) {
	if _, ok := db.exp.set[s]; ok {
		delete(db.exp.set, s)
		db.exp.n.Add(-1)
	}
}

// SetExpiry sets when the stream called name expires, as Redis PEXPIREAT
// does; the zero time removes its expiry (PERSIST). The time is kept to
// the millisecond. It does not remove the stream, even when at is past:
// RemoveExpired does. It fails with ErrNoStream, changing nothing, when
// there is no such stream. In a durable DB the expiry is logged and
// survives a restart. O(log n); safe for concurrent use.
func (db *DB) SetExpiry(name string, at time.Time) error {
	_, err := db.SetExpiryIf(name, at, 0)
	return err
}

// ExpiryCond is a condition of SetExpiryIf, Redis's options of EXPIRE:
// ExpiryXX may go with ExpiryGT or ExpiryLT.
type ExpiryCond uint8

// The conditions of SetExpiryIf; 0 is none.
const (
	ExpiryNX ExpiryCond = 1 << iota // only when the stream has no expiry
	ExpiryXX                        // only when it has one
	ExpiryGT                        // only later than its expiry (none is infinite: never)
	ExpiryLT                        // only earlier than its expiry (none is infinite: always)
)

// SetExpiryIf is SetExpiry when the stream's expiry meets cond, checked
// and set under the DB's lock, so that two calls cannot both pass ExpiryNX
// (as Redis, a single thread, never lets two EXPIRE NX pass). It reports
// whether it set the expiry: false, changing nothing, when cond failed.
// It fails with ErrNoStream when there is no such stream, and with
// ErrInvalidArgument for ExpiryNX with another condition or ExpiryGT with
// ExpiryLT. O(log n); safe for concurrent use.
func (db *DB) SetExpiryIf(name string, at time.Time, cond ExpiryCond) (bool, error) {
	if err := cond.check("SetExpiryIf", name); err != nil {
		return false, err
	}
	if err := db.gate.write(); err != nil {
		return false, err
	}
	var ms int64
	if !at.IsZero() {
		ms = max(at.UnixMilli(), 1) // 0 is "none"
	}
	db.mu.Lock()
	s, ok := db.lookupLocked(name)
	if !ok {
		db.mu.Unlock()
		return false, errorf(ErrNoStream, "SetExpiryIf %q: no such stream", name)
	}
	s.mu.Lock()
	cur := s.expireMs
	if !cond.holds(cur, ms) {
		s.mu.Unlock()
		db.mu.Unlock()
		return false, nil
	}
	if cur != ms {
		db.setExpiryLoggedLocked(s, ms)
	}
	j, lsn := s.unlockDeferred()
	db.mu.Unlock()
	if err := j.settle(lsn); err != nil {
		return false, err
	}
	return true, nil
}

// RemoveIfExpiry removes the stream called name when its expiry meets
// cond against the time at, as Redis's EXPIRE with a time already past
// deletes the key when its NX, XX, GT or LT holds: the condition is
// checked and the stream removed under the DB's lock, so that no call
// changes the expiry in between. The removal is Remove's (blocked readers
// included; logged in a durable DB). It reports whether it removed the
// stream: false, changing nothing, when cond failed. It fails with
// ErrNoStream when there is no such stream, and with ErrInvalidArgument
// for ExpiryNX with another condition or ExpiryGT with ExpiryLT. O(log n);
// safe for concurrent use.
func (db *DB) RemoveIfExpiry(name string, at time.Time, cond ExpiryCond) (bool, error) {
	if err := cond.check("RemoveIfExpiry", name); err != nil {
		return false, err
	}
	if err := db.gate.write(); err != nil {
		return false, err
	}
	db.mu.Lock()
	s, ok := db.lookupLocked(name)
	if !ok {
		db.mu.Unlock()
		return false, errorf(ErrNoStream, "RemoveIfExpiry %q: no such stream", name)
	}
	// expireMs changes under db.mu (setExpiryLocked), which is held.
	if !cond.holds(s.expireMs, at.UnixMilli()) {
		db.mu.Unlock()
		return false, nil
	}
	j, lsn := db.removeLocked(s, errorf(ErrNoStream, "stream %q expired", name))
	db.mu.Unlock()
	if j != nil {
		if err := j.settle(lsn); err != nil {
			return false, err
		}
	}
	return true, nil
}

// check fails with ErrInvalidArgument for conditions that do not go
// together (ExpiryNX with another, ExpiryGT with ExpiryLT), naming op and
// the stream.
func (cond ExpiryCond) check(op, name string) error {
	if cond&ExpiryNX != 0 && cond&^ExpiryNX != 0 || cond&ExpiryGT != 0 && cond&ExpiryLT != 0 {
		return errorf(ErrInvalidArgument, "%s %q: conditions %b do not go together", op, name, cond)
	}
	return nil
}

// holds reports whether a stream whose expiry is cur (Unix ms, 0: none)
// meets cond for the new expiry ms, by Redis's rules: no expiry is
// later than any time.
func (cond ExpiryCond) holds(cur, ms int64) bool {
	switch {
	case cond&ExpiryNX != 0 && cur != 0,
		cond&ExpiryXX != 0 && cur == 0,
		cond&ExpiryGT != 0 && (cur == 0 || ms <= cur),
		cond&ExpiryLT != 0 && cur != 0 && ms >= cur:
		return false
	}
	return true
}

// ExpiresAt returns when the stream expires, and false when it has no
// expiry. O(1); safe for concurrent use.
func (s *Stream) ExpiresAt() (time.Time, bool) {
	s.mu.RLock()
	defer s.runlock()
	if s.expireMs == 0 {
		return time.Time{}, false
	}
	return time.UnixMilli(s.expireMs), true
}

// Expiring returns the number of streams with an expiry (what Redis's
// INFO keyspace calls expires). O(1), without a lock.
func (db *DB) Expiring() int { return int(db.exp.n.Load()) }

// RemoveExpired removes those of the named streams whose expiry is before
// now (to the millisecond: a stream is still there at its expiry time, as
// a Redis key is), as Remove does (blocked readers included), and returns
// the names it removed (nil: none), for a caller that tells others of the
// change (a server's client-side caching). Without an expiring stream in
// the DB it returns at once, taking no lock. O(k log n) for k names; safe
// for concurrent use.
//
// Expired streams are removed even while the log of a durable DB fails:
// a removal the log does not keep comes again after a restart, as the
// stream's expiry is kept. After Close it removes nothing.
func (db *DB) RemoveExpired(now time.Time, names ...string) []string {
	if db.exp.n.Load() == 0 || db.gate.read() != nil {
		return nil
	}
	ms := now.UnixMilli()
	db.mu.Lock()
	var removed []string
	var j *journal
	var last uint64
	for _, name := range names {
		s, ok := db.lookupLocked(name)
		if !ok || s.expireMs == 0 || s.expireMs >= ms {
			continue
		}
		removed = append(removed, name)
		if jj, lsn := db.removeLocked(s, errorf(ErrNoStream, "stream %q expired", name)); jj != nil {
			j, last = jj, max(last, lsn)
		}
	}
	db.mu.Unlock()
	if j != nil {
		j.settle(last)
	}
	return removed
}

// RemoveExpiredSample looks at up to n streams with an expiry, taken in
// no particular order, and removes those whose expiry is before now, as
// Redis's active expiry cycle does with its samples. It returns how many
// it looked at and the names of those it removed (nil: none). O(n log m);
// safe for concurrent use.
func (db *DB) RemoveExpiredSample(now time.Time, n int) (sampled int, removed []string) {
	x := db.SampleExpiry(now, n)
	return x.Sampled, x.Removed
}

// ExpirySample is what SampleExpiry looked at and did.
type ExpirySample struct {
	Sampled int      // streams looked at
	Removed []string // the names of those removed (nil: none)
	// TTLSum is the time the streams looked at and kept had left before
	// their expiry, summed over the TTLs of them that had some left (as
	// Redis's cycle sums the TTLs of its samples for avg_ttl).
	TTLSum time.Duration
	TTLs   int
}

// SampleExpiry is RemoveExpiredSample, which also reports the time the
// streams it kept had left. It removes as RemoveExpired does, even while
// the log fails. O(n log m); safe for concurrent use.
func (db *DB) SampleExpiry(now time.Time, n int) ExpirySample {
	var x ExpirySample
	if db.exp.n.Load() == 0 || n <= 0 || db.gate.read() != nil {
		return x
	}
	ms := now.UnixMilli()
	db.mu.Lock()
	var expired []*Stream
	for s := range db.exp.set { // map order: a sample
		if x.Sampled == n {
			break
		}
		x.Sampled++
		switch {
		case s.expireMs < ms:
			expired = append(expired, s)
		case s.expireMs > ms:
			x.TTLSum += time.Duration(s.expireMs-ms) * time.Millisecond
			x.TTLs++
		}
	}
	var j *journal
	var last uint64
	for _, s := range expired {
		x.Removed = append(x.Removed, s.Name())
		if jj, lsn := db.removeLocked(s, errorf(ErrNoStream, "stream %q expired", s.Name())); jj != nil {
			j, last = jj, max(last, lsn)
		}
	}
	db.mu.Unlock()
	if j != nil {
		j.settle(last)
	}
	return x
}
