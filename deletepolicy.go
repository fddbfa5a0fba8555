package xstream

// DeletePolicy says what deleting or trimming an entry does about the
// consumer groups that still refer to it (Redis 8.2: KEEPREF, DELREF,
// ACKED).
type DeletePolicy uint8

const (
	// KeepRef deletes entries and leaves pending references to them in
	// the groups' PELs (KEEPREF, the default, as Delete and Trim do).
	KeepRef DeletePolicy = iota
	// DelRef deletes entries and removes their IDs from every group's
	// PEL (DELREF).
	DelRef
	// Acked deletes only entries that every group has delivered and
	// acknowledged (ACKED). A trim with Acked stops at the first entry
	// still referenced, so it never leaves a hole before it.
	Acked
)

func (p DeletePolicy) check() error {
	if p > Acked {
		return errorf(ErrInvalidArgument, "unknown DeletePolicy %d", p)
	}
	return nil
}

// DeleteResult is the outcome of DeleteEx or AckDel for one ID, with
// Redis's reply codes.
type DeleteResult int8

const (
	// DeleteNotFound: no entry with that ID in the stream (-1).
	DeleteNotFound DeleteResult = -1
	// Deleted: the entry was deleted (1).
	Deleted DeleteResult = 1
	// DeleteReferenced: with Acked, the entry was kept because a group
	// still refers to it (2).
	DeleteReferenced DeleteResult = 2
)

// referencedLocked reports whether a group has not yet delivered id or
// still has it pending.
func (s *Stream) referencedLocked(id ID) bool {
	ref := false
	s.eachGroupLocked(func(g *group) {
		if ref {
			return
		}
		ref = g.lastID.Less(id) || g.pel.get(id) != nil
	})
	return ref
}

// dropRefsLocked removes id from the PEL of every group.
func (s *Stream) dropRefsLocked(id ID) {
	s.eachGroupLocked(func(g *group) { g.removePendingLocked(id) })
}

// hasGroups reports whether the stream has a consumer group.
func (s *Stream) hasGroups() bool { return s.groups != nil && s.groups.Len() > 0 }

// deleteExLocked deletes id under policy.
func (s *Stream) deleteExLocked(id ID, policy DeletePolicy) DeleteResult {
	if _, _, _, ok := s.entryLocked(id); !ok {
		if policy == DelRef {
			s.dropRefsLocked(id)
		}
		return DeleteNotFound
	}
	if policy == Acked && s.referencedLocked(id) {
		return DeleteReferenced
	}
	s.deleteLocked([]ID{id})
	if policy == DelRef {
		s.dropRefsLocked(id)
	}
	return Deleted
}

// DeleteEx deletes entries as Delete does, under a policy for the
// consumer groups that refer to them (Redis 8.2 XDELEX), and returns one
// result per ID. With DelRef, the IDs also leave every PEL, even when the
// entry was already gone. One bad ID fails the whole call (ErrInvalidID),
// as does an unknown policy (ErrInvalidArgument), before anything is
// deleted. O(log N + G log P) per ID for G groups.
func (s *Stream) DeleteEx(policy DeletePolicy, ids ...string) ([]DeleteResult, error) {
	if err := policy.check(); err != nil {
		return nil, err
	}
	parsed, err := parseIDs(ids)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]DeleteResult, len(parsed))
	for i, id := range parsed {
		out[i] = s.deleteExLocked(id, policy)
	}
	return out, nil
}

// AckDel acknowledges IDs in group and deletes their entries under policy
// in one atomic step (Redis 8.2 XACKDEL). It returns one result per ID:
// DeleteNotFound when the stream has no such entry (a pending reference to
// it is still acknowledged), Deleted, or DeleteReferenced when Acked kept
// an entry another group still needs. It fails, changing nothing, with
// ErrNoGroup, ErrInvalidID or ErrInvalidArgument. O(log N + G log P) per
// ID.
func (s *Stream) AckDel(group string, policy DeletePolicy, ids ...string) ([]DeleteResult, error) {
	if err := policy.check(); err != nil {
		return nil, err
	}
	parsed, err := parseIDs(ids)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	g, err := s.groupLocked(group)
	if err != nil {
		return nil, err
	}
	out := make([]DeleteResult, len(parsed))
	for i, id := range parsed {
		g.removePendingLocked(id)
		out[i] = s.deleteExLocked(id, policy)
	}
	return out, nil
}

// trimKeepsLocked reports whether a trim under policy must keep the live
// entry id (Acked and still referenced).
func (s *Stream) trimKeepsLocked(policy DeletePolicy, id ID) bool {
	return policy == Acked && s.hasGroups() && s.referencedLocked(id)
}

// blockReferencedLocked reports whether a trim under policy must keep a
// live entry of b.
func (s *Stream) blockReferencedLocked(policy DeletePolicy, b *block) bool {
	if policy != Acked || !s.hasGroups() {
		return false
	}
	for i := range b.offs {
		if id, flags, _ := b.at(i); flags&flagDeleted == 0 && s.referencedLocked(id) {
			return true
		}
	}
	return false
}

// trimmedLocked is told each live entry a trim removes.
func (s *Stream) trimmedLocked(policy DeletePolicy, id ID) {
	if policy == DelRef && s.hasGroups() {
		s.dropRefsLocked(id)
	}
}
