package kinesis

import (
	"context"
	"slices"
	"strconv"
	"strings"
)

// Enhanced fan-out consumers: registered per stream in the catalog,
// CREATING for the Create delay and DELETING for the Delete delay, at
// most 20 a stream. SubscribeToShard (subscribe.go) reads for them.

// maxConsumers is the most consumers a stream may have, as in Kinesis.
const maxConsumers = 20

const (
	consumerCreating = "CREATING"
	consumerActive   = "ACTIVE"
	consumerDeleting = "DELETING"
)

type consumerMeta struct {
	Name    string `json:"name"`
	Created int64  `json:"created"` // ms
	Status  string `json:"status"`
	Until   int64  `json:"until,omitempty"`
}

func consumerDeadlines(m *streamMeta) []int64 {
	var out []int64
	for _, c := range m.Consumers {
		if c.Until != 0 {
			out = append(out, c.Until)
		}
	}
	return out
}

// settleConsumers makes the consumers' transitions due by now; it
// reports whether there was one.
func settleConsumers(m *streamMeta, now int64) bool {
	changed := false
	m.Consumers = slices.DeleteFunc(m.Consumers, func(c *consumerMeta) bool {
		if c.Until == 0 || now < c.Until {
			return false
		}
		changed = true
		if c.Status == consumerDeleting {
			return true
		}
		c.Status, c.Until = consumerActive, 0
		return false
	})
	return changed
}

func (h *Handler) consumerARN(stream string, c *consumerMeta) string {
	return h.arn(stream) + "/consumer/" + c.Name + ":" + strconv.FormatInt(c.Created/1000, 10)
}

type consumerOut struct {
	ConsumerName              string `json:"ConsumerName"`
	ConsumerARN               string `json:"ConsumerARN"`
	ConsumerStatus            string `json:"ConsumerStatus"`
	ConsumerCreationTimestamp *stamp `json:"ConsumerCreationTimestamp"`
	StreamARN                 string `json:"StreamARN,omitempty"`
}

func (h *Handler) consumerOf(stream string, c *consumerMeta, withStream bool) consumerOut {
	out := consumerOut{ConsumerName: c.Name, ConsumerARN: h.consumerARN(stream, c), ConsumerStatus: c.Status,
		ConsumerCreationTimestamp: stampOf(c.Created / 1000 * 1000)}
	if withStream {
		out.StreamARN = h.arn(stream)
	}
	return out
}

type registerConsumerIn struct {
	StreamARN    *string `json:"StreamARN"`
	ConsumerName *string `json:"ConsumerName"`
}

// streamOfARN returns the stream a StreamARN names.
func (h *Handler) streamOfARN(arn string) (string, *apiError) {
	return h.nameOf(&streamRef{StreamARN: &arn})
}

// registerConsumer: RegisterStreamConsumer.
func (h *Handler) registerConsumer(ctx context.Context, in *registerConsumerIn) (any, *apiError) {
	var c checker
	c.str("streamARN", in.StreamARN, strRule{required: true, pattern: arnPattern, match: arnRe.MatchString, min: 1, max: 2048})
	c.str("consumerName", in.ConsumerName, nameRule)
	if e := c.err(); e != nil {
		return nil, e
	}
	name, e := h.streamOfARN(*in.StreamARN)
	if e != nil {
		return nil, e
	}
	if _, e := h.snapshot(ctx, true); e != nil {
		return nil, e
	}
	var out consumerOut
	_, err := h.cat.update(ctx, func(c *catalog) error {
		m, err := h.settledIn(c, name)
		if err != nil {
			return err
		}
		for _, x := range m.Consumers {
			if x.Name == *in.ConsumerName {
				return clientErr(typeResourceInUse, "Consumer %s under stream %s already exists for account %s.", x.Name, name, h.cfg.account)
			}
		}
		if len(m.Consumers) >= maxConsumers {
			return clientErr(typeLimitExceeded, "Consumer limit of %d reached for stream %s under account %s.", maxConsumers, name, h.cfg.account)
		}
		now := h.nowMs()
		cm := &consumerMeta{Name: *in.ConsumerName, Created: now, Status: consumerActive}
		if d := h.cfg.createDelay; d > 0 {
			cm.Status, cm.Until = consumerCreating, now+d.Milliseconds()
		}
		m.Consumers = append(m.Consumers, cm)
		out = h.consumerOf(name, cm, false)
		return nil
	})
	if err != nil {
		return nil, h.engineErr(name, err)
	}
	return struct {
		Consumer consumerOut `json:"Consumer"`
	}{out}, nil
}

type consumerRefIn struct {
	StreamARN    *string `json:"StreamARN"`
	ConsumerName *string `json:"ConsumerName"`
	ConsumerARN  *string `json:"ConsumerARN"`
}

