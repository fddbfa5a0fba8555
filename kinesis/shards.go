package kinesis

import (
	"context"
	"strconv"
	"strings"

	"github.com/xstreamgo/xstream"
)

type hashKeyRange struct {
	StartingHashKey string `json:"StartingHashKey"`
	EndingHashKey   string `json:"EndingHashKey"`
}

type seqRange struct {
	StartingSequenceNumber string `json:"StartingSequenceNumber"`
	EndingSequenceNumber   string `json:"EndingSequenceNumber,omitempty"`
}

type shardOut struct {
	ShardId               string       `json:"ShardId"`
	ParentShardId         string       `json:"ParentShardId,omitempty"`
	AdjacentParentShardId string       `json:"AdjacentParentShardId,omitempty"`
	HashKeyRange          hashKeyRange `json:"HashKeyRange"`
	SequenceNumberRange   seqRange     `json:"SequenceNumberRange"`
}

func rangeOf(r xstream.HashKeyRange) hashKeyRange {
	return hashKeyRange{r.StartingHashKey.String(), r.EndingHashKey.String()}
}

// shardOf describes a shard as Kinesis does.
func shardOf(si xstream.ShardInfo) (shardOut, error) {
	start, err := seqString(si.ShardID, si.SequenceNumberRange.StartingSequenceNumber)
	if err != nil {
		return shardOut{}, err
	}
	out := shardOut{ShardId: si.ShardID, ParentShardId: si.ParentShardID, AdjacentParentShardId: si.AdjacentParentShardID,
		HashKeyRange: rangeOf(si.HashKeyRange), SequenceNumberRange: seqRange{StartingSequenceNumber: start}}
	if si.State != xstream.ShardOpen {
		if out.SequenceNumberRange.EndingSequenceNumber, err = seqString(si.ShardID, si.SequenceNumberRange.EndingSequenceNumber); err != nil {
			return shardOut{}, err
		}
	}
	return out, nil
}

type shardFilterIn struct {
	Type      *string `json:"Type"`
	ShardId   *string `json:"ShardId"`
	Timestamp *stamp  `json:"Timestamp"`
}

type listShardsIn struct {
	ExclusiveStartShardId   *string        `json:"ExclusiveStartShardId"`
	MaxResults              *num           `json:"MaxResults"`
	NextToken               *string        `json:"NextToken"`
	StreamCreationTimestamp *stamp         `json:"StreamCreationTimestamp"`
	ShardFilter             *shardFilterIn `json:"ShardFilter"`
	streamRef
}

var filterTypes = []string{"AFTER_SHARD_ID", "AT_TRIM_HORIZON", "FROM_TRIM_HORIZON", "AT_LATEST", "AT_TIMESTAMP", "FROM_TIMESTAMP"}

// shardsToken is what a ListShards NextToken holds: the stream (and its
// creation), the filter, the last shard returned and when it was issued.
type shardsToken struct {
	name    string
	created int64
	filter  xstream.ShardFilter
	after   string
	issued  int64
}

func (t shardsToken) String() string {
	ts := int64(0)
	if !t.filter.Timestamp.IsZero() {
		ts = t.filter.Timestamp.UnixMilli()
	}
	return token(strings.Join([]string{t.name, strconv.FormatInt(t.created, 10), strconv.Itoa(int(t.filter.Type)),
		t.filter.ShardID, strconv.FormatInt(ts, 10), t.after, strconv.FormatInt(t.issued, 10)}, "\x00"))
}

func parseShardsToken(s string) (shardsToken, bool) {
	raw, ok := untoken(s)
	p := strings.Split(raw, "\x00")
	if !ok || len(p) != 7 {
		return shardsToken{}, false
	}
	var t shardsToken
	var err [4]error
	var typ int
	var ts int64
	t.name, t.filter.ShardID, t.after = p[0], p[3], p[5]
	t.created, err[0] = strconv.ParseInt(p[1], 10, 64)
	typ, err[1] = strconv.Atoi(p[2])
	ts, err[2] = strconv.ParseInt(p[4], 10, 64)
	t.issued, err[3] = strconv.ParseInt(p[6], 10, 64)
	for _, e := range err {
		if e != nil {
			return shardsToken{}, false
		}
	}
	t.filter.Type = xstream.ShardFilterType(typ)
	if ts != 0 {
		t.filter.Timestamp = stampOf(ts).Time
	}
	return t, true
}

