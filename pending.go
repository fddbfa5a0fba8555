package xstream

import (
	"math"
	"time"
)

// parseIDs parses entry IDs ("ms-seq" or "ms"); the first bad one fails
// the whole list.
func parseIDs(ids []string) ([]ID, error) {
	out := make([]ID, len(ids))
	for i, str := range ids {
		id, err := ParseID(str)
		if err != nil {
			return nil, err
		}
		out[i] = id
	}
	return out, nil
}

func checkDuration(name string, d time.Duration) error {
	if d < 0 {
		return errorf(ErrInvalidArgument, "%s must be >= 0, got %s", name, d)
	}
	return nil
}

// Ack acknowledges pending entries of group (Redis XACK): it removes them
// from the group's PEL and their consumer's, and returns how many were
// pending. IDs are "ms-seq" or "ms"; one bad ID fails the whole call
// (ErrInvalidID) before anything is acknowledged. It fails with ErrNoGroup.
// O(log P) per ID.
func (s *Stream) Ack(group string, ids ...string) (int64, error) {
	parsed, err := parseIDs(ids)
	if err != nil {
		return 0, err
	}
	return s.AckIDs(group, parsed...)
}

// AckIDs is Ack for IDs already parsed, such as those of entries that
// ReadGroup returned: it saves formatting and parsing them. O(log P) per
// ID.
func (s *Stream) AckIDs(group string, ids ...ID) (_ int64, err error) {
	if err = s.cfg.gate.write(); err != nil {
		return
	}
	s.mu.Lock()
	defer s.unlockTo(&err)
	return s.ackIDsLocked(group, ids)
}

func (s *Stream) ackIDsLocked(group string, ids []ID) (int64, error) {
	g, err := s.groupLocked(group)
	if err != nil {
		return 0, err
	}
	if len(ids) == 1 {
		if s.ackLocked(g, ids[0]) {
			return 1, nil
		}
		return 0, nil
	}
	// The usual batch of acknowledgements comes sorted: removed largest
	// first, it comes off the ends of the B-trees' nodes.
	return s.ackRunLocked(g, ids), nil
}

// PendingSummary is the short form of Pending (Redis XPENDING without a
// range).
type PendingSummary struct {
	Count           int64 // entries in the group's PEL
	Lowest, Highest ID    // smallest and largest pending IDs; 0-0 when none
	// Consumers lists the consumers with at least one pending entry and
	// how many they have, in name order.
	Consumers []ConsumerPending
}

// ConsumerPending is one consumer's line of a PendingSummary.
type ConsumerPending struct {
	Name  string
	Count int64
}

// Pending summarizes the PEL of group: its size, its smallest and largest
// IDs and the consumers with pending entries. It fails with ErrNoGroup.
// O(log P + C).
func (s *Stream) Pending(group string) (result PendingSummary, err error) {
	if err = s.cfg.gate.read(); err != nil {
		return
	}
	s.mu.RLock()
	defer runlockTo(s, &result, &err)
	g, err := s.groupLocked(group)
	if err != nil {
		return PendingSummary{}, err
	}
	sum := PendingSummary{Count: int64(g.pel.Len())}
	if sum.Count == 0 {
		return sum, nil
	}
	lo, _ := g.pel.Min()
	hi, _ := g.pel.Max()
	sum.Lowest, sum.Highest = ID(lo), ID(hi)
	eachConsumer(g, func(c *consumer) {
		if n := c.pel.Len(); n > 0 {
			sum.Consumers = append(sum.Consumers, ConsumerPending{c.name, int64(n)})
		}
	})
	return sum, nil
}

// PendingArgs selects the rows of PendingRange.
type PendingArgs struct {
	// Start and End bound the IDs as in Range: "-", "+", "ms-seq", a bare
	// "ms", or "(ID" for an exclusive bound. "" means "-" and "+".
	Start, End string
	// Count caps the rows; 0 means no cap.
	Count int
	// Consumer, when not "", lists only that consumer's entries.
	Consumer string
	// MinIdle, when not 0, lists only entries idle at least that long,
	// and the entries given back by Nack.
	MinIdle time.Duration
}

// PendingEntry is one pending entry of a group.
type PendingEntry struct {
	ID ID
	// Consumer owns the entry; "" for an entry given back by Nack.
	Consumer string
	// Idle is the time since the last delivery, or NackIdle for an entry
	// given back by Nack.
	Idle       time.Duration
	Deliveries int64 // times delivered
}

