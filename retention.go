package xstream

import "github.com/xstreamgo/xstream/internal/store"

// expireEvery is how often, in ms of record time, Put runs a retention
// pass; reads and listings run one whenever the clock has moved.
const expireEvery = 1000

// expire applies the retention period at time now (ms): it drops the
// records older than now - retention from every shard and marks EXPIRED
// the closed shards whose records are all past it. With force it runs even
// if the clock has not moved since the last pass. Cost: O(live shards) plus
// the blocks dropped.
func (ss *ShardedStream) expire(now int64, force bool) {
	ss.expMu.Lock()
	defer ss.expMu.Unlock()
	if now <= ss.lastExpire && !force {
		return
	}
	ss.lastExpire = max(ss.lastExpire, now)
	ss.nextExpire.Store(now + expireEvery)

	var expiring []*shard
	ss.mu.RLock()
	cutoff := now - ss.retention.Milliseconds()
	if cutoff > 0 {
		for _, sh := range ss.live {
			sh.dropBefore(uint64(cutoff))
			if sh.state == ShardClosed && max(int64(sh.endSeq.Ms), sh.closed) < cutoff {
				expiring = append(expiring, sh)
			}
		}
	}
	ss.mu.RUnlock()
	if len(expiring) == 0 {
		return
	}
	ss.mu.Lock()
	ss.expireShardsLocked(expiring)
	ss.unlock()
	ss.wakeReaders()
}

// expireNow runs a retention pass at the clock's time and returns it.
func (ss *ShardedStream) expireNow() int64 {
	now := ss.nowMs()
	ss.expire(now, false)
	return now
}

// dropBefore drops the shard's records whose time (ID ms) is before
// cutoff and remembers the greatest ID dropped.
func (sh *shard) dropBefore(cutoff uint64) {
	s := sh.s
	s.mu.Lock()
	defer s.unlock()
	if s.st.Len() == 0 || ID(s.st.FirstID()).Ms >= cutoff {
		return
	}
	s.walkLocked(ID{}, ID{cutoff - 1, ^uint64(0)}, true, func(_ *store.Block, id sID, _ byte, _ int) bool {
		if sh.trimmed.Less(ID(id)) {
			sh.setTrimmedLocked(ID(id))
		}
		return false
	})
	s.trimLocked(&trimSpec{TrimSpec: store.TrimSpec{ByMinID: true, MinID: store.ID{Ms: cutoff}}, strategy: TrimMinID})
}
