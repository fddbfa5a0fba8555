package xstream

import (
	"context"
	"time"

	"github.com/xstreamgo/xstream/internal/store"
)

// ReadGroupArgs holds the options of ReadGroup.
type ReadGroupArgs struct {
	// Count caps the entries returned per stream; 0 means no cap.
	Count int
	// Block is how long a ">" read waits when there is nothing to
	// deliver: 0 returns at once, BlockForever (any negative value)
	// waits until the context is done. History reads never wait.
	//
	// This is the reverse of go-redis's XReadGroupArgs.Block, where 0
	// (the zero value) waits forever and -1 does not block: not blocking
	// is Block: 0 here and Block: -1 in go-redis; waiting forever is
	// Block: BlockForever here and Block: 0 in go-redis.
	Block time.Duration
	// NoAck delivers entries without putting them in the PEL, as if they
	// were acknowledged at once (Redis NOACK). Entries that Claim takes
	// over stay pending, as in Redis.
	NoAck bool
	// Claim makes a ">" read first take over the group's pending entries
	// idle at least ClaimMinIdle, whichever consumer has them, and then
	// deliver new entries with what is left of Count (Redis 8.4 XREADGROUP
	// CLAIM min-idle-time). A ClaimMinIdle of 0 takes every pending
	// entry. History reads ignore both, as Redis does. A sharded
	// ReadGroup takes them over from every shard, in shard and then
	// sequence number order, and reports each one's delivery count in
	// Record.Deliveries (see ShardedStream.ReadGroup).
	Claim        bool
	ClaimMinIdle time.Duration
}

// Delivery is what a ReadGroup with Claim reports of each entry it
// returns, as Redis 8.4 adds to each entry of its reply: the entry's idle
// time and delivery count before this read. A new entry has both 0; an
// entry given back by Nack has Idle NackIdle.
type Delivery struct {
	Idle       time.Duration
	Deliveries int64
}

func (a ReadGroupArgs) check() error {
	if a.Count < 0 {
		return errorf(ErrInvalidArgument, "count must be >= 0, got %d", a.Count)
	}
	if err := checkDuration("ClaimMinIdle", a.ClaimMinIdle); err != nil {
		return err
	}
	if a.ClaimMinIdle != 0 && !a.Claim {
		return errorf(ErrInvalidArgument, "ClaimMinIdle (%s) given without Claim", a.ClaimMinIdle)
	}
	return nil
}

// groupPos is the ID argument of ReadGroup: ">" or a history position.
type groupPos struct {
	history bool
	after   ID
}

func parseGroupReadID(s string) (groupPos, error) {
	switch s {
	case ">":
		return groupPos{}, nil
	case "$", "+":
		return groupPos{}, errorf(ErrInvalidID, "%q is meaningless in ReadGroup: use \">\" for new entries or an ID for the consumer's history", s)
	}
	id, err := ParseID(s)
	return groupPos{history: true, after: id}, err
}

// entryLocked locates the live entry id.
func (s *Stream) entryLocked(id ID) (b *store.Block, flags byte, body int, ok bool) {
	return s.st.Entry(sid(id))
}

// readGroupLocked serves one stream of a ReadGroup call, under the locks
// l (lockRead's). A ">" read with nothing to deliver returns nil; a
// history read returns a non-nil slice. The deliveries are those of a
// ">" read with Claim (one per entry), nil otherwise.
func (s *Stream) readGroupLocked(l *groupLocks, g *group, consumer string, p groupPos, args ReadGroupArgs, now int64) ([]Entry, []Delivery) {
	c := s.seenConsumerLocked(g, consumer, now)
	switch {
	case p.history:
		return s.historyLocked(l, g, c, p.after, args.Count, now), nil
	case args.Claim:
		return s.readClaimLocked(l, g, c, args, now)
	}
	return s.readNewLocked(g, c, args.Count, args.NoAck, now), nil
}

// seenConsumerLocked returns the consumer called name, created if
// needed, seen at now: a read's first step.
func (s *Stream) seenConsumerLocked(g *group, name string, now int64) *consumer {
	c, _ := s.consumerLocked(g, name)
	s.seeConsumerLocked(g, c, now)
	return c
}

// readNewLocked delivers to c the entries after the group's last
// delivered ID, count at most (0: all).
func (s *Stream) readNewLocked(g *group, c *consumer, count int, noack bool, now int64) []Entry {
	col := getCollector()
	defer putCollector(col)
	s.deliverNewLocked(col, g, c, count, noack, now)
	return col.entries()
}

// deliverNewLocked is readNewLocked into col, which may hold entries
// already: count caps the entries in col (0: no cap).
func (s *Stream) deliverNewLocked(col *collector, g *group, c *consumer, count int, noack bool, now int64) {
	if count > 0 && len(col.IDs) >= count {
		return
	}
	start := len(col.IDs)
	owner := c
	if noack {
		owner = nil
	}
	if lo, ok := g.lastID.Next(); ok && g.lastID.Less(ID(s.st.LastID())) {
		col.Walk(&s.st, sid(lo), store.MaxID, collectLimit(count, len(col.IDs)))
	}
	if len(col.IDs) > start {
		s.deliverRunLocked(g, owner, col.IDs[start:], now)
		if !noack {
			s.activateConsumerLocked(g, c, now)
		}
	}
}

