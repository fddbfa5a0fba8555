package xstream

// Delete removes the entries with the given IDs and returns how many
// existed and were removed. IDs are "ms-seq" or a bare "ms" (ms-0); one
// invalid ID fails the whole call (ErrInvalidID) before anything is
// deleted. Delete raises the stream's max-deleted-entry ID and keeps its
// first-entry ID right; a block left with no entry is freed. Each ID costs
// O(log N).
func (s *Stream) Delete(ids ...string) (int64, error) {
	parsed, err := parseIDs(ids)
	if err != nil {
		return 0, err
	}
	return s.DeleteIDs(parsed...)
}

// DeleteIDs is Delete for IDs already parsed, such as those of entries a
// read returned: it saves formatting and parsing them. It never fails;
// the error is there to match Delete. O(log N) per ID.
func (s *Stream) DeleteIDs(ids ...ID) (_ int64, err error) {
	if err = s.cfg.gate.write(); err != nil {
		return
	}
	s.mu.Lock()
	defer s.unlockTo(&err)
	var deleted int64
	for _, id := range ids {
		if s.deleteEntryLocked(id) {
			deleted++
		}
	}
	return deleted, nil
}
