package xstream

import "sort"

// beginReshard marks the stream UPDATING; it fails with ErrResourceInUse
// when a reshard is already in progress.
func (ss *ShardedStream) beginReshard(op string) error {
	if !ss.updating.CompareAndSwap(false, true) {
		return errorf(ErrResourceInUse, "%s: the stream is UPDATING (a reshard is in progress)", op)
	}
	return nil
}

func (ss *ShardedStream) endReshard() {
	ss.updating.Store(false)
	ss.wakeReaders()
}

// SplitShard splits the OPEN shard shardID at newStartingHashKey (decimal):
// the shard becomes CLOSED, with its last sequence number as ending
// sequence number, and two OPEN children take [start, key-1] and [key,
// end], the lower one created first. Both have the shard as
// ParentShardId. The shard's records stay where they are: a split costs
// O(open shards), nothing per record, and is atomic with respect to Put.
//
// As Kinesis does, newStartingHashKey must be both greater than one plus
// the shard's StartingHashKey and less than its EndingHashKey, so that
// each child gets at least two hash keys.
//
// SplitShard fails, changing nothing, with ErrShardNotFound,
// ErrShardClosed, ErrShardExpired, ErrInvalidHashKey, ErrInvalidArgument
// (a key outside those bounds; the message names the key and both ends of
// the shard's range), or ErrResourceInUse (another reshard in progress).
func (ss *ShardedStream) SplitShard(shardID, newStartingHashKey string) (err error) {
	if err = ss.cfg.gate.write(); err != nil {
		return
	}
	defer ss.settleErr(&err)
	key, err := ParseHashKey(newStartingHashKey)
	if err != nil {
		return err
	}
	if err := ss.beginReshard("SplitShard"); err != nil {
		return err
	}
	defer ss.endReshard()
	now := ss.expireNow()
	ss.mu.Lock()
	defer ss.unlock()
	sh, err := ss.openShardLocked(shardID)
	if err != nil {
		return err
	}
	if !splitKeyOK(sh.keys, key) {
		return errorf(ErrInvalidArgument,
			"NewStartingHashKey %s used in SplitShard on shard %s is not both greater than one plus the shard's StartingHashKey %s and less than the shard's EndingHashKey %s",
			key, shardID, sh.keys.StartingHashKey, sh.keys.EndingHashKey)
	}
	ss.splitLocked(sh, key, now)
	return nil
}

// MergeShards merges two OPEN shards with adjacent hash key ranges: both
// become CLOSED and one OPEN child covers their union, with shardID as
// ParentShardId and adjacentShardID as AdjacentParentShardId. As in
// Kinesis, shardID (ShardToMerge) must be the lower of the two: the range
// of adjacentShardID starts right after its EndingHashKey. It costs
// O(open shards), nothing per record, and is atomic with respect to Put.
//
// MergeShards fails, changing nothing, with ErrShardNotFound,
// ErrShardClosed, ErrShardExpired, ErrInvalidArgument (the same shard
// twice, ranges that are not adjacent, or adjacency inverted: shardID's
// range lies above adjacentShardID's; the message names both shards and
// their ranges), or ErrResourceInUse.
func (ss *ShardedStream) MergeShards(shardID, adjacentShardID string) (err error) {
	if err = ss.cfg.gate.write(); err != nil {
		return
	}
	defer ss.settleErr(&err)
	if err := ss.beginReshard("MergeShards"); err != nil {
		return err
	}
	defer ss.endReshard()
	now := ss.expireNow()
	ss.mu.Lock()
	defer ss.unlock()
	a, err := ss.openShardLocked(shardID)
	if err != nil {
		return err
	}
	b, err := ss.openShardLocked(adjacentShardID)
	if err != nil {
		return err
	}
	if a == b {
		return errorf(ErrInvalidArgument, "cannot merge shard %s with itself", shardID)
	}
	switch {
	case adjacent(b, a):
		return errorf(ErrInvalidArgument,
			"shards %s (%s) and %s (%s) are not an adjacent pair eligible for merging: adjacency is inverted (the shard to merge must be the lower one; swap the two)",
			shardID, a.keys, adjacentShardID, b.keys)
	case !adjacent(a, b):
		return errorf(ErrInvalidArgument, "shards %s (%s) and %s (%s) are not adjacent",
			shardID, a.keys, adjacentShardID, b.keys)
	}
	ss.mergeLocked(a, b, now)
	return nil
}

// splitKeyOK reports whether key may split r: start+1 < key < end.
func splitKeyOK(r HashKeyRange, key HashKey) bool {
	return r.StartingHashKey.Less(key) && key.sub(r.StartingHashKey) != (HashKey{0, 1}) && key.Less(r.EndingHashKey)
}

// adjacent reports whether b's range starts right after a's.
func adjacent(a, b *shard) bool {
	return a.keys.EndingHashKey != MaxHashKey() && a.keys.EndingHashKey.add(HashKey{0, 1}) == b.keys.StartingHashKey
}