// NackIdle is the Idle of a pending entry given back by Nack, which has no
// owner and no delivery time: Redis's XPENDING reports -1 for it.
const NackIdle = -time.Millisecond

// PendingRange lists pending entries of group in ID order (Redis XPENDING
// with a range). Unlike Redis, a Count of 0 means no cap (Redis returns
// nothing). It fails with ErrNoGroup, ErrInvalidID or ErrInvalidArgument.
// O(log P + rows), or O(log P + entries scanned) with MinIdle.
func (s *Stream) PendingRange(group string, args PendingArgs) ([]PendingEntry, error) {
	lo, hi, empty, err := args.check()
	if err != nil {
		return nil, err
	}
	return s.pendingPage(group, args, lo, hi, empty, args.Count)
}

// check checks the arguments of PendingRange and returns its bounds.
func (args PendingArgs) check() (lo, hi ID, empty bool, err error) {
	if args.Count < 0 {
		return lo, hi, false, errorf(ErrInvalidArgument, "count must be >= 0, got %d", args.Count)
	}
	if err := checkDuration("MinIdle", args.MinIdle); err != nil {
		return lo, hi, false, err
	}
	start, end := args.Start, args.End
	if start == "" {
		start = "-"
	}
	if end == "" {
		end = "+"
	}
	return parseRange(start, end)
}

// pendingPage is PendingRange within [lo, hi], with at most count rows
// (0: no cap).
func (s *Stream) pendingPage(group string, args PendingArgs, lo, hi ID, empty bool, count int) (result []PendingEntry, err error) {
	now := s.nowMs()
	if err = s.cfg.gate.read(); err != nil {
		return
	}
	s.mu.RLock()
	defer runlockTo(s, &result, &err)
	g, err := s.groupLocked(group)
	if err != nil || empty {
		return nil, err
	}
	var c *consumer
	if args.Consumer != "" {
		v, ok := g.consumers.Get(args.Consumer)
		if !ok {
			return nil, nil
		}
		c = v.(*consumer)
	}
	return pendingRows(g, lo, hi, count, c, args.MinIdle.Milliseconds(), now), nil
}

// pendingRows lists the PEL of g (or of its consumer c) within [lo, hi].
func pendingRows(g *group, lo, hi ID, count int, c *consumer, minIdleMs, now int64) []PendingEntry {
	var out []PendingEntry
	if count > 0 {
		out = make([]PendingEntry, 0, min(count, g.pel.Len()))
	}
	row := func(sk sID, rec *nack) bool {
		id := ID(sk)
		owner := g.ownerLocked(rec)
		if owner != nil && minIdleMs > 0 && now-rec.deliveryMs < minIdleMs {
			return true // an entry given back by Nack passes any MinIdle, as in Redis
		}
		e := PendingEntry{ID: id, Idle: NackIdle, Deliveries: rec.count}
		if owner != nil {
			e.Consumer, e.Idle = owner.name, msDuration(now-rec.deliveryMs)
		}
		out = append(out, e)
		return count == 0 || len(out) < count
	}
	if c == nil {
		g.pel.Ascend(sid(lo), sid(hi), row)
		return out
	}
	c.pel.Ascend(sid(lo), sid(hi), func(id sID, _ *struct{}) bool {
		return row(id, g.pel.Get(id))
	})
	return out
}

// ClaimArgs holds the options of Claim, as in Redis XCLAIM.
type ClaimArgs struct {
	// Idle sets the idle time of the claimed entries (IDLE) instead of 0.
	Idle time.Duration
	// Time sets their last delivery time (TIME) instead of now; a time in
	// the future counts as now, as in Redis. Idle and Time exclude each
	// other.
	Time time.Time
	// RetryCount, when not nil, sets their delivery count (RETRYCOUNT)
	// instead of adding one.
	RetryCount *int64
	// Force creates the pending entry of an ID that is in the stream but
	// not pending (FORCE).
	Force bool
	// JustID returns the claimed IDs only, without fields, and leaves
	// the delivery count alone (JUSTID).
	JustID bool
	// LastID, when not "", raises the group's last delivered ID to it
	// (LASTID).
	LastID string
}

// claimCount returns the delivery count of an entry claimed with count
// before: retry when given, else one more unless justID.
func claimCount(count int64, retry *int64, justID bool) int64 {
	switch {
	case retry != nil:
		return *retry
	case !justID && count < math.MaxInt64:
		return count + 1
	}
	return count
}