// hasNewLocked reports whether a ">" read of g would deliver an entry.
func (s *Stream) hasNewLocked(g *group) bool {
	lo, ok := g.lastID.Next()
	if !ok || !g.lastID.Less(ID(s.st.LastID())) {
		return false
	}
	found := false
	s.walkLocked(lo, MaxID(), false, func(*store.Block, sID, byte, int) bool {
		found = true
		return false
	})
	return found
}

// historyLocked returns c's pending entries after after, count at most.
// An entry whose message is gone comes back with no fields. Entries that
// the group's dead-letter policy moves instead are not returned, nor
// counted.
func (s *Stream) historyLocked(l *groupLocks, g *group, c *consumer, after ID, count int, now int64) []Entry {
	lo, ok := after.Next()
	if !ok {
		return []Entry{}
	}
	col := getCollector()
	defer putCollector(col)
	var due []ID // moved after the walk, which must not change c's PEL
	c.pel.Ascend(sid(lo), sid(MaxID()), func(sk sID, _ *struct{}) bool {
		id := ID(sk)
		if b, flags, body, ok := s.entryLocked(id); !ok {
			col.addDeleted(id)
		} else if rec, _ := g.pendingLocked(id); l.due(g, claimCount(rec.count, nil, false)) {
			due = append(due, id)
		} else {
			col.add(b, id, flags, body)
			s.redeliverLocked(g, id, now)
		}
		return count == 0 || len(col.IDs) < count
	})
	for _, id := range due {
		rec, _ := g.pendingLocked(id)
		b, flags, body, _ := s.entryLocked(id)
		l.move(g, id, rec, b, flags, body)
	}
	if es := col.entries(); es != nil {
		return es
	}
	return []Entry{}
}

// ReadGroup reads the stream as consumer of group (Redis XREADGROUP). The
// consumer is created if it does not exist.
//
// With after ">" it delivers the entries after the group's last delivered
// ID, at most args.Count (not those Nack gave back: Claim and AutoClaim
// take them). Each goes into the group's PEL and the
// consumer's with a delivery count of 1 and the stream clock's time
// (unless args.NoAck), and the group's last delivered ID and entries-read
// counter advance. When there is nothing to deliver and args.Block is not
// 0, ReadGroup waits: blocked readers are served first come, first served
// by each Add; it returns nil, nil when args.Block passes, ctx.Err() when
// ctx is done (an entry added after that is not delivered to it), and an
// ErrNoGroup error if the group is destroyed. It holds
// no lock while it waits and leaves no goroutine behind. Unlike Redis, a
// ">" read whose undelivered entries were all deleted waits (or returns
// nil) instead of returning an empty list at once. Entries served to a
// blocked reader at the moment its ctx ends are returned with a nil error:
// they are in its PEL either way, never lost.
//
// With args.Claim, a ">" read first takes over the group's entries idle
// at least args.ClaimMinIdle (see ReadGroupDeliveries, which also returns
// what Redis adds to each entry of the reply).
//
// With an entry ID, it returns the consumer's own pending entries after
// that ID (its history), never waits, and returns an empty, non-nil slice
// when there are none. Each returned entry's delivery count goes up by one
// and its delivery time becomes now; an entry whose message was deleted
// or trimmed comes back as its ID with no fields.
//
// It fails, changing nothing, with ErrNoGroup, ErrInvalidID ("$" and "+"
// are not accepted) or ErrInvalidArgument. O(log N + log P) per entry.
func (s *Stream) ReadGroup(ctx context.Context, group, consumer, after string, args ReadGroupArgs) ([]Entry, error) {
	es, _, err := s.readGroup(ctx, group, consumer, after, args)
	return es, err
}

// ReadGroupDeliveries is ReadGroup that also returns, for a ">" read with
// args.Claim, the Delivery of each entry returned (in the same order):
// what Redis 8.4 adds to each entry of an XREADGROUP CLAIM reply. Without
// Claim, or for a history read, the deliveries are nil.
//
// With Claim, a ">" read first takes over the pending entries of the group
// idle at least args.ClaimMinIdle (and those given back by Nack), longest
// idle first (then by ID), as Claim does: each becomes pending to consumer
// with its delivery count one higher and its delivery time now, also
// with args.NoAck. A pending entry whose message is gone is removed from
// the PEL and skipped; one that the group's DeadLetterPolicy moves to its
// dead-letter stream is skipped and not counted. Then new entries are
// delivered as without Claim, up to args.Count in all. When there is
// nothing to take or deliver, it waits as ReadGroup does, for new entries
// only: unlike Redis, entries that become idle enough while it waits do
// not end the wait. It fails, changing nothing, as ReadGroup does
// (ErrInvalidArgument for a negative ClaimMinIdle, or ClaimMinIdle without
// Claim). O(P log P) for the group's P pending entries, plus ReadGroup's
// cost per entry returned.
func (s *Stream) ReadGroupDeliveries(ctx context.Context, group, consumer, after string, args ReadGroupArgs) ([]Entry, []Delivery, error) {
	return s.readGroup(ctx, group, consumer, after, args)
}

