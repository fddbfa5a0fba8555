package store

// TrimSpec says how far a trim goes, as Redis's streamTrim takes it.
type TrimSpec struct {
	ByMinID bool  // evict entries below MinID; else keep the newest MaxLen
	MinID   ID    // with ByMinID
	MaxLen  int64 // without ByMinID
	Approx  bool  // whole blocks only (where the trim may stop at one)
	Limit   int64 // entries removed at most, checked block by block; 0: no cap
}

// Trim removes what a trim that keeps references to its entries removes,
// a prefix of the live entries, and returns the ID of the last one it
// removed (upTo) and their number (n, 0 when it removes nothing): applied
// to the same state, TrimTo(upTo) removes the same entries, which is how
// a log replays it. The max deleted ID is left. Blocks the trim passes
// whole go in O(1) each; in the block it ends in it marks entries deleted
// from the block's head (its first live entry) on, O(1) each, unless
// spec.Approx stops the trim at the block. So an exact MaxLen trim after
// each append costs O(1) amortized.
func (s *Blocks) Trim(spec *TrimSpec) (upTo ID, n int64) {
	length := s.length
	drop := 0 // blocks removed whole, from the head
	for _, b := range s.blocks {
		if !spec.ByMinID && length <= spec.MaxLen {
			break
		}
		entries := int64(b.live)
		if spec.Limit != 0 && n+entries > spec.Limit {
			break
		}
		if spec.whole(b, length) {
			length -= entries
			n += entries
			upTo = b.last
			drop++
			continue
		}
		if spec.Approx {
			break
		}
		for i := int(b.head); i < len(b.offs); i++ {
			if !spec.ByMinID && length <= spec.MaxLen {
				break // before decoding: at steady state one entry is decoded
			}
			id, flags, _ := b.At(i)
			if spec.ByMinID && !id.Less(spec.MinID) {
				break
			}
			if flags&FlagDeleted == 0 {
				b.markDeleted(i)
				length--
				n++
				upTo = id
			}
		}
		if b.live == 0 {
			drop++
		}
		break
	}
	if n > 0 {
		s.length = length
		s.dropHead(drop)
		s.refreshFirst()
	}
	return upTo, n
}

// PlanTrimEach returns the entries, in ID order, that a trim going entry
// by entry removes (the DELREF and ACKED policies): as Redis does, it looks
// at every entry of the blocks it passes, and keep(id) true leaves an
// entry in place and goes on past it (keep may be nil). Approx does not
// stop it at a block boundary. It changes nothing; the caller removes the
// entries with TrimEntry. O(entries looked at).
func (s *Blocks) PlanTrimEach(spec TrimSpec, keep func(ID) bool) []ID {
	var out []ID
	length, n := s.length, int64(0)
	for _, b := range s.blocks {
		if !spec.ByMinID && length <= spec.MaxLen {
			break
		}
		entries := int64(b.live)
		if spec.Limit != 0 && n+entries > spec.Limit {
			break
		}
		whole := spec.whole(b, length)
		for i := int(b.head); i < len(b.offs); i++ {
			id, flags, _ := b.At(i)
			if spec.stop(id, length) {
				break
			}
			if flags&FlagDeleted != 0 || keep != nil && keep(id) {
				continue
			}
			out = append(out, id)
			length--
			n++
		}
		if !whole {
			break
		}
	}
	return out
}

// whole reports whether the trim passes block b entirely, the stream
// holding length entries before it.
func (t TrimSpec) whole(b *Block, length int64) bool {
	if t.ByMinID {
		return b.last.Less(t.MinID)
	}
	return length-int64(b.live) >= t.MaxLen
}

// stop reports whether the trim ends at entry id, the stream holding
// length entries.
func (t TrimSpec) stop(id ID, length int64) bool {
	if t.ByMinID {
		return !id.Less(t.MinID)
	}
	return length <= t.MaxLen
}
