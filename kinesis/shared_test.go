package kinesis_test

import (
	"context"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsk "github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"
	"github.com/stretchr/testify/require"
	"github.com/xstreamgo/xstream/kinesis"
	"github.com/xstreamgo/xstream/kinesis/kinesistest"
	"github.com/xstreamgo/xstream/kinesis/kredis"
	xredis "github.com/xstreamgo/xstream/redis"
)

// Two endpoint processes (here two handlers, each with its own engine)
// over one Redis Cluster serve the same streams: what one does the other
// sees, and a delay that one started the other ends.
func TestTwoEndpointsShareRedis(t *testing.T) {
	for _, kind := range []string{"redis", "cluster"} {
		t.Run(kind, func(t *testing.T) {
			addrs := redisServer(t, kind)
			clk := newFakeClock()
			prefix := "shared-" + kind + "-"
			endpoint := func() *awsk.Client {
				e, err := xredis.Dial(context.Background(), addrs...)
				require.NoError(t, err)
				t.Cleanup(func() { e.Close() })
				ep := kinesistest.StartWith(t, kredis.Backend(e, kredis.WithPrefix(prefix)), kinesis.WithClock(clk.Now),
					kinesis.WithDelays(kinesis.Delays{Update: time.Second}), kinesis.WithCatalogCache(0))
				return client(ep)
			}
			a, b, ctx := endpoint(), endpoint(), context.Background()
			createStream(t, a, ctx, "s", 2)
			ls, err := b.ListStreams(ctx, &awsk.ListStreamsInput{})
			require.NoError(t, err)
			require.Equal(t, []string{"s"}, ls.StreamNames)
			put := func(c *awsk.Client, data string) {
				_, err := c.PutRecord(ctx, &awsk.PutRecordInput{StreamName: aws.String("s"), PartitionKey: aws.String("k"), Data: []byte(data)})
				require.NoError(t, err)
			}
			put(a, "1")
			_, err = b.SplitShard(ctx, &awsk.SplitShardInput{StreamName: aws.String("s"), ShardToSplit: aws.String("shardId-000000000000"), NewStartingHashKey: aws.String("1000")})
			require.NoError(t, err)
			d, err := a.DescribeStreamSummary(ctx, &awsk.DescribeStreamSummaryInput{StreamName: aws.String("s")})
			require.NoError(t, err)
			require.Equal(t, types.StreamStatusUpdating, d.StreamDescriptionSummary.StreamStatus)
			clk.Add(time.Second)
			// a reads the catalog after the deadline: it applies b's split.
			d, err = a.DescribeStreamSummary(ctx, &awsk.DescribeStreamSummaryInput{StreamName: aws.String("s")})
			require.NoError(t, err)
			require.Equal(t, types.StreamStatusActive, d.StreamDescriptionSummary.StreamStatus)
			require.Equal(t, int32(3), *d.StreamDescriptionSummary.OpenShardCount)
			shards, err := b.ListShards(ctx, &awsk.ListShardsInput{StreamName: aws.String("s")})
			require.NoError(t, err)
			require.Len(t, shards.Shards, 4)
			put(b, "2")
			var all []string
			for _, s := range shards.Shards {
				recs, _ := readShard(t, a, ctx, "s", *s.ShardId)
				for _, r := range recs {
					all = append(all, string(r.Data))
				}
			}
			require.ElementsMatch(t, []string{"1", "2"}, all)
			_, err = b.DeleteStream(ctx, &awsk.DeleteStreamInput{StreamName: aws.String("s")})
			require.NoError(t, err)
			_, err = a.PutRecord(ctx, &awsk.PutRecordInput{StreamName: aws.String("s"), PartitionKey: aws.String("k"), Data: []byte("x")})
			requireAPIErr(t, err, "ResourceNotFoundException", "Stream s under account 000000000000 not found.")
		})
	}
}