// Claim gives consumer the ownership of pending entries of group that
// have been idle at least minIdle (Redis XCLAIM); the consumer is created
// if needed. A claimed entry's idle time restarts and its delivery count
// goes up by one (see ClaimArgs for the options). An ID not pending is
// skipped (unless args.Force); a pending entry whose message was deleted
// is removed from the PEL and not returned; an entry given back by Nack is
// claimed whatever its idle time. When the group has a DeadLetterPolicy,
// a pending entry whose delivery count the claim would take above its
// MaxDeliveries is moved to the dead-letter stream instead, atomically,
// and not returned. It returns the claimed entries (with args.JustID,
// their IDs only). It fails, changing nothing, with
// ErrNoGroup, ErrInvalidID or ErrInvalidArgument (a negative duration or
// count, no IDs, or both Idle and Time). O(log P + log N) per ID.
func (s *Stream) Claim(group, consumer string, minIdle time.Duration, ids []string, args ClaimArgs) ([]Entry, error) {
	if err := checkClaimList(minIdle, len(ids)); err != nil {
		return nil, err
	}
	parsed, err := parseIDs(ids)
	if err != nil {
		return nil, err
	}
	return s.ClaimIDs(group, consumer, minIdle, parsed, args)
}

// checkClaimList checks what Claim checks before it parses its IDs.
func checkClaimList(minIdle time.Duration, n int) error {
	if err := checkDuration("min idle", minIdle); err != nil {
		return err
	}
	if n == 0 {
		return errorf(ErrInvalidArgument, "Claim needs at least one ID")
	}
	return nil
}

// ClaimIDs is Claim for IDs already parsed, such as those of entries
// PendingRange returned: it saves formatting and parsing them. It fails,
// changing nothing, with ErrNoGroup, ErrInvalidID (a bad args.LastID) or
// ErrInvalidArgument (a negative duration or count, no IDs, or both Idle
// and Time). O(log P + log N) per ID.
func (s *Stream) ClaimIDs(group, consumer string, minIdle time.Duration, ids []ID, args ClaimArgs) (out []Entry, err error) {
	if err := checkClaimList(minIdle, len(ids)); err != nil {
		return nil, err
	}
	if err := checkDuration("Idle", args.Idle); err != nil {
		return nil, err
	}
	if args.Idle != 0 && !args.Time.IsZero() {
		return nil, errorf(ErrInvalidArgument, "Idle (%s) and Time (%s) given together", args.Idle, args.Time)
	}
	if args.RetryCount != nil && *args.RetryCount < 0 {
		return nil, errorf(ErrInvalidArgument, "RetryCount must be >= 0, got %d", *args.RetryCount)
	}
	var lastID ID
	if args.LastID != "" {
		var err error
		if lastID, err = ParseID(args.LastID); err != nil {
			return nil, err
		}
	}
	now := s.nowMs()
	delivery := now - args.Idle.Milliseconds()
	if !args.Time.IsZero() {
		delivery = args.Time.UnixMilli()
	}
	if delivery < 0 || delivery > now {
		delivery = now
	}
	minMs := minIdle.Milliseconds()

	if err = s.cfg.gate.write(); err != nil {
		return
	}
	l := s.lockGroup(group)
	defer func() {
		if e := l.unlock(); e != nil && err == nil {
			out, err = nil, e // claimed entries are not returned
		}
	}()
	g, err := s.groupLocked(group)
	if err != nil {
		return nil, err
	}
	if g.lastID.Less(lastID) {
		s.setGroupLastLocked(g, lastID, g.entriesRead)
	}
	c, _ := s.consumerLocked(g, consumer)
	s.seeConsumerLocked(g, c, now)
	col := getCollector()
	defer putCollector(col)
	claimed := false
	for _, id := range ids {
		rec, pending := g.pendingLocked(id)
		b, flags, body, ok := s.entryLocked(id)
		if !ok {
			if pending {
				s.ackLocked(g, id)
			}
			continue
		}
		if !pending {
			if !args.Force {
				continue
			}
			rec = nack{deliveryMs: now, count: 1}
		} else if rec.owner != 0 && minMs > 0 && now-rec.deliveryMs < minMs {
			continue
		}
		count := claimCount(rec.count, args.RetryCount, args.JustID)
		if pending && l.due(g, count) {
			l.move(g, id, rec, b, flags, body)
			continue
		}
		s.claimLocked(g, id, c, delivery, count)
		if args.JustID {
			col.addDeleted(id)
		} else {
			col.add(b, id, flags, body)
		}
		claimed = true
	}
	if claimed {
		s.activateConsumerLocked(g, c, now)
	}
	return col.entries(), nil
}

