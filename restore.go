package xstream

import (
	"strconv"
	"time"
)

// Restoring a stream from an image of its whole state (Redis RESTORE of a
// DUMP payload, which the server decodes).

// StreamImage is the whole state of a stream, for DB.Restore.
type StreamImage struct {
	Entries      []Entry // in increasing ID order
	LastID       ID      // the last ID given, at least the last entry's
	EntriesAdded int64   // at least len(Entries)
	MaxDeletedID ID
	Groups       []GroupImage
	ExpiresAt    time.Time // the zero time: no expiry
}

// GroupImage is a consumer group of a StreamImage.
type GroupImage struct {
	Name        string
	LastID      ID    // last delivered ID
	EntriesRead int64 // -1: unknown
	Consumers   []ConsumerImage
	Pending     []PendingImage // in increasing ID order
}

// ConsumerImage is a consumer of a GroupImage. A zero ActiveTime is
// "never active" (Redis 7.0 keeps no active time).
type ConsumerImage struct {
	Name                 string
	SeenTime, ActiveTime time.Time
}

// PendingImage is a pending entry of a GroupImage; its Consumer must be
// one of the group's consumers. The entry need not be in the stream (it
// may have been deleted or trimmed).
type PendingImage struct {
	ID            ID
	Consumer      string
	DeliveryTime  time.Time
	DeliveryCount int64
}

// check reports what makes the image inconsistent.
func (img *StreamImage) check() error {
	var prev ID
	for i, e := range img.Entries {
		if e.ID.IsZero() || i > 0 && !prev.Less(e.ID) {
			return errorf(ErrInvalidArgument, "image entry %d: ID %s not after %s", i, e.ID, prev)
		}
		if len(e.Fields) == 0 {
			return errorf(ErrInvalidArgument, "image entry %s has no fields", e.ID)
		}
		prev = e.ID
	}
	if n := len(img.Entries); n > 0 && img.LastID.Less(img.Entries[n-1].ID) {
		return errorf(ErrInvalidArgument, "image last ID %s before its last entry %s", img.LastID, img.Entries[n-1].ID)
	}
	if img.EntriesAdded < int64(len(img.Entries)) {
		return errorf(ErrInvalidArgument, "image entries added %d, fewer than its %d entries", img.EntriesAdded, len(img.Entries))
	}
	seen := map[string]bool{}
	for _, g := range img.Groups {
		if seen[g.Name] {
			return errorf(ErrInvalidArgument, "image group %q twice", g.Name)
		}
		seen[g.Name] = true
		if g.EntriesRead < entriesReadUnknown {
			return errorf(ErrInvalidArgument, "image group %q: entries read %d", g.Name, g.EntriesRead)
		}
		cons := map[string]bool{}
		for _, c := range g.Consumers {
			if cons[c.Name] {
				return errorf(ErrInvalidArgument, "image group %q: consumer %q twice", g.Name, c.Name)
			}
			cons[c.Name] = true
		}
		var last ID
		for i, p := range g.Pending {
			if !cons[p.Consumer] {
				return errorf(ErrInvalidArgument, "image group %q: pending entry %s of unknown consumer %q", g.Name, p.ID, p.Consumer)
			}
			if i > 0 && !last.Less(p.ID) {
				return errorf(ErrInvalidArgument, "image group %q: pending entry %s not after %s", g.Name, p.ID, last)
			}
			if p.DeliveryCount < 0 {
				return errorf(ErrInvalidArgument, "image group %q: pending entry %s delivered %d times", g.Name, p.ID, p.DeliveryCount)
			}
			last = p.ID
		}
	}
	return nil
}

// Restore makes the stream called name from img, as Redis RESTORE does. A
// stream already called name is removed first (its blocked readers treated
// as by Rename) when replace is set; without replace Restore then changes
// nothing and returns false. An inconsistent image is an
// ErrInvalidArgument error naming what is wrong, and so, in a durable DB,
// is an image larger than one record of the log takes (1 GiB: the message
// gives both sizes); either way nothing changes. In
// a durable DB the new stream is logged as the calls that would make it
// and survives a restart. O(N) in the entries, groups and pending entries
// of the image. Safe for concurrent use.
func (db *DB) Restore(name string, img StreamImage, replace bool) (bool, error) {
	if err := img.check(); err != nil {
		return false, err
	}
	if err := db.gate.write(); err != nil {
		return false, err
	}
	db.mu.Lock()
	if _, ok := db.lookupLocked(name); ok && !replace {
		db.mu.Unlock()
		return false, nil
	}
	// The stream is made before the one called name is replaced, so
	// that one too large for the log is dropped with nothing changed.
	s := db.newStreamLocked(name)
	s.mu.Lock()
	for _, e := range img.Entries {
		s.appendLocked(e.ID, e.Fields)
	}
	s.setLastLocked(img.LastID, img.EntriesAdded, img.MaxDeletedID)
	for _, gi := range img.Groups {
		g := s.createGroupLocked(gi.Name, gi.LastID, gi.EntriesRead)
		cons := map[string]*consumer{}
		for _, ci := range gi.Consumers {
			c, _ := s.consumerLocked(g, ci.Name)
			s.seeConsumerLocked(g, c, ci.SeenTime.UnixMilli())
			active := int64(-1)
			if !ci.ActiveTime.IsZero() {
				active = ci.ActiveTime.UnixMilli()
			}
			s.activateConsumerLocked(g, c, active)
			cons[ci.Name] = c
		}
		for _, p := range gi.Pending {
			s.claimLocked(g, p.ID, cons[p.Consumer], p.DeliveryTime.UnixMilli(), p.DeliveryCount)
		}
	}
	if !img.ExpiresAt.IsZero() {
		db.setExpiryLoggedLocked(s, max(img.ExpiresAt.UnixMilli(), 1))
	}
	if err := db.checkNewLocked(s, "Restore of "+strconv.Quote(name)); err != nil {
		db.mu.Unlock()
		return false, err
	}
	_, j, last := db.replaceLocked(name, replace)
	if err := db.insertNewLocked(s, j, last); err != nil {
		return false, err
	}
	return true, nil
}
