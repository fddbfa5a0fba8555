package xstream

import (
	"cmp"
	"slices"
)

// claimCandidate is a pending entry that a ReadGroup with Claim may take.
type claimCandidate struct {
	id  ID
	rec nack
}

// readClaimLocked serves a ">" read with Claim of g by c under the locks
// l (lockGroup's): it takes over the pending entries idle at least
// args.ClaimMinIdle, longest idle first, then delivers new entries, up to
// args.Count in all. It returns the entries with their deliveries, or
// nil, nil when there is nothing.
func (s *Stream) readClaimLocked(l *groupLocks, g *group, c *consumer, args ReadGroupArgs, now int64) ([]Entry, []Delivery) {
	minMs := args.ClaimMinIdle.Milliseconds()
	var cands []claimCandidate
	g.pel.Ascend(sid(ID{}), sid(MaxID()), func(sk sID, rec *nack) bool {
		if rec.owner == 0 || minMs == 0 || now-rec.deliveryMs >= minMs {
			cands = append(cands, claimCandidate{ID(sk), *rec})
		}
		return true
	})
	// Longest idle first; the walk gave ID order, which a stable sort
	// keeps among equal delivery times. Entries given back by Nack have
	// no delivery time (0) and come first.
	slices.SortStableFunc(cands, func(a, b claimCandidate) int {
		return cmp.Compare(a.rec.deliveryMs, b.rec.deliveryMs)
	})
	col := getCollector()
	defer putCollector(col)
	var ds []Delivery
	for _, cd := range cands {
		if args.Count > 0 && len(col.IDs) >= args.Count {
			break
		}
		b, flags, body, ok := s.entryLocked(cd.id)
		if !ok {
			s.ackLocked(g, cd.id) // the message is gone, as Claim does
			continue
		}
		n := claimCount(cd.rec.count, nil, false)
		if l.due(g, n) {
			l.move(g, cd.id, cd.rec, b, flags, body)
			continue
		}
		d := Delivery{Idle: NackIdle, Deliveries: cd.rec.count}
		if cd.rec.owner != 0 {
			d.Idle = msDuration(now - cd.rec.deliveryMs)
		}
		ds = append(ds, d)
		s.claimLocked(g, cd.id, c, now, n)
		col.add(b, cd.id, flags, body)
	}
	claimed := len(col.IDs)
	s.deliverNewLocked(col, g, c, args.Count, args.NoAck, now)
	if claimed > 0 && (args.NoAck || len(col.IDs) == claimed) {
		s.activateConsumerLocked(g, c, now) // else deliverNewLocked did
	}
	es := col.entries()
	if es == nil {
		return nil, nil
	}
	for len(ds) < len(es) {
		ds = append(ds, Delivery{})
	}
	return es, ds
}
