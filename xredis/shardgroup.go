package xredis

import (
	"cmp"
	"context"
	"errors"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/redis/rueidis"
	"github.com/xstreamgo/xstream"
)

// Consumer groups over a sharded stream. A group is listed in the hash
// "xs:{name}:groups" (its name, and whether it keeps StrictOrder) and is a
// Redis consumer group of the same name on each shard's stream, made at
// 0 when the group is created, and on a shard made later the first time a
// ReadGroup may read it. A child shard is read only once each of its
// parents is done: EXPIRED, or drained (CLOSED, with no entry after the
// group's last delivered ID and, with StrictOrder, nothing pending) with
// its own parents done, so that an ancestor holds back every generation
// below it, also through shards that never had a record. A done shard
// stays done; the engine remembers it. A ReadGroup with Claim takes
// over idle pending records shard by shard with claimScript.

// groupSlice is how long one blocking XREADGROUP of a blocked ReadGroup
// waits at most: a reshard or an Ack that frees a child shard is seen
// within it.
const groupSlice = 100 * time.Millisecond

// groupState is what an engine remembers of a group.
type groupState struct {
	mu   sync.Mutex
	made map[int]bool // shards known to have the Redis group
	done map[int]bool // CLOSED shards known done (see groupEligible)
}

func (s *Sharded) groupsKey() string { return "xs:{" + s.name + "}:groups" }

func (s *Sharded) groupState(name string) *groupState {
	if g, ok := s.groupStates.Load(name); ok {
		return g.(*groupState) // the common case: nothing made
	}
	g, _ := s.groupStates.LoadOrStore(name, &groupState{made: map[int]bool{}, done: map[int]bool{}})
	return g.(*groupState)
}

// group returns whether group name keeps StrictOrder; it fails with
// ErrNoGroup when the stream has no such group.
func (s *Sharded) group(ctx context.Context, name string) (bool, error) {
	v, err := s.c.Do(ctx, s.c.B().Hget().Key(s.groupsKey()).Field(name).Build()).ToString()
	if isNil(err) {
		return false, errorf(xstream.ErrNoGroup, "no group %q on the sharded stream %q", name, s.name)
	}
	if err != nil {
		return false, mapErr(err)
	}
	return v == "strict", nil
}

func isNil(err error) bool { return err != nil && rueidis.IsRedisNil(err) }

// CreateGroup creates the consumer group name over every shard, starting
// at each shard's first record: ReadGroup delivers every record kept,
// parents before children; shards made later get the group too. It
// fails with ErrGroupExists, changing nothing. One round trip, and one
// per node for the shards.
func (s *Sharded) CreateGroup(ctx context.Context, name string, opts xstream.ShardGroupOptions) error {
	m, err := s.settled(ctx)
	if err != nil {
		return err
	}
	mode := "loose"
	if opts.StrictOrder {
		mode = "strict"
	}
	ok, err := s.c.Do(ctx, s.c.B().Hsetnx().Key(s.groupsKey()).Field(name).Value(mode).Build()).AsBool()
	if err != nil {
		return mapErr(err)
	}
	if !ok {
		return errorf(xstream.ErrGroupExists, "group %q of the sharded stream %q", name, s.name)
	}
	var live []int
	for n, sh := range m.doc.Shards {
		if sh.State != xstream.ShardExpired {
			live = append(live, n)
		}
	}
	return s.makeGroups(ctx, name, live)
}

// makeGroups creates the Redis group name on the given shards' streams
// unless this engine knows they have it.
func (s *Sharded) makeGroups(ctx context.Context, name string, shards []int) error {
	g := s.groupState(name)
	g.mu.Lock()
	var todo []int
	for _, n := range shards {
		if !g.made[n] {
			todo = append(todo, n)
		}
	}
	g.mu.Unlock()
	if len(todo) == 0 {
		return nil
	}
	cmds := make(rueidis.Commands, len(todo))
	for i, n := range todo {
		cmds[i] = s.c.B().XgroupCreate().Key(s.streamKey(n)).Group(name).Id("0").Build()
	}
	for i, r := range s.c.DoMulti(ctx, cmds...) {
		if err := mapErr(r.Error()); err != nil && !errors.Is(err, xstream.ErrGroupExists) {
			return err
		}
		g.mu.Lock()
		g.made[todo[i]] = true
		g.mu.Unlock()
	}
	return nil
}