// openShardLocked returns the OPEN shard called id.
func (ss *ShardedStream) openShardLocked(id string) (*shard, error) {
	sh, err := ss.lookupLocked(id)
	if err != nil {
		return nil, err
	}
	switch sh.state {
	case ShardClosed:
		return nil, errorf(ErrShardClosed, "shard %s is CLOSED (ending sequence number %s); only OPEN shards can be resharded", id, sh.endSeq)
	case ShardExpired:
		return nil, errorf(ErrShardExpired, "shard %s is EXPIRED", id)
	}
	return sh, nil
}

// openIndexLocked returns the position of an OPEN shard in ss.open.
func (ss *ShardedStream) openIndexLocked(sh *shard) int {
	return sort.Search(len(ss.open), func(i int) bool {
		return !ss.open[i].keys.StartingHashKey.Less(sh.keys.StartingHashKey)
	})
}

// splitLocked splits sh at key (start+1 < key < end).
func (ss *ShardedStream) splitLocked(sh *shard, key HashKey, now int64) (lo, hi *shard) {
	i := ss.closeShardLocked(sh, now)
	lo = ss.createShardLocked(HashKeyRange{sh.keys.StartingHashKey, key.sub(HashKey{0, 1})}, sh, nil, now, i)
	hi = ss.createShardLocked(HashKeyRange{key, sh.keys.EndingHashKey}, sh, nil, now, i+1)
	ss.reshardedLocked()
	return lo, hi
}

// mergeLocked merges the adjacent OPEN shards a and b, b's range right
// above a's.
func (ss *ShardedStream) mergeLocked(a, b *shard, now int64) *shard {
	i := ss.closeShardLocked(a, now)
	ss.closeShardLocked(b, now)
	child := ss.createShardLocked(HashKeyRange{a.keys.StartingHashKey, b.keys.EndingHashKey}, a, b, now, i)
	ss.reshardedLocked()
	return child
}

// UpdateShardCount rescales the stream to target OPEN shards of (near)
// equal width, as Kinesis's UNIFORM_SCALING does, by real splits and
// merges so that the lineage stays readable: first it splits the open
// shards at the new boundaries, then it merges the pieces between them.
// The stream is UPDATING meanwhile; Puts and reads go on between the
// steps. target must lie within [open/2, open*2] (rounded up and down).
//
// UpdateShardCount fails, changing nothing, with ErrInvalidArgument (a
// target out of bounds) or ErrResourceInUse. It costs O(steps × open
// shards), nothing per record.
func (ss *ShardedStream) UpdateShardCount(target int) (err error) {
	if err = ss.cfg.gate.write(); err != nil {
		return
	}
	defer ss.settleErr(&err)
	if err := ss.beginReshard("UpdateShardCount"); err != nil {
		return err
	}
	defer ss.endReshard()
	ss.mu.RLock()
	cur := len(ss.open)
	ss.mu.RUnlock()
	if target < 1 || target < (cur+1)/2 || target > 2*cur {
		return errorf(ErrInvalidArgument, "target shard count %d is outside [%d, %d] for %d open shards",
			target, (cur+1)/2, 2*cur, cur)
	}
	w := uniformWidth(uint64(target))
	// A current boundary this close to a target one is kept: the result
	// differs from exact widths by at most this much.
	tol := HashKey{0, 1 << 32}
	bounds := make([]HashKey, 0, target+1) // starting keys, then the end
	bounds = append(bounds, HashKey{})
	for i := 1; i < target; i++ {
		k := w.mul(uint64(i))
		ss.step(func(now int64) {
			sh := ss.routeLocked(k)
			start, next := sh.keys.StartingHashKey, sh.keys.EndingHashKey.add(HashKey{0, 1})
			switch {
			case k.sub(start).Less(tol) || k == start:
				k = start
			case sh.keys.EndingHashKey != MaxHashKey() && next.sub(k).Less(tol):
				k = next
			default:
				ss.splitLocked(sh, k, now)
			}
		})
		bounds = append(bounds, k)
	}
	for i, k := range bounds {
		for {
			merged := false
			ss.step(func(now int64) {
				sh := ss.routeLocked(k)
				if sh.keys.EndingHashKey == MaxHashKey() {
					return
				}
				next := sh.keys.EndingHashKey.add(HashKey{0, 1})
				if i+1 < len(bounds) && !next.Less(bounds[i+1]) {
					return
				}
				ss.mergeLocked(sh, ss.routeLocked(next), now)
				merged = true
			})
			if !merged {
				break
			}
		}
	}
	return nil
}

// step runs one reshard step under the write lock.
func (ss *ShardedStream) step(fn func(now int64)) {
	now := ss.expireNow()
	ss.mu.Lock()
	fn(now)
	ss.unlock()
	ss.wakeReaders()
	if ss.stepHook != nil {
		ss.stepHook()
	}
}
