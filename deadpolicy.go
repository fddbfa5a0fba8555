package xstream

import "github.com/xstreamgo/xstream/internal/store"

// Dead-letter policies. A group with a policy moves an entry to its
// dead-letter stream, instead of delivering it again, once its delivery
// count would pass the policy's maximum: on Claim, AutoClaim and history
// reads (ReadGroup with an ID). A ">" read delivers only new entries,
// whose count starts at 1, so it never dead-letters. The move adds the
// dead letter and takes the entry out of the PEL in one atomic step,
// under both streams' locks (see groupLocks).

// DeadLetterPolicy is a consumer group's dead-letter policy, as NATS
// JetStream's max_deliver with an advisory stream, or an SQS redrive
// policy's maxReceiveCount with its dead-letter queue. The zero policy is
// none.
type DeadLetterPolicy struct {
	// MaxDeliveries is how many times an entry may be delivered, at
	// least 1. A claim or a history read that would take an entry's
	// delivery count above it moves the entry to Stream instead.
	MaxDeliveries int64
	// Stream names the dead-letter stream in the DB of the group's
	// stream; it is created by the first dead letter when missing. It
	// must not be the group's own stream.
	Stream string
}

// check checks a policy that is not the zero one.
func (p DeadLetterPolicy) check() error {
	switch {
	case p.MaxDeliveries < 1:
		return errorf(ErrInvalidArgument, "dead-letter policy: MaxDeliveries must be >= 1, got %d (dead-letter stream %q)", p.MaxDeliveries, p.Stream)
	case p.Stream == "":
		return errorf(ErrInvalidArgument, "dead-letter policy: no dead-letter stream named (MaxDeliveries %d)", p.MaxDeliveries)
	}
	return nil
}

// checkDeadLetterPolicy checks p for a group of s; the zero policy passes.
func (s *Stream) checkDeadLetterPolicy(p DeadLetterPolicy) error {
	if p == (DeadLetterPolicy{}) {
		return nil
	}
	if err := p.check(); err != nil {
		return err
	}
	if s.db == nil {
		return errorf(ErrInvalidArgument, "dead-letter policy: the stream is not in a DB (made by NewStream, or a shard's), so it has no stream %q", p.Stream)
	}
	if p.Stream == s.Name() {
		return errorf(ErrInvalidArgument, "dead-letter policy: the dead-letter stream %q is the group's own stream", p.Stream)
	}
	return nil
}

// SetDeadLetterPolicy sets the dead-letter policy of group; the zero
// policy removes it. Entries already dead-lettered stay counted
// (GroupInfo.DeadLettered). It fails, changing nothing, with ErrNoGroup or
// ErrInvalidArgument (a MaxDeliveries below 1, no stream name, the
// group's own stream, or a stream not in a DB). O(log G).
func (s *Stream) SetDeadLetterPolicy(group string, p DeadLetterPolicy) (err error) {
	if err := s.checkDeadLetterPolicy(p); err != nil {
		return err
	}
	if err = s.cfg.gate.write(); err != nil {
		return
	}
	s.mu.Lock()
	defer s.unlockTo(&err)
	g, err := s.groupLocked(group)
	if err != nil {
		return err
	}
	if g.dead != p {
		s.setDeadLetterPolicyLocked(g, p)
	}
	return nil
}

// policyLocked returns the dead-letter policy of the group called name
// (the zero one when there is no such group).
func (s *Stream) policyLocked(name string) DeadLetterPolicy {
	if s.deadPolicies == 0 {
		return DeadLetterPolicy{}
	}
	g, err := s.groupLocked(name)
	if err != nil {
		return DeadLetterPolicy{}
	}
	return g.dead
}

// groupLocks holds the locks of a call on a group that may dead-letter:
// the stream's write lock and, when the group has a dead-letter policy,
// its dead-letter stream's. Two streams are locked in the order of their
// rank (the one made first, first); a dead-letter stream that does not
// exist yet is made but kept out of the DB, whose lock is then held (DB →
// Stream), until a dead letter is added to it.
type groupLocks struct {
	s, dl *Stream
	fresh bool   // dl is new, not in the DB yet; the DB's lock is held
	moved bool   // a dead letter was added to dl
	dlMs  uint64 // the clock of the dead letters' auto IDs
}