// drained reports whether the CLOSED shard p has nothing left for group
// name: no entry after the group's last delivered ID and, strict,
// nothing pending. Three round trips at most.
func (s *Sharded) drained(ctx context.Context, name string, strict bool, p int) (bool, error) {
	if err := s.makeGroups(ctx, name, []int{p}); err != nil {
		return false, err
	}
	infos, err := s.e.Groups(ctx, s.streamKey(p))
	if err != nil {
		return false, err
	}
	for _, in := range infos {
		if in.Name != name {
			continue
		}
		if strict && in.Pending > 0 {
			return false, nil
		}
		after, _ := in.LastDeliveredID.Next()
		rest, err := s.e.Range(ctx, s.streamKey(p), after.String(), "+", 1)
		return err == nil && len(rest) == 0, err
	}
	return false, nil
}

// groupEligible lists the live shards whose records group name may get
// now: those whose parents are done (see the comment at the top). One
// pass in shard number order, as parents are numbered before their
// children, decides it for every shard once; a CLOSED shard is asked
// about (drained) only when its parents are done and the engine does not
// know it done already, and a done CLOSED shard is not listed, as it has
// nothing to deliver. A done shard stays done (nothing becomes pending
// again in a CLOSED shard whose records were all delivered), so the
// engine remembers it. It also returns, in shard order, the shards that
// can hold records pending in the group: those listed, and the done
// CLOSED ones (which may, without StrictOrder).
func (s *Sharded) groupEligible(ctx context.Context, m *shardMap, name string, strict bool) (elig, pending []int, err error) {
	g := s.groupState(name)
	done := make([]bool, len(m.doc.Shards))
	isDone := func(p int) bool { return p < 0 || done[p] }
	for n, sh := range m.doc.Shards {
		if sh.State == xstream.ShardExpired {
			done[n] = true
			continue
		}
		if !isDone(sh.Parent) || !isDone(sh.Adjacent) {
			continue
		}
		pending = append(pending, n)
		if sh.State == xstream.ShardClosed {
			g.mu.Lock()
			known := g.done[n]
			g.mu.Unlock()
			if !known {
				d, err := s.drained(ctx, name, strict, n)
				if err != nil {
					return nil, nil, err
				}
				if d {
					g.mu.Lock()
					g.done[n] = true
					g.mu.Unlock()
				}
				known = d
			}
			if known {
				done[n] = true
				continue
			}
		}
		elig = append(elig, n)
	}
	return elig, pending, nil
}

