package kinesis

import (
	"context"

	"github.com/xstreamgo/xstream"
)

// Reshards: SplitShard, MergeShards and UpdateShardCount check their
// arguments against the shards as they are, then either apply the
// reshard at once (no Update delay) or leave it waiting in the catalog
// with the stream UPDATING until the delay ends (see status.go).

type splitShardIn struct {
	NewStartingHashKey *string `json:"NewStartingHashKey"`
	streamRef
	ShardToSplit *string `json:"ShardToSplit"`
}

// reshardTarget is a stream about to be resharded: its state and shards.
type reshardTarget struct {
	name   string
	meta   *streamMeta
	eng    xstream.ShardedEngine
	shards []xstream.ShardInfo
	total  int // the account's OPEN shards
}

// target looks the stream up for a reshard: it must be ACTIVE.
func (h *Handler) target(ctx context.Context, name string) (*reshardTarget, *apiError) {
	s, m, eng, e := h.lookupEngine(ctx, name)
	if e != nil {
		return nil, e
	}
	if st := h.status(ctx, eng, m); st != statusActive {
		return nil, h.notActive(name, st)
	}
	shards, err := eng.ListShards(ctx, xstream.ShardFilter{})
	if err != nil {
		return nil, h.engineErr(name, err)
	}
	return &reshardTarget{name: name, meta: m, eng: eng, shards: shards, total: s.cat.openShards()}, nil
}

func (t *reshardTarget) shard(id string) *xstream.ShardInfo {
	for i := range t.shards {
		if t.shards[i].ShardID == id {
			return &t.shards[i]
		}
	}
	return nil
}

func (t *reshardTarget) open() int {
	n := 0
	for _, s := range t.shards {
		if s.State == xstream.ShardOpen {
			n++
		}
	}
	return n
}

// resharded applies op now, or leaves it for the end of the UPDATING
// delay; more is how many OPEN shards it adds (negative: removes).
func (h *Handler) resharded(ctx context.Context, t *reshardTarget, op *reshardOp, more int) *apiError {
	if d := h.cfg.updateDelay; d > 0 {
		_, err := h.cat.update(ctx, func(c *catalog) error {
			m := c.Streams[t.name]
			if m == nil || m.Created != t.meta.Created {
				return h.streamNotFound(t.name)
			}
			if m.Status != statusActive {
				return h.notActive(t.name, m.Status)
			}
			m.Status, m.Until, m.Pending, m.Open = statusUpdating, h.nowMs()+d.Milliseconds(), op, m.Open+more
			return nil
		})
		if err != nil {
			return h.engineErr(t.name, err)
		}
		return nil
	}
	if err := h.applyReshard(ctx, t.eng, op); err != nil {
		return h.engineErr(t.name, err)
	}
	open, err := t.eng.ListShards(ctx, xstream.ShardFilter{Type: xstream.FilterAtLatest})
	if err != nil {
		return h.engineErr(t.name, err)
	}
	_, err = h.cat.update(ctx, func(c *catalog) error {
		m := c.Streams[t.name]
		if m == nil || m.Created != t.meta.Created || m.Open == len(open) {
			return errNoChange
		}
		m.Open = len(open)
		return nil
	})
	if err != nil {
		return internal(err)
	}
	return nil
}

// applyReshard runs a reshard on the engine.
func (h *Handler) applyReshard(ctx context.Context, eng xstream.ShardedEngine, op *reshardOp) error {
	switch op.Kind {
	case "split":
		return eng.SplitShard(ctx, op.Shard, op.Key)
	case "merge":
		return eng.MergeShards(ctx, op.Shard, op.Other)
	default:
		return eng.UpdateShardCount(ctx, op.Target)
	}
}

func (h *Handler) closedShard(stream, shard, what string) *apiError {
	return clientErr(typeInvalidArgument, "Shard %s in stream %s under account %s has already been merged or split, and thus is not eligible for %s.",
		shard, stream, h.cfg.account, what)
}

// splitShard: SplitShard.
func (h *Handler) splitShard(ctx context.Context, in *splitShardIn) (any, *apiError) {
	var c checker
	c.str("newStartingHashKey", in.NewStartingHashKey, strRule{required: true, pattern: hashKeyPattern, match: digitsUpTo(39)})
	in.check(&c)
	c.str("shardToSplit", in.ShardToSplit, nameRule)
	if e := c.err(); e != nil {
		return nil, e
	}
	name, e := h.nameOf(&in.streamRef)
	if e != nil {
		return nil, e
	}
	n, ok := resolveShard(*in.ShardToSplit)
	if !ok {
		return nil, h.shardNotFound(name, *in.ShardToSplit)
	}
	shardID := shardName(n)
	t, e := h.target(ctx, name)
	if e != nil {
		return nil, e
	}
	sh := t.shard(shardID)
	if sh == nil {
		return nil, h.shardNotFound(name, shardID)
	}
	if t.total+1 > h.cfg.shardLimit {
		return nil, h.shardLimit(t.total, 1)
	}
	key, err := xstream.ParseHashKey(*in.NewStartingHashKey)
	r := sh.HashKeyRange
	lo := r.StartingHashKey
	if lo.Lo++; lo.Lo == 0 {
		lo.Hi++
	}
	if err != nil || key.Compare(lo) <= 0 || key.Compare(r.EndingHashKey) >= 0 {
		return nil, clientErr(typeInvalidArgument, "NewStartingHashKey %s used in SplitShard() on shard %s in stream %s under account %s "+
			"is not both greater than one plus the shard's StartingHashKey %s and less than the shard's EndingHashKey %s.",
			*in.NewStartingHashKey, shardID, name, h.cfg.account, r.StartingHashKey, r.EndingHashKey)
	}
	if sh.State != xstream.ShardOpen {
		return nil, h.closedShard(name, shardID, "splitting")
	}
	if e := h.resharded(ctx, t, &reshardOp{Kind: "split", Shard: shardID, Key: *in.NewStartingHashKey}, 1); e != nil {
		return nil, e
	}
	return empty{}, nil
}