// AutoClaimArgs holds the options of AutoClaim.
type AutoClaimArgs struct {
	// Count caps the entries claimed (and deleted ones reported) in one
	// call; 0 means 100, Redis's default.
	Count int
	// JustID returns IDs only and leaves delivery counts alone.
	JustID bool
}

// AutoClaimResult is the result of AutoClaim.
type AutoClaimResult struct {
	// Next is the cursor for the next call: 0-0 when the scan reached the
	// end of the PEL.
	Next ID
	// Entries are the claimed entries (IDs only with JustID).
	Entries []Entry
	// Deleted lists pending IDs whose message no longer exists; they were
	// removed from the PEL.
	Deleted []ID
	// DeadLetters lists the entries that the group's DeadLetterPolicy
	// moved to its dead-letter stream instead of claiming them.
	DeadLetters []DeadLetter
}

// autoClaimMaxCount bounds AutoClaimArgs.Count, as Redis does.
const autoClaimMaxCount = math.MaxInt64 / 10

// AutoClaim scans the PEL of group from start and gives consumer the
// entries idle at least minIdle, like Claim (Redis XAUTOCLAIM). start is an
// ID, "-", or "(ID" for an exclusive start. It claims up to args.Count
// entries, examines at most 10 times that many, and returns the cursor to
// continue from. Pending entries whose message is gone are removed from
// the PEL and reported in Deleted; they count toward args.Count, as do the
// entries that the group's DeadLetterPolicy moves to its dead-letter
// stream instead of claiming them (reported in DeadLetters). It fails,
// changing nothing, with ErrNoGroup, ErrInvalidID or ErrInvalidArgument.
// O((log P + log N) × entries examined).
func (s *Stream) AutoClaim(group, consumer string, minIdle time.Duration, start string, args AutoClaimArgs) (AutoClaimResult, error) {
	cur, count, err := autoClaimCheck(minIdle, start, args)
	if err != nil {
		return AutoClaimResult{}, err
	}
	return s.autoClaim(group, consumer, minIdle, cur, count, args.JustID)
}

// autoClaimCheck checks the arguments of AutoClaim and returns the
// parsed start and the count to claim.
func autoClaimCheck(minIdle time.Duration, start string, args AutoClaimArgs) (ID, int, error) {
	if err := checkDuration("min idle", minIdle); err != nil {
		return ID{}, 0, err
	}
	count := args.Count
	if count < 0 || count > autoClaimMaxCount {
		return ID{}, 0, errorf(ErrInvalidArgument, "count must be between 0 and %d, got %d", autoClaimMaxCount, count)
	}
	if count == 0 {
		count = 100
	}
	cur, err := parseBound(start, false)
	if err != nil {
		return ID{}, 0, err
	}
	return cur, count, nil
}

// autoClaim is AutoClaim from cur, with arguments checked.
func (s *Stream) autoClaim(group, consumer string, minIdle time.Duration, cur ID, count int, justID bool) (result AutoClaimResult, err error) {
	var res AutoClaimResult
	now := s.nowMs()
	minMs := minIdle.Milliseconds()

	if err = s.cfg.gate.write(); err != nil {
		return
	}
	l := s.lockGroup(group)
	defer func() {
		if e := l.unlock(); e != nil && err == nil {
			result, err = AutoClaimResult{}, e // claimed entries are not returned
		}
	}()
	g, err := s.groupLocked(group)
	if err != nil {
		return res, err
	}
	c, _ := s.consumerLocked(g, consumer)
	s.seeConsumerLocked(g, c, now)
	col := getCollector()
	defer putCollector(col)
	attempts := count * 10
	end := false
	claimed := false
	for attempts > 0 && count > 0 {
		sk, p, ok := g.pel.Ceil(sid(cur))
		if !ok {
			end = true
			break
		}
		id, rec := ID(sk), *p
		attempts--
		next, more := id.Next()
		if b, flags, body, ok := s.entryLocked(id); !ok {
			s.ackLocked(g, id)
			res.Deleted = append(res.Deleted, id)
			count--
		} else if rec.owner == 0 || minMs == 0 || now-rec.deliveryMs >= minMs {
			n := claimCount(rec.count, nil, justID)
			switch {
			case l.due(g, n):
				if d, ok := l.move(g, id, rec, b, flags, body); ok {
					res.DeadLetters = append(res.DeadLetters, d)
					count--
				}
			default:
				s.claimLocked(g, id, c, now, n)
				if justID {
					col.addDeleted(id)
				} else {
					col.add(b, id, flags, body)
				}
				claimed = true
				count--
			}
		}
		if !more {
			end = true
			break
		}
		cur = next
	}
	if claimed {
		s.activateConsumerLocked(g, c, now)
	}
	if !end {
		if id, _, ok := g.pel.Ceil(sid(cur)); ok {
			res.Next = ID(id)
		}
	}
	res.Entries = col.entries()
	return res, nil
}

