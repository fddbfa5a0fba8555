package xstream

import (
	"context"
	"math"
	"time"
)

// Consumer groups over a sharded stream.
//
// A group of a sharded stream is a consumer group of the same name on each
// shard's stream, with one rule on top: a child shard's records are
// delivered to the group only after every record of its ancestors was
// delivered, and, with StrictOrder, acknowledged. A shard is done when it
// is EXPIRED, or CLOSED with nothing left for the group and its own
// parents done; a child is read once its parents are done. So a CLOSED
// shard that never got a record (a split of a shard still empty, or a
// piece of UpdateShardCount's splits and merges) holds back its children
// as long as its own ancestors are not done: the grandchild of a shard
// waits for the grandparent's records, whatever lies between.
//
// The guarantee: the group receives the records of one partition key in put
// order across any reshards, as it does within one shard. Without
// StrictOrder this is delivery order only: a consumer may get a child's
// record while a record of the same key from the parent is still pending
// with another consumer (or is redelivered later by Claim). With
// StrictOrder every record of the ancestors is acknowledged before any
// record of the child is delivered, so a key's records in one generation
// are processed before its records in the next.
//
// The cost: each ReadGroup decides which shards are done in one pass over
// the live shards in shard number order (parents come before their
// children), looking into a CLOSED shard's group (under its stream's
// lock) only when its parents are done: O(live shards). With StrictOrder
// a single record left pending (a slow or dead consumer) holds back every
// generation below its shard until it is acknowledged, for example after
// another consumer takes it over with Claim or AutoClaim: head-of-line
// blocking at each reshard. Consumers that read with ReadGroupArgs.Claim
// take such records over themselves once they have been pending for
// ClaimMinIdle (see ReadGroup), so that a dead consumer holds its shards'
// children back for that long at most. That holds also for an ancestor that has
// none of the child's hash keys (one merged into the child's parent,
// whose range a later split left out): it holds back the generations in
// between. EXPIRED shards never hold back their children;
// their pending records go with them. Within one shard, as in any
// consumer group, several consumers may process records of one key at the
// same time.

// ShardGroupOptions holds the options of ShardedStream.CreateGroup.
type ShardGroupOptions struct {
	// StrictOrder holds a child shard back until every record of its
	// ancestors was acknowledged, not only delivered.
	StrictOrder bool
}

// RecordRef names a record of a sharded stream: its shard and its
// sequence number.
type RecordRef struct {
	ShardID        string
	SequenceNumber ID
}

// shardGroup is a group of a sharded stream. Guarded by the stream's mu.
type shardGroup struct {
	strict bool
}

// CreateGroup creates the consumer group name on the sharded stream,
// starting at the trim horizon of every shard: ReadGroup delivers every
// record kept, parents before children. Shards made later by reshards get
// the group too. It fails, changing nothing, with ErrGroupExists. O(live
// shards).
func (ss *ShardedStream) CreateGroup(name string, opts ShardGroupOptions) (err error) {
	if err = ss.cfg.gate.write(); err != nil {
		return
	}
	defer ss.settleErr(&err)
	ss.mu.Lock()
	defer ss.unlock()
	if _, ok := ss.groups[name]; ok {
		return errorf(ErrGroupExists, "group %q of the sharded stream", name)
	}
	ss.createGroupLocked(name, opts.StrictOrder)
	for _, sh := range ss.live {
		ss.addGroupLocked(sh, name)
	}
	return nil
}

// addGroupsLocked gives a new shard the stream's groups.
func (ss *ShardedStream) addGroupsLocked(sh *shard) {
	for name := range ss.groups {
		ss.addGroupLocked(sh, name)
	}
}

// addGroupLocked creates group name on the shard's stream, from its start.
// It cannot fail: shard streams are private, and only the sharded stream
// makes groups on them, once each.
func (ss *ShardedStream) addGroupLocked(sh *shard, name string) {
	_ = sh.s.CreateGroup(name, "0", GroupOptions{})
}

func (ss *ShardedStream) groupLocked(name string) (*shardGroup, error) {
	g, ok := ss.groups[name]
	if !ok {
		return nil, errorf(ErrNoGroup, "no group %q on the sharded stream", name)
	}
	return g, nil
}

// groupDrained reports whether the CLOSED shard sh has nothing left for
// group name: every record delivered and, strict, acknowledged. The
// caller holds ss.mu.
func groupDrained(sh *shard, name string, strict bool) bool {
	s := sh.s
	s.mu.Lock()
	defer s.unlock()
	g, err := s.groupLocked(name)
	if err != nil {
		return true
	}
	return !s.hasNewLocked(g) && (!strict || g.pel.Len() == 0)
}

