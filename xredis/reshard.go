package xredis

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/redis/rueidis"
	"github.com/xstreamgo/xstream"
)

// Resharding across processes. A reshard (SplitShard, MergeShards,
// UpdateShardCount) first takes the stream's lock in the metadata hash,
// with a deadline: while another holds it, a reshard fails with
// ErrResourceInUse, as in Kinesis; once the deadline has passed (its
// process died), another may take it. Each split or merge is then one
// step made of idempotent parts:
//
//  1. record the step (reshardOp) in the metadata, for the map's epoch;
//  2. close the parents: a script on each parent's slot sets its state
//     CLOSED, which the guard of every put reads, and returns its
//     stream's last ID, read at the same moment, as its ending sequence
//     number;
//  3. create the children: a script on each child's slot makes its state
//     OPEN and its stream with a last ID no smaller than the parents'
//     ending sequence numbers, so that sequence numbers keep growing
//     from parent to child;
//  4. publish the new map at epoch+1, by a compare-and-set on the epoch
//     and the recorded step, which removes the step.
//
// Run again, each part gives what it gave the first time, so any process
// that finds a step recorded can complete it: a reshard that took over a
// dead owner's lock, OpenSharded, the readers of the map, and a Put
// refused by a closed shard while the new map is not yet published.

// reshardOp is a recorded step: the shards it closes and those it makes.
type reshardOp struct {
	Kind     string      `json:"kind"` // create, split, merge
	Epoch    int64       `json:"epoch"`
	Created  int64       `json:"created,omitempty"` // create: the stream's creation (ms)
	Parents  []int       `json:"parents,omitempty"`
	Children []childSpec `json:"children"`
	Expire   []int       `json:"expire,omitempty"` // expire: the shards that expire
}

type childSpec struct {
	N        int             `json:"n"`
	Start    xstream.HashKey `json:"start"`
	End      xstream.HashKey `json:"end"`
	Parent   int             `json:"parent"`
	Adjacent int             `json:"adjacent"`
}

func (op *reshardOp) encode() (string, error) {
	b, err := json.Marshal(op)
	return string(b), err
}

// complete runs the parts of m's recorded step (m is the map the step
// applies to) and publishes its result; it is a no-op for parts done
// before, by this process or another.
func (s *Sharded) complete(ctx context.Context, m *shardMap) error {
	op := m.op1
	now := itoa(s.nowMs())
	doc := mapDoc{Created: m.doc.Created, Shards: append([]shardRec(nil), m.doc.Shards...)}
	if op.Kind == "expire" {
		return s.completeExpire(ctx, m, doc)
	}
	if op.Kind == "create" {
		doc.Created = op.Created
	}
	floor := xstream.ID{}
	if len(op.Parents) > 0 {
		execs := make([]rueidis.LuaExec, len(op.Parents))
		for i, p := range op.Parents {
			if p >= len(doc.Shards) {
				return fmt.Errorf("%w: the reshard step of %q closes shard %d of %d", errReply, s.name, p, len(doc.Shards))
			}
			execs[i] = rueidis.LuaExec{Keys: []string{s.streamKey(p), s.stateKey(p)}, Args: []string{now}}
		}
		for i, r := range closeShardScript.ExecMulti(ctx, s.c, execs...) {
			end, at, err := idAndMs(r)
			if err != nil {
				return fmt.Errorf("xredis: closing %s of %q: %w", shardName(op.Parents[i]), s.name, err)
			}
			sh := &doc.Shards[op.Parents[i]]
			sh.State, sh.EndSeq, sh.Closed = xstream.ShardClosed, end, at
			if floor.Less(end) {
				floor = end
			}
		}
	}
	execs := make([]rueidis.LuaExec, len(op.Children))
	for i, c := range op.Children {
		if c.N != len(doc.Shards)+i {
			return fmt.Errorf("%w: the reshard step of %q makes shard %d after %d shards", errReply, s.name, c.N, len(doc.Shards)+i)
		}
		execs[i] = rueidis.LuaExec{Keys: []string{s.streamKey(c.N), s.stateKey(c.N)}, Args: []string{floor.String(), now}}
	}
	for i, r := range createShardScript.ExecMulti(ctx, s.c, execs...) {
		start, at, err := idAndMs(r)
		if err != nil {
			return fmt.Errorf("xredis: creating %s of %q: %w", shardName(op.Children[i].N), s.name, err)
		}
		c := op.Children[i]
		doc.Shards = append(doc.Shards, shardRec{Start: c.Start, End: c.End, Parent: c.Parent, Adjacent: c.Adjacent,
			State: xstream.ShardOpen, StartSeq: start, Created: at})
	}
	return s.publish(ctx, m, doc)
}

