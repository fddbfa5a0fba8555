package xredis

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/rueidis"
	"github.com/xstreamgo/xstream"
)

// shardReader is the parent-before-child reader of a Sharded: it reads a
// shard only once its parents were read to their end (EXPIRED parents do
// not hold it back), so that the records of each partition key come in
// the order they were put, across reshards made by any process. Its
// position is on the client side (Checkpoints); it can be stored in Redis
// with SaveCheckpoints.
type shardReader struct {
	s    *Sharded
	mu   sync.Mutex
	pos  map[int]xstream.ID // last sequence number delivered, by shard
	done map[int]bool       // read to the end of a CLOSED shard
	rr   int
}

// NewReader returns a reader of the whole stream that starts from the
// given checkpoints (as Checkpoints returns them) and reads every other
// shard from its trim horizon. It fails, changing nothing, with
// ErrShardNotFound (a checkpoint of an unknown shard) or
// ErrInvalidArgument (two checkpoints of one shard, a sequence number
// beyond its shard's last, or ShardEnd for an OPEN shard). Checkpoints of
// EXPIRED shards have no effect. One round trip for the map and one per
// node for the checkpoints' shards.
func (s *Sharded) NewReader(ctx context.Context, from ...xstream.Checkpoint) (xstream.RecordReader, error) {
	m, err := s.settled(ctx)
	if err != nil {
		return nil, err
	}
	r := &shardReader{s: s, pos: map[int]xstream.ID{}, done: map[int]bool{}}
	nums := make([]int, len(from))
	execs := make([]rueidis.LuaExec, len(from))
	for i, cp := range from {
		n, err := m.lookup(cp.ShardID)
		if err != nil {
			return nil, err
		}
		if _, dup := r.pos[n]; dup {
			return nil, errorf(xstream.ErrInvalidArgument, "two checkpoints of shard %s", cp.ShardID)
		}
		if cp.ShardEnd && m.doc.Shards[n].State == xstream.ShardOpen {
			return nil, errorf(xstream.ErrInvalidArgument, "checkpoint of shard %s says ShardEnd, but the shard is OPEN", cp.ShardID)
		}
		r.pos[n], nums[i] = cp.SequenceNumber, n
		execs[i] = s.boundsExec(n)
	}
	if len(execs) > 0 {
		for i, res := range boundsScript.ExecMulti(ctx, s.c, execs...) {
			last, _, err := boundsOf(res)
			if err != nil {
				return nil, err
			}
			if cp := from[i]; last.Less(cp.SequenceNumber) {
				return nil, errorf(xstream.ErrInvalidArgument, "checkpoint %s of shard %s is beyond its last sequence number %s", cp.SequenceNumber, cp.ShardID, last)
			}
			r.done[nums[i]] = from[i].ShardEnd
		}
	}
	return r, nil
}

// finished reports whether shard p (-1: none) no longer holds back its
// children.
func (r *shardReader) finished(m *shardMap, p int) bool {
	return p < 0 || r.done[p] || m.doc.Shards[p].State == xstream.ShardExpired
}

// eligible lists the shards the reader may read now.
func (r *shardReader) eligible(m *shardMap) []int {
	var out []int
	for n, sh := range m.doc.Shards {
		if sh.State != xstream.ShardExpired && !r.done[n] && r.finished(m, sh.Parent) && r.finished(m, sh.Adjacent) {
			out = append(out, n)
		}
	}
	return out
}

// pass reads up to count records (0: no cap) without waiting, shard by
// shard among the eligible ones, starting at a different one each time.
func (r *shardReader) pass(ctx context.Context, m *shardMap, count int) ([]xstream.Record, error) {
	if count == 0 {
		count = math.MaxInt
	}
	var out []xstream.Record
	for len(out) < count {
		elig := r.eligible(m)
		if len(elig) == 0 {
			break
		}
		per := max(1, (count-len(out))/len(elig))
		if count == math.MaxInt {
			per = 0 // no cap
		}
		start := r.rr % len(elig)
		r.rr++
		progress, more := false, false
		for k := range elig {
			if len(out) >= count {
				break
			}
			n := elig[(start+k)%len(elig)]
			from, _ := r.pos[n].Next()
			limit := per
			if per > 0 {
				limit = min(per, count-len(out))
			}
			recs, rd, err := r.s.readShard(ctx, n, from, limit)
			if err != nil {
				return out, err
			}
			closed, left := rd.closed, rd.more
			if len(recs) > 0 {
				out = append(out, recs...)
				r.pos[n] = recs[len(recs)-1].SequenceNumber
			}
			if left {
				more = true
			} else if closed {
				r.done[n] = true
				progress = true
			}
		}
		if progress {
			// A child's parents may all be done: its map must be known.
			var err error
			if m, err = r.s.settled(ctx); err != nil {
				return out, err
			}
		}
		if !progress && !more {
			break
		}
	}
	return out, nil
}

