package kinesis

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/xstreamgo/xstream"
)

// Stream modes.
const (
	modeProvisioned = "PROVISIONED"
	modeOnDemand    = "ON_DEMAND"
	// onDemandShards is the shard count an ON_DEMAND stream starts with.
	onDemandShards = 4
)

func (h *Handler) arn(name string) string {
	return "arn:aws:kinesis:" + h.cfg.region + ":" + h.cfg.account + ":stream/" + name
}

type modeDetails struct {
	StreamMode *string `json:"StreamMode"`
}

type createStreamIn struct {
	ShardCount        *num              `json:"ShardCount"`
	StreamName        *string           `json:"StreamName"`
	StreamModeDetails *modeDetails      `json:"StreamModeDetails"`
	Tags              map[string]string `json:"Tags"`
}

// createStream: CreateStream. An ON_DEMAND stream starts with 4 shards
// and may leave ShardCount out.
func (h *Handler) createStream(ctx context.Context, in *createStreamIn) (any, *apiError) {
	var c checker
	mode := modeProvisioned
	if in.StreamModeDetails != nil {
		c.enum("streamModeDetails.streamMode", in.StreamModeDetails.StreamMode, true, modeProvisioned, modeOnDemand)
		if m := in.StreamModeDetails.StreamMode; m != nil {
			mode = *m
		}
	}
	if in.ShardCount != nil || mode != modeOnDemand {
		c.intRange("shardCount", in.ShardCount, true, 1, 100000)
	}
	c.str("streamName", in.StreamName, nameRule)
	if e := c.err(); e != nil {
		return nil, e
	}
	if e := h.checkTags(in.Tags, 0); e != nil {
		return nil, e
	}
	name := *in.StreamName
	n := onDemandShards
	if in.ShardCount != nil {
		n = int(*in.ShardCount)
	}
	now := h.nowMs()
	meta := &streamMeta{Created: now, Status: statusActive, Open: n, Tags: in.Tags, Retention: int64(xstream.DefaultRetention / time.Hour)}
	if mode == modeOnDemand {
		meta.Mode = modeOnDemand
	}
	if d := h.cfg.createDelay; d > 0 {
		meta.Status, meta.Until = statusCreating, now+d.Milliseconds()
	}
	if _, e := h.snapshot(ctx, true); e != nil { // settles a DELETING stream whose name is free again
		return nil, e
	}
	_, err := h.cat.update(ctx, func(c *catalog) error {
		if c.Streams[name] != nil {
			return h.streamExists(name)
		}
		if cur := c.openShards(); cur+n > h.cfg.shardLimit {
			return h.shardLimit(cur, n)
		}
		c.Streams[name] = meta
		return nil
	})
	if err != nil {
		return nil, h.engineErr(name, err)
	}
	eng, err := h.b.Create(ctx, name, xstream.ShardedArgs{Shards: n})
	if err != nil {
		h.cat.update(ctx, func(c *catalog) error {
			if m := c.Streams[name]; m != nil && m.Created == meta.Created {
				delete(c.Streams, name)
				return nil
			}
			return errNoChange
		})
		if errors.Is(err, xstream.ErrResourceInUse) {
			return nil, h.streamExists(name)
		}
		return nil, internal(err)
	}
	h.engines.Store(name, &engineRef{created: meta.Created, eng: eng})
	return empty{}, nil
}

type deleteStreamIn struct {
	streamRef
	EnforceConsumerDeletion *bool `json:"EnforceConsumerDeletion"`
}

// deleteStream: DeleteStream. The records go at once; the stream stays
// DELETING for the Delete delay.
func (h *Handler) deleteStream(ctx context.Context, in *deleteStreamIn) (any, *apiError) {
	var c checker
	name, e := h.named(&c, &in.streamRef)
	if e != nil {
		return nil, e
	}
	var created int64
	_, err := h.cat.update(ctx, func(c *catalog) error {
		m, err := h.settledIn(c, name)
		if err != nil {
			return err
		}
		if len(m.Consumers) > 0 && (in.EnforceConsumerDeletion == nil || !*in.EnforceConsumerDeletion) {
			return clientErr(typeResourceInUse, "Stream %s under account %s has consumers: set EnforceConsumerDeletion to delete it with them.", name, h.cfg.account)
		}
		created = m.Created
		if d := h.cfg.deleteDelay; d > 0 {
			m.Status, m.Until, m.Pending, m.Consumers = statusDeleting, h.nowMs()+d.Milliseconds(), nil, nil
		} else {
			delete(c.Streams, name)
		}
		return nil
	})
	if err != nil {
		return nil, h.engineErr(name, err)
	}
	h.engines.Delete(name)
	h.subs.closeStream(name, created)
	if err := h.b.Remove(ctx, name); err != nil {
		return nil, internal(err)
	}
	return empty{}, nil
}

