package xstream

import "sync/atomic"

// Counters of what a stream did, for monitoring: kept by the operations
// (ops.go, groupops.go) under the stream's write lock they already hold,
// but for reads, counted with one atomic add per call. They count since
// the stream was made in this process: a durable DB's replay of its log
// at Open does not count.

// counters are a stream's; the write-lock ones are guarded by s.mu.
type counters struct {
	added, delivered, acked, claimed, deadLettered, trimmed, deleted int64
	read                                                             atomic.Int64
}

// StreamStats is a snapshot of a stream's counters and sizes (see
// Stream.Stats).
type StreamStats struct {
	Added        int64 // entries added
	Read         int64 // entries returned by Range, RevRange, Read and Scan
	Delivered    int64 // deliveries to consumer groups (new entries and history reads)
	Acked        int64 // pending entries acknowledged
	Claimed      int64 // pending entries claimed (Claim, AutoClaim)
	DeadLettered int64 // pending entries moved to a dead-letter stream by a group's policy
	Trimmed      int64 // entries removed by trims
	Deleted      int64 // entries removed by Delete
	Length       int64 // entries in the stream
	Pending      int64 // pending entries of all its groups
	Bytes        int64 // memory of its storage blocks, estimated from their allocated sizes
	Blocked      int   // calls blocked waiting for its entries
}

// Stats returns the stream's counters and sizes. It takes the read lock;
// O(groups + storage blocks), about N/100 blocks for N entries.
func (s *Stream) Stats() StreamStats {
	s.mu.RLock()
	defer s.runlock()
	st := StreamStats{
		Added: s.ctr.added, Read: s.ctr.read.Load(), Delivered: s.ctr.delivered, Acked: s.ctr.acked,
		Claimed: s.ctr.claimed, DeadLettered: s.ctr.deadLettered, Trimmed: s.ctr.trimmed, Deleted: s.ctr.deleted,
		Length: s.st.Len(), Bytes: s.st.MemoryBytes(), Blocked: len(s.waiters.ws) + len(s.gwaiters),
	}
	s.eachGroupLocked(func(g *group) { st.Pending += int64(g.pel.Len()) })
	return st
}

// resetCountersLocked zeroes the counters: after a replay.
func (s *Stream) resetCountersLocked() {
	s.ctr.added, s.ctr.delivered, s.ctr.acked, s.ctr.claimed = 0, 0, 0, 0
	s.ctr.deadLettered, s.ctr.trimmed, s.ctr.deleted = 0, 0, 0
	s.ctr.read.Store(0)
}

// Stats sums the Stats of the DB's streams (not its sharded streams).
// O(streams × (groups + blocks)).
func (db *DB) Stats() StreamStats {
	var sum StreamStats
	for _, s := range db.allStreams() {
		st := s.Stats()
		sum.Added += st.Added
		sum.Read += st.Read
		sum.Delivered += st.Delivered
		sum.Acked += st.Acked
		sum.Claimed += st.Claimed
		sum.DeadLettered += st.DeadLettered
		sum.Trimmed += st.Trimmed
		sum.Deleted += st.Deleted
		sum.Length += st.Length
		sum.Pending += st.Pending
		sum.Bytes += st.Bytes
		sum.Blocked += st.Blocked
	}
	return sum
}

// allStreams returns the DB's streams.
func (db *DB) allStreams() []*Stream {
	db.mu.RLock()
	defer db.mu.RUnlock()
	all := make([]*Stream, 0, db.streams.Len())
	db.streams.Walk(func(_ string, v any) bool {
		all = append(all, v.(*Stream))
		return false
	})
	return all
}