// ReadGroup delivers new records to consumer of group name, at most
// args.Count (0: no cap) spread over the shards it may read, parents
// before children, as xstream.ShardedStream.ReadGroup does. When there is
// none and args.Block is not 0 it waits, by blocking XREADs of at most
// 100 ms on the shards it may read and on the stream's events (so that an
// Ack of another process that frees a child is seen within that time, a
// put or a reshard at once), for args.Block (then no records and no
// error) or for ctx (then ctx.Err()). It fails with ErrNoGroup or
// ErrInvalidArgument.
//
// With args.Claim it first takes over the records pending for at least
// args.ClaimMinIdle, with the rules of xstream.ShardedStream.ReadGroup:
// from every shard that can hold pending records, in shard number order,
// then sequence number order, up to Count, before new records, and only
// when the call starts (the 100 ms passes of a blocked read do not
// claim). Redis 7 has no XREADGROUP CLAIM: a script on each such shard
// (claimScript: XPENDING IDLE, then XCLAIM of those rows, at one
// instant) takes them over and returns their delivery counts, so one
// round trip per shard that can hold pending records, one after the
// other while Count is not reached. Idle times are the server's.
func (s *Sharded) ReadGroup(ctx context.Context, group, consumer string, args xstream.ReadGroupArgs) ([]xstream.Record, error) {
	if err := checkShardedGroupArgs(args); err != nil {
		return nil, err
	}
	strict, err := s.group(ctx, group)
	if err != nil {
		return nil, err
	}
	s.maybeExpire(ctx)
	var deadline time.Time
	if args.Block > 0 {
		deadline = time.Now().Add(args.Block)
	}
	count := args.Count
	if count == 0 {
		count = math.MaxInt
	}
	claim := args.Claim
	for {
		m, err := s.settled(ctx)
		if err != nil {
			return nil, err
		}
		elig, pending, err := s.groupEligible(ctx, m, group, strict)
		if err != nil {
			return nil, err
		}
		var out []xstream.Record
		if claim {
			claim = false // the first pass only: a blocked read waits for new records
			if err := s.makeGroups(ctx, group, pending); err != nil {
				return nil, err
			}
			if out, err = s.claimIdle(ctx, group, consumer, pending, args.ClaimMinIdle, count); err != nil {
				return out, err
			}
		}
		if err := s.makeGroups(ctx, group, elig); err != nil {
			return out, err
		}
		left := count
		if count != math.MaxInt {
			left -= len(out)
		}
		more, err := s.readGroupPass(ctx, group, consumer, elig, left, args.NoAck)
		out = append(out, more...)
		if err != nil || len(out) > 0 || args.Block == 0 {
			return out, err
		}
		block := groupSlice
		if !deadline.IsZero() {
			left := time.Until(deadline)
			if left <= 0 {
				return nil, nil
			}
			block = min(block, left)
		}
		// Wait for an entry in a shard it may read, or a reshard, without
		// delivering: the next pass delivers, within the count.
		streams := []string{s.events, "$"}
		for _, n := range elig {
			streams = append(streams, s.streamKey(n), "$")
		}
		if _, err := s.e.Read(ctx, xstream.ReadArgs{Count: 1, Block: block}, streams...); err != nil {
			return nil, err
		}
	}
}

// claimIdle gives consumer the records of group pending for at least
// minIdle in the shards listed, in their order, at most count, with
// claimScript, and returns them with their Deliveries. A shard without
// the group (not made there yet) has none.
func (s *Sharded) claimIdle(ctx context.Context, group, consumer string, shards []int, minIdle time.Duration, count int) ([]xstream.Record, error) {
	var out []xstream.Record
	for _, n := range shards {
		left := 0 // no cap
		if count != math.MaxInt {
			if left = count - len(out); left <= 0 {
				break
			}
		}
		m, err := claimScript.Exec(ctx, s.c, []string{s.streamKey(n)},
			[]string{group, consumer, itoa(minIdle.Milliseconds()), strconv.Itoa(left)}).ToMessage()
		if err := mapErr(err); errors.Is(err, xstream.ErrNoGroup) {
			continue
		} else if err != nil {
			return out, err
		}
		arr := vals(&m)
		if len(arr) != 2 {
			return out, badReply("the claim script", &m)
		}
		es, err := entryList(vals(&arr[0]))
		if err != nil {
			return out, err
		}
		counts := vals(&arr[1])
		if len(counts) != len(es) {
			return out, badReply("the claim script's counts", &m)
		}
		at := len(out)
		out = appendRecords(out, n, es)
		for i := range counts {
			if out[at+i].Deliveries, err = counts[i].AsInt64(); err != nil {
				return out, err
			}
		}
	}
	return out, nil
}