// lockGroup takes the locks of a call on the group called name of s. A
// stream without policies costs one lock, as before.
func (s *Stream) lockGroup(name string) groupLocks {
	s.mu.Lock()
	for {
		p := s.policyLocked(name)
		if p.MaxDeliveries == 0 || s.db == nil {
			return groupLocks{s: s}
		}
		s.mu.Unlock()
		if l, ok := s.lockWithDeadLetter(name, p); ok {
			return l
		}
		s.mu.Lock() // the policy changed, or its stream was removed: again
	}
}

// lockWithDeadLetter locks s and the dead-letter stream of p, and reports
// whether the group name still has the policy p, its stream still in the
// DB; if not, it holds no lock.
func (s *Stream) lockWithDeadLetter(name string, p DeadLetterPolicy) (groupLocks, bool) {
	db := s.db
	l := groupLocks{s: s, dlMs: db.cfg.idMs()}
	dl, ok := db.Lookup(p.Stream)
	if !ok {
		db.mu.Lock()
		if dl, ok = db.lookupLocked(p.Stream); ok {
			db.mu.Unlock()
		} else {
			dl, l.fresh = db.newStreamLocked(p.Stream), true
		}
	}
	if dl == s { // only a stream removed from the DB can meet its own name
		s.mu.Lock()
		if l.fresh {
			db.mu.Unlock()
		}
		return groupLocks{s: s}, true
	}
	l.dl = dl
	first, second := s, dl
	if dl.rank < s.rank {
		first, second = dl, s
	}
	first.mu.Lock()
	second.mu.Lock()
	if !dl.removed && s.policyLocked(name) == p {
		return l, true
	}
	second.mu.Unlock()
	first.mu.Unlock()
	if l.fresh {
		db.mu.Unlock()
	}
	return groupLocks{}, false
}

// unlockDeferred releases the locks and returns what the caller settles
// once it holds no lock. The dead-letter stream goes first, so that in a
// durable DB the record of the dead letters comes before the record that
// takes them out of the PEL: a crash between the two leaves an entry both
// dead-lettered and pending, never neither (at least once).
func (l *groupLocks) unlockDeferred() (*journal, uint64) {
	var j *journal
	var lsn uint64
	if l.dl != nil {
		if !l.fresh || l.moved {
			j, lsn = l.dl.unlockDeferred()
		} else {
			l.dl.mu.Unlock() // never seen by anyone: dropped
		}
		if l.fresh && l.moved {
			l.s.db.insertLocked(l.dl)
		}
	}
	if j2, lsn2 := l.s.unlockDeferred(); j2 != nil {
		j, lsn = j2, max(lsn, lsn2)
	}
	if l.fresh {
		l.s.db.mu.Unlock()
	}
	return j, lsn
}

// unlock releases the locks and settles, returning settle's error.
func (l *groupLocks) unlock() error {
	j, lsn := l.unlockDeferred()
	return j.settle(lsn)
}

// due reports whether the policy of g moves an entry whose delivery
// count would become count.
func (l *groupLocks) due(g *group, count int64) bool {
	return l.dl != nil && g.dead.MaxDeliveries != 0 && count > g.dead.MaxDeliveries
}

// move moves the pending entry id of g, whose record is rec and whose
// message is at body in b, to the dead-letter stream: it adds the dead
// letter (see MoveDeadLetters for its fields) and takes id out of the
// PEL, counting it. It fails only when the dead-letter stream's last ID
// is the largest there is: the entry then stays pending as it was.
func (l *groupLocks) move(g *group, id ID, rec nack, b *store.Block, flags byte, body int) (DeadLetter, bool) {
	dead, ok := l.dl.autoIDLocked(l.dlMs)
	if !ok {
		return DeadLetter{}, false
	}
	col := getCollector()
	col.add(b, id, flags, body)
	fields := col.entries()[0].Fields
	putCollector(col)
	d := DeadLetter{ID: id, DeadID: dead, Deliveries: rec.count}
	if c := g.ownerLocked(&rec); c != nil {
		d.Consumer = c.name
	}
	l.dl.appendLocked(dead, deadLetterFields(l.s.Name(), g.name, d, fields))
	l.dl.notifyLocked()
	l.s.deadLetterLocked(g, id)
	l.moved = true
	return d, true
}