// publish publishes doc as the map that ends m's step.
func (s *Sharded) publish(ctx context.Context, m *shardMap, doc mapDoc) error {
	raw, err := json.Marshal(doc)
	if err != nil {
		return err
	}
	_, err = publishScript.Exec(ctx, s.c, []string{s.metaKey, s.events}, []string{itoa(m.epoch), m.op, string(raw)}).AsInt64()
	return mapErr(err) // 0: another process published it
}

// idAndMs decodes a script's {ID, ms} reply.
func idAndMs(r rueidis.RedisResult) (xstream.ID, int64, error) {
	arr, err := r.ToArray()
	if err != nil {
		return xstream.ID{}, 0, mapErr(err)
	}
	if len(arr) != 2 {
		return xstream.ID{}, 0, badReply("a shard script", &arr[0])
	}
	id, err := idOf(&arr[0])
	if err != nil {
		return xstream.ID{}, 0, err
	}
	ms, err := arr[1].ToString()
	if err != nil {
		return xstream.ID{}, 0, err
	}
	n, err := strconv.ParseInt(ms, 10, 64)
	return id, n, err
}

// stepFunc runs one step on map m and returns the map it publishes.
type stepFunc func(m *shardMap, op reshardOp) (*shardMap, error)

// reshard runs fn holding the stream's reshard lock, with the settled
// map; fn runs its steps with step. It fails with ErrResourceInUse while
// another reshard holds the lock.
func (s *Sharded) reshard(ctx context.Context, what string, fn func(m *shardMap, step stepFunc) error) error {
	owner := s.id + "." + strconv.FormatUint(s.calls.Add(1), 10)
	if err := s.lock(ctx, owner, what); err != nil {
		return err
	}
	defer unlockScript.Exec(context.WithoutCancel(ctx), s.c, []string{s.metaKey}, []string{owner})
	m, err := s.settled(ctx) // a step a dead owner left is completed here
	if err != nil {
		return err
	}
	return fn(m, func(m *shardMap, op reshardOp) (*shardMap, error) { return s.step(ctx, owner, what, m, op) })
}

// lock takes (or renews) the reshard lock for owner.
func (s *Sharded) lock(ctx context.Context, owner, what string) error {
	now := s.nowMs()
	arr, err := lockScript.Exec(ctx, s.c, []string{s.metaKey},
		[]string{owner, itoa(now + s.cfg.lease.Milliseconds()), itoa(now), what}).ToArray()
	if err != nil {
		if strings.HasPrefix(redisText(err), "XSNOSTREAM") {
			return errorf(xstream.ErrNoStream, "no sharded stream %q", s.name)
		}
		return mapErr(err)
	}
	if ok, _ := arr[0].AsInt64(); ok == 0 {
		busy, _ := arr[1].ToString()
		return errorf(xstream.ErrResourceInUse, "%s: the stream %q is UPDATING (%s in progress)", what, s.name, busy)
	}
	return nil
}

