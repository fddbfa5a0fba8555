package kinesis

import "context"

// onDemandStreamLimit is the account's limit on ON_DEMAND streams that
// DescribeLimits reports, as in Kinesis.
const onDemandStreamLimit = 50

// describeLimits: DescribeLimits, the account's shard limit and use.
func (h *Handler) describeLimits(ctx context.Context, _ *empty) (any, *apiError) {
	s, e := h.snapshot(ctx, true)
	if e != nil {
		return nil, e
	}
	onDemand := 0
	for _, m := range s.cat.Streams {
		if m.Mode == modeOnDemand {
			onDemand++
		}
	}
	return struct {
		ShardLimit               int `json:"ShardLimit"`
		OpenShardCount           int `json:"OpenShardCount"`
		OnDemandStreamCount      int `json:"OnDemandStreamCount"`
		OnDemandStreamCountLimit int `json:"OnDemandStreamCountLimit"`
	}{h.cfg.shardLimit, s.cat.openShards(), onDemand, onDemandStreamLimit}, nil
}
