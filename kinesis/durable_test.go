package kinesis_test

import (
	"context"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsk "github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"
	"github.com/stretchr/testify/require"
	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/kinesis"
	"github.com/xstreamgo/xstream/kinesis/kinesistest"
)

// On a durable DB the streams, their records, shards and Kinesis state
// (tags, retention, consumers) survive closing and opening it again.
func TestDurableBackend(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	open := func() (*awsk.Client, *xstream.DB) {
		db, err := xstream.Open(dir)
		require.NoError(t, err)
		ep := kinesistest.StartWith(t, kinesis.LocalBackend(db))
		return awsk.NewFromConfig(ep.Config), db
	}
	c, db := open()
	_, err := c.CreateStream(ctx, &awsk.CreateStreamInput{StreamName: aws.String("d"), ShardCount: aws.Int32(2)})
	require.NoError(t, err)
	put, err := c.PutRecord(ctx, &awsk.PutRecordInput{StreamName: aws.String("d"), PartitionKey: aws.String("k"), Data: []byte("kept")})
	require.NoError(t, err)
	_, err = c.SplitShard(ctx, &awsk.SplitShardInput{StreamName: aws.String("d"), ShardToSplit: aws.String("shardId-000000000001"),
		NewStartingHashKey: aws.String("255211775190703847597530955573826158592")})
	require.NoError(t, err)
	_, err = c.AddTagsToStream(ctx, &awsk.AddTagsToStreamInput{StreamName: aws.String("d"), Tags: map[string]string{"team": "a"}})
	require.NoError(t, err)
	_, err = c.IncreaseStreamRetentionPeriod(ctx, &awsk.IncreaseStreamRetentionPeriodInput{StreamName: aws.String("d"), RetentionPeriodHours: aws.Int32(48)})
	require.NoError(t, err)
	reg, err := c.RegisterStreamConsumer(ctx, &awsk.RegisterStreamConsumerInput{StreamARN: aws.String("arn:aws:kinesis:us-east-1:000000000000:stream/d"), ConsumerName: aws.String("fan")})
	require.NoError(t, err)
	require.NoError(t, db.Close())

	c, db = open()
	defer db.Close()
	d, err := c.DescribeStream(ctx, &awsk.DescribeStreamInput{StreamName: aws.String("d")})
	require.NoError(t, err)
	require.Len(t, d.StreamDescription.Shards, 4)
	require.Equal(t, int32(48), *d.StreamDescription.RetentionPeriodHours)
	tags, err := c.ListTagsForStream(ctx, &awsk.ListTagsForStreamInput{StreamName: aws.String("d")})
	require.NoError(t, err)
	require.Equal(t, []types.Tag{{Key: aws.String("team"), Value: aws.String("a")}}, tags.Tags)
	cons, err := c.ListStreamConsumers(ctx, &awsk.ListStreamConsumersInput{StreamARN: aws.String("arn:aws:kinesis:us-east-1:000000000000:stream/d")})
	require.NoError(t, err)
	require.Len(t, cons.Consumers, 1)
	require.Equal(t, *reg.Consumer.ConsumerARN, *cons.Consumers[0].ConsumerARN)
	it, err := c.GetShardIterator(ctx, &awsk.GetShardIteratorInput{StreamName: aws.String("d"), ShardId: put.ShardId,
		ShardIteratorType: types.ShardIteratorTypeAtSequenceNumber, StartingSequenceNumber: put.SequenceNumber})
	require.NoError(t, err)
	recs, err := c.GetRecords(ctx, &awsk.GetRecordsInput{ShardIterator: it.ShardIterator})
	require.NoError(t, err)
	require.Len(t, recs.Records, 1)
	require.Equal(t, "kept", string(recs.Records[0].Data))
}