// step records op for m's epoch and completes it; it returns the new
// map.
func (s *Sharded) step(ctx context.Context, owner, what string, m *shardMap, op reshardOp) (*shardMap, error) {
	if err := s.lock(ctx, owner, what); err != nil { // renew the deadline
		return nil, err
	}
	op.Epoch = m.epoch
	raw, err := op.encode()
	if err != nil {
		return nil, err
	}
	r, err := setOpScript.Exec(ctx, s.c, []string{s.metaKey}, []string{owner, itoa(m.epoch), raw}).AsInt64()
	if err != nil {
		return nil, mapErr(err)
	}
	if r != 1 {
		return nil, errorf(xstream.ErrResourceInUse, "%s: the stream %q was taken over by another reshard", what, s.name)
	}
	return s.settled(ctx)
}

// openShard returns the number of the OPEN shard called id.
func (m *shardMap) openShard(id string) (int, error) {
	n, err := m.lookup(id)
	if err != nil {
		return 0, err
	}
	switch sh := m.doc.Shards[n]; sh.State {
	case xstream.ShardClosed:
		return 0, errorf(xstream.ErrShardClosed, "shard %s is CLOSED (ending sequence number %s); only OPEN shards can be resharded", id, sh.EndSeq)
	case xstream.ShardExpired:
		return 0, errorf(xstream.ErrShardExpired, "shard %s is EXPIRED", id)
	}
	return n, nil
}

// splitOp is the step that splits shard n at key.
func (m *shardMap) splitOp(n int, key xstream.HashKey) reshardOp {
	sh, next := m.doc.Shards[n], len(m.doc.Shards)
	return reshardOp{Kind: "split", Parents: []int{n}, Children: []childSpec{
		{N: next, Start: sh.Start, End: hkAdd(key, -1), Parent: n, Adjacent: -1},
		{N: next + 1, Start: key, End: sh.End, Parent: n, Adjacent: -1},
	}}
}

// mergeOp is the step that merges shard a with b, whose range comes
// right after a's.
func (m *shardMap) mergeOp(a, b int) reshardOp {
	return reshardOp{Kind: "merge", Parents: []int{a, b}, Children: []childSpec{
		{N: len(m.doc.Shards), Start: m.doc.Shards[a].Start, End: m.doc.Shards[b].End, Parent: a, Adjacent: b},
	}}
}

// SplitShard splits the OPEN shard shardID at newStartingHashKey
// (decimal), as xstream.ShardedStream.SplitShard does: the shard becomes
// CLOSED and two OPEN children take [start, key-1] and [key, end]. It
// moves no record: it costs a few round trips whatever the shard holds.
// A put racing it lands in the shard before its ending sequence number or
// in a child, never in the closed shard.
//
// It fails, changing nothing, with ErrInvalidHashKey, ErrShardNotFound,
// ErrShardClosed, ErrShardExpired, ErrInvalidArgument (a key that would
// leave a child fewer than two hash keys: it must be above start+1 and
// below end) or ErrResourceInUse (another reshard in progress, in any
// process).
func (s *Sharded) SplitShard(ctx context.Context, shardID, newStartingHashKey string) error {
	key, err := xstream.ParseHashKey(newStartingHashKey)
	if err != nil {
		return err
	}
	return s.reshard(ctx, "SplitShard", func(m *shardMap, step stepFunc) error {
		n, err := m.openShard(shardID)
		if err != nil {
			return err
		}
		sh := m.doc.Shards[n]
		if !hkAdd(sh.Start, 1).Less(key) || !key.Less(sh.End) {
			return errorf(xstream.ErrInvalidArgument, "new starting hash key %s must lie above %s+1 and below %s (shard %s's range %s-%s)",
				newStartingHashKey, sh.Start, sh.End, shardID, sh.Start, sh.End)
		}
		_, err = step(m, m.splitOp(n, key))
		return err
	})
}

