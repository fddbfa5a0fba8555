package xstream

// TrimStrategy says how TrimArgs bounds a stream.
type TrimStrategy uint8

const (
	// TrimNone trims nothing; it is the zero TrimStrategy.
	TrimNone TrimStrategy = iota
	// TrimMaxLen keeps at most TrimArgs.MaxLen entries (Redis MAXLEN).
	TrimMaxLen
	// TrimMinID evicts entries whose ID is smaller than TrimArgs.MinID
	// (Redis MINID).
	TrimMinID
)

// TrimArgs describes a trim, for Trim and for the Trim field of AddArgs.
//
// With Approx (Redis "~") trimming removes only whole storage blocks and so
// may keep more than asked, never fewer: MaxLen 1000 with Approx keeps at
// least 1000 entries. Limit caps the number of entries one call removes
// (0 means no cap) and is allowed only with Approx; it is checked before
// each block, against the block's whole size. Policy says what happens to
// consumer group references to trimmed entries (KeepRef, the default,
// leaves them; see DeletePolicy). Under DelRef and Acked a trim goes entry
// by entry, as Redis's does: Approx then no longer stops it at a block
// boundary, and Acked skips the entries a group still refers to.
type TrimArgs struct {
	Strategy TrimStrategy
	MaxLen   int64  // with TrimMaxLen: the number of entries to keep, >= 0
	MinID    string // with TrimMinID: the smallest ID to keep ("ms-seq" or "ms")
	Approx   bool
	Limit    int64
	Policy   DeletePolicy
}

// trimSpec is a validated TrimArgs.
type trimSpec struct {
	strategy TrimStrategy
	maxLen   int64
	minID    ID
	approx   bool
	limit    int64
	policy   DeletePolicy
}

func (t TrimArgs) parse() (trimSpec, error) {
	spec := trimSpec{strategy: t.Strategy, maxLen: t.MaxLen, approx: t.Approx, limit: t.Limit, policy: t.Policy}
	if err := t.Policy.check(); err != nil {
		return spec, err
	}
	switch t.Strategy {
	case TrimNone:
		if t.MaxLen != 0 || t.MinID != "" || t.Approx || t.Limit != 0 || t.Policy != KeepRef {
			return spec, errorf(ErrTrimConflict, "trim options given without a strategy: %+v", t)
		}
		return spec, nil
	case TrimMaxLen:
		if t.MinID != "" {
			return spec, errorf(ErrTrimConflict, "MaxLen and MinID given together (MinID %q)", t.MinID)
		}
		if t.MaxLen < 0 {
			return spec, errorf(ErrInvalidArgument, "MaxLen must be >= 0, got %d", t.MaxLen)
		}
	case TrimMinID:
		if t.MaxLen != 0 {
			return spec, errorf(ErrTrimConflict, "MaxLen and MinID given together (MaxLen %d)", t.MaxLen)
		}
		id, _, err := parseID(t.MinID, 0, false)
		if err != nil {
			return spec, err
		}
		spec.minID = id
	default:
		return spec, errorf(ErrInvalidArgument, "unknown trim strategy %d", t.Strategy)
	}
	if t.Limit < 0 {
		return spec, errorf(ErrInvalidArgument, "Limit must be >= 0, got %d", t.Limit)
	}
	if t.Limit != 0 && !t.Approx {
		return spec, errorf(ErrTrimConflict, "Limit %d given without Approx", t.Limit)
	}
	return spec, nil
}