// consumerRef reads the stream and consumer names of a request naming
// the consumer by ARN, or by stream ARN and name.
func (h *Handler) consumerRef(in *consumerRefIn) (stream, consumer string, created int64, e *apiError) {
	var c checker
	c.str("streamARN", in.StreamARN, arnRule)
	c.str("consumerName", in.ConsumerName, optNameRule)
	c.str("consumerARN", in.ConsumerARN, strRule{pattern: consumerPattern, match: consumerARNRe.MatchString, min: 1, max: 2048})
	if e := c.err(); e != nil {
		return "", "", 0, e
	}
	if in.ConsumerARN != nil {
		arn := *in.ConsumerARN
		i := strings.LastIndex(arn, "/consumer/")
		streamARN, rest := arn[:i], arn[i+len("/consumer/"):]
		j := strings.LastIndexByte(rest, ':')
		secs, _ := strconv.ParseInt(rest[j+1:], 10, 64)
		stream, e := h.streamOfARN(streamARN)
		return stream, rest[:j], secs*1000 + 1, e
	}
	if in.StreamARN == nil || in.ConsumerName == nil {
		return "", "", 0, clientErr(typeInvalidArgument, "Either ConsumerARN or both ConsumerName and StreamARN must be provided.")
	}
	stream, e = h.streamOfARN(*in.StreamARN)
	return stream, *in.ConsumerName, 0, e
}

func (h *Handler) consumerNotFound(stream, consumer string) *apiError {
	return clientErr(typeResourceNotFound, "Consumer %s under stream %s not found for account %s.", consumer, stream, h.cfg.account)
}

// findConsumer returns the consumer of m; created, when not 0, is 1 +
// the creation second its ARN gave, which must match.
func findConsumer(m *streamMeta, name string, created int64) *consumerMeta {
	for _, c := range m.Consumers {
		if c.Name == name && (created == 0 || c.Created/1000 == (created-1)/1000) {
			return c
		}
	}
	return nil
}

// describeConsumer: DescribeStreamConsumer.
func (h *Handler) describeConsumer(ctx context.Context, in *consumerRefIn) (any, *apiError) {
	stream, consumer, created, e := h.consumerRef(in)
	if e != nil {
		return nil, e
	}
	_, m, e := h.lookup(ctx, stream, true)
	if e != nil {
		return nil, e
	}
	cm := findConsumer(m, consumer, created)
	if cm == nil {
		return nil, h.consumerNotFound(stream, consumer)
	}
	return struct {
		ConsumerDescription consumerOut `json:"ConsumerDescription"`
	}{h.consumerOf(stream, cm, true)}, nil
}

// deregisterConsumer: DeregisterStreamConsumer.
func (h *Handler) deregisterConsumer(ctx context.Context, in *consumerRefIn) (any, *apiError) {
	stream, consumer, created, e := h.consumerRef(in)
	if e != nil {
		return nil, e
	}
	if _, e := h.snapshot(ctx, true); e != nil {
		return nil, e
	}
	_, err := h.cat.update(ctx, func(c *catalog) error {
		m := c.Streams[stream]
		if m == nil {
			return h.streamNotFound(stream)
		}
		cm := findConsumer(m, consumer, created)
		if cm == nil || cm.Status == consumerDeleting {
			return h.consumerNotFound(stream, consumer)
		}
		if d := h.cfg.deleteDelay; d > 0 {
			cm.Status, cm.Until = consumerDeleting, h.nowMs()+d.Milliseconds()
		} else {
			m.Consumers = slices.DeleteFunc(m.Consumers, func(x *consumerMeta) bool { return x == cm })
		}
		return nil
	})
	if err != nil {
		return nil, h.engineErr(stream, err)
	}
	h.subs.closeConsumer(stream, consumer)
	return empty{}, nil
}

type listConsumersIn struct {
	StreamARN               *string `json:"StreamARN"`
	NextToken               *string `json:"NextToken"`
	MaxResults              *num    `json:"MaxResults"`
	StreamCreationTimestamp *stamp  `json:"StreamCreationTimestamp"`
}

// listConsumers: ListStreamConsumers, by name, paged by MaxResults (100
// by default) and NextToken.
func (h *Handler) listConsumers(ctx context.Context, in *listConsumersIn) (any, *apiError) {
	var c checker
	c.str("streamARN", in.StreamARN, strRule{required: true, pattern: arnPattern, match: arnRe.MatchString, min: 1, max: 2048})
	c.str("nextToken", in.NextToken, strRule{min: 1, max: 1048576})
	c.intRange("maxResults", in.MaxResults, false, 1, 10000)
	if e := c.err(); e != nil {
		return nil, e
	}
	stream, e := h.streamOfARN(*in.StreamARN)
	if e != nil {
		return nil, e
	}
	_, m, e := h.lookup(ctx, stream, true)
	if e != nil {
		return nil, e
	}
	after := ""
	if in.NextToken != nil {
		var ok bool
		if after, ok = untoken(*in.NextToken); !ok {
			return nil, clientErr(typeInvalidArgument, "Invalid NextToken.")
		}
	}
	limit := 100
	if in.MaxResults != nil {
		limit = int(*in.MaxResults)
	}
	cs := slices.Clone(m.Consumers)
	slices.SortFunc(cs, func(a, b *consumerMeta) int { return strings.Compare(a.Name, b.Name) })
	out := struct {
		Consumers []consumerOut `json:"Consumers"`
		NextToken string        `json:"NextToken,omitempty"`
	}{Consumers: []consumerOut{}}
	for _, cm := range cs {
		if cm.Name <= after {
			continue
		}
		if len(out.Consumers) == limit {
			out.NextToken = token(out.Consumers[limit-1].ConsumerName)
			break
		}
		out.Consumers = append(out.Consumers, h.consumerOf(stream, cm, false))
	}
	return out, nil
}
