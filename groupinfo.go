package xstream

import "time"

// Group and consumer information, and the lag of a group, computed by the
// rules of Redis 7 (streamEstimateDistanceFromFirstEverEntry and
// streamRangeHasTombstones in t_stream.c).

// rangeHasTombstonesLocked reports whether an entry with start <= ID was deleted
// from inside the stream, so that counting entries there is not possible.
func (s *Stream) rangeHasTombstonesLocked(start ID) bool {
	if s.st.Len() == 0 || ID(s.st.MaxDeleted()).IsZero() {
		return false
	}
	if ID(s.st.MaxDeleted()).Less(ID(s.st.FirstID())) {
		return false
	}
	return !ID(s.st.MaxDeleted()).Less(start)
}

// estimateDistanceLocked returns the number of entries added up to and including
// id, or entriesReadUnknown when deletions make it unknowable.
func (s *Stream) estimateDistanceLocked(id ID) int64 {
	if s.st.EntriesAdded() == 0 {
		return 0
	}
	if s.st.Len() == 0 && !ID(s.st.LastID()).Less(id) {
		return s.st.EntriesAdded()
	}
	switch id.Compare(ID(s.st.LastID())) {
	case 0:
		return s.st.EntriesAdded()
	case 1:
		return entriesReadUnknown
	}
	if ID(s.st.MaxDeleted()).IsZero() || ID(s.st.MaxDeleted()).Less(ID(s.st.FirstID())) {
		switch id.Compare(ID(s.st.FirstID())) {
		case -1:
			return s.st.EntriesAdded() - s.st.Len()
		case 0:
			return s.st.EntriesAdded() - s.st.Len() + 1
		}
	}
	return entriesReadUnknown
}

// counterValidLocked reports whether the group's entries-read counter can
// be trusted: it is known, the group has not fallen behind the stream's
// first entry (trimming past the group's last delivered ID makes the
// counter stale), and no entry after the group's last delivered ID was
// deleted. The trim condition is Redis 7.2's; Redis 7.0 lacks it and
// reports a lag that never reaches 0 after such a trim.
func (s *Stream) counterValidLocked(g *group) bool {
	return g.entriesRead != entriesReadUnknown && !g.lastID.Less(ID(s.st.FirstID())) && !s.rangeHasTombstonesLocked(g.lastID)
}

// entriesReadAfterLocked returns the group's entries-read counter once id,
// greater than its last delivered ID, is delivered.
func (s *Stream) entriesReadAfterLocked(g *group, id ID) int64 {
	// Redis checks for deletions from the delivered entry on, not from
	// the group's previous last ID (streamReplyWithRange).
	if g.entriesRead != entriesReadUnknown && !g.lastID.Less(ID(s.st.FirstID())) && !s.rangeHasTombstonesLocked(id) {
		return g.entriesRead + 1
	} else if s.st.EntriesAdded() != 0 {
		return s.estimateDistanceLocked(id)
	}
	return g.entriesRead
}

// lagLocked returns the group's lag and whether it is known.
func (s *Stream) lagLocked(g *group) (int64, bool) {
	if s.st.EntriesAdded() == 0 {
		return 0, true
	}
	if s.counterValidLocked(g) {
		return s.st.EntriesAdded() - g.entriesRead, true
	}
	if read := s.estimateDistanceLocked(g.lastID); read != entriesReadUnknown {
		return s.st.EntriesAdded() - read, true
	}
	return 0, false
}

// GroupInfo describes a consumer group, with the fields of Redis's XINFO
// GROUPS.
type GroupInfo struct {
	Name            string
	Consumers       int
	Pending         int64 // entries in the group's PEL
	LastDeliveredID ID
	// EntriesRead counts the entries delivered to the group, when
	// EntriesReadKnown.
	EntriesRead      int64
	EntriesReadKnown bool
	// Lag is the number of entries not yet delivered to the group, when
	// LagKnown. It is unknown (not zero) when deletions inside the
	// stream make it impossible to count, as in Redis 7.
	Lag      int64
	LagKnown bool
	// DeadLetter is the group's dead-letter policy (zero: none), and
	// DeadLettered counts the entries it moved to its dead-letter
	// stream. Redis has neither: its XINFO GROUPS lists them only for a
	// group that has a policy or dead letters.
	DeadLetter   DeadLetterPolicy
	DeadLettered int64
}

