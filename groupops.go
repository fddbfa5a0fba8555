package xstream

import (
	"math"
	"sync"

	"github.com/armon/go-radix"
	"github.com/xstreamgo/xstream/internal/store"
)

// Group operations: the one home of every change to consumer groups,
// consumers and pending entries (see ops.go). A pending entry lives in
// two places, the group's PEL (with its record) and its owner's PEL (the
// ID alone); only the functions here change either, and each keeps the
// two in step. Every function needs the stream's write lock.

// createGroupLocked adds the group name, whose last delivered ID is last.
// The caller has checked that it does not exist.
func (s *Stream) createGroupLocked(name string, last ID, entriesRead int64) *group {
	if s.log != nil {
		s.log.groupCreate(name, last, entriesRead)
	}
	if s.groups == nil {
		s.groups = radix.New()
	}
	g := &group{name: name, lastID: last, entriesRead: entriesRead, consumers: radix.New()}
	s.groups.Insert(name, g)
	if s.log != nil {
		s.log.g, s.log.c = g, nil
	}
	return g
}

// destroyGroupLocked removes g with its consumers and pending entries.
func (s *Stream) destroyGroupLocked(g *group) {
	if s.log != nil {
		s.log.groupDestroy(g)
	}
	if g.dead.MaxDeliveries != 0 {
		s.deadPolicies--
	}
	s.groups.Delete(g.name)
}

// setDeadLetterPolicyLocked sets the group's dead-letter policy (the
// zero policy: none).
func (s *Stream) setDeadLetterPolicyLocked(g *group, p DeadLetterPolicy) {
	if s.log != nil {
		s.log.groupPolicy(g, p)
	}
	switch had, has := g.dead.MaxDeliveries != 0, p.MaxDeliveries != 0; {
	case has && !had:
		s.deadPolicies++
	case had && !has:
		s.deadPolicies--
	}
	g.dead = p
}

// deadLetterLocked removes the pending entry id from g as ackLocked does,
// counting it as dead-lettered: the policy moved it to its dead-letter
// stream. It reports whether id was pending.
func (s *Stream) deadLetterLocked(g *group, id ID) bool {
	rec, ok := g.pel.Delete(sid(id))
	if !ok {
		return false
	}
	if s.log != nil {
		s.log.group(g)
		s.log.idEffect(effDeadLetter, id)
	}
	if c := g.ownerLocked(&rec); c != nil {
		c.pel.Delete(sid(id))
	}
	g.deadLettered++
	s.ctr.deadLettered++
	return true
}

// loadDeadLetteredLocked sets the count of dead-lettered entries to a
// snapshot's. Only the loading of a snapshot calls it, with no log
// attached: the count is otherwise changed only by deadLetterLocked.
func (s *Stream) loadDeadLetteredLocked(g *group, n int64) {
	g.deadLettered = n
}

// setGroupLastLocked sets the group's last delivered ID and entries-read
// counter.
func (s *Stream) setGroupLastLocked(g *group, last ID, entriesRead int64) {
	if s.log != nil {
		s.log.groupSetLast(g, last, entriesRead)
	}
	g.lastID, g.entriesRead = last, entriesRead
}

// consumerLocked returns the consumer called name, creating it (never
// seen, never active) if needed, and reports whether it was created.
func (s *Stream) consumerLocked(g *group, name string) (*consumer, bool) {
	if v, ok := g.consumers.Get(name); ok {
		return v.(*consumer), false
	}
	c := &consumer{name: name, activeMs: -1}
	if n := len(g.freeNums); n > 0 {
		c.num, g.freeNums = g.freeNums[n-1], g.freeNums[:n-1]
		g.byNum[c.num] = c
	} else {
		if len(g.byNum) == 0 {
			g.byNum = append(g.byNum, nil)
		}
		c.num = uint32(len(g.byNum))
		g.byNum = append(g.byNum, c)
	}
	g.consumers.Insert(name, c)
	if s.log != nil {
		s.log.consumerCreate(g, c)
	}
	return c, true
}

// seeConsumerLocked records an attempted read or claim by c at ms.
func (s *Stream) seeConsumerLocked(g *group, c *consumer, ms int64) {
	if s.log != nil {
		s.log.consumerTime(effConsumerSee, g, c, ms)
	}
	c.seenMs = ms
}

