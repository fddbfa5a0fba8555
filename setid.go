package xstream

// SetIDArgs holds the arguments of SetID.
type SetIDArgs struct {
	// LastID becomes the stream's last generated ID ("ms-seq" or "ms").
	LastID string
	// EntriesAdded, when >= 0, becomes the count of entries ever added;
	// -1 leaves it.
	EntriesAdded int64
	// MaxDeletedID, when not "" or "0-0", becomes the max deleted entry
	// ID.
	MaxDeletedID string
}

// SetID sets the stream's last generated ID and, optionally, its
// entries-added counter and max deleted entry ID, as Redis XSETID does.
// The new last ID may not be smaller than the given max deleted entry ID
// nor than the ID of any entry still stored, even one deleted from the end
// of the stream (Redis 7.0 allows the latter): that is an ErrIDTooSmall
// error. As in Redis 7.0, the stream's own max deleted ID does not bound it. EntriesAdded may not be smaller than the stream's
// length (ErrInvalidArgument). A bad ID is an ErrInvalidID error. On error
// nothing changes. O(1).
func (s *Stream) SetID(args SetIDArgs) (err error) {
	last, err := ParseID(args.LastID)
	if err != nil {
		return err
	}
	var maxDel ID
	if args.MaxDeletedID != "" {
		if maxDel, err = ParseID(args.MaxDeletedID); err != nil {
			return err
		}
		if last.Less(maxDel) {
			return errorf(ErrIDTooSmall, "last ID %s is smaller than the given max deleted ID %s", last, maxDel)
		}
	}
	if args.EntriesAdded < -1 {
		return errorf(ErrInvalidArgument, "EntriesAdded must be >= -1, got %d", args.EntriesAdded)
	}
	if err = s.cfg.gate.write(); err != nil {
		return
	}
	s.mu.Lock()
	defer s.unlockTo(&err)
	if top, ok := s.st.TopID(); ok && last.Less(ID(top)) {
		return errorf(ErrIDTooSmall, "last ID %s is smaller than the stream's top entry %s", last, ID(top))
	}
	if n := s.st.Len(); args.EntriesAdded >= 0 && args.EntriesAdded < n {
		return errorf(ErrInvalidArgument, "EntriesAdded %d is smaller than the stream's length %d", args.EntriesAdded, n)
	}
	s.setLastLocked(last, args.EntriesAdded, maxDel)
	return nil
}