func (s *Stream) groupInfoLocked(g *group) GroupInfo {
	info := GroupInfo{
		Name:            g.name,
		Consumers:       g.consumers.Len(),
		Pending:         int64(g.pel.Len()),
		LastDeliveredID: g.lastID,
		DeadLetter:      g.dead,
		DeadLettered:    g.deadLettered,
	}
	if g.entriesRead != entriesReadUnknown {
		info.EntriesRead, info.EntriesReadKnown = g.entriesRead, true
	}
	info.Lag, info.LagKnown = s.lagLocked(g)
	return info
}

// Groups describes the stream's consumer groups in name order (Redis XINFO
// GROUPS). O(G).
func (s *Stream) Groups() []GroupInfo {
	s.mu.RLock()
	defer s.runlock()
	var out []GroupInfo
	s.eachGroupLocked(func(g *group) { out = append(out, s.groupInfoLocked(g)) })
	return out
}

func (s *Stream) eachGroupLocked(fn func(*group)) {
	if s.groups == nil {
		return
	}
	s.groups.Walk(func(_ string, v any) bool {
		fn(v.(*group))
		return false
	})
}

func eachConsumer(g *group, fn func(*consumer)) {
	g.consumers.Walk(func(_ string, v any) bool {
		fn(v.(*consumer))
		return false
	})
}

// ConsumerInfo describes a consumer of a group, with the fields of Redis's
// XINFO CONSUMERS.
type ConsumerInfo struct {
	Name    string
	Pending int64         // entries it owns in the group's PEL
	Idle    time.Duration // since its last attempted read or claim
	// Inactive is the time since its last successful read or claim (one
	// that delivered or claimed entries), when InactiveKnown; a consumer
	// that never had one has InactiveKnown false (Redis: -1).
	Inactive      time.Duration
	InactiveKnown bool
}

func consumerInfo(c *consumer, now int64) ConsumerInfo {
	info := ConsumerInfo{
		Name:    c.name,
		Pending: int64(c.pel.Len()),
		Idle:    msDuration(now - c.seenMs),
	}
	if c.activeMs >= 0 {
		info.Inactive, info.InactiveKnown = msDuration(now-c.activeMs), true
	}
	return info
}

// msDuration converts a difference of Unix milliseconds to a Duration; a
// clock that went back gives 0.
func msDuration(ms int64) time.Duration {
	if ms < 0 {
		ms = 0
	}
	return time.Duration(ms) * time.Millisecond
}

// Consumers describes the consumers of group in name order (Redis XINFO
// CONSUMERS). Idle times come from the stream's clock. It fails with
// ErrNoGroup. O(C).
func (s *Stream) Consumers(group string) ([]ConsumerInfo, error) {
	now := s.nowMs()
	s.mu.RLock()
	defer s.runlock()
	g, err := s.groupLocked(group)
	if err != nil {
		return nil, err
	}
	var out []ConsumerInfo
	eachConsumer(g, func(c *consumer) { out = append(out, consumerInfo(c, now)) })
	return out, nil
}

// GroupDetail is a group as InfoFull lists it (Redis XINFO STREAM FULL):
// its description, its PEL and its consumers with their PELs.
type GroupDetail struct {
	GroupInfo
	PEL       []PendingEntry
	Consumers []ConsumerDetail
}

// ConsumerDetail is a consumer as InfoFull lists it.
type ConsumerDetail struct {
	ConsumerInfo
	SeenTime   time.Time // last attempted read or claim
	ActiveTime time.Time // last successful one; zero when never
	PEL        []PendingEntry
}

// groupDetailsLocked lists the groups for InfoFull; count caps each PEL
// listed (0: no cap).
func (s *Stream) groupDetailsLocked(count int) []GroupDetail {
	now := s.nowMs()
	var out []GroupDetail
	s.eachGroupLocked(func(g *group) {
		d := GroupDetail{GroupInfo: s.groupInfoLocked(g)}
		d.PEL = pendingRows(g, ID{}, MaxID(), count, nil, 0, now)
		eachConsumer(g, func(c *consumer) {
			cd := ConsumerDetail{ConsumerInfo: consumerInfo(c, now), SeenTime: time.UnixMilli(c.seenMs)}
			if c.activeMs >= 0 {
				cd.ActiveTime = time.UnixMilli(c.activeMs)
			}
			cd.PEL = pendingRows(g, ID{}, MaxID(), count, c, 0, now)
			d.Consumers = append(d.Consumers, cd)
		})
		out = append(out, d)
	})
	return out
}
