package xredis

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"sort"
	"strconv"

	"github.com/xstreamgo/xstream"
)

// The shard map: every shard ever made, by number, with its hash key
// range, parents, state and sequence number range, stored as JSON in the
// metadata hash at an epoch that each reshard step increments. Engines
// cache it and route puts by the cached copy; the guard of each put (the
// shard's state key) tells them when it is stale.

// shardRec is one shard of the map.
type shardRec struct {
	Start    xstream.HashKey    `json:"start"`
	End      xstream.HashKey    `json:"end"`
	Parent   int                `json:"parent"`   // -1: made with the stream
	Adjacent int                `json:"adjacent"` // -1: not a merge
	State    xstream.ShardState `json:"state"`
	StartSeq xstream.ID         `json:"startSeq"`
	EndSeq   xstream.ID         `json:"endSeq"`
	Created  int64              `json:"created"` // ms
	Closed   int64              `json:"closed"`  // ms
}

// mapDoc is the JSON of the map.
type mapDoc struct {
	Created int64      `json:"created"` // ms
	Shards  []shardRec `json:"shards"`
}

// shardMap is a decoded map at one epoch, with what the engine derives
// from it; it is never changed once made.
type shardMap struct {
	epoch     int64
	doc       mapDoc
	retention int64      // ms
	op        string     // the step in progress, "" for none
	op1       *reshardOp // op decoded
	lock      lockInfo   // the reshard in progress, if any
	open      []int      // OPEN shards by starting hash key
	children  [][]int    // by shard number
	keys      []string   // the shards' stream keys, by number
	raw       string     // the map's JSON
}

type lockInfo struct {
	owner    string
	deadline int64
	what     string
}

func (m *shardMap) derive() {
	m.children = make([][]int, len(m.doc.Shards))
	m.open = m.open[:0]
	for n, s := range m.doc.Shards {
		if s.State == xstream.ShardOpen {
			m.open = append(m.open, n)
		}
		for _, p := range []int{s.Parent, s.Adjacent} {
			if p >= 0 {
				m.children[p] = append(m.children[p], n)
			}
		}
	}
	sort.Slice(m.open, func(i, j int) bool {
		return m.doc.Shards[m.open[i]].Start.Less(m.doc.Shards[m.open[j]].Start)
	})
}

// route returns the number of the OPEN shard owning h.
func (m *shardMap) route(h xstream.HashKey) int {
	i := sort.Search(len(m.open), func(i int) bool { return !m.doc.Shards[m.open[i]].End.Less(h) })
	if i == len(m.open) {
		i = len(m.open) - 1
	}
	return m.open[i]
}

// lookup returns the number of the shard called id.
func (m *shardMap) lookup(id string) (int, error) {
	if n, ok := parseShardID(id); ok && n < len(m.doc.Shards) {
		return n, nil
	}
	return 0, errorf(xstream.ErrShardNotFound, "%q", id)
}

func shardName(n int) string { return fmt.Sprintf("shardId-%012d", n) }