// activateConsumerLocked records a successful read or claim by c at ms.
func (s *Stream) activateConsumerLocked(g *group, c *consumer, ms int64) {
	if s.log != nil {
		s.log.consumerTime(effConsumerActive, g, c, ms)
	}
	c.activeMs = ms
}

// deleteConsumerLocked removes c and its pending entries from g and
// returns how many entries it had pending.
func (s *Stream) deleteConsumerLocked(g *group, c *consumer) int64 {
	if s.log != nil {
		s.log.consumerDelete(g, c)
	}
	g.consumers.Delete(c.name)
	g.byNum[c.num] = nil
	g.freeNums = append(g.freeNums, c.num)
	n := int64(c.pel.Len())
	c.pel.Ascend(sid(ID{}), sid(MaxID()), func(id sID, _ *struct{}) bool {
		g.pel.Delete(id)
		return true
	})
	return n
}

// deliverLocked delivers the new entry id to c: the group's last
// delivered ID becomes id, with entriesRead as its counter, and, unless c
// is nil (NOACK), id becomes pending to c with one delivery at now. An
// entry still pending (the group was moved back, or Nack with Force made
// it pending) moves to c and starts over.
func (s *Stream) deliverLocked(g *group, c *consumer, id ID, entriesRead, now int64) {
	if s.log != nil {
		s.log.deliver(g, c, id, entriesRead, now)
	}
	g.lastID, g.entriesRead = id, entriesRead
	s.ctr.delivered++
	if c != nil {
		s.pendOneLocked(g, c, id, now)
	}
}

// deliverRunLocked delivers the new entries ids, in increasing order and
// after the group's last delivered ID, to c as deliverLocked does one by
// one, each with the entries-read counter entriesReadAfterLocked gives.
// Without a log, a group whose counter goes up by one a delivery moves
// to the last ID at once; the IDs become pending in one run
// (pendNewLocked). O(len(ids) + log P) for new entries.
func (s *Stream) deliverRunLocked(g *group, c *consumer, ids []ID, now int64) {
	if s.log == nil && s.countsOneByOneLocked(g, ids[0]) {
		g.lastID, g.entriesRead = ids[len(ids)-1], g.entriesRead+int64(len(ids))
	} else {
		for _, id := range ids {
			read := s.entriesReadAfterLocked(g, id)
			if s.log != nil {
				s.log.deliver(g, c, id, read, now)
			}
			g.lastID, g.entriesRead = id, read
		}
	}
	s.ctr.delivered += int64(len(ids))
	if c != nil {
		s.pendNewLocked(g, c, ids, now)
	}
}

// pendNewLocked is the end of deliverRunLocked: it makes the new entries
// ids, in increasing order, pending to c with one delivery at now.
// When they all follow the group's largest pending ID (the usual case)
// they are appended to the two PELs in a run; otherwise each is inserted,
// and one still pending moves to c and starts over. O(len(ids) + log P),
// O(len(ids) × log P) at worst.
func (s *Stream) pendNewLocked(g *group, c *consumer, ids []ID, now int64) {
	if hi, ok := g.pel.Max(); !ok || hi.Less(sid(ids[0])) {
		// The consumer's PEL holds a part of the group's: every ID is new
		// to both.
		g.pel.InsertRun(sids(ids), nack{deliveryMs: now, count: 1, owner: c.num})
		c.pel.InsertRun(sids(ids), struct{}{})
		return
	}
	for _, id := range ids {
		s.pendOneLocked(g, c, id, now)
	}
}

// pendOneLocked is pendNewLocked of the one entry id.
func (s *Stream) pendOneLocked(g *group, c *consumer, id ID, now int64) {
	if _, added := g.pel.Insert(sid(id), nack{deliveryMs: now, count: 1, owner: c.num}); added {
		c.pel.Insert(sid(id), struct{}{}) // the usual case, kept short: a new pending entry
		return
	}
	s.setPendingLocked(g, id, c, now, 1)
}

// redeliverLocked records a delivery of the pending entry id again to its
// owner (a history read) at now: its delivery count goes up by one.
func (s *Stream) redeliverLocked(g *group, id ID, now int64) {
	if rec := g.pel.Get(sid(id)); rec != nil {
		s.ctr.delivered++
		rec.deliveryMs = now
		if rec.count < math.MaxInt64 {
			rec.count++
		}
		if s.log != nil {
			s.log.redeliver(g, id, now, rec.count)
		}
	}
}