type mergeShardsIn struct {
	ShardToMerge         *string `json:"ShardToMerge"`
	AdjacentShardToMerge *string `json:"AdjacentShardToMerge"`
	streamRef
}

// mergeShards: MergeShards. ShardToMerge must be the lower of the two.
func (h *Handler) mergeShards(ctx context.Context, in *mergeShardsIn) (any, *apiError) {
	var c checker
	c.str("shardToMerge", in.ShardToMerge, nameRule)
	c.str("adjacentShardToMerge", in.AdjacentShardToMerge, nameRule)
	name, e := h.named(&c, &in.streamRef)
	if e != nil {
		return nil, e
	}
	var ids [2]string
	for i, s := range []string{*in.ShardToMerge, *in.AdjacentShardToMerge} {
		n, ok := resolveShard(s)
		if !ok {
			return nil, h.shardNotFound(name, s)
		}
		ids[i] = shardName(n)
	}
	t, e := h.target(ctx, name)
	if e != nil {
		return nil, e
	}
	var sh [2]*xstream.ShardInfo
	for i, id := range ids {
		if sh[i] = t.shard(id); sh[i] == nil {
			return nil, h.shardNotFound(name, id)
		}
	}
	next := sh[0].HashKeyRange.EndingHashKey
	if next.Lo++; next.Lo == 0 {
		next.Hi++
	}
	if ids[0] == ids[1] || next != sh[1].HashKeyRange.StartingHashKey || sh[0].HashKeyRange.EndingHashKey == xstream.MaxHashKey() {
		return nil, clientErr(typeInvalidArgument, "Shards %s and %s in stream %s under account %s are not an adjacent pair of shards eligible for merging",
			ids[0], ids[1], name, h.cfg.account)
	}
	for i := range sh {
		if sh[i].State != xstream.ShardOpen {
			return nil, h.closedShard(name, ids[i], "merging")
		}
	}
	if e := h.resharded(ctx, t, &reshardOp{Kind: "merge", Shard: ids[0], Other: ids[1]}, -1); e != nil {
		return nil, e
	}
	return empty{}, nil
}

type updateShardCountIn struct {
	streamRef
	TargetShardCount *num    `json:"TargetShardCount"`
	ScalingType      *string `json:"ScalingType"`
}

// updateShardCount: UpdateShardCount, within Kinesis's bounds: at most
// double and at least half the OPEN shards.
func (h *Handler) updateShardCount(ctx context.Context, in *updateShardCountIn) (any, *apiError) {
	var c checker
	in.check(&c)
	c.intRange("targetShardCount", in.TargetShardCount, true, 1, 100000)
	c.enum("scalingType", in.ScalingType, true, "UNIFORM_SCALING")
	if e := c.err(); e != nil {
		return nil, e
	}
	name, e := h.nameOf(&in.streamRef)
	if e != nil {
		return nil, e
	}
	t, e := h.target(ctx, name)
	if e != nil {
		return nil, e
	}
	cur, target := t.open(), int(*in.TargetShardCount)
	switch {
	case target > 2*cur:
		return nil, clientErr(typeInvalidArgument, "UpdateShardCount cannot scale up over double your current open shard count. Current open shard count: %d Target shard count: %d", cur, target)
	case 2*target < cur:
		return nil, clientErr(typeInvalidArgument, "UpdateShardCount cannot scale down below half your current open shard count. Current open shard count: %d Target shard count: %d", cur, target)
	case t.total-cur+target > h.cfg.shardLimit:
		return nil, h.shardLimit(t.total, target-cur)
	}
	if e := h.resharded(ctx, t, &reshardOp{Kind: "count", Target: target}, target-cur); e != nil {
		return nil, e
	}
	return struct {
		StreamName        string `json:"StreamName"`
		StreamARN         string `json:"StreamARN"`
		CurrentShardCount int    `json:"CurrentShardCount"`
		TargetShardCount  int    `json:"TargetShardCount"`
	}{name, h.arn(name), cur, target}, nil
}