// parseShardID reads "shardId-" and 12 digits.
func parseShardID(id string) (int, bool) {
	const prefix = "shardId-"
	if len(id) != len(prefix)+12 || id[:len(prefix)] != prefix {
		return 0, false
	}
	for _, c := range id[len(prefix):] {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(id[len(prefix):])
	return n, err == nil
}

func (m *shardMap) info(n int) xstream.ShardInfo {
	s := m.doc.Shards[n]
	in := xstream.ShardInfo{ShardID: shardName(n), HashKeyRange: xstream.HashKeyRange{StartingHashKey: s.Start, EndingHashKey: s.End},
		State: s.State, SequenceNumberRange: xstream.SequenceNumberRange{StartingSequenceNumber: s.StartSeq}}
	if s.Parent >= 0 {
		in.ParentShardID = shardName(s.Parent)
	}
	if s.Adjacent >= 0 {
		in.AdjacentParentShardID = shardName(s.Adjacent)
	}
	if s.State != xstream.ShardOpen {
		in.SequenceNumberRange.EndingSequenceNumber = s.EndSeq
	}
	return in
}

// openAt reports whether shard n was open at t (ms).
func (m *shardMap) openAt(n int, t int64) bool {
	s := m.doc.Shards[n]
	return s.Created <= t && (s.State == xstream.ShardOpen || s.Closed >= t)
}

// childShards describes the children of shard n.
func (m *shardMap) childShards(n int) []xstream.ChildShard {
	out := make([]xstream.ChildShard, 0, len(m.children[n]))
	for _, c := range m.children[n] {
		s := m.doc.Shards[c]
		cs := xstream.ChildShard{ShardID: shardName(c), HashKeyRange: xstream.HashKeyRange{StartingHashKey: s.Start, EndingHashKey: s.End}}
		for _, p := range []int{s.Parent, s.Adjacent} {
			if p >= 0 {
				cs.ParentShards = append(cs.ParentShards, shardName(p))
			}
		}
		out = append(out, cs)
	}
	return out
}

// load reads the metadata hash (one round trip) and returns its map,
// decoding the JSON only when the epoch differs from the cached map's.
// It caches the result. It fails with ErrNoStream when there is no
// metadata hash.
func (s *Sharded) load(ctx context.Context) (*shardMap, error) {
	vals, err := s.c.Do(ctx, s.c.B().Hmget().Key(s.metaKey).
		Field("epoch", "map", "retention", "op", "lockOwner", "lockDeadline", "lockWhat").Build()).ToArray()
	if err != nil {
		return nil, mapErr(err)
	}
	str := func(i int) string { v, _ := vals[i].ToString(); return v }
	if vals[0].IsNil() {
		return nil, errorf(xstream.ErrNoStream, "no sharded stream %q", s.name)
	}
	epoch, err := strconv.ParseInt(str(0), 10, 64)
	if err != nil {
		return nil, badReply("the shard map's epoch", &vals[0])
	}
	m := &shardMap{epoch: epoch, op: str(3)}
	m.retention, _ = strconv.ParseInt(str(2), 10, 64)
	m.lock.owner, m.lock.what = str(4), str(6)
	m.lock.deadline, _ = strconv.ParseInt(str(5), 10, 64)
	if m.op != "" {
		m.op1 = new(reshardOp)
		if err := json.Unmarshal([]byte(m.op), m.op1); err != nil {
			return nil, fmt.Errorf("%w: the reshard step of %q: %v", errReply, s.name, err)
		}
	}
	raw := str(1)
	if old := s.cached.Load(); old != nil && old.epoch == epoch && old.raw == raw {
		m.doc, m.open, m.children, m.raw, m.keys = old.doc, old.open, old.children, old.raw, old.keys
	} else if raw != "" {
		if err := json.Unmarshal([]byte(raw), &m.doc); err != nil {
			return nil, fmt.Errorf("%w: the shard map of %q: %v", errReply, s.name, err)
		}
		m.raw = raw
		m.derive()
		m.keys = make([]string, len(m.doc.Shards))
		for n := range m.keys {
			m.keys[n] = s.streamKey(n)
		}
	}
	s.cached.Store(m)
	return m, nil
}

// settled returns the current map with no step in progress: a step left
// in progress (its owner being slow or dead) is completed first, its
// steps being idempotent.
func (s *Sharded) settled(ctx context.Context) (*shardMap, error) {
	for range 100 {
		m, err := s.load(ctx)
		if err != nil || m.op1 == nil {
			return m, err
		}
		if err := s.complete(ctx, m); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("xredis: sharded stream %q: the shard map keeps changing", s.name)
}

// ListShards describes the shards f selects, by shard ID, as
// xstream.ShardedStream.ListShards does; EXPIRED shards are never
// listed. The trim horizon and the filters' times are on the engine's
// clock (WithShardClock). It reads the metadata (one round trip). It
// fails with ErrInvalidArgument for an unknown filter type or a bad
// FilterAfterShardID shard ID.
func (s *Sharded) ListShards(ctx context.Context, f xstream.ShardFilter) ([]xstream.ShardInfo, error) {
	after := 0
	switch f.Type {
	case xstream.FilterAfterShardID:
		var ok bool
		if after, ok = parseShardID(f.ShardID); !ok {
			return nil, errorf(xstream.ErrInvalidArgument, "AFTER_SHARD_ID: %q is not a shard ID (want shardId-%%012d)", f.ShardID)
		}
	case xstream.FilterFromTrimHorizon, xstream.FilterAtTrimHorizon, xstream.FilterAtLatest,
		xstream.FilterAtTimestamp, xstream.FilterFromTimestamp:
	default:
		return nil, errorf(xstream.ErrInvalidArgument, "unknown shard filter type %d", f.Type)
	}
	s.maybeExpire(ctx)
	m, err := s.settled(ctx)
	if err != nil {
		return nil, err
	}
	now := s.nowMs()
	horizon := max(now-m.retention, m.doc.Created)
	ts := f.Timestamp.UnixMilli()
	var out []xstream.ShardInfo
	for n, sh := range m.doc.Shards {
		if sh.State == xstream.ShardExpired {
			continue
		}
		var ok bool
		switch f.Type {
		case xstream.FilterFromTrimHorizon:
			ok = true
		case xstream.FilterAtTrimHorizon:
			ok = m.openAt(n, horizon)
		case xstream.FilterAtLatest:
			ok = sh.State == xstream.ShardOpen
		case xstream.FilterAfterShardID:
			ok = n > after
		case xstream.FilterAtTimestamp:
			ok = m.openAt(n, ts)
		case xstream.FilterFromTimestamp:
			ok = sh.State == xstream.ShardOpen || sh.Closed >= max(ts, horizon)
		}
		if ok {
			out = append(out, m.info(n))
		}
	}
	return out, nil
}

// Lineage returns every shard ever made with its parents and children.
// It reads the metadata (one round trip).
func (s *Sharded) Lineage(ctx context.Context) (xstream.Lineage, error) {
	s.maybeExpire(ctx)
	m, err := s.settled(ctx)
	if err != nil {
		return xstream.Lineage{}, err
	}
	nodes := make([]*xstream.LineageNode, len(m.doc.Shards))
	for n := range nodes {
		nodes[n] = &xstream.LineageNode{Shard: m.info(n)}
	}
	var l xstream.Lineage
	for n, sh := range m.doc.Shards {
		if sh.Parent < 0 {
			l.Roots = append(l.Roots, nodes[n])
		}
		for _, c := range m.children[n] {
			nodes[n].Children = append(nodes[n].Children, nodes[c])
		}
	}
	return l, nil
}

// Status returns StreamUpdating while a reshard holds the stream's lock
// (until its deadline, for one whose process died) or a reshard step is
// in progress, else StreamActive. It reads the metadata (one round trip).
func (s *Sharded) Status(ctx context.Context) (xstream.StreamStatus, error) {
	m, err := s.load(ctx)
	if err != nil {
		return 0, err
	}
	if m.op != "" || (m.lock.owner != "" && m.lock.deadline > s.nowMs()) {
		return xstream.StreamUpdating, nil
	}
	return xstream.StreamActive, nil
}

// hash key arithmetic, for reshards (not on the put path).

var two128 = new(big.Int).Lsh(big.NewInt(1), 128)

func toBig(h xstream.HashKey) *big.Int {
	b := new(big.Int).SetUint64(h.Hi)
	return b.Lsh(b, 64).Or(b, new(big.Int).SetUint64(h.Lo))
}

func fromBig(b *big.Int) xstream.HashKey {
	lo := new(big.Int).And(b, new(big.Int).SetUint64(^uint64(0)))
	hi := new(big.Int).Rsh(b, 64)
	return xstream.HashKey{Hi: hi.Uint64(), Lo: lo.Uint64()}
}

// hkAdd returns h+d (d may be negative); the result must be in range.
func hkAdd(h xstream.HashKey, d int64) xstream.HashKey {
	return fromBig(new(big.Int).Add(toBig(h), big.NewInt(d)))
}

// uniformRanges divides the key space into n ranges as a new stream does:
// floor(2^128/n) wide, the last one taking the remainder.
func uniformRanges(n int) []xstream.HashKeyRange {
	w := new(big.Int).Div(two128, big.NewInt(int64(n)))
	out := make([]xstream.HashKeyRange, n)
	for i := range out {
		start := new(big.Int).Mul(w, big.NewInt(int64(i)))
		end := new(big.Int).Sub(new(big.Int).Add(start, w), big.NewInt(1))
		if i == n-1 {
			end = new(big.Int).Sub(two128, big.NewInt(1))
		}
		out[i] = xstream.HashKeyRange{StartingHashKey: fromBig(start), EndingHashKey: fromBig(end)}
	}
	return out
}