// listShards: ListShards, with ShardFilter, ExclusiveStartShardId,
// MaxResults (1,000 by default) and NextToken, which expires as an
// iterator does.
func (h *Handler) listShards(ctx context.Context, in *listShardsIn) (any, *apiError) {
	var c checker
	c.str("exclusiveStartShardId", in.ExclusiveStartShardId, optNameRule)
	c.intRange("maxResults", in.MaxResults, false, 1, 10000)
	c.str("nextToken", in.NextToken, strRule{min: 1, max: 1048576})
	in.check(&c)
	if f := in.ShardFilter; f != nil {
		c.enum("shardFilter.type", f.Type, true, filterTypes...)
		c.str("shardFilter.shardId", f.ShardId, optNameRule)
	}
	if e := c.err(); e != nil {
		return nil, e
	}
	named := in.StreamName != nil || in.StreamARN != nil
	if !named && in.NextToken == nil {
		return nil, clientErr(typeInvalidArgument, "Either NextToken or StreamName should be provided.")
	}
	if named && in.NextToken != nil {
		return nil, clientErr(typeInvalidArgument, "NextToken and StreamName cannot be provided together.")
	}
	var tok shardsToken
	if in.NextToken != nil {
		var ok bool
		if tok, ok = parseShardsToken(*in.NextToken); !ok {
			return nil, clientErr(typeInvalidArgument, "Invalid ShardId in NextToken: %s", *in.NextToken)
		}
		if h.nowMs()-tok.issued > IteratorTTL.Milliseconds() {
			return nil, clientErr("ExpiredNextTokenException", "The timestamp of the NextToken has expired: it is valid for %d milliseconds.", IteratorTTL.Milliseconds())
		}
	} else {
		name, e := h.nameOf(&in.streamRef)
		if e != nil {
			return nil, e
		}
		tok.name = name
		if in.ExclusiveStartShardId != nil && in.ShardFilter != nil {
			return nil, clientErr(typeInvalidArgument, "Request cannot contain both ExclusiveStartShardId and ShardFilter.")
		}
		if in.ExclusiveStartShardId != nil {
			tok.after = *in.ExclusiveStartShardId
		}
		if f := in.ShardFilter; f != nil {
			var e *apiError
			if tok.filter, e = filterOf(f); e != nil {
				return nil, e
			}
		}
	}
	_, m, e := h.lookup(ctx, tok.name, true)
	if e != nil {
		return nil, e
	}
	if tok.created != 0 && tok.created != m.Created {
		return nil, h.streamNotFound(tok.name)
	}
	if in.StreamCreationTimestamp != nil && in.StreamCreationTimestamp.UnixMilli()/1000 != m.Created/1000 {
		return nil, h.streamNotFound(tok.name)
	}
	if m.Status == statusCreating || m.Status == statusDeleting {
		return nil, h.notActive(tok.name, m.Status)
	}
	eng, e := h.engine(ctx, tok.name, m)
	if e != nil {
		return nil, e
	}
	infos, err := eng.ListShards(ctx, tok.filter)
	if err != nil {
		return nil, h.engineErr(tok.name, err)
	}
	limit := 1000
	if in.MaxResults != nil {
		limit = int(*in.MaxResults)
	}
	out := struct {
		Shards    []shardOut `json:"Shards"`
		NextToken string     `json:"NextToken,omitempty"`
	}{Shards: []shardOut{}}
	for _, si := range infos {
		if tok.after != "" && si.ShardID <= tok.after {
			continue
		}
		if len(out.Shards) == limit {
			tok.created, tok.after, tok.issued = m.Created, out.Shards[limit-1].ShardId, h.nowMs()
			out.NextToken = tok.String()
			break
		}
		so, err := shardOf(si)
		if err != nil {
			return nil, internal(err)
		}
		out.Shards = append(out.Shards, so)
	}
	return out, nil
}

// filterOf checks a ShardFilter and returns the engine's.
func filterOf(f *shardFilterIn) (xstream.ShardFilter, *apiError) {
	var out xstream.ShardFilter
	switch *f.Type {
	case "AFTER_SHARD_ID":
		if f.ShardId == nil {
			return out, clientErr(typeInvalidArgument, "ShardId must be provided for AFTER_SHARD_ID ShardFilter type.")
		}
		out = xstream.ShardFilter{Type: xstream.FilterAfterShardID, ShardID: *f.ShardId}
	case "AT_TRIM_HORIZON":
		out.Type = xstream.FilterAtTrimHorizon
	case "FROM_TRIM_HORIZON":
		out.Type = xstream.FilterFromTrimHorizon
	case "AT_LATEST":
		out.Type = xstream.FilterAtLatest
	case "AT_TIMESTAMP", "FROM_TIMESTAMP":
		if f.Timestamp == nil {
			return out, clientErr(typeInvalidArgument, "Timestamp must be provided for %s ShardFilter type.", *f.Type)
		}
		out = xstream.ShardFilter{Type: xstream.FilterAtTimestamp, Timestamp: f.Timestamp.Time}
		if *f.Type == "FROM_TIMESTAMP" {
			out.Type = xstream.FilterFromTimestamp
		}
	}
	if f.Type != nil && *f.Type != "AFTER_SHARD_ID" && f.ShardId != nil {
		return out, clientErr(typeInvalidArgument, "ShardId can only be provided for AFTER_SHARD_ID ShardFilter type.")
	}
	return out, nil
}