// claimLocked makes id pending to c with the given delivery time and
// count, creating its pending entry when there is none (Claim with
// Force).
func (s *Stream) claimLocked(g *group, id ID, c *consumer, deliveryMs, count int64) {
	if s.log != nil {
		s.log.claim(g, c, id, deliveryMs, count)
	}
	s.ctr.claimed++
	s.setPendingLocked(g, id, c, deliveryMs, count)
}

// giveBackLocked gives the entry id back to the group (Nack): it stays
// pending with no owner and no delivery time and the given count. A
// pending entry is created when there is none (Nack with Force).
func (s *Stream) giveBackLocked(g *group, id ID, count int64) {
	if s.log != nil {
		s.log.giveBack(g, id, count)
	}
	s.setPendingLocked(g, id, nil, 0, count)
}

// ackLocked removes id from the group's PEL and its owner's and reports
// whether it was pending.
func (s *Stream) ackLocked(g *group, id ID) bool {
	rec, ok := g.pel.Delete(sid(id))
	if !ok {
		return false
	}
	if s.log != nil {
		s.log.ack(g, id)
	}
	s.ctr.acked++
	if c := g.ownerLocked(&rec); c != nil {
		c.pel.Delete(sid(id))
	}
	return true
}

// ackRunLocked acknowledges ids, in any order, as ackLocked does one by
// one from the last, and returns how many were pending. The group's PEL
// loses them in one pass from its end (see store.BTree.DeleteRun), and
// each owner's PEL the IDs between its first and last removed: a run of
// one owner (the usual case: one consumer's batch) is one pass, and the
// other IDs of a run are in no consumer's PEL (not pending, or listed
// twice and removed by an earlier run). O(len(ids) + log P) for a sorted
// batch at the end of the PEL, O(len(ids) × log P) at worst.
func (s *Stream) ackRunLocked(g *group, ids []ID) int64 {
	buf := ackBufs.Get().(*[]store.Removed[nack])
	defer putAckBuf(buf)
	rm := (*buf)[:0]
	n := g.pel.DeleteRun(sids(ids), &rm)
	*buf = rm
	if len(rm) == 0 {
		return 0
	}
	// rm is in decreasing index order; the run ids[i+1 : hi+1] is
	// owner's.
	owner, hi := rm[0].V.owner, rm[0].I
	for _, r := range rm {
		if s.log != nil {
			s.log.ack(g, ids[r.I])
		}
		if r.V.owner != owner {
			s.unpendRunLocked(g, owner, ids[r.I+1:hi+1])
			owner, hi = r.V.owner, r.I
		}
	}
	s.unpendRunLocked(g, owner, ids[:hi+1])
	s.ctr.acked += int64(n)
	return int64(n)
}

// ackBufs holds the buffers of ackRunLocked, which DeleteRun fills with
// the records it removes.
var ackBufs = sync.Pool{New: func() any { return new([]store.Removed[nack]) }}

// maxAckBuf bounds the capacity of a buffer put back in ackBufs (48 bytes
// an entry).
const maxAckBuf = 4096

func putAckBuf(buf *[]store.Removed[nack]) {
	if cap(*buf) <= maxAckBuf {
		*buf = (*buf)[:0]
		ackBufs.Put(buf)
	}
}

// unpendRunLocked removes ids from the PEL of the consumer numbered num,
// if there is one (num 0: no one).
func (s *Stream) unpendRunLocked(g *group, num uint32, ids []ID) {
	if num == 0 {
		return
	}
	if c := g.byNum[num]; c != nil {
		c.pel.DeleteRun(sids(ids), nil)
	}
}

// setPendingLocked makes id pending to owner (nil: to no one) with the
// given delivery time and count, moving it between consumers' PELs as
// needed.
func (s *Stream) setPendingLocked(g *group, id ID, owner *consumer, deliveryMs, count int64) {
	var num uint32
	if owner != nil {
		num = owner.num
	}
	r := nack{deliveryMs: deliveryMs, count: count, owner: num}
	rec, added := g.pel.Insert(sid(id), r)
	if !added {
		old := rec.owner
		*rec = r
		if old == num {
			return
		}
		if c := g.byNum[old]; old != 0 && c != nil {
			c.pel.Delete(sid(id))
		}
	}
	if owner != nil {
		owner.pel.Insert(sid(id), struct{}{})
	}
}