// readGroup is ReadGroupDeliveries.
func (s *Stream) readGroup(ctx context.Context, group, consumer, after string, args ReadGroupArgs) ([]Entry, []Delivery, error) {
	if err := args.check(); err != nil {
		return nil, nil, err
	}
	p, err := parseGroupReadID(after)
	if err != nil {
		return nil, nil, err
	}
	if err := s.cfg.gate.write(); err != nil {
		return nil, nil, err
	}
	now := s.nowMs()
	if p.history || args.Claim {
		es, ds, err := s.readLockGroup(group, consumer, p, args, now)
		if err != nil || p.history || es != nil || args.Block == 0 {
			return es, ds, err
		}
		// Nothing to claim or deliver: wait for new entries below.
	}
	s.mu.Lock()
	g, err := s.groupLocked(group)
	if err != nil {
		s.unlock()
		return nil, nil, err
	}
	es := s.readNewLocked(g, s.seenConsumerLocked(g, consumer, now), args.Count, args.NoAck, now)
	if es != nil || args.Block == 0 {
		if err := s.unlock(); err != nil {
			return nil, nil, err
		}
		return es, newDeliveries(es, args), nil
	}
	w := newGroupWaiter(ctx, s.cfg.gate, consumer, args)
	s.gwaiters = append(s.gwaiters, groupWait{w: w, g: g})
	if err := s.unlock(); err != nil {
		w.state.CompareAndSwap(waiting, gone)
		s.removeGroupWaiter(w)
		return nil, nil, err
	}
	if err := w.await(ctx, args.Block, []*Stream{s}); err != nil {
		return nil, nil, err
	}
	if w.err != nil {
		return nil, nil, w.err
	}
	if err := s.settleServed(); err != nil {
		return nil, nil, err
	}
	return w.entries, newDeliveries(w.entries, args), nil
}

// newDeliveries returns the deliveries of new entries es read with args:
// zeros with Claim, nil without.
func newDeliveries(es []Entry, args ReadGroupArgs) []Delivery {
	if !args.Claim || es == nil {
		return nil
	}
	return make([]Delivery, len(es))
}

// readLockGroup is ReadGroup with an ID, or with Claim: under the locks
// of lockGroup, as it may dead-letter.
func (s *Stream) readLockGroup(group, consumer string, p groupPos, args ReadGroupArgs, now int64) ([]Entry, []Delivery, error) {
	l := s.lockGroup(group)
	g, err := s.groupLocked(group)
	if err != nil {
		l.unlock()
		return nil, nil, err
	}
	es, ds := s.readGroupLocked(&l, g, consumer, p, args, now)
	if err := l.unlock(); err != nil {
		return nil, nil, err
	}
	return es, ds, nil
}

// lockRead takes the locks of a ReadGroup of the group called name at p:
// a history read or a read with Claim may dead-letter (lockGroup), a ">"
// read takes the stream's lock alone.
func (s *Stream) lockRead(name string, p groupPos, args ReadGroupArgs) groupLocks {
	if p.history || args.Claim {
		return s.lockGroup(name)
	}
	s.mu.Lock()
	return groupLocks{s: s}
}

// settleServed is called by a blocked ReadGroup that another call served:
// the entries it got were made pending by that call, whose record it
// settles. Taking the lock waits for that call to commit its record. When
// that record cannot be made durable (runlock), the call must fail and
// return nothing.
func (s *Stream) settleServed() error {
	s.mu.RLock()
	return s.runlock()
}

// The lag of a group: how many entries it has yet to read, computed by
// the rules of Redis 7 (streamEstimateDistanceFromFirstEverEntry and
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
	if s.countsOneByOneLocked(g, id) {
		return g.entriesRead + 1
	} else if s.st.EntriesAdded() != 0 {
		return s.estimateDistanceLocked(id)
	}
	return g.entriesRead
}

// countsOneByOneLocked reports whether g's entries-read counter goes up
// by one for each delivery from id on: it is known, the group is at or
// after the stream's first entry, and nothing at or after id was
// deleted. Redis checks for deletions from the delivered entry on, not
// from the group's previous last ID (streamReplyWithRange). O(1).
func (s *Stream) countsOneByOneLocked(g *group, id ID) bool {
	return g.entriesRead != entriesReadUnknown && !g.lastID.Less(ID(s.st.FirstID())) && !s.rangeHasTombstonesLocked(id)
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