// groupEligibleLocked lists the live shards whose records the group may
// get now: those whose parents are done (EXPIRED, or CLOSED, drained and
// with their own parents done; see the comment at the top). One pass in
// shard number order, as parents are numbered before their children,
// decides it for every shard once; a shard is checked with groupDrained
// only when its parents are done, and a done CLOSED shard is not listed,
// as it has nothing to deliver, unless withDone: then the list is every
// shard that can hold records pending in the group, which a done CLOSED
// shard of a group without StrictOrder may. The caller holds ss.mu.
func (ss *ShardedStream) groupEligibleLocked(name string, g *shardGroup, withDone bool) []*shard {
	if len(ss.live) == 0 {
		return nil
	}
	// done[sh.num-base] for the live shards, numbered from base; on the
	// stack for up to 64 numbers.
	base := ss.live[0].num
	var buf [64]bool
	var done []bool
	if n := ss.live[len(ss.live)-1].num - base + 1; n <= len(buf) {
		done = buf[:n]
	} else {
		done = make([]bool, n)
	}
	isDone := func(p *shard) bool {
		return p == nil || p.state == ShardExpired || done[p.num-base]
	}
	var out []*shard
	for _, sh := range ss.live {
		if !isDone(sh.parent) || !isDone(sh.adjacent) {
			continue
		}
		if sh.state == ShardClosed && groupDrained(sh, name, g.strict) {
			done[sh.num-base] = true
			if !withDone {
				continue
			}
		}
		out = append(out, sh)
	}
	return out
}

// ReadGroup delivers new records to consumer of group name, as ReadGroup
// ">" does on a stream, at most args.Count (0: no cap) spread over the
// shards it may read, parents before children (see CreateGroup). Delivered
// records are pending until acknowledged with Ack, unless args.NoAck. When
// there is none and args.Block is not 0 it waits for a Put, a reshard or
// an Ack that frees a child shard, for args.Block (then it returns no
// records and no error) or for ctx (then ctx.Err()). It holds no lock
// while waiting. It fails, changing nothing, with ErrNoGroup or
// ErrInvalidArgument (a negative Count or ClaimMinIdle, or ClaimMinIdle
// without Claim). Each call decides which shards it may read in one pass
// over the live shards: O(live shards) plus O(log N) per record.
//
// With args.Claim (Redis 8.4's XREADGROUP CLAIM, over the shards) it
// first takes over the records of the group pending, with any consumer,
// for at least args.ClaimMinIdle (0: every pending record), so that a
// consumer that died delays its records, and with StrictOrder the
// children of their shards, by that time at most:
//
//   - it takes them from every live shard that can hold pending records
//     (those whose parents are done: the shards it may read, and the
//     CLOSED ones done), in shard number order, parents before children,
//     and within a shard in sequence number order, so that a key's
//     records are taken over in put order;
//   - each becomes pending to consumer with its delivery count one higher
//     and its delivery time now, as Claim does (also with args.NoAck);
//     Record.Deliveries says how many times it was delivered before; a
//     pending record whose data retention dropped leaves the pending list
//     and is not returned;
//   - taken-over records come first, then new records as without Claim,
//     args.Count capping the two together;
//   - with StrictOrder, taken-over records stay pending until the new
//     owner acknowledges them, so a child of their shard is held back
//     until then, as it was: once the consumer acknowledges what it took
//     over, its next ReadGroup delivers the child's records. Without
//     StrictOrder a child's new records may come in the same call;
//   - sharded groups have no dead-letter policy: a record that keeps
//     failing is taken over again and again, its Deliveries growing; the
//     caller decides when to set it aside (Ack it and keep it elsewhere);
//   - the records are taken over when the call starts only: a blocked
//     read that found nothing to take or deliver waits for new records,
//     as without Claim, and records that become idle enough meanwhile do
//     not end the wait, as Stream.ReadGroupDeliveries does. A consumer
//     that reads with Block takes over a dead consumer's records within
//     ClaimMinIdle plus one Block.
//
// Claiming costs O(P) for the P records pending in each shard it looks at.
func (ss *ShardedStream) ReadGroup(ctx context.Context, group, consumer string, args ReadGroupArgs) (result []Record, err error) {
	if err = ss.cfg.gate.write(); err != nil {
		return
	}
	defer settleTo(ss, &result, &err)
	if err := args.check(); err != nil {
		return nil, err
	}
	count := args.Count
	if count == 0 {
		count = math.MaxInt
	}
	claim := args.Claim
	return ss.readLoop(ctx, args.Block, func(w *waiter, streams []*Stream) ([]Record, []*Stream, bool, error) {
		ss.mu.RLock()
		defer ss.mu.RUnlock()
		g, err := ss.groupLocked(group)
		if err != nil {
			return nil, streams, false, err
		}
		var out []Record
		if claim {
			claim = false // the first pass only: a blocked read waits for new records
			if out, err = ss.claimIdleLocked(group, consumer, g, args.ClaimMinIdle, count); err != nil {
				return nil, streams, false, err
			}
		}
		elig := ss.groupEligibleLocked(group, g, false)
		if left := count - len(out); left > 0 {
			per := max(1, left/max(1, len(elig)))
			for _, sh := range elig {
				if len(out) >= count {
					break
				}
				es, err := sh.s.ReadGroup(ctx, group, consumer, ">", ReadGroupArgs{Count: min(per, count-len(out)), NoAck: args.NoAck})
				if err != nil {
					return nil, streams, false, err
				}
				out = appendRecords(out, sh, es)
			}
		}
		if len(out) > 0 || w == nil {
			return out, streams, false, nil
		}
		streams, waiting := ss.registerLocked(w, elig, func(sh *shard) bool {
			g, err := sh.s.groupLocked(group)
			return err == nil && sh.s.hasNewLocked(g)
		}, streams)
		return nil, streams, waiting, nil
	})
}

