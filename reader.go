package xstream

import (
	"context"
	"math"
	"sync"
)

// Checkpoint is a reader's position in one shard: the sequence number of
// the last record it delivered (zero: none yet, it starts at the trim
// horizon), or ShardEnd once the CLOSED shard has been read to its end.
// It plays the role of a KCL lease table entry.
type Checkpoint struct {
	ShardID        string
	SequenceNumber ID
	ShardEnd       bool
}

// ShardReader reads a whole sharded stream so that, for every partition
// key, records come in the order they were put, across any number of
// splits, merges and rescalings: it reads a child shard only after all its
// parents were read to their end (EXPIRED parents do not hold it back),
// and it spreads each read over the shards it may read. As a parent is
// read to its end only after its own parents, a child waits for every
// ancestor, also through a CLOSED shard that never had a record. It is
// safe for concurrent use; concurrent Reads deliver each record once, but
// the order of a key holds across the results of one goroutine's
// successive Reads, not across Reads handled by different goroutines.
type ShardReader struct {
	ss *ShardedStream

	mu     sync.Mutex
	pos    []ID   // by shard number: last sequence number delivered
	done   []bool // by shard number: read to its end
	epoch  uint64
	active []*shard // live shards not done, by number
	elig   []*shard
	parts  []shardCount
	rr     int
}

// NewReader returns a reader of the stream that starts from the given
// checkpoints (as returned by ShardReader.Checkpoints) and reads every
// other shard from its trim horizon. It fails, changing nothing, with
// ErrShardNotFound (a checkpoint of an unknown shard) or
// ErrInvalidArgument (two checkpoints of one shard, a sequence number
// beyond its shard's last, or ShardEnd for an OPEN shard). Checkpoints of EXPIRED shards are accepted and
// have no effect. O(shards + checkpoints).
func (ss *ShardedStream) NewReader(from ...Checkpoint) (*ShardReader, error) {
	if err := ss.cfg.gate.read(); err != nil {
		return nil, err
	}
	ss.mu.RLock()
	defer ss.mu.RUnlock()
	r := &ShardReader{ss: ss, epoch: ^ss.epoch}
	r.growLocked()
	seen := make(map[int]bool, len(from))
	for _, cp := range from {
		sh, err := ss.lookupLocked(cp.ShardID)
		if err != nil {
			return nil, err
		}
		if seen[sh.num] {
			return nil, errorf(ErrInvalidArgument, "two checkpoints of shard %s", cp.ShardID)
		}
		seen[sh.num] = true
		sh.s.mu.RLock()
		last := ID(sh.s.st.LastID())
		sh.s.mu.RUnlock()
		if last.Less(cp.SequenceNumber) {
			return nil, errorf(ErrInvalidArgument, "checkpoint %s of shard %s is beyond its last sequence number %s", cp.SequenceNumber, cp.ShardID, last)
		}
		if cp.ShardEnd && sh.state == ShardOpen {
			return nil, errorf(ErrInvalidArgument, "checkpoint of shard %s says ShardEnd, but the shard is OPEN", cp.ShardID)
		}
		r.pos[sh.num], r.done[sh.num] = cp.SequenceNumber, cp.ShardEnd
	}
	r.rebuildLocked() // drop the shards the checkpoints finished
	return r, nil
}

// growLocked sizes the per-shard state for every shard made so far and
// rebuilds the active list after a reshard or expiry. The caller holds
// r.mu and ss.mu.
func (r *ShardReader) growLocked() {
	ss := r.ss
	for len(r.pos) < len(ss.shards) {
		r.pos = append(r.pos, ID{})
		r.done = append(r.done, false)
	}
	if r.epoch == ss.epoch {
		return
	}
	r.epoch = ss.epoch
	r.rebuildLocked()
}

func (r *ShardReader) rebuildLocked() {
	r.active = r.active[:0]
	for _, sh := range r.ss.live {
		if !r.done[sh.num] {
			r.active = append(r.active, sh)
		}
	}
}

