package kinesistest

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsk "github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"
	"github.com/stretchr/testify/require"
	"github.com/xstreamgo/xstream/kinesis"
)

// testSubscribeToShard: enhanced fan-out through the SDK's event stream,
// over HTTP/2 (h2c), as the SDKs subscribe (the handler serves HTTP/1.1
// too, which the kinesis package's own test reads; the Go SDK over
// HTTP/1.1 now and then closes a subscription's connection when the next
// call starts, so it is not tested here): records put before and during the
// subscription arrive in order with continuation sequence numbers, a
// second subscription of the consumer to the shard is refused, a split
// ends the subscription with ChildShards, and resuming after the last
// continuation sequence number reads nothing twice.
func testSubscribeToShard(t *testing.T, start StartFunc) {
	for _, proto := range []string{"HTTP/2.0"} {
		t.Run(proto, func(t *testing.T) {
			ep := start(t)
			cfg := ep.Config.Copy()
			tr := http.DefaultTransport.(*http.Transport).Clone()
			tr.Protocols = new(http.Protocols)
			if proto == "HTTP/2.0" {
				tr.Protocols.SetUnencryptedHTTP2(true)
			} else {
				tr.Protocols.SetHTTP1(true)
			}
			rec := &protoRecorder{rt: tr}
			cfg.HTTPClient = &http.Client{Transport: rec}
			c := awsk.NewFromConfig(cfg, func(o *awsk.Options) { o.RetryMaxAttempts = 1 })
			ctx := context.Background()
			createStream(t, c, ctx, "efo", 1)
			arn := aws.String("arn:aws:kinesis:us-east-1:000000000000:stream/efo")
			reg, err := c.RegisterStreamConsumer(ctx, &awsk.RegisterStreamConsumerInput{StreamARN: arn, ConsumerName: aws.String("fan")})
			require.NoError(t, err)
			put := func(i int) {
				_, err := c.PutRecord(ctx, &awsk.PutRecordInput{StreamARN: arn, PartitionKey: aws.String("k"), Data: []byte(fmt.Sprint(i))})
				require.NoError(t, err)
			}
			put(0)
			put(1)
			sctx, cancel := context.WithTimeout(ctx, time.Minute)
			defer cancel()
			sub, err := c.SubscribeToShard(sctx, &awsk.SubscribeToShardInput{ConsumerARN: reg.Consumer.ConsumerARN, ShardId: aws.String("shardId-000000000000"),
				StartingPosition: &types.StartingPosition{Type: types.ShardIteratorTypeTrimHorizon}})
			require.NoError(t, err)
			stream := sub.GetStream()
			defer stream.Close()

			_, err = c.SubscribeToShard(ctx, &awsk.SubscribeToShardInput{ConsumerARN: reg.Consumer.ConsumerARN, ShardId: aws.String("shardId-000000000000"),
				StartingPosition: &types.StartingPosition{Type: types.ShardIteratorTypeLatest}})
			requireAPIErr(t, err, "ResourceInUseException", "")

			var got []string
			var cont string
			var children []types.ChildShard
			split := false
			for ev := range stream.Events() {
				e, ok := ev.(*types.SubscribeToShardEventStreamMemberSubscribeToShardEvent)
				require.True(t, ok, "%T", ev)
				for _, r := range e.Value.Records {
					got = append(got, string(r.Data))
					require.LessOrEqual(t, cmpDec(*r.SequenceNumber, *e.Value.ContinuationSequenceNumber), 0,
						"records come before their event's continuation")
				}
				cont = *e.Value.ContinuationSequenceNumber
				if len(got) == 2 && !split {
					put(2)
					put(3)
				}
				if len(got) == 4 && !split {
					split = true
					_, err := c.SplitShard(ctx, &awsk.SplitShardInput{StreamARN: arn, ShardToSplit: aws.String("shardId-000000000000"), NewStartingHashKey: aws.String("1000")})
					require.NoError(t, err)
				}
				if len(e.Value.ChildShards) > 0 {
					children = e.Value.ChildShards
				}
			}
			require.NoError(t, stream.Err(), "after %v", got)
			require.Equal(t, proto, rec.last(), "the protocol of the responses")
			require.Equal(t, []string{"0", "1", "2", "3"}, got)
			require.Len(t, children, 2, "the subscription ends at the shard's end with its children")

			// Resuming after the continuation reads nothing more: the
			// shard is closed and was read to its end.
			sub, err = c.SubscribeToShard(sctx, &awsk.SubscribeToShardInput{ConsumerARN: reg.Consumer.ConsumerARN, ShardId: aws.String("shardId-000000000000"),
				StartingPosition: &types.StartingPosition{Type: types.ShardIteratorTypeAfterSequenceNumber, SequenceNumber: aws.String(cont)}})
			require.NoError(t, err)
			n := 0
			for ev := range sub.GetStream().Events() {
				n += len(ev.(*types.SubscribeToShardEventStreamMemberSubscribeToShardEvent).Value.Records)
			}
			require.Zero(t, n)
		})
	}
}

// testSubscriptionEnds: a subscription ends after five minutes by the
// handler's clock, and when its consumer is deregistered.
func testSubscriptionEnds(t *testing.T, start StartFunc) {
	clk := NewClock()
	ep := start(t, kinesis.WithClock(clk.Now))
	c, ctx := client(ep), context.Background()
	createStream(t, c, ctx, "efo", 1)
	arn := aws.String("arn:aws:kinesis:us-east-1:000000000000:stream/efo")
	reg, err := c.RegisterStreamConsumer(ctx, &awsk.RegisterStreamConsumerInput{StreamARN: arn, ConsumerName: aws.String("fan")})
	require.NoError(t, err)
	subscribe := func() *awsk.SubscribeToShardEventStream {
		sub, err := c.SubscribeToShard(ctx, &awsk.SubscribeToShardInput{ConsumerARN: reg.Consumer.ConsumerARN, ShardId: aws.String("shardId-000000000000"),
			StartingPosition: &types.StartingPosition{Type: types.ShardIteratorTypeLatest}})
		require.NoError(t, err)
		return sub.GetStream()
	}
	drain := func(s *awsk.SubscribeToShardEventStream) {
		done := make(chan struct{})
		go func() {
			for range s.Events() {
			}
			close(done)
		}()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Fatal("the subscription did not end")
		}
	}
	s := subscribe()
	clk.Add(5 * time.Minute)
	drain(s)
	s = subscribe()
	_, err = c.DeregisterStreamConsumer(ctx, &awsk.DeregisterStreamConsumerInput{ConsumerARN: reg.Consumer.ConsumerARN})
	require.NoError(t, err)
	drain(s)
}

// protoRecorder records the protocol of the last response.
type protoRecorder struct {
	rt    http.RoundTripper
	mu    sync.Mutex
	proto string
}

func (p *protoRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := p.rt.RoundTrip(r)
	if err == nil {
		p.mu.Lock()
		p.proto = resp.Proto
		p.mu.Unlock()
	}
	return resp, err
}

func (p *protoRecorder) last() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.proto
}
