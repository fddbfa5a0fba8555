package kinesis

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/xstreamgo/xstream"
)

// SubscribeToShard (enhanced fan-out).
//
// The response is HTTP 200 with a body in the AWS event-stream encoding
// (eventstream.go), written as records arrive: first an initial-response
// event, then SubscribeToShardEvent events, each with the Records read
// since the last (up to 10,000), the ContinuationSequenceNumber to
// subscribe again from (AFTER_SEQUENCE_NUMBER), MillisBehindLatest and,
// at a CLOSED shard's end, ChildShards, after which the response ends. An
// event goes out as soon as records are read (the shard is polled every
// subscriptionPoll) and at least every subscriptionBeat without them. A
// subscription lasts five minutes by the handler's clock, as in Kinesis,
// and ends early when the client goes, the consumer is deregistered or
// the stream deleted; a consumer has at most one subscription to a shard
// at a time (another is refused with ResourceInUseException). It is
// served over HTTP/1.1 (chunked) and over HTTP/2, which the SDKs use.
const (
	subscriptionTTL  = 5 * time.Minute
	subscriptionPoll = 50 * time.Millisecond
	subscriptionBeat = time.Second
	contentEvents    = "application/vnd.amazon.eventstream"
)

var startingPositions = []string{"AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER", "TRIM_HORIZON", "LATEST", "AT_TIMESTAMP"}

type startingPosition struct {
	Type           *string `json:"Type"`
	SequenceNumber *string `json:"SequenceNumber"`
	Timestamp      *stamp  `json:"Timestamp"`
}

type subscribeIn struct {
	ConsumerARN      *string           `json:"ConsumerARN"`
	ShardId          *string           `json:"ShardId"`
	StartingPosition *startingPosition `json:"StartingPosition"`
}

type subscribeEvent struct {
	Records                    []recordOut     `json:"Records"`
	ContinuationSequenceNumber seqText         `json:"ContinuationSequenceNumber"`
	MillisBehindLatest         int64           `json:"MillisBehindLatest"`
	ChildShards                []childShardOut `json:"ChildShards,omitempty"`
}

// subscriptions are the running SubscribeToShard responses, so that
// deleting a stream or deregistering a consumer ends them.
type subscriptions struct {
	mu   sync.Mutex
	subs map[string]*subscription // by stream/consumer/shard
}

type subscription struct {
	stream, consumer string
	created          int64 // the stream's
	cancel           context.CancelFunc
}

// add registers a subscription; it reports false when the consumer has
// one to the shard already.
func (s *subscriptions) add(key string, sub *subscription) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.subs == nil {
		s.subs = map[string]*subscription{}
	}
	if _, ok := s.subs[key]; ok {
		return false
	}
	s.subs[key] = sub
	return true
}

func (s *subscriptions) remove(key string, sub *subscription) {
	s.mu.Lock()
	if s.subs[key] == sub {
		delete(s.subs, key)
	}
	s.mu.Unlock()
}

// cancel ends the subscriptions match selects.
func (s *subscriptions) cancel(match func(*subscription) bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, sub := range s.subs {
		if match(sub) {
			sub.cancel()
		}
	}
}

func (s *subscriptions) closeStream(name string, created int64) {
	s.cancel(func(sub *subscription) bool { return sub.stream == name && sub.created == created })
}

func (s *subscriptions) closeConsumer(stream, consumer string) {
	s.cancel(func(sub *subscription) bool { return sub.stream == stream && sub.consumer == consumer })
}

func (s *subscriptions) closeAll() { s.cancel(func(*subscription) bool { return true }) }

// subscribeToShard serves SubscribeToShard.
func (h *Handler) subscribeToShard(w http.ResponseWriter, r *http.Request, enc string, body []byte) {
	in := new(subscribeIn)
	if e := decode(enc, body, in); e != nil {
		writeErr(w, enc, e)
		return
	}
	sub, p, cont, e := h.subscribe(r.Context(), in)
	if e != nil {
		writeErr(w, enc, e)
		return
	}
	key := sub.stream + "/" + sub.consumer + "/" + shardName(p.shard)
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	sub.cancel = cancel
	if !h.subs.add(key, sub) {
		writeErr(w, enc, clientErr(typeResourceInUse, "Another active subscription exists for consumer %s on shard %s.", h.consumerARNOf(sub), shardName(p.shard)))
		return
	}
	defer h.subs.remove(key, sub)

	end := h.nowMs() + subscriptionTTL.Milliseconds() // before the client hears of the subscription
	w.Header().Set("Content-Type", contentEvents)
	w.WriteHeader(http.StatusOK)
	rc := http.NewResponseController(w)
	initial, _ := encodeBody(enc, empty{})
	if _, err := w.Write(appendEvent(nil, enc, "initial-response", initial)); err != nil {
		return
	}
	rc.Flush()
	h.pump(ctx, w, rc, enc, p, cont, end)
}