// MergeShards merges the OPEN shard shardID with adjacentShardID, whose
// hash key range must come right after shardID's: both become CLOSED and
// one OPEN child covers their union, with shardID as ParentShardId and
// adjacentShardID as AdjacentParentShardId. It moves no record.
//
// It fails, changing nothing, with ErrShardNotFound, ErrShardClosed,
// ErrShardExpired, ErrInvalidArgument (the same shard twice, shards that
// are not adjacent, or an adjacent shard whose range comes before
// shardID's) or ErrResourceInUse.
func (s *Sharded) MergeShards(ctx context.Context, shardID, adjacentShardID string) error {
	return s.reshard(ctx, "MergeShards", func(m *shardMap, step stepFunc) error {
		a, err := m.openShard(shardID)
		if err != nil {
			return err
		}
		b, err := m.openShard(adjacentShardID)
		if err != nil {
			return err
		}
		if a == b {
			return errorf(xstream.ErrInvalidArgument, "cannot merge shard %s with itself", shardID)
		}
		ra, rb := m.doc.Shards[a], m.doc.Shards[b]
		if ra.End == xstream.MaxHashKey() || hkAdd(ra.End, 1) != rb.Start {
			return errorf(xstream.ErrInvalidArgument, "shard %s (%s-%s) is not adjacent to shard %s (%s-%s): its range must start right after",
				adjacentShardID, rb.Start, rb.End, shardID, ra.Start, ra.End)
		}
		_, err = step(m, m.mergeOp(a, b))
		return err
	})
}

// UpdateShardCount rescales the stream to target OPEN shards of (near)
// equal width, as xstream.ShardedStream.UpdateShardCount does, by splits
// at the new boundaries and then merges of the pieces between them, each
// a step of its own, under one lock. target must lie within [open/2,
// open*2] (rounded up and down). A process that dies midway leaves the
// stream consistent, at a count between the two: the step in progress is
// completed by the next process that finds it, the rest is not done.
//
// It fails, changing nothing, with ErrInvalidArgument or
// ErrResourceInUse.
func (s *Sharded) UpdateShardCount(ctx context.Context, target int) error {
	return s.reshard(ctx, "UpdateShardCount", func(m *shardMap, step stepFunc) error {
		cur := len(m.open)
		if target < 1 || target < (cur+1)/2 || target > 2*cur {
			return errorf(xstream.ErrInvalidArgument, "target shard count %d is outside [%d, %d] for %d open shards",
				target, (cur+1)/2, 2*cur, cur)
		}
		// A current boundary this close to a target one is kept.
		tol := new(big.Int).Lsh(big.NewInt(1), 32)
		w := new(big.Int).Div(two128, big.NewInt(int64(target)))
		bounds := []*big.Int{new(big.Int)}
		var err error
		for i := 1; i < target; i++ {
			k := new(big.Int).Mul(w, big.NewInt(int64(i)))
			n := m.route(fromBig(k))
			start, end := toBig(m.doc.Shards[n].Start), toBig(m.doc.Shards[n].End)
			next := new(big.Int).Add(end, big.NewInt(1))
			switch {
			case new(big.Int).Sub(k, start).Cmp(tol) < 0:
				k = start
			case next.Cmp(two128) < 0 && new(big.Int).Sub(next, k).Cmp(tol) < 0:
				k = next
			default:
				if m, err = step(m, m.splitOp(n, fromBig(k))); err != nil {
					return err
				}
			}
			bounds = append(bounds, k)
		}
		for i, k := range bounds {
			for {
				n := m.route(fromBig(k))
				end := m.doc.Shards[n].End
				if end == xstream.MaxHashKey() {
					break
				}
				next := hkAdd(end, 1)
				if i+1 < len(bounds) && toBig(next).Cmp(bounds[i+1]) >= 0 {
					break
				}
				if m, err = step(m, m.mergeOp(n, m.route(next))); err != nil {
					return err
				}
			}
		}
		return nil
	})
}
