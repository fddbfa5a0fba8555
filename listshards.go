package xstream

import (
	"fmt"
	"strings"
	"time"
)

// ShardFilterType selects the shards ListShards returns, as Kinesis's
// ShardFilter does.
type ShardFilterType uint8

const (
	// FilterFromTrimHorizon lists every shard within the retention period (the
	// default).
	FilterFromTrimHorizon ShardFilterType = iota
	// FilterAtTrimHorizon lists the shards that were open at the trim horizon.
	FilterAtTrimHorizon
	// FilterAtLatest lists the OPEN shards.
	FilterAtLatest
	// FilterAfterShardID lists the shards after ShardFilter.ShardID.
	FilterAfterShardID
	// FilterAtTimestamp lists the shards open at ShardFilter.Timestamp: created
	// at or before it and closed at or after it, or still open.
	FilterAtTimestamp
	// FilterFromTimestamp lists the shards closed at or after
	// ShardFilter.Timestamp and every OPEN shard; a time before the trim
	// horizon means the trim horizon.
	FilterFromTimestamp
)

var filterNames = [...]string{"FROM_TRIM_HORIZON", "AT_TRIM_HORIZON", "AT_LATEST", "AFTER_SHARD_ID", "AT_TIMESTAMP", "FROM_TIMESTAMP"}

// String returns the Kinesis name of the filter type.
func (t ShardFilterType) String() string {
	if int(t) < len(filterNames) {
		return filterNames[t]
	}
	return fmt.Sprintf("ShardFilterType(%d)", uint8(t))
}

// ShardFilter is the argument of ListShards. The zero ShardFilter is
// FilterFromTrimHorizon.
type ShardFilter struct {
	Type      ShardFilterType
	ShardID   string    // for FilterAfterShardID
	Timestamp time.Time // for FilterAtTimestamp and FilterFromTimestamp
}

// SequenceNumberRange is the range of sequence numbers of a shard:
// EndingSequenceNumber is zero while the shard is OPEN.
type SequenceNumberRange struct {
	StartingSequenceNumber ID
	EndingSequenceNumber   ID
}

// ShardInfo describes a shard.
type ShardInfo struct {
	ShardID               string
	ParentShardID         string // "" for a shard made with the stream
	AdjacentParentShardID string // the second parent of a merge
	HashKeyRange          HashKeyRange
	SequenceNumberRange   SequenceNumberRange
	State                 ShardState
}

func (sh *shard) infoLocked() ShardInfo {
	in := ShardInfo{ShardID: sh.id, HashKeyRange: sh.keys, State: sh.state,
		SequenceNumberRange: SequenceNumberRange{StartingSequenceNumber: sh.startSeq}}
	if sh.parent != nil {
		in.ParentShardID = sh.parent.id
	}
	if sh.adjacent != nil {
		in.AdjacentParentShardID = sh.adjacent.id
	}
	if sh.state != ShardOpen {
		in.SequenceNumberRange.EndingSequenceNumber = sh.endSeq
	}
	return in
}

// openAtLocked reports whether the shard was open at time t (ms): created at or
// before t and closed at or after it, or still open.
func (sh *shard) openAtLocked(t int64) bool {
	return sh.created <= t && (sh.state == ShardOpen || sh.closed >= t)
}

// ListShards returns the shards the filter selects, by shard ID; EXPIRED
// shards are never listed. It fails with ErrInvalidArgument for an unknown
// filter type or a malformed FilterAfterShardID shard ID. O(shards).
func (ss *ShardedStream) ListShards(f ShardFilter) (result []ShardInfo, err error) {
	if err = ss.cfg.gate.read(); err != nil {
		return
	}
	defer settleTo(ss, &result, &err)
	var after int
	switch f.Type {
	case FilterAfterShardID:
		var ok bool
		if after, ok = parseShardID(f.ShardID); !ok {
			return nil, errorf(ErrInvalidArgument, "AFTER_SHARD_ID: %q is not a shard ID (want shardId-%%012d)", f.ShardID)
		}
	case FilterFromTrimHorizon, FilterAtTrimHorizon, FilterAtLatest, FilterAtTimestamp, FilterFromTimestamp:
	default:
		return nil, errorf(ErrInvalidArgument, "unknown shard filter type %d", f.Type)
	}
	now := ss.expireNow()
	ss.mu.RLock()
	defer ss.mu.RUnlock()
	horizon := max(now-ss.retention.Milliseconds(), ss.created)
	ts := f.Timestamp.UnixMilli()
	var out []ShardInfo
	for _, sh := range ss.live {
		var ok bool
		switch f.Type {
		case FilterFromTrimHorizon:
			ok = true
		case FilterAtTrimHorizon:
			ok = sh.openAtLocked(horizon)
		case FilterAtLatest:
			ok = sh.state == ShardOpen
		case FilterAfterShardID:
			ok = sh.num > after
		case FilterAtTimestamp:
			ok = sh.openAtLocked(ts)
		case FilterFromTimestamp:
			ok = sh.state == ShardOpen || sh.closed >= max(ts, horizon)
		}
		if ok {
			out = append(out, sh.infoLocked())
		}
	}
	return out, nil
}

// LineageNode is a shard in the lineage tree: its description and its
// children. The child of a merge appears under both parents.
type LineageNode struct {
	Shard    ShardInfo
	Children []*LineageNode
}

// Lineage is the family tree of a sharded stream's shards, EXPIRED ones
// included: the roots are the shards made with the stream.
type Lineage struct {
	Roots []*LineageNode
}

// Lineage returns the lineage of every shard ever made. O(shards).
func (ss *ShardedStream) Lineage() Lineage {
	ss.expireNow()
	ss.mu.RLock()
	defer ss.mu.RUnlock()
	nodes := make([]*LineageNode, len(ss.shards))
	for i, sh := range ss.shards {
		nodes[i] = &LineageNode{Shard: sh.infoLocked()}
	}
	var l Lineage
	for i, sh := range ss.shards {
		if sh.parent == nil {
			l.Roots = append(l.Roots, nodes[i])
		}
		for _, c := range sh.children {
			nodes[i].Children = append(nodes[i].Children, nodes[c.num])
		}
	}
	return l
}

// String renders the lineage as an indented tree, one shard a line with
// its state, hash key range and sequence number range. A merge child is
// drawn in full under its first parent and referred to under the other.
func (l Lineage) String() string {
	var b strings.Builder
	seen := map[string]bool{}
	var draw func(n *LineageNode, depth int)
	draw = func(n *LineageNode, depth int) {
		in := n.Shard
		b.WriteString(strings.Repeat("  ", depth))
		if depth > 0 {
			b.WriteString("└─ ")
		}
		if seen[in.ShardID] {
			fmt.Fprintf(&b, "%s (merged, see above)\n", in.ShardID)
			return
		}
		seen[in.ShardID] = true
		fmt.Fprintf(&b, "%s %s keys %s seq %s..", in.ShardID, in.State, in.HashKeyRange, in.SequenceNumberRange.StartingSequenceNumber)
		if in.State != ShardOpen {
			b.WriteString(in.SequenceNumberRange.EndingSequenceNumber.String())
		}
		if in.AdjacentParentShardID != "" {
			fmt.Fprintf(&b, " (merge of %s and %s)", in.ParentShardID, in.AdjacentParentShardID)
		}
		b.WriteByte('\n')
		for _, c := range n.Children {
			draw(c, depth+1)
		}
	}
	for _, r := range l.Roots {
		draw(r, 0)
	}
	return b.String()
}