// claimIdleLocked is the first step of a ReadGroup with Claim: it gives
// consumer the records of group pending for at least minIdle on every
// shard that can hold some, in shard order, at most count, and returns
// them. When that drops a record whose data is gone, which may free a
// child shard, it wakes the blocked readers. The caller holds ss.mu.
func (ss *ShardedStream) claimIdleLocked(group, consumer string, g *shardGroup, minIdle time.Duration, count int) ([]Record, error) {
	var out []Record
	wake := false
	for _, sh := range ss.groupEligibleLocked(group, g, true) {
		if len(out) >= count {
			break
		}
		es, ds, dropped, err := sh.s.claimIdle(group, consumer, minIdle, count-len(out))
		if err != nil {
			return nil, err
		}
		wake = wake || dropped
		at := len(out)
		out = appendRecords(out, sh, es)
		for i, d := range ds {
			out[at+i].Deliveries = d.Deliveries
		}
	}
	if wake && g.strict {
		ss.wakeReaders()
	}
	return out, nil
}

// appendRecords appends the records of shard sh's entries; an entry whose
// record was dropped comes with no partition key and no fields.
func appendRecords(out []Record, sh *shard, es []Entry) []Record {
	for _, e := range es {
		r := Record{ShardID: sh.id, SequenceNumber: e.ID}
		if len(e.Fields) > 0 {
			r.PartitionKey, r.Fields = e.Fields[0].Value, e.Fields[1:]
		}
		out = append(out, r)
	}
	return out
}

// byShard groups refs by shard, checking every shard first.
func (ss *ShardedStream) byShardLocked(refs []RecordRef) (map[*shard][]ID, []*shard, error) {
	m := map[*shard][]ID{}
	var order []*shard
	for _, r := range refs {
		sh, err := ss.lookupLocked(r.ShardID)
		if err != nil {
			return nil, nil, err
		}
		if sh.state == ShardExpired {
			return nil, nil, errorf(ErrShardExpired, "record %s of shard %s: the shard is EXPIRED", r.SequenceNumber, r.ShardID)
		}
		if _, ok := m[sh]; !ok {
			order = append(order, sh)
		}
		m[sh] = append(m[sh], r.SequenceNumber)
	}
	return m, order, nil
}

// Ack acknowledges records of group name and returns how many were
// pending. With StrictOrder, acknowledging the last pending record of a
// parent frees its children for ReadGroup. It fails, changing nothing,
// with ErrNoGroup, ErrShardNotFound or ErrShardExpired. O(log P) a record.
func (ss *ShardedStream) Ack(group string, refs ...RecordRef) (result int64, err error) {
	if err = ss.cfg.gate.write(); err != nil {
		return
	}
	defer settleTo(ss, &result, &err)
	ss.mu.RLock()
	g, err := ss.groupLocked(group)
	if err != nil {
		ss.mu.RUnlock()
		return 0, err
	}
	m, order, err := ss.byShardLocked(refs)
	if err != nil {
		ss.mu.RUnlock()
		return 0, err
	}
	var n int64
	for _, sh := range order {
		k, err := sh.s.AckIDs(group, m[sh]...)
		if err != nil {
			ss.mu.RUnlock()
			return n, err
		}
		n += k
	}
	strict := g.strict
	ss.mu.RUnlock()
	if strict && n > 0 {
		ss.wakeReaders()
	}
	return n, nil
}