// readGroupPass delivers up to count new records of the eligible shards
// without waiting, starting at a different shard each time: it reads the
// shards in chunks small enough that no chunk exceeds what is left of
// count (one XREADGROUP per slot each).
func (s *Sharded) readGroupPass(ctx context.Context, group, consumer string, elig []int, count int, noAck bool) ([]xstream.Record, error) {
	if len(elig) == 0 {
		return nil, nil
	}
	start := int(s.rr.Add(1) % uint64(len(elig)))
	order := append(append(make([]int, 0, len(elig)), elig[start:]...), elig[:start]...)
	var out []xstream.Record
	for i := 0; i < len(order) && len(out) < count; {
		k, per := len(order)-i, 0 // no count: every shard at once, no cap
		if count != math.MaxInt {
			left := count - len(out)
			k = min(left, k)
			per = left / k
		}
		chunk := order[i : i+k]
		i += k
		streams := make([]string, 0, 2*len(chunk))
		for _, n := range chunk {
			streams = append(streams, s.streamKey(n), ">")
		}
		got, err := s.e.ReadGroup(ctx, group, consumer, xstream.ReadGroupArgs{Count: per, NoAck: noAck}, streams...)
		if err != nil {
			return out, err
		}
		for _, se := range got {
			out = appendRecords(out, s.shardOf(se.Stream, chunk), se.Entries)
		}
	}
	return out, nil
}

// shardOf returns the number, among shards, of the shard whose stream
// key is key.
func (s *Sharded) shardOf(key string, shards []int) int {
	for _, n := range shards {
		if s.streamKey(n) == key {
			return n
		}
	}
	return -1
}

// appendRecords appends the records of shard n's entries; an entry whose
// record was deleted comes with no partition key and no fields.
func appendRecords(out []xstream.Record, n int, es []xstream.Entry) []xstream.Record {
	for _, e := range es {
		r := xstream.Record{ShardID: shardName(n), SequenceNumber: e.ID}
		if len(e.Fields) > 0 && e.Fields[0].Name == pkField {
			r.PartitionKey, r.Fields = e.Fields[0].Value, e.Fields[1:]
		}
		out = append(out, r)
	}
	return out
}

// byShard groups refs by shard number, checking every shard first.
func byShard(m *shardMap, refs []xstream.RecordRef) (map[int][]string, []int, error) {
	ids := map[int][]string{}
	var order []int
	for _, r := range refs {
		n, err := m.lookup(r.ShardID)
		if err != nil {
			return nil, nil, err
		}
		if m.doc.Shards[n].State == xstream.ShardExpired {
			return nil, nil, errorf(xstream.ErrShardExpired, "record %s of shard %s: the shard is EXPIRED", r.SequenceNumber, r.ShardID)
		}
		if _, ok := ids[n]; !ok {
			order = append(order, n)
		}
		ids[n] = append(ids[n], r.SequenceNumber.String())
	}
	return ids, order, nil
}

// refsOf checks group and groups refs by shard.
func (s *Sharded) refsOf(ctx context.Context, group string, refs []xstream.RecordRef) (map[int][]string, []int, error) {
	if _, err := s.group(ctx, group); err != nil {
		return nil, nil, err
	}
	m, err := s.settled(ctx)
	if err != nil {
		return nil, nil, err
	}
	return byShard(m, refs)
}

// Ack acknowledges records of group and returns how many were pending.
// It fails, changing nothing, with ErrNoGroup, ErrShardNotFound or
// ErrShardExpired. One XACK per shard named (sent again after a lost
// reply, and followed by WAIT with WithReplicaWait: see Engine.Ack; an
// ErrNotReplicated of one shard is returned once every shard is acked).
func (s *Sharded) Ack(ctx context.Context, group string, refs ...xstream.RecordRef) (int64, error) {
	ids, order, err := s.refsOf(ctx, group, refs)
	if err != nil {
		return 0, err
	}
	var total int64
	var notReplicated error // the first; the other shards are acked still
	for _, n := range order {
		k, err := s.e.Ack(ctx, s.streamKey(n), group, ids[n]...)
		if errors.Is(err, ErrNotReplicated) {
			notReplicated = cmp.Or(notReplicated, err)
		} else if err != nil && !errors.Is(err, xstream.ErrNoGroup) {
			return total, err
		}
		total += k
	}
	return total, notReplicated
}