// finishedLocked reports whether p no longer holds back its children.
func (r *ShardReader) finishedLocked(p *shard) bool {
	return p == nil || r.done[p.num] || p.state == ShardExpired
}

// eligibleLocked lists the active shards whose parents are finished.
func (r *ShardReader) eligibleLocked() []*shard {
	r.elig = r.elig[:0]
	for _, sh := range r.active {
		if sh.state != ShardExpired && r.finishedLocked(sh.parent) && r.finishedLocked(sh.adjacent) {
			r.elig = append(r.elig, sh)
		}
	}
	return r.elig
}

// passLocked reads up to count records (0: no cap) without waiting. The
// caller holds r.mu and ss.mu (read).
func (r *ShardReader) passLocked(count int) []Record {
	r.growLocked()
	if count == 0 {
		count = math.MaxInt
	}
	c := getCollector()
	defer putCollector(c)
	parts := r.parts[:0]
	got := 0
	for got < count {
		elig := r.eligibleLocked()
		if len(elig) == 0 {
			break
		}
		per := max(1, (count-got)/len(elig))
		start := r.rr % len(elig)
		r.rr++
		progress, more := false, false
		for k := range elig {
			if got >= count {
				break
			}
			sh := elig[(start+k)%len(elig)]
			from, _ := r.pos[sh.num].Next()
			rd := sh.collect(c, from, false, min(per, count-got))
			if rd.n > 0 {
				got += rd.n
				r.pos[sh.num] = c.IDs[len(c.IDs)-1]
				parts = append(parts, shardCount{sh, rd.n})
			}
			if rd.more {
				more = true
			} else if sh.state != ShardOpen {
				r.done[sh.num] = true
				progress = true
			}
		}
		if progress {
			r.rebuildLocked()
		}
		if !progress && !more {
			break
		}
	}
	out := c.records(parts)
	clear(parts)
	r.parts = parts[:0]
	return out
}

// Read returns the next records, at most args.Count (0: no cap). When none
// is waiting and args.Block is not 0, it waits for a Put or a reshard, for
// args.Block to pass (then it returns no records and no error) or for ctx
// to be done (then it returns ctx.Err()). It holds no lock while waiting
// and leaves no goroutine behind. Reading is O(log N) per shard to find
// the position, then O(1) per record.
func (r *ShardReader) Read(ctx context.Context, args ReadArgs) (result []Record, err error) {
	if err = r.ss.cfg.gate.read(); err != nil {
		return
	}
	defer settleTo(r.ss, &result, &err)
	if err := args.check(); err != nil {
		return nil, err
	}
	ss := r.ss
	return ss.readLoop(ctx, args.Block, func(w *waiter, streams []*Stream) ([]Record, []*Stream, bool, error) {
		r.mu.Lock()
		defer r.mu.Unlock()
		ss.mu.RLock()
		defer ss.mu.RUnlock()
		recs := r.passLocked(args.Count)
		if len(recs) > 0 || w == nil {
			return recs, streams, false, nil
		}
		streams, waiting := ss.registerLocked(w, r.eligibleLocked(), func(sh *shard) bool {
			return sh.s.st.Len() > 0 && r.pos[sh.num].Less(ID(sh.s.st.LastID()))
		}, streams)
		return nil, streams, waiting, nil
	})
}

// Checkpoints returns the reader's position in every shard that is not
// EXPIRED, by shard ID. A new reader made with them continues exactly
// where this one stands. O(shards).
func (r *ShardReader) Checkpoints() []Checkpoint {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.ss.mu.RLock()
	defer r.ss.mu.RUnlock()
	r.growLocked()
	out := make([]Checkpoint, 0, len(r.ss.live))
	for _, sh := range r.ss.live {
		out = append(out, Checkpoint{ShardID: sh.id, SequenceNumber: r.pos[sh.num], ShardEnd: r.done[sh.num]})
	}
	return out
}