// Read returns the next records, at most args.Count (0: no cap). When
// none is waiting and args.Block is not 0, it waits (blocking reads on
// the eligible shards' streams and on the stream's events, which every
// reshard adds to) for a put or a reshard, for args.Block to pass (then
// it returns no records and no error) or for ctx to be done (then it
// returns ctx.Err()). Concurrent Reads deliver each record once.
func (r *shardReader) Read(ctx context.Context, args xstream.ReadArgs) ([]xstream.Record, error) {
	if args.Count < 0 {
		return nil, errorf(xstream.ErrInvalidArgument, "count must be >= 0, got %d", args.Count)
	}
	var deadline time.Time
	if args.Block > 0 {
		deadline = time.Now().Add(args.Block)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.s
	for {
		// The events stream's last ID, before the map is read: a reshard
		// published after it wakes the wait below.
		ev, err := s.c.Do(ctx, s.c.B().Arbitrary("XREVRANGE").Keys(s.events).Args("+", "-", "COUNT", "1").ReadOnly()).ToMessage()
		if err != nil {
			return nil, mapErr(err)
		}
		evID := "0-0"
		if es, err := entries(&ev); err == nil && len(es) > 0 {
			evID = es[0].ID.String()
		}
		s.maybeExpire(ctx)
		m, err := s.settled(ctx)
		if err != nil {
			return nil, err
		}
		recs, err := r.pass(ctx, m, args.Count)
		if len(recs) > 0 || err != nil || args.Block == 0 {
			return recs, err
		}
		block := xstream.BlockForever
		if !deadline.IsZero() {
			if block = time.Until(deadline); block <= 0 {
				return nil, nil
			}
		}
		streams := []string{s.events, evID}
		for _, n := range r.eligible(m) {
			streams = append(streams, s.streamKey(n), r.pos[n].String())
		}
		if _, err := s.e.Read(ctx, xstream.ReadArgs{Count: 1, Block: block}, streams...); err != nil {
			return nil, err
		}
	}
}

// Checkpoints returns the reader's position in every shard that is not
// EXPIRED in the map it last read, by shard ID.
func (r *shardReader) Checkpoints() []xstream.Checkpoint {
	r.mu.Lock()
	defer r.mu.Unlock()
	m := r.s.cached.Load()
	if m == nil {
		return nil
	}
	out := make([]xstream.Checkpoint, 0, len(m.doc.Shards))
	for n, sh := range m.doc.Shards {
		if sh.State != xstream.ShardExpired {
			out = append(out, xstream.Checkpoint{ShardID: shardName(n), SequenceNumber: r.pos[n], ShardEnd: r.done[n]})
		}
	}
	return out
}

// checkpointsKey is the hash of application app's checkpoints, in the
// slot of the stream's metadata.
func (s *Sharded) checkpointsKey(app string) string { return "xs:{" + s.name + "}:checkpoints:" + app }

// SaveCheckpoints stores cps (as a reader's Checkpoints returns them) in
// Redis as application app's position, so that a reader of another
// process (or of this one, after a crash) resumes from it with
// LoadCheckpoints and NewReader. It replaces the checkpoints of the
// shards it names and keeps the others. It fails with ErrInvalidArgument
// for an empty app or checkpoints of a malformed shard ID. One round
// trip. A save is idempotent: during a failover it is sent again until
// it is answered or ctx ends; with WithReplicaWait, a save too few
// replicas confirmed fails with ErrNotReplicated (it was made on the
// master; saving again is safe).
func (s *Sharded) SaveCheckpoints(ctx context.Context, app string, cps []xstream.Checkpoint) error {
	if app == "" {
		return errorf(xstream.ErrInvalidArgument, "SaveCheckpoints: the application name is empty")
	}
	if len(cps) == 0 {
		return nil
	}
	cmd := s.c.B().Hset().Key(s.checkpointsKey(app)).FieldValue()
	for _, cp := range cps {
		if _, ok := parseShardID(cp.ShardID); !ok {
			return errorf(xstream.ErrInvalidArgument, "SaveCheckpoints: %q is not a shard ID", cp.ShardID)
		}
		v := cp.SequenceNumber.String()
		if cp.ShardEnd {
			v += "/end"
		}
		cmd = cmd.FieldValue(cp.ShardID, v)
	}
	// Saving twice is saving once: the engine may send it again after a
	// lost reply.
	res, werr := s.c.write1(ctx, cmd.Build().ToRetryable())
	if err := mapErr(res.Error()); err != nil {
		return err
	}
	return werr
}

// LoadCheckpoints returns application app's checkpoints as
// SaveCheckpoints stored them, by shard ID (none when it saved none).
// One round trip.
func (s *Sharded) LoadCheckpoints(ctx context.Context, app string) ([]xstream.Checkpoint, error) {
	kv, err := s.c.Do(ctx, s.c.B().Hgetall().Key(s.checkpointsKey(app)).Build()).AsStrMap()
	if err != nil {
		return nil, mapErr(err)
	}
	out := make([]xstream.Checkpoint, 0, len(kv))
	for id, v := range kv {
		seq, end := strings.CutSuffix(v, "/end")
		sn, err := xstream.ParseID(seq)
		if err != nil {
			return nil, fmt.Errorf("%w: checkpoint %q of shard %s: %v", errReply, v, id, err)
		}
		out = append(out, xstream.Checkpoint{ShardID: id, SequenceNumber: sn, ShardEnd: end})
	}
	slices.SortFunc(out, func(a, b xstream.Checkpoint) int { return strings.Compare(a.ShardID, b.ShardID) })
	return out, nil
}
