package xstream

import (
	"cmp"
	"slices"
	"time"
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
	cands := claimCandidatesLocked(g, args.ClaimMinIdle, now, ID{}, 0)
	// Longest idle first; the walk gave ID order, which a stable sort
	// keeps among equal delivery times. Entries given back by Nack have
	// no delivery time (0) and come first.
	slices.SortStableFunc(cands, func(a, b claimCandidate) int {
		return cmp.Compare(a.rec.deliveryMs, b.rec.deliveryMs)
	})
	col := getCollector()
	defer putCollector(col)
	ds := s.claimCandidatesToLocked(l, g, c, col, cands, args.Count, now)
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

// claimCandidatesLocked lists, in ID order from from on, the pending
// entries of g idle at least minIdle (every one for 0) and those given
// back by Nack: at most limit of them (0: every one).
func claimCandidatesLocked(g *group, minIdle time.Duration, now int64, from ID, limit int) []claimCandidate {
	minMs := minIdle.Milliseconds()
	var cands []claimCandidate
	g.pel.Ascend(sid(from), sid(MaxID()), func(sk sID, rec *nack) bool {
		if rec.owner == 0 || minMs == 0 || now-rec.deliveryMs >= minMs {
			cands = append(cands, claimCandidate{ID(sk), *rec})
		}
		return limit == 0 || len(cands) < limit
	})
	return cands
}

// claimCandidatesToLocked gives c the candidates, in their order, into
// col until it holds count entries (0: no cap), as Claim does: an entry
// whose message is gone leaves the PEL, one that the group's
// DeadLetterPolicy makes due is moved, and neither is counted. It returns
// the Delivery of each entry it added.
func (s *Stream) claimCandidatesToLocked(l *groupLocks, g *group, c *consumer, col *collector, cands []claimCandidate, count int, now int64) []Delivery {
	var ds []Delivery
	for _, cd := range cands {
		if count > 0 && len(col.IDs) >= count {
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
	return ds
}

// claimIdle is the first step of a sharded ReadGroup with Claim on one
// shard's stream: it gives consumerName the pending entries of group idle at
// least minIdle, in ID order (so that a key's records are taken over in
// put order), at most count (0: no cap), as readClaimLocked does, and
// delivers no new entry. The consumer is made only when some pending
// entry is idle enough. It lists the candidates count at a time. It
// returns the entries with their deliveries, and whether an entry left
// the PEL (its message was gone), which may free the shard's children.
func (s *Stream) claimIdle(group, consumerName string, minIdle time.Duration, count int) ([]Entry, []Delivery, bool, error) {
	if err := s.cfg.gate.write(); err != nil {
		return nil, nil, false, err
	}
	now := s.nowMs()
	l := s.lockGroup(group)
	g, err := s.groupLocked(group)
	if err != nil {
		l.unlock()
		return nil, nil, false, err
	}
	var (
		es      []Entry
		ds      []Delivery
		dropped bool
	)
	// The candidates are listed count at a time (so that a Count of 1
	// does not list the whole PEL), again after the last one listed
	// while some were dropped (gone, or dead-lettered) and count is not
	// reached.
	before := g.pel.Len()
	var c *consumer
	col := getCollector()
	for from := (ID{}); ; {
		cands := claimCandidatesLocked(g, minIdle, now, from, count)
		if len(cands) == 0 {
			break
		}
		if c == nil {
			c = s.seenConsumerLocked(g, consumerName, now)
		}
		ds = append(ds, s.claimCandidatesToLocked(&l, g, c, col, cands, count, now)...)
		next, ok := cands[len(cands)-1].id.Next()
		if count == 0 || len(col.IDs) >= count || len(cands) < count || !ok {
			break
		}
		from = next
	}
	es = col.entries()
	putCollector(col)
	if len(es) > 0 {
		s.activateConsumerLocked(g, c, now)
	}
	dropped = g.pel.Len() < before
	if err := l.unlock(); err != nil {
		return nil, nil, false, err
	}
	return es, ds, dropped, nil
}
