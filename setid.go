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
func (s *Stream) SetID(args SetIDArgs) error {
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
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := len(s.blocks); n > 0 && last.Less(s.blocks[n-1].last) {
		return errorf(ErrIDTooSmall, "last ID %s is smaller than the stream's top entry %s", last, s.blocks[n-1].last)
	}
	if args.EntriesAdded >= 0 && args.EntriesAdded < s.length {
		return errorf(ErrInvalidArgument, "EntriesAdded %d is smaller than the stream's length %d", args.EntriesAdded, s.length)
	}
	s.lastID = last
	if args.EntriesAdded >= 0 {
		s.entriesAdded = args.EntriesAdded
	}
	if !maxDel.IsZero() {
		s.maxDeleted = maxDel
	}
	return nil
}