// ShardPending is the pending summary of one shard for a group.
type ShardPending struct {
	ShardID string
	PendingSummary
}

// Pending returns the pending summary of group name on every live shard
// with pending records, by shard ID. It fails with ErrNoGroup. O(live
// shards × consumers).
func (ss *ShardedStream) Pending(group string) ([]ShardPending, error) {
	ss.mu.RLock()
	defer ss.mu.RUnlock()
	if _, err := ss.groupLocked(group); err != nil {
		return nil, err
	}
	var out []ShardPending
	for _, sh := range ss.live {
		sum, err := sh.s.Pending(group)
		if err != nil {
			return nil, err
		}
		if sum.Count > 0 {
			out = append(out, ShardPending{ShardID: sh.id, PendingSummary: sum})
		}
	}
	return out, nil
}

// Claim gives consumer the records refs names that are pending in group
// name and idle for at least minIdle, as Stream.Claim does shard by shard,
// and returns them. It fails, changing nothing, with ErrNoGroup,
// ErrShardNotFound, ErrShardExpired or an error of args.
func (ss *ShardedStream) Claim(group, consumer string, minIdle time.Duration, refs []RecordRef, args ClaimArgs) (result []Record, err error) {
	if err = ss.cfg.gate.write(); err != nil {
		return
	}
	defer settleTo(ss, &result, &err)
	ss.mu.RLock()
	defer ss.mu.RUnlock()
	if _, err := ss.groupLocked(group); err != nil {
		return nil, err
	}
	m, order, err := ss.byShardLocked(refs)
	if err != nil {
		return nil, err
	}
	var out []Record
	for _, sh := range order {
		es, err := sh.s.ClaimIDs(group, consumer, minIdle, m[sh], args)
		if err != nil {
			return out, err
		}
		out = appendRecords(out, sh, es)
	}
	return out, nil
}

// ShardAutoClaimResult is the result of ShardedStream.AutoClaim.
type ShardAutoClaimResult struct {
	// Next is the cursor for the next call; the zero RecordRef when the
	// scan went through every shard.
	Next    RecordRef
	Records []Record
	Deleted []RecordRef
}

// AutoClaim scans the pending records of group name from start (the zero
// RecordRef: from the first shard) in shard order and gives consumer those
// idle for at least minIdle, at most args.Count (0: 100) claimed or
// reported deleted, as Stream.AutoClaim does; Next continues the scan. It
// fails with ErrNoGroup or ErrShardNotFound. O(live shards) plus
// O(log P) per pending record scanned.
func (ss *ShardedStream) AutoClaim(group, consumer string, minIdle time.Duration, start RecordRef, args AutoClaimArgs) (res ShardAutoClaimResult, err error) {
	if err = ss.cfg.gate.write(); err != nil {
		return
	}
	defer settleTo(ss, &res, &err)
	wake := false
	defer func() {
		if wake { // dropping dead records may free children (StrictOrder)
			ss.wakeReaders()
		}
	}()
	ss.mu.RLock()
	defer ss.mu.RUnlock()
	g, err := ss.groupLocked(group)
	if err != nil {
		return ShardAutoClaimResult{}, err
	}
	defer func() { wake = g.strict && len(res.Deleted) > 0 }()
	first := 0
	if start.ShardID != "" {
		sh, err := ss.lookupLocked(start.ShardID)
		if err != nil {
			return ShardAutoClaimResult{}, err
		}
		first = sh.num
	}
	count := args.Count
	if count == 0 {
		count = 100
	}
	for _, sh := range ss.live {
		if sh.num < first {
			continue
		}
		from := ID{}
		if sh.num == first {
			from = start.SequenceNumber
		}
		for {
			left := count - len(res.Records) - len(res.Deleted)
			if left <= 0 {
				res.Next = RecordRef{ShardID: sh.id, SequenceNumber: from}
				return res, nil
			}
			r, err := sh.s.AutoClaim(group, consumer, minIdle, from.String(), AutoClaimArgs{Count: left, JustID: args.JustID})
			if err != nil {
				return res, err
			}
			res.Records = appendRecords(res.Records, sh, r.Entries)
			for _, id := range r.Deleted {
				res.Deleted = append(res.Deleted, RecordRef{ShardID: sh.id, SequenceNumber: id})
			}
			if r.Next.IsZero() {
				break
			}
			from = r.Next
		}
	}
	return res, nil
}