// Trim removes entries from the head of the stream as args says and
// returns how many it removed. It fails, changing nothing, on invalid
// arguments (ErrTrimConflict, ErrInvalidArgument, ErrInvalidID). Under
// KeepRef whole blocks are dropped in O(1) each and an exact trim then
// marks entries deleted inside one block; under DelRef and Acked each
// trimmed entry costs O(G log P) for G groups. Memory of dropped blocks is
// given back.
func (s *Stream) Trim(args TrimArgs) (int64, error) {
	spec, err := args.parse()
	if err != nil || spec.strategy == TrimNone {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.trimLocked(spec), nil
}

// trimLocked applies spec, as Redis's streamTrim does. A block the trim
// passes whole is dropped at once under KeepRef; under DelRef and Acked
// its entries are looked at one by one (Acked keeps those a group still
// refers to), and the trim goes on to the next block. In the block where
// the trim ends, entries are deleted one by one unless spec.approx asks
// for whole blocks only, which KeepRef alone honours there.
func (s *Stream) trimLocked(spec trimSpec) int64 {
	var deleted int64
	var emptied []int // blocks left with no live entry, ascending
	for bi, b := range s.blocks {
		if spec.strategy == TrimMaxLen && s.length <= spec.maxLen {
			break
		}
		entries := int64(b.live)
		if spec.limit != 0 && deleted+entries > spec.limit {
			break
		}
		var whole bool
		if spec.strategy == TrimMaxLen {
			whole = s.length-entries >= spec.maxLen
		} else {
			whole = b.last.Less(spec.minID)
		}
		if spec.policy == KeepRef {
			if whole {
				s.length -= entries
				deleted += entries
				emptied = append(emptied, bi)
				continue
			}
			if spec.approx {
				break
			}
		}
		deleted += s.trimBlockLocked(b, spec)
		if b.live == 0 {
			emptied = append(emptied, bi)
		}
		if !whole {
			break
		}
	}
	s.removeBlocks(emptied)
	if deleted > 0 {
		s.refreshFirst()
	}
	return deleted
}

// trimBlockLocked deletes the live entries of b that spec trims, one by
// one from the first, and returns how many it deleted.
func (s *Stream) trimBlockLocked(b *block, spec trimSpec) int64 {
	var deleted int64
	for i := range b.offs {
		id, flags, _ := b.at(i)
		if spec.strategy == TrimMaxLen && s.length <= spec.maxLen ||
			spec.strategy == TrimMinID && !id.Less(spec.minID) {
			break
		}
		if flags&flagDeleted != 0 {
			continue
		}
		switch spec.policy {
		case Acked:
			if s.referencedLocked(id) {
				continue
			}
		case DelRef:
			s.dropRefsLocked(id)
		}
		b.markDeleted(i)
		s.length--
		deleted++
	}
	return deleted
}

// removeBlocks frees the blocks at the ascending indexes idx, which have
// no live entry left (or are dropped whole).
func (s *Stream) removeBlocks(idx []int) {
	if len(idx) == 0 {
		return
	}
	if idx[len(idx)-1] == len(idx)-1 {
		s.dropHead(len(idx)) // the usual case: a prefix, dropped in O(n)
		return
	}
	k, j := 0, 0
	for i, b := range s.blocks {
		if j < len(idx) && idx[j] == i {
			if b == s.open {
				s.open, s.openNames = nil, nil
			}
			j++
			continue
		}
		s.blocks[k], s.firsts[k] = b, s.firsts[i]
		k++
	}
	clear(s.blocks[k:])
	s.blocks, s.firsts = s.blocks[:k], s.firsts[:k]
	if k == 0 {
		s.blocks, s.firsts = nil, nil
	}
}

// dropHead frees the first n blocks.
func (s *Stream) dropHead(n int) {
	for i := range n {
		if s.blocks[i] == s.open {
			s.open, s.openNames = nil, nil
		}
		s.blocks[i] = nil
	}
	s.blocks, s.firsts = s.blocks[n:], s.firsts[n:]
	if len(s.blocks) == 0 {
		s.blocks, s.firsts = nil, nil
	}
}

// removeBlock frees block bi, which has no live entry left.
func (s *Stream) removeBlock(bi int) {
	if s.blocks[bi] == s.open {
		s.open, s.openNames = nil, nil
	}
	copy(s.blocks[bi:], s.blocks[bi+1:])
	s.blocks[len(s.blocks)-1] = nil
	s.blocks = s.blocks[:len(s.blocks)-1]
	s.firsts = append(s.firsts[:bi], s.firsts[bi+1:]...)
}

// refreshFirst recomputes the recorded first entry ID (0-0 when empty).
func (s *Stream) refreshFirst() {
	s.firstID = ID{}
	s.walk(ID{}, MaxID, false, func(_ *block, id ID, _ byte, _ int) bool {
		s.firstID = id
		return false
	})
}

// Delete removes the entries with the given IDs and returns how many
// existed and were removed. IDs are "ms-seq" or a bare "ms" (ms-0); one
// invalid ID fails the whole call (ErrInvalidID) before anything is
// deleted. Delete raises the stream's max-deleted-entry ID and keeps its
// first-entry ID right; a block left with no entry is freed. Each ID costs
// O(log N).
func (s *Stream) Delete(ids ...string) (int64, error) {
	parsed := make([]ID, len(ids))
	for i, str := range ids {
		id, err := ParseID(str)
		if err != nil {
			return 0, err
		}
		parsed[i] = id
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.deleteLocked(parsed), nil
}

func (s *Stream) deleteLocked(ids []ID) int64 {
	var deleted int64
	first := false
	for _, id := range ids {
		if !s.deleteOne(id) {
			continue
		}
		deleted++
		if s.maxDeleted.Less(id) {
			s.maxDeleted = id
		}
		first = first || id == s.firstID
	}
	if deleted > 0 && (first || s.length == 0) {
		s.refreshFirst()
	}
	return deleted
}

// deleteOne marks id deleted; it reports whether it was a live entry.
func (s *Stream) deleteOne(id ID) bool {
	bi := s.blockFor(id)
	if bi < 0 {
		return false
	}
	b := s.blocks[bi]
	i := b.search(id)
	if i == len(b.offs) || b.idAt(i) != id || !b.markDeleted(i) {
		return false
	}
	s.length--
	if b.live == 0 {
		s.removeBlock(bi)
	}
	return true
}