// NackMode says what Nack does to the delivery count of the entries it
// gives back (Redis 8.8 XNACK).
type NackMode uint8

const (
	// NackSilent takes one off the delivery count, as if the last
	// delivery did not happen (SILENT): for a graceful shutdown or a
	// failure of the consumer itself.
	NackSilent NackMode = iota + 1
	// NackFail leaves the delivery count as it is (FAIL).
	NackFail
	// NackFatal sets the delivery count to its maximum, math.MaxInt64
	// (FATAL): for a message that must not be processed again.
	NackFatal
)

// NackArgs holds the options of Nack.
type NackArgs struct {
	// RetryCount, when not nil, sets the delivery count instead of what
	// the mode says (RETRYCOUNT).
	RetryCount *int64
	// Force gives back an ID that is in the stream but not pending,
	// creating its pending entry with a delivery count of 0 before the
	// mode applies (FORCE).
	Force bool
}

// Nack gives pending entries of group back to the group without
// acknowledging them (Redis 8.8 XNACK). They stay in the group's PEL with
// no owner and no delivery time: PendingRange lists them with Consumer ""
// and Idle NackIdle, whatever its MinIdle, and Claim and AutoClaim take
// them whatever their min idle time. As in Redis, a ">" ReadGroup does not
// deliver them again; nor does a history read, which lists only what the
// consumer owns. Nack applies to every ID pending in the group, one given
// back already included (its delivery count changes again), and returns
// how many that was; other IDs are skipped unless args.Force. It fails,
// changing nothing, with ErrNoGroup, ErrInvalidID or ErrInvalidArgument
// (unknown mode, negative RetryCount). O(log P) per ID.
func (s *Stream) Nack(group string, mode NackMode, ids []string, args NackArgs) (int64, error) {
	if err := checkNack(mode, args); err != nil {
		return 0, err
	}
	parsed, err := parseIDs(ids)
	if err != nil {
		return 0, err
	}
	return s.NackIDs(group, mode, parsed, args)
}

// checkNack checks what Nack checks before it parses its IDs.
func checkNack(mode NackMode, args NackArgs) error {
	if mode < NackSilent || mode > NackFatal {
		return errorf(ErrInvalidArgument, "unknown NackMode %d", mode)
	}
	if args.RetryCount != nil && *args.RetryCount < 0 {
		return errorf(ErrInvalidArgument, "RetryCount must be >= 0, got %d", *args.RetryCount)
	}
	return nil
}

// NackIDs is Nack for IDs already parsed, such as those of entries
// ReadGroup returned: it saves formatting and parsing them. It fails,
// changing nothing, with ErrNoGroup or ErrInvalidArgument (unknown mode,
// negative RetryCount). O(log P) per ID.
func (s *Stream) NackIDs(group string, mode NackMode, ids []ID, args NackArgs) (_ int64, err error) {
	if err := checkNack(mode, args); err != nil {
		return 0, err
	}
	if err = s.cfg.gate.write(); err != nil {
		return
	}
	s.mu.Lock()
	defer s.unlockTo(&err)
	g, err := s.groupLocked(group)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, id := range ids {
		rec, pending := g.pendingLocked(id)
		switch {
		case pending:
		case args.Force:
			if _, _, _, ok := s.entryLocked(id); !ok {
				continue
			}
		default:
			continue
		}
		count := rec.count
		switch {
		case args.RetryCount != nil:
			count = *args.RetryCount
		case mode == NackSilent && count > 0:
			count--
		case mode == NackFatal:
			count = math.MaxInt64
		}
		s.giveBackLocked(g, id, count)
		n++
	}
	return n, nil
}
