package xstream

import (
	"slices"
	"time"
)

// Sharded stream operations: the one home of every change to the shard
// set of a sharded stream (see ops.go for the streams inside shards). Each
// needs the sharded stream's write lock, except setTrimmedLocked, which
// needs the shard's stream lock.

// createShardLocked makes a shard of the hash keys r at now, with the
// given parents (nil for none), whose sequence numbers start above its
// parents' ends and at now; it becomes OPEN at position at of the open
// list. It gets every group of the stream.
func (ss *ShardedStream) createShardLocked(r HashKeyRange, parent, adjacent *shard, now int64, at int) *shard {
	start := ID{uint64(max(now, 0)), 0}
	for _, p := range []*shard{parent, adjacent} {
		if p != nil && start.Less(p.endSeq) {
			start = p.endSeq
		}
	}
	sh := &shard{
		num: len(ss.shards), id: shardID(len(ss.shards)), keys: r,
		parent: parent, adjacent: adjacent,
		s:        newStream(shardID(len(ss.shards)), ss.cfg),
		startSeq: start, created: now,
	}
	sh.s.setLastLocked(start, -1, ID{})
	for _, p := range []*shard{parent, adjacent} {
		if p != nil {
			p.children = append(p.children, sh)
		}
	}
	ss.shards = append(ss.shards, sh)
	ss.live = append(ss.live, sh)
	ss.open = slices.Insert(ss.open, at, sh)
	ss.addGroupsLocked(sh) // not recorded: a new shard gets the groups on replay too
	if l := ss.log; l != nil {
		obj := l.j.newObj()
		l.shardCreate(sh, obj, at)
		sh.s.log = &objLog{j: l.j, obj: obj, deferred: true}
	}
	return sh
}

// reshardedLocked ends a split or merge: Put routes to the new OPEN
// shards, and readers see a new epoch.
func (ss *ShardedStream) reshardedLocked() {
	if ss.log != nil {
		ss.log.begin(effResharded)
	}
	ss.publishLocked()
	ss.epoch++
}

// closeShardLocked closes the OPEN shard sh at now: Put no longer routes
// to it (sealed, under its stream's lock), its ending sequence number is
// its last ID, and it leaves the open list. It returns its position there.
func (ss *ShardedStream) closeShardLocked(sh *shard, now int64) int {
	sh.s.mu.Lock()
	sh.sealed = true
	sh.endSeq = ID(sh.s.st.LastID())
	sh.s.unlock()
	sh.state = ShardClosed
	sh.closed = now
	if ss.log != nil {
		ss.log.shardClose(sh)
	}
	i := ss.openIndexLocked(sh)
	ss.open = slices.Delete(ss.open, i, i+1)
	return i
}

// expireShardsLocked makes the given CLOSED shards EXPIRED and drops them
// from the live list.
func (ss *ShardedStream) expireShardsLocked(expiring []*shard) {
	if ss.log != nil {
		ss.log.shardsExpire(expiring)
	}
	for _, sh := range expiring {
		sh.state = ShardExpired
	}
	live := ss.live[:0]
	for _, sh := range ss.live {
		if sh.state != ShardExpired {
			live = append(live, sh)
		}
	}
	clear(ss.live[len(live):])
	ss.live = live
	ss.epoch++
}

// setRetentionLocked sets the retention period.
func (ss *ShardedStream) setRetentionLocked(d time.Duration) {
	if ss.log != nil {
		ss.log.retention(d)
	}
	ss.retention = d
}

// createGroupLocked adds the group name to the stream's groups; the
// caller creates it on the shards.
func (ss *ShardedStream) createGroupLocked(name string, strict bool) {
	if ss.log != nil {
		ss.log.shardedGroup(name, strict)
	}
	if ss.groups == nil {
		ss.groups = map[string]*shardGroup{}
	}
	ss.groups[name] = &shardGroup{strict: strict}
}

// setTrimmedLocked records that retention dropped the shard's records up
// to id. The caller holds the shard's stream lock.
func (sh *shard) setTrimmedLocked(id ID) {
	if sh.s.log != nil {
		sh.s.log.idEffect(effShardTrimmed, id)
	}
	sh.trimmed = id
}