type describeStreamIn struct {
	streamRef
	Limit                 *num    `json:"Limit"`
	ExclusiveStartShardId *string `json:"ExclusiveStartShardId"`
}

type enhancedMetrics struct {
	ShardLevelMetrics []string `json:"ShardLevelMetrics"`
}

type streamDescription struct {
	StreamName              string            `json:"StreamName"`
	StreamARN               string            `json:"StreamARN"`
	StreamStatus            string            `json:"StreamStatus"`
	StreamModeDetails       modeOut           `json:"StreamModeDetails"`
	Shards                  []shardOut        `json:"Shards"`
	HasMoreShards           bool              `json:"HasMoreShards"`
	RetentionPeriodHours    int64             `json:"RetentionPeriodHours"`
	StreamCreationTimestamp *stamp            `json:"StreamCreationTimestamp"`
	EnhancedMonitoring      []enhancedMetrics `json:"EnhancedMonitoring"`
	EncryptionType          string            `json:"EncryptionType"`
	KeyId                   string            `json:"KeyId,omitempty"`
}

type modeOut struct {
	StreamMode string `json:"StreamMode"`
}

// describeStream: DescribeStream, its shards paged by Limit (100 by
// default) and ExclusiveStartShardId.
func (h *Handler) describeStream(ctx context.Context, in *describeStreamIn) (any, *apiError) {
	var c checker
	c.intRange("limit", in.Limit, false, 1, 10000)
	c.str("exclusiveStartShardId", in.ExclusiveStartShardId, optNameRule)
	name, e := h.named(&c, &in.streamRef)
	if e != nil {
		return nil, e
	}
	_, m, eng, e := h.lookupEngine(ctx, name)
	if e != nil {
		return nil, e
	}
	d := streamDescription{StreamName: name, StreamARN: h.arn(name), StreamStatus: h.status(ctx, eng, m),
		StreamModeDetails: modeOut{m.modeName()}, Shards: []shardOut{},
		StreamCreationTimestamp: stampOf(m.Created / 1000 * 1000),
		EnhancedMonitoring:      []enhancedMetrics{{ShardLevelMetrics: orEmpty(m.Metrics)}},
		EncryptionType:          m.encName(), KeyId: m.KeyID}
	d.RetentionPeriodHours = m.Retention
	if m.Status != statusCreating && m.Status != statusDeleting {
		infos, err := eng.ListShards(ctx, xstream.ShardFilter{})
		if err != nil {
			return nil, h.engineErr(name, err)
		}
		limit := 100
		if in.Limit != nil {
			limit = int(*in.Limit)
		}
		for _, si := range infos {
			if in.ExclusiveStartShardId != nil && si.ShardID <= *in.ExclusiveStartShardId {
				continue
			}
			if len(d.Shards) == limit {
				d.HasMoreShards = true
				break
			}
			so, err := shardOf(si)
			if err != nil {
				return nil, internal(err)
			}
			d.Shards = append(d.Shards, so)
		}
	}
	return struct {
		StreamDescription streamDescription `json:"StreamDescription"`
	}{d}, nil
}

func (m *streamMeta) modeName() string {
	if m.Mode == "" {
		return modeProvisioned
	}
	return m.Mode
}

