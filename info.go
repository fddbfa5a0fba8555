package xstream

// StreamInfo describes a stream, with the fields of Redis's XINFO STREAM
// under the same names.
type StreamInfo struct {
	Length               int64 // number of entries
	RadixTreeKeys        int   // storage blocks (Redis: listpack nodes)
	LastGeneratedID      ID    // the last ID added, even if since deleted
	MaxDeletedEntryID    ID    // the largest ID removed by Delete
	EntriesAdded         int64 // entries ever added
	RecordedFirstEntryID ID    // ID of the first entry (0-0 when empty)
	Groups               int   // consumer groups
	FirstEntry           *Entry
	LastEntry            *Entry

	// Idempotence describes idempotent production (the IDMP fields of
	// Redis 8.6); nil when it is UnusedIdempotence (the defaults, no ID
	// remembered or ever added): Stream.IdempotenceInfo gives it then.
	Idempotence *IdempotenceInfo

	// Entries and GroupDetails are filled by InfoFull only.
	Entries      []Entry
	GroupDetails []GroupDetail
}

// Info returns the stream's description. It fails with ErrClosed on a
// closed DB, and in a durable DB under SyncAlways with the log's error
// when the stream holds changes the log could not sync (ErrLogFailed):
// its first and last entries are then not shown. O(log N).
func (s *Stream) Info() (result StreamInfo, err error) {
	if err = s.cfg.gate.read(); err != nil {
		return
	}
	s.mu.RLock()
	defer runlockTo(s, &result, &err)
	return s.infoLocked(), nil
}

func (s *Stream) infoLocked() StreamInfo {
	info := StreamInfo{
		Length:               s.st.Len(),
		RadixTreeKeys:        s.st.NumBlocks(),
		LastGeneratedID:      ID(s.st.LastID()),
		MaxDeletedEntryID:    ID(s.st.MaxDeleted()),
		EntriesAdded:         s.st.EntriesAdded(),
		RecordedFirstEntryID: ID(s.st.FirstID()),
	}
	if idmp := s.idmpInfoLocked(); idmp != UnusedIdempotence {
		info.Idempotence = &idmp
	}
	if s.groups != nil {
		info.Groups = s.groups.Len()
	}
	if s.st.Len() > 0 {
		info.FirstEntry = s.edgeLocked(false)
		info.LastEntry = s.edgeLocked(true)
	}
	return info
}

func (s *Stream) edgeLocked(last bool) *Entry {
	c := getCollector()
	defer putCollector(c)
	s.collectRangeLocked(c, ID{}, MaxID(), 1, last)
	if es := c.entries(); len(es) == 1 {
		return &es[0]
	}
	return nil
}

// InfoFull returns Info with the first count entries in Entries (count 0:
// all of them) and the consumer groups in GroupDetails, each with up to
// count entries of its PEL and of each consumer's PEL, as XINFO STREAM FULL
// does, and each group's nacked count. O(log N + count × (1 + G + C)),
// plus O(P) for the P pending entries of all groups (the nacked counts).
func (s *Stream) InfoFull(count int) (result StreamInfo, err error) {
	if count < 0 {
		return StreamInfo{}, errorf(ErrInvalidArgument, "count must be >= 0, got %d", count)
	}
	if err = s.cfg.gate.read(); err != nil {
		return
	}
	s.mu.RLock()
	defer runlockTo(s, &result, &err)
	info := s.infoLocked()
	c := getCollector()
	defer putCollector(c)
	s.collectRangeLocked(c, ID{}, MaxID(), count, false)
	info.Entries = c.entries()
	info.GroupDetails = s.groupDetailsLocked(count)
	return info, nil
}
