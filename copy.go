package xstream

import "strconv"

// Copying streams (Redis COPY).

// Copy copies the stream called src to the name dst of the DB to (db
// itself, or another DB: Redis's COPY ... DB), as Redis COPY does: its
// entries, its last ID and counters, its consumer groups with their
// consumers, pending entries and dead-letter policies, and its expiry. A
// stream already called dst is removed first, as by Remove, when replace
// is set; without replace Copy then changes nothing and returns false. It
// fails with ErrNoStream when there is no stream src, and with
// ErrInvalidArgument when src and dst are the same stream or, in a
// durable DB, when the copy is larger than one record of the log takes
// (1 GiB: the message gives both sizes); either way nothing changes. A src removed or renamed while Copy runs is copied as
// it was: the Copy is as if it came first.
//
// The copy is a new stream: later changes to one are not seen in the
// other. Blocked readers of dst are treated as by Rename: a DB.Read reads
// the copy from where it was, a DB.ReadGroup is served by the copy's group
// or ends with ErrNoGroup. The entries are appended one by one, so the
// copy's storage blocks follow to's node size, not necessarily src's. In
// a durable DB the copy is logged as the calls that would make it and
// survives a restart (a dead-letter policy's count of moved entries
// excepted: it restarts at 0). O(N) in the entries, groups and pending
// entries copied; src is read-locked meanwhile. Safe for concurrent use.
func (db *DB) Copy(src string, to *DB, dst string, replace bool) (bool, error) {
	if to == db && src == dst {
		return false, errorf(ErrInvalidArgument, "Copy of %q onto itself", src)
	}
	if err := db.gate.read(); err != nil {
		return false, err
	}
	if err := to.gate.write(); err != nil {
		return false, err
	}
	s, ok := db.Lookup(src)
	if !ok {
		return false, errorf(ErrNoStream, "Copy %q: no such stream", src)
	}
	// Lock order: the DB's lock, then a stream's (to's, then s's).
	to.mu.Lock()
	if _, ok := to.lookupLocked(dst); ok && !replace {
		to.mu.Unlock()
		return false, nil
	}
	// The copy is made before dst is replaced, so that one too large for
	// the log is dropped with nothing changed. A src removed or renamed
	// since the lookup (even onto dst) is copied as it was then: its
	// entries stay as they were, so the Copy is as if it ran first, and
	// no failure comes after dst was replaced.
	c := to.newStreamLocked(dst)
	s.mu.RLock()
	c.mu.Lock()
	copyInto(c, s)
	if s.expireMs != 0 {
		to.setExpiryLoggedLocked(c, s.expireMs)
	}
	// What the copy read must be on disk before Copy returns, as for any
	// read (runlock); the wait comes once no lock is held.
	var srcLog *journal
	var srcLSN uint64
	if l := s.log; l != nil && !l.deferred {
		srcLog, srcLSN = l.j, l.lsn
	}
	s.mu.RUnlock()
	if err := to.checkNewLocked(c, "Copy of "+strconv.Quote(src)); err != nil {
		to.mu.Unlock()
		return false, err
	}
	_, j, last := to.replaceLocked(dst, replace)
	if err := to.insertNewLocked(c, j, last); err != nil {
		return false, err
	}
	if srcLog != nil {
		if err := srcLog.durable(srcLSN); err != nil {
			return false, err
		}
	}
	return true, nil
}

// checkNewLocked fails when the record of c, a stream newStreamLocked
// made and the caller filled, is larger than the log takes (see
// objLog.checkSize): c is then dropped, its expiry too, and c.mu
// released; nothing else changed. The caller holds db.mu and c.mu.
func (db *DB) checkNewLocked(c *Stream, what string) error {
	if c.log == nil {
		return nil
	}
	err := c.log.checkSize(what)
	if err != nil {
		db.dropExpiryLocked(c)
		c.log = nil // its record is never committed
		c.mu.Unlock()
	}
	return err
}

// replaceLocked makes way for a new stream called name: a stream of that
// name is removed (its blocked readers treated as by Rename) when replace
// is set, and free is false when it is not. It returns the journal and
// LSN of the removal's record (nil: none). The caller holds db.mu.
func (db *DB) replaceLocked(name string, replace bool) (free bool, j *journal, last uint64) {
	old, ok := db.lookupLocked(name)
	if !ok {
		return true, nil, 0
	}
	if !replace {
		return false, nil, 0
	}
	j, last = db.removeLocked(old, errRenamedOnto)
	return true, j, last
}

// insertNewLocked commits the record of c, a stream newStreamLocked made
// and the caller filled, puts it in the DB and releases db.mu and c.mu,
// then settles the call's records (j and last: those before c's) and
// returns settle's error. The caller holds db.mu and c.mu.
func (db *DB) insertNewLocked(c *Stream, j *journal, last uint64) error {
	jj, lsn := c.unlockDeferred()
	db.insertLocked(c)
	db.mu.Unlock()
	if jj != nil {
		j, last = jj, max(last, lsn)
	}
	if j != nil {
		return j.settle(last)
	}
	return nil
}

// copyInto gives c, new and empty, s's entries, counters and groups,
// through the operations of ops.go and groupops.go (so a durable c logs
// them). The caller holds c's lock and s's read lock.
func copyInto(c, s *Stream) {
	col := getCollector()
	s.collectRangeLocked(col, ID{}, MaxID(), 0, false)
	for _, e := range col.entries() {
		c.appendLocked(e.ID, e.Fields)
	}
	putCollector(col)
	c.setLastLocked(ID(s.st.LastID()), s.st.EntriesAdded(), ID(s.st.MaxDeleted()))
	s.eachGroupLocked(func(g *group) {
		ng := c.createGroupLocked(g.name, g.lastID, g.entriesRead)
		if g.dead != (DeadLetterPolicy{}) {
			c.setDeadLetterPolicyLocked(ng, g.dead)
		}
		c.loadDeadLetteredLocked(ng, g.deadLettered)
		owners := make([]*consumer, len(g.byNum))
		eachConsumer(g, func(cn *consumer) {
			nc, _ := c.consumerLocked(ng, cn.name)
			c.seeConsumerLocked(ng, nc, cn.seenMs)
			c.activateConsumerLocked(ng, nc, cn.activeMs)
			owners[cn.num] = nc
		})
		g.pel.Ascend(sID{}, sID(MaxID()), func(id sID, rec *nack) bool {
			if rec.owner == 0 {
				c.giveBackLocked(ng, ID(id), rec.count)
			} else {
				c.claimLocked(ng, ID(id), owners[rec.owner], rec.deliveryMs, rec.count)
			}
			return true
		})
	})
}