func (m *streamMeta) encName() string {
	if m.Enc == "" {
		return "NONE"
	}
	return m.Enc
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

type streamSummary struct {
	StreamName              string            `json:"StreamName"`
	StreamARN               string            `json:"StreamARN"`
	StreamStatus            string            `json:"StreamStatus"`
	StreamModeDetails       modeOut           `json:"StreamModeDetails"`
	RetentionPeriodHours    int64             `json:"RetentionPeriodHours"`
	StreamCreationTimestamp *stamp            `json:"StreamCreationTimestamp"`
	EnhancedMonitoring      []enhancedMetrics `json:"EnhancedMonitoring"`
	EncryptionType          string            `json:"EncryptionType"`
	KeyId                   string            `json:"KeyId,omitempty"`
	OpenShardCount          int               `json:"OpenShardCount"`
	ConsumerCount           int               `json:"ConsumerCount"`
}

// describeStreamSummary: DescribeStreamSummary.
func (h *Handler) describeStreamSummary(ctx context.Context, in *streamRef) (any, *apiError) {
	var c checker
	name, e := h.named(&c, in)
	if e != nil {
		return nil, e
	}
	_, m, eng, e := h.lookupEngine(ctx, name)
	if e != nil {
		return nil, e
	}
	open := 0
	if m.Status != statusCreating && m.Status != statusDeleting {
		infos, err := eng.ListShards(ctx, xstream.ShardFilter{Type: xstream.FilterAtLatest})
		if err != nil {
			return nil, h.engineErr(name, err)
		}
		open = len(infos)
	}
	return struct {
		StreamDescriptionSummary streamSummary `json:"StreamDescriptionSummary"`
	}{streamSummary{StreamName: name, StreamARN: h.arn(name), StreamStatus: h.status(ctx, eng, m),
		StreamModeDetails: modeOut{m.modeName()}, RetentionPeriodHours: m.Retention,
		StreamCreationTimestamp: stampOf(m.Created / 1000 * 1000),
		EnhancedMonitoring:      []enhancedMetrics{{ShardLevelMetrics: orEmpty(m.Metrics)}},
		EncryptionType:          m.encName(), KeyId: m.KeyID, OpenShardCount: open, ConsumerCount: len(m.Consumers)}}, nil
}

type listStreamsIn struct {
	Limit                    *num    `json:"Limit"`
	ExclusiveStartStreamName *string `json:"ExclusiveStartStreamName"`
	NextToken                *string `json:"NextToken"`
}

type streamListItem struct {
	StreamName              string  `json:"StreamName"`
	StreamARN               string  `json:"StreamARN"`
	StreamStatus            string  `json:"StreamStatus"`
	StreamModeDetails       modeOut `json:"StreamModeDetails"`
	StreamCreationTimestamp *stamp  `json:"StreamCreationTimestamp"`
}

type listStreamsOut struct {
	StreamNames     []string         `json:"StreamNames"`
	HasMoreStreams  bool             `json:"HasMoreStreams"`
	NextToken       string           `json:"NextToken,omitempty"`
	StreamSummaries []streamListItem `json:"StreamSummaries"`
}

// listStreams: ListStreams, by name, paged by Limit (100 by default) and
// ExclusiveStartStreamName or NextToken.
func (h *Handler) listStreams(ctx context.Context, in *listStreamsIn) (any, *apiError) {
	var c checker
	c.intRange("limit", in.Limit, false, 1, 10000)
	c.str("exclusiveStartStreamName", in.ExclusiveStartStreamName, optNameRule)
	c.str("nextToken", in.NextToken, strRule{min: 1, max: 1048576})
	if e := c.err(); e != nil {
		return nil, e
	}
	after := ""
	if in.ExclusiveStartStreamName != nil {
		after = *in.ExclusiveStartStreamName
	}
	if in.NextToken != nil {
		if in.ExclusiveStartStreamName != nil {
			return nil, clientErr(typeInvalidArgument, "NextToken and ExclusiveStartStreamName cannot be provided together.")
		}
		var ok bool
		if after, ok = untoken(*in.NextToken); !ok {
			return nil, clientErr(typeInvalidArgument, "Invalid NextToken.")
		}
	}
	s, e := h.snapshot(ctx, true)
	if e != nil {
		return nil, e
	}
	names := make([]string, 0, len(s.cat.Streams))
	for name := range s.cat.Streams {
		if name > after {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	limit := 100
	if in.Limit != nil {
		limit = int(*in.Limit)
	}
	out := listStreamsOut{StreamNames: []string{}, StreamSummaries: []streamListItem{}}
	if len(names) > limit {
		names, out.HasMoreStreams = names[:limit], true
		out.NextToken = token(names[limit-1])
	}
	for _, name := range names {
		m := s.cat.Streams[name]
		out.StreamNames = append(out.StreamNames, name)
		out.StreamSummaries = append(out.StreamSummaries, streamListItem{StreamName: name, StreamARN: h.arn(name),
			StreamStatus: m.Status, StreamModeDetails: modeOut{m.modeName()}, StreamCreationTimestamp: stampOf(m.Created / 1000 * 1000)})
	}
	return out, nil
}