// consumerARNOf is the ARN of a subscription's consumer, for messages.
func (h *Handler) consumerARNOf(sub *subscription) string {
	return h.arn(sub.stream) + "/consumer/" + sub.consumer
}

// subscribe checks a request and returns the subscription, its starting
// position and the continuation sequence number before any record.
func (h *Handler) subscribe(ctx context.Context, in *subscribeIn) (*subscription, *shardPosition, seqNum, *apiError) {
	var c checker
	c.str("consumerARN", in.ConsumerARN, strRule{required: true, pattern: consumerPattern, match: consumerARNRe.MatchString, min: 1, max: 2048})
	c.str("shardId", in.ShardId, nameRule)
	if in.StartingPosition == nil {
		c.fail("null", "startingPosition", "Member must not be null")
	} else {
		c.enum("startingPosition.type", in.StartingPosition.Type, true, startingPositions...)
		c.str("startingPosition.sequenceNumber", in.StartingPosition.SequenceNumber, seqRule)
	}
	if e := c.err(); e != nil {
		return nil, nil, seqNum{}, e
	}
	stream, consumer, created, e := h.consumerRef(&consumerRefIn{ConsumerARN: in.ConsumerARN})
	if e != nil {
		return nil, nil, seqNum{}, e
	}
	_, m, e := h.lookup(ctx, stream, true)
	if e != nil {
		return nil, nil, seqNum{}, e
	}
	cm := findConsumer(m, consumer, created)
	if cm == nil {
		return nil, nil, seqNum{}, h.consumerNotFound(stream, consumer)
	}
	if cm.Status != consumerActive {
		return nil, nil, seqNum{}, clientErr(typeResourceInUse, "Consumer %s under stream %s under account %s is not ACTIVE, instead in state %s.", consumer, stream, h.cfg.account, cm.Status)
	}
	sp := in.StartingPosition
	p, e := h.position(ctx, stream, *in.ShardId, *sp.Type, sp.SequenceNumber, sp.Timestamp, "SubscribeToShard")
	if e != nil {
		return nil, nil, seqNum{}, e
	}
	return &subscription{stream: stream, consumer: consumer, created: m.Created}, p, h.continuation(ctx, p), nil
}

// continuation is the sequence number to continue after from an
// engine's iterator before any record is read there: the one before its
// next position, or the shard's starting sequence number at the trim
// horizon. It reads the position from the iterator's form, "…/shard
// number/position[/…]" with the position "h" or "ms-seq", which both
// engines write.
func (h *Handler) continuation(ctx context.Context, p *shardPosition) seqNum {
	parts := strings.SplitN(p.it, "/", 4)
	if len(parts) >= 3 && parts[2] != "h" {
		if id, err := xstream.ParseID(parts[2]); err == nil {
			if prev, ok := id.Prev(); ok {
				if n, ok := encodeSeq(p.shard, prev); ok {
					return n
				}
			}
		}
	}
	infos, err := p.eng.ListShards(ctx, xstream.ShardFilter{})
	if err == nil {
		for _, in := range infos {
			if in.ShardID == shardName(p.shard) {
				n, _ := encodeSeq(p.shard, in.SequenceNumberRange.StartingSequenceNumber)
				return n
			}
		}
	}
	return seqNum{}
}

// pump writes the events of a subscription until it ends (at the latest
// at end, in ms).
func (h *Handler) pump(ctx context.Context, w http.ResponseWriter, rc *http.ResponseController, enc string, p *shardPosition, cont seqNum, end int64) {
	it := p.it
	lastSent := time.Now()
	tick := time.NewTicker(subscriptionPoll)
	defer tick.Stop()
	var buf []byte
	for {
		read, e := h.readShard(ctx, p.eng, p.name, p.shard, it, 10000)
		if e != nil {
			if ctx.Err() == nil {
				w.Write(appendException(nil, enc, e))
				rc.Flush()
			}
			return
		}
		if len(read.records) > 0 || read.next == "" || time.Since(lastSent) >= subscriptionBeat {
			if n := len(read.records); n > 0 {
				cont = read.records[n-1].SequenceNumber.n
			}
			ev := subscribeEvent{Records: read.records, ContinuationSequenceNumber: seqText{cont}, MillisBehindLatest: read.millisBehind, ChildShards: read.children}
			payload, err := encodeBody(enc, ev)
			if err != nil {
				return
			}
			buf = appendEvent(buf[:0], enc, "SubscribeToShardEvent", payload)
			if _, err := w.Write(buf); err != nil {
				return
			}
			rc.Flush()
			lastSent = time.Now()
		}
		if read.next == "" || h.nowMs() >= end {
			return
		}
		it = read.next
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