// Pending returns the pending summary of group on every live shard with
// pending records, by shard ID. It fails with ErrNoGroup. One XPENDING
// per live shard.
func (s *Sharded) Pending(ctx context.Context, group string) ([]xstream.ShardPending, error) {
	if _, err := s.group(ctx, group); err != nil {
		return nil, err
	}
	m, err := s.settled(ctx)
	if err != nil {
		return nil, err
	}
	var out []xstream.ShardPending
	for n, sh := range m.doc.Shards {
		if sh.State == xstream.ShardExpired {
			continue
		}
		sum, err := s.e.Pending(ctx, s.streamKey(n), group)
		if errors.Is(err, xstream.ErrNoGroup) {
			continue // not made on this shard yet: nothing delivered
		}
		if err != nil {
			return nil, err
		}
		if sum.Count > 0 {
			out = append(out, xstream.ShardPending{ShardID: shardName(n), PendingSummary: sum})
		}
	}
	return out, nil
}

// Claim gives consumer the records refs names that are pending in group
// and idle for at least minIdle, as XCLAIM does shard by shard. It fails
// with ErrNoGroup, ErrShardNotFound, ErrShardExpired or an error of args.
func (s *Sharded) Claim(ctx context.Context, group, consumer string, minIdle time.Duration, refs []xstream.RecordRef, args xstream.ClaimArgs) ([]xstream.Record, error) {
	ids, order, err := s.refsOf(ctx, group, refs)
	if err != nil {
		return nil, err
	}
	var out []xstream.Record
	for _, n := range order {
		es, err := s.e.Claim(ctx, s.streamKey(n), group, consumer, minIdle, ids[n], args)
		if errors.Is(err, xstream.ErrNoGroup) {
			continue // not made on this shard yet: nothing pending there
		}
		if err != nil {
			return out, err
		}
		out = appendRecords(out, n, es)
	}
	return out, nil
}

// AutoClaim scans the pending records of group from start (the zero
// RecordRef: from the first shard) in shard order and gives consumer
// those idle for at least minIdle, at most args.Count (0: 100), as
// xstream.ShardedStream.AutoClaim does; Next continues the scan. It fails
// with ErrNoGroup or ErrShardNotFound.
func (s *Sharded) AutoClaim(ctx context.Context, group, consumer string, minIdle time.Duration, start xstream.RecordRef, args xstream.AutoClaimArgs) (xstream.ShardAutoClaimResult, error) {
	var res xstream.ShardAutoClaimResult
	if _, err := s.group(ctx, group); err != nil {
		return res, err
	}
	m, err := s.settled(ctx)
	if err != nil {
		return res, err
	}
	first := 0
	if start.ShardID != "" {
		if first, err = m.lookup(start.ShardID); err != nil {
			return res, err
		}
	}
	count := args.Count
	if count == 0 {
		count = 100
	}
	for n, sh := range m.doc.Shards {
		if n < first || sh.State == xstream.ShardExpired {
			continue
		}
		from := xstream.ID{}
		if n == first {
			from = start.SequenceNumber
		}
		for {
			left := count - len(res.Records) - len(res.Deleted)
			if left <= 0 {
				res.Next = xstream.RecordRef{ShardID: shardName(n), SequenceNumber: from}
				return res, nil
			}
			r, err := s.e.AutoClaim(ctx, s.streamKey(n), group, consumer, minIdle, from.String(), xstream.AutoClaimArgs{Count: left, JustID: args.JustID})
			if errors.Is(err, xstream.ErrNoGroup) {
				break // not made on this shard yet: nothing pending
			}
			if err != nil {
				return res, err
			}
			res.Records = appendRecords(res.Records, n, r.Entries)
			for _, id := range r.Deleted {
				res.Deleted = append(res.Deleted, xstream.RecordRef{ShardID: shardName(n), SequenceNumber: id})
			}
			if r.Next.IsZero() {
				break
			}
			from = r.Next
		}
	}
	return res, nil
}
