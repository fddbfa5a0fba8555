package xstream

import "github.com/xstreamgo/xstream/internal/store"

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

// trimSpec is a validated TrimArgs: the storage's form of the bound
// (ByMinID, MinID, MaxLen, Approx, Limit) and what it does to references.
type trimSpec struct {
	store.TrimSpec
	strategy TrimStrategy
	policy   DeletePolicy
}

// parse checks t and returns it as a trimSpec.
func (t TrimArgs) parse() (trimSpec, error) {
	var spec trimSpec
	err := t.parseTo(&spec)
	return spec, err
}

// isZero reports whether t is the zero TrimArgs (no trim), without the
// generated comparison's call.
func (t *TrimArgs) isZero() bool {
	return t.Strategy == TrimNone && t.MaxLen == 0 && t.MinID == "" && !t.Approx && t.Limit == 0 && t.Policy == KeepRef
}

// parseTo checks t and sets *spec, a zero trimSpec, to it.
func (t *TrimArgs) parseTo(spec *trimSpec) error {
	spec.ByMinID, spec.MaxLen, spec.Approx, spec.Limit = t.Strategy == TrimMinID, t.MaxLen, t.Approx, t.Limit
	spec.strategy, spec.policy = t.Strategy, t.Policy
	if err := t.Policy.check(); err != nil {
		return err
	}
	switch t.Strategy {
	case TrimNone:
		if t.MaxLen != 0 || t.MinID != "" || t.Approx || t.Limit != 0 || t.Policy != KeepRef {
			return errorf(ErrTrimConflict, "trim options given without a strategy: %+v", *t)
		}
		return nil
	case TrimMaxLen:
		if t.MinID != "" {
			return errorf(ErrTrimConflict, "MaxLen and MinID given together (MinID %q)", t.MinID)
		}
		if t.MaxLen < 0 {
			return errorf(ErrInvalidArgument, "MaxLen must be >= 0, got %d", t.MaxLen)
		}
	case TrimMinID:
		if t.MaxLen != 0 {
			return errorf(ErrTrimConflict, "MaxLen and MinID given together (MaxLen %d)", t.MaxLen)
		}
		id, _, err := parseID(t.MinID, 0, false)
		if err != nil {
			return err
		}
		spec.MinID = store.ID(id)
	default:
		return errorf(ErrInvalidArgument, "unknown trim strategy %d", t.Strategy)
	}
	if t.Limit < 0 {
		return errorf(ErrInvalidArgument, "Limit must be >= 0, got %d", t.Limit)
	}
	if t.Limit != 0 && !t.Approx {
		return errorf(ErrTrimConflict, "Limit %d given without Approx", t.Limit)
	}
	return nil
}

// Trim removes entries from the head of the stream as args says and
// returns how many it removed. It fails, changing nothing, on invalid
// arguments (ErrTrimConflict, ErrInvalidArgument, ErrInvalidID). Under
// KeepRef whole blocks are dropped in O(1) each and an exact trim then
// marks entries deleted inside one block, O(1) for each entry it removes
// (the block's first live entry is known); under DelRef and Acked each
// trimmed entry costs O(G log P) for G groups. Memory of dropped blocks is
// given back.
func (s *Stream) Trim(args TrimArgs) (_ int64, err error) {
	spec, err := args.parse()
	if err != nil || spec.strategy == TrimNone {
		return 0, err
	}
	if err = s.cfg.gate.write(); err != nil {
		return
	}
	s.mu.Lock()
	defer s.unlockTo(&err)
	return s.trimLocked(&spec), nil
}

// trimLocked applies spec, as Redis's streamTrim does, and returns how
// many entries it removed. Under KeepRef the trim removes a prefix of the
// entries (trimFrontLocked): blocks it passes whole go at once, and in the
// block where it ends entries go one by one from the block's first live
// entry unless spec.Approx asks for whole blocks only, so an exact trim
// at steady state costs O(1) per entry it removes. Under DelRef and Acked
// it goes entry by entry through every block it passes (Acked keeps the
// entries a group still refers to).
func (s *Stream) trimLocked(spec *trimSpec) int64 {
	if spec.policy == KeepRef {
		return s.trimFrontLocked(&spec.TrimSpec)
	}
	var keep func(store.ID) bool
	if spec.policy == Acked {
		keep = func(id store.ID) bool { return s.referencedLocked(ID(id)) }
	}
	ids := s.st.PlanTrimEach(spec.TrimSpec, keep)
	for _, id := range ids {
		s.trimEntryLocked(ID(id), spec.policy == DelRef)
	}
	return int64(len(ids))
}
