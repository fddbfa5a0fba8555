package xstream

import "math"

// AddBatch appends the entries in order, as len(entries) calls of
// Add(args, entry...) one after the other would, in one atomic step: it
// takes the stream's lock once and, for auto IDs, reads the clock once,
// so the entries get consecutive IDs of one millisecond (now-0, now-1, ...
// or, when the clock has not passed the last ID, the IDs after it). It
// returns their IDs.
//
// Each entry is added as Add adds it: with an "ms-*" args.ID the entries
// take the next sequences of ms; with an explicit "ms-seq" (or "ms") ID
// only a batch of one entry can succeed, as a second XADD of the same ID
// fails. args.Trim applies after each entry, as it does after each Add,
// so the stream ends as the Adds would leave it. In a durable DB the
// batch is one record of the log: after a crash it is there whole or not
// at all.
//
// AddBatch fails, changing nothing, with the errors of Add, checked in the
// same order (ErrNoFields when entries is empty or an entry has no fields;
// ErrInvalidID, ErrZeroID, a trim argument's error; ErrIDTooSmall or
// ErrStreamExhausted for the first entry whose ID cannot be made), with
// ErrInvalidArgument for args.Idempotency (an idempotent ID names one
// entry: use Add), and in a durable DB with ErrInvalidArgument when the
// batch would be a record larger than the log takes (1 GiB). It wakes readers blocked on the
// stream once. It is O(entries) amortized, plus the trimming it does.
func (s *Stream) AddBatch(args AddArgs, entries ...[]Field) ([]ID, error) {
	return s.addBatch(args, entries, false, "")
}

// addBatch is AddBatch; inDB makes it fail with errRemoved, changing
// nothing, when the stream is no longer called name in its DB.
func (s *Stream) addBatch(args AddArgs, entries [][]Field, inDB bool, name string) ([]ID, error) {
	if len(entries) == 0 {
		return nil, errorf(ErrNoFields, "AddBatch was given no entries")
	}
	for i, fields := range entries {
		if len(fields) == 0 {
			return nil, errorf(ErrNoFields, "AddBatch entry %d has no fields", i)
		}
	}
	var a addSpec
	if err := s.parseAdd(&args, &a); err != nil {
		return nil, err
	}
	if args.Idempotency.asked() {
		return nil, errorf(ErrInvalidArgument, "AddBatch takes no Idempotency (producer %q): add idempotent entries one by one with Add", args.Idempotency.Producer)
	}
	if err := s.cfg.gate.write(); err != nil {
		return nil, err
	}
	ids := make([]ID, len(entries))

	s.mu.Lock()
	if s.goneLocked(inDB, name) {
		s.mu.Unlock()
		return nil, errRemoved
	}
	if s.log != nil && batchRecordBound(entries) > s.log.j.maxRecord {
		s.mu.Unlock()
		return nil, errorf(ErrInvalidArgument, "a batch of %d entries is larger than one record of the log takes (%d bytes)", len(entries), s.log.j.maxRecord)
	}
	if err := s.batchIDs(&a, args.ID, ids); err != nil {
		s.mu.Unlock()
		return nil, err
	}
	if a.trims {
		for i, fields := range entries {
			s.appendLocked(ids[i], fields)
			s.trimLocked(&a.trim)
		}
	} else {
		s.appendBatchLocked(ids, entries)
	}
	s.notifyLocked()
	if err := s.unlock(); err != nil {
		return nil, err
	}
	return ids, nil
}

// batchIDs sets ids to the IDs of the entries of a batch added by a (raw
// is the ID argument), as nextID gives them one after the other from the
// stream's last ID; it fails as nextID does for the first it cannot
// make. The caller holds the lock. For auto IDs, past the first, each is
// the next of the one before, as the clock has not passed it.
func (s *Stream) batchIDs(a *addSpec, raw string, ids []ID) error {
	last := ID(s.st.LastID())
	if a.explicit {
		for i := range ids {
			id, err := s.nextID(a, raw, last)
			if err != nil {
				return err
			}
			ids[i], last = id, id
		}
		return nil
	}
	id, ok := nextAutoID(a.nowMs, last)
	if ok && id.Seq <= math.MaxUint64-uint64(len(ids)-1) {
		// The sequences of one millisecond: no carry into the next.
		for i := range ids {
			ids[i] = ID{id.Ms, id.Seq + uint64(i)}
		}
		return nil
	}
	for i := range ids {
		if !ok {
			return s.exhausted()
		}
		ids[i] = id
		id, ok = id.Next()
	}
	return nil
}

// batchRecordBound bounds the size of the log record of a batch: each
// entry's effect (kind, two IDs parts, field count, names and values with
// their lengths) and the trim effect that may follow it.
func batchRecordBound(entries [][]Field) int {
	n := 10 // the object's number
	for _, fields := range entries {
		n += 1 + 2*10 + 10 + 1 + 2*10 // append effect's head, a trim effect
		for _, f := range fields {
			n += 2*10 + len(f.Name) + len(f.Value)
		}
	}
	return n
}
