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
	// Acked deletes only entries that no group still refers to: every
	// group has read past them and none has them pending (ACKED). A trim
	// with Acked skips the entries still referenced and goes on past
	// them, as Redis's does, so it may leave them behind in a hole.
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
	// DeleteNotFound (-1): for DeleteEx, no entry with that ID in the
	// stream; for AckDel, the ID was not pending in the group, and nothing
	// was done.
	DeleteNotFound DeleteResult = -1
	// Deleted (1): the entry was deleted; for AckDel, the ID was
	// acknowledged and its entry deleted, or was already gone.
	Deleted DeleteResult = 1
	// DeleteReferenced (2): with Acked, a group still refers to the ID (it
	// has it pending or has not read that far), so nothing was deleted,
	// even when the stream holds no entry with that ID.
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
		ref = g.lastID.Less(id) || g.pel.Get(sid(id)) != nil
	})
	return ref
}

// dropRefsLocked removes id from the PEL of every group.
func (s *Stream) dropRefsLocked(id ID) {
	s.eachGroupLocked(func(g *group) { s.ackLocked(g, id) })
}

// deleteByPolicyLocked deletes id under policy, as Redis's XDELEX and
// XACKDEL do: with Acked it first asks whether a group still refers to
// id, with DelRef it first drops id from every PEL. It reports whether the
// policy let it delete, and whether an entry was there to delete.
func (s *Stream) deleteByPolicyLocked(id ID, policy DeletePolicy) (allowed, found bool) {
	switch policy {
	case Acked:
		if s.referencedLocked(id) {
			return false, false
		}
	case DelRef:
		s.dropRefsLocked(id)
	}
	return true, s.deleteEntryLocked(id)
}

// DeleteEx deletes entries as Delete does, under a policy for the
// consumer groups that refer to them (Redis 8.2 XDELEX), and returns one
// result per ID: DeleteReferenced when Acked finds a group that still
// refers to the ID (whether or not the stream holds it), else Deleted or
// DeleteNotFound. With DelRef, the IDs also leave every PEL, even when the
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
	return s.DeleteExIDs(policy, parsed...)
}

// DeleteExIDs is DeleteEx for IDs already parsed: it saves formatting and
// parsing them. It fails, deleting nothing, with ErrInvalidArgument for an
// unknown policy. O(log N + G log P) per ID for G groups.
func (s *Stream) DeleteExIDs(policy DeletePolicy, ids ...ID) (_ []DeleteResult, err error) {
	if err := policy.check(); err != nil {
		return nil, err
	}
	if err = s.cfg.gate.write(); err != nil {
		return
	}
	s.mu.Lock()
	defer s.unlockTo(&err)
	out := make([]DeleteResult, len(ids))
	for i, id := range ids {
		switch allowed, found := s.deleteByPolicyLocked(id, policy); {
		case !allowed:
			out[i] = DeleteReferenced
		case found:
			out[i] = Deleted
		default:
			out[i] = DeleteNotFound
		}
	}
	return out, nil
}

// AckDel acknowledges IDs in group and deletes their entries under policy
// in one atomic step (Redis 8.2 XACKDEL). An ID not pending in the group
// gives DeleteNotFound and is left alone, its entry included. A pending
// one is acknowledged, then deleted as DeleteEx would: DeleteReferenced
// when Acked finds another group that still refers to it, else Deleted,
// also when its entry was already gone. It fails, changing nothing, with
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
	return s.AckDelIDs(group, policy, parsed...)
}

// AckDelIDs is AckDel for IDs already parsed, such as those of entries
// ReadGroup returned: it saves formatting and parsing them. It fails,
// changing nothing, with ErrNoGroup or ErrInvalidArgument (an unknown
// policy). O(log N + G log P) per ID.
func (s *Stream) AckDelIDs(group string, policy DeletePolicy, ids ...ID) (_ []DeleteResult, err error) {
	if err := policy.check(); err != nil {
		return nil, err
	}
	if err = s.cfg.gate.write(); err != nil {
		return
	}
	s.mu.Lock()
	defer s.unlockTo(&err)
	g, err := s.groupLocked(group)
	if err != nil {
		return nil, err
	}
	out := make([]DeleteResult, len(ids))
	for i, id := range ids {
		if !s.ackLocked(g, id) {
			out[i] = DeleteNotFound
			continue
		}
		if allowed, _ := s.deleteByPolicyLocked(id, policy); allowed {
			out[i] = Deleted
		} else {
			out[i] = DeleteReferenced
		}
	}
	return out, nil
}
