package kinesis_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsk "github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"
	"github.com/xstreamgo/xstream/kinesis/kinesistest"
)

// client is an SDK client of ep that does not retry, so that the tests
// see each error at once (the SDK retries LimitExceededException).
func client(ep *kinesistest.Endpoint) *awsk.Client {
	return awsk.NewFromConfig(ep.Config, func(o *awsk.Options) { o.RetryMaxAttempts = 1 })
}

func newClient(t *testing.T) (*awsk.Client, context.Context) {
	return client(kinesistest.Start(t)), context.Background()
}

func newClientOn(t *testing.T, start startFunc) (*awsk.Client, context.Context) {
	return client(start(t)), context.Background()
}

// apiErr returns the Kinesis error type and message of err.
func apiErr(t *testing.T, err error) (string, string) {
	t.Helper()
	var ae smithy.APIError
	require.True(t, errors.As(err, &ae), "not an API error: %v", err)
	return ae.ErrorCode(), ae.ErrorMessage()
}

func createStream(t *testing.T, c *awsk.Client, ctx context.Context, name string, shards int32) {
	t.Helper()
	_, err := c.CreateStream(ctx, &awsk.CreateStreamInput{StreamName: aws.String(name), ShardCount: aws.Int32(shards)})
	require.NoError(t, err)
}

// readShard reads a shard from TRIM_HORIZON to its end (or to the last
// record of an OPEN shard) and returns the records and child shards.
func readShard(t *testing.T, c *awsk.Client, ctx context.Context, stream, shard string) ([]types.Record, []types.ChildShard) {
	t.Helper()
	it, err := c.GetShardIterator(ctx, &awsk.GetShardIteratorInput{StreamName: aws.String(stream), ShardId: aws.String(shard),
		ShardIteratorType: types.ShardIteratorTypeTrimHorizon})
	require.NoError(t, err)
	var recs []types.Record
	iter := it.ShardIterator
	for iter != nil {
		out, err := c.GetRecords(ctx, &awsk.GetRecordsInput{ShardIterator: iter, Limit: aws.Int32(7)})
		require.NoError(t, err)
		recs = append(recs, out.Records...)
		if out.NextShardIterator == nil {
			return recs, out.ChildShards
		}
		if len(out.Records) == 0 {
			return recs, nil
		}
		iter = out.NextShardIterator
	}
	return recs, nil
}

func TestCoreActionsEndToEnd(t *testing.T) {
	eachBackend(t, func(t *testing.T, start startFunc) {
		c, ctx := newClientOn(t, start)
		createStream(t, c, ctx, "orders", 2)

		d, err := c.DescribeStream(ctx, &awsk.DescribeStreamInput{StreamName: aws.String("orders")})
		require.NoError(t, err)
		sd := d.StreamDescription
		require.Equal(t, types.StreamStatusActive, sd.StreamStatus)
		require.Len(t, sd.Shards, 2)
		require.Equal(t, "shardId-000000000000", *sd.Shards[0].ShardId)
		require.Equal(t, "0", *sd.Shards[0].HashKeyRange.StartingHashKey)
		require.Equal(t, "170141183460469231731687303715884105727", *sd.Shards[0].HashKeyRange.EndingHashKey)
		require.Equal(t, "340282366920938463463374607431768211455", *sd.Shards[1].HashKeyRange.EndingHashKey)
		require.Equal(t, int32(24), *sd.RetentionPeriodHours)
		require.Equal(t, "arn:aws:kinesis:us-east-1:000000000000:stream/orders", *sd.StreamARN)

		sum, err := c.DescribeStreamSummary(ctx, &awsk.DescribeStreamSummaryInput{StreamARN: sd.StreamARN})
		require.NoError(t, err)
		require.Equal(t, int32(2), *sum.StreamDescriptionSummary.OpenShardCount)

		ls, err := c.ListStreams(ctx, &awsk.ListStreamsInput{})
		require.NoError(t, err)
		require.Equal(t, []string{"orders"}, ls.StreamNames)

		// Puts, one by one and in a batch.
		sent := map[string][]string{}
		for i := range 20 {
			pk := fmt.Sprintf("user-%d", i%5)
			data := fmt.Sprintf("event %d", i)
			out, err := c.PutRecord(ctx, &awsk.PutRecordInput{StreamName: aws.String("orders"), PartitionKey: aws.String(pk), Data: []byte(data)})
			require.NoError(t, err)
			require.NotEmpty(t, *out.SequenceNumber)
			sent[pk] = append(sent[pk], data)
		}
		var batch []types.PutRecordsRequestEntry
		for i := 20; i < 40; i++ {
			pk := fmt.Sprintf("user-%d", i%5)
			data := fmt.Sprintf("event %d", i)
			batch = append(batch, types.PutRecordsRequestEntry{PartitionKey: aws.String(pk), Data: []byte(data)})
			sent[pk] = append(sent[pk], data)
		}
		pr, err := c.PutRecords(ctx, &awsk.PutRecordsInput{StreamName: aws.String("orders"), Records: batch})
		require.NoError(t, err)
		require.Equal(t, int32(0), *pr.FailedRecordCount)
		require.Len(t, pr.Records, 20)

		// Split shard 0, merge the two children, then rescale.
		_, err = c.SplitShard(ctx, &awsk.SplitShardInput{StreamName: aws.String("orders"), ShardToSplit: aws.String("shardId-000000000000"),
			NewStartingHashKey: aws.String("85070591730234615865843651857942052864")})
		require.NoError(t, err)
		for i := 40; i < 60; i++ {
			pk := fmt.Sprintf("user-%d", i%5)
			data := fmt.Sprintf("event %d", i)
			_, err := c.PutRecord(ctx, &awsk.PutRecordInput{StreamName: aws.String("orders"), PartitionKey: aws.String(pk), Data: []byte(data)})
			require.NoError(t, err)
			sent[pk] = append(sent[pk], data)
		}
		_, err = c.MergeShards(ctx, &awsk.MergeShardsInput{StreamName: aws.String("orders"), ShardToMerge: aws.String("shardId-000000000002"),
			AdjacentShardToMerge: aws.String("shardId-000000000003")})
		require.NoError(t, err)
		us, err := c.UpdateShardCount(ctx, &awsk.UpdateShardCountInput{StreamName: aws.String("orders"), TargetShardCount: aws.Int32(3),
			ScalingType: types.ScalingTypeUniformScaling})
		require.NoError(t, err)
		require.Equal(t, int32(2), *us.CurrentShardCount)
		for i := 60; i < 80; i++ {
			pk := fmt.Sprintf("user-%d", i%5)
			data := fmt.Sprintf("event %d", i)
			_, err := c.PutRecord(ctx, &awsk.PutRecordInput{StreamName: aws.String("orders"), PartitionKey: aws.String(pk), Data: []byte(data)})
			require.NoError(t, err)
			sent[pk] = append(sent[pk], data)
		}

		shards, err := c.ListShards(ctx, &awsk.ListShardsInput{StreamName: aws.String("orders")})
		require.NoError(t, err)
		open := 0
		for _, s := range shards.Shards {
			if s.SequenceNumberRange.EndingSequenceNumber == nil {
				open++
			}
		}
		require.Equal(t, 3, open)

		// Read every shard, parents before children, following ChildShards.
		got := map[string][]string{}
		done := map[string]bool{}
		queue := []string{"shardId-000000000000", "shardId-000000000001"}
		parents := map[string][]string{}
		for len(queue) > 0 {
			s := queue[0]
			queue = queue[1:]
			if done[s] {
				continue
			}
			ready := true
			for _, p := range parents[s] {
				ready = ready && done[p]
			}
			if !ready {
				queue = append(queue, s)
				continue
			}
			recs, children := readShard(t, c, ctx, "orders", s)
			done[s] = true
			for _, r := range recs {
				got[*r.PartitionKey] = append(got[*r.PartitionKey], string(r.Data))
			}
			for _, ch := range children {
				parents[*ch.ShardId] = ch.ParentShards
				queue = append(queue, *ch.ShardId)
			}
		}
		require.Equal(t, sent, got)

		_, err = c.DeleteStream(ctx, &awsk.DeleteStreamInput{StreamName: aws.String("orders")})
		require.NoError(t, err)
		_, err = c.DescribeStream(ctx, &awsk.DescribeStreamInput{StreamName: aws.String("orders")})
		typ, msg := apiErr(t, err)
		require.Equal(t, "ResourceNotFoundException", typ)
		require.Equal(t, "Stream orders under account 000000000000 not found.", msg)
	})
}

func TestGetRecordsIteratorsAndPositions(t *testing.T) {
	eachBackend(t, func(t *testing.T, start startFunc) {
		c, ctx := newClientOn(t, start)
		createStream(t, c, ctx, "s", 1)
		var seqs []string
		for i := range 5 {
			out, err := c.PutRecord(ctx, &awsk.PutRecordInput{StreamName: aws.String("s"), PartitionKey: aws.String("k"), Data: []byte{byte(i)}})
			require.NoError(t, err)
			seqs = append(seqs, *out.SequenceNumber)
		}
		get := func(typ types.ShardIteratorType, seq *string) []types.Record {
			it, err := c.GetShardIterator(ctx, &awsk.GetShardIteratorInput{StreamName: aws.String("s"), ShardId: aws.String("shardId-000000000000"),
				ShardIteratorType: typ, StartingSequenceNumber: seq})
			require.NoError(t, err)
			out, err := c.GetRecords(ctx, &awsk.GetRecordsInput{ShardIterator: it.ShardIterator})
			require.NoError(t, err)
			require.NotNil(t, out.NextShardIterator)
			return out.Records
		}
		require.Len(t, get(types.ShardIteratorTypeTrimHorizon, nil), 5)
		require.Len(t, get(types.ShardIteratorTypeLatest, nil), 0)
		at := get(types.ShardIteratorTypeAtSequenceNumber, &seqs[2])
		require.Len(t, at, 3)
		require.Equal(t, seqs[2], *at[0].SequenceNumber)
		require.Equal(t, []byte{2}, at[0].Data)
		after := get(types.ShardIteratorTypeAfterSequenceNumber, &seqs[2])
		require.Len(t, after, 2)
		require.Equal(t, seqs[3], *after[0].SequenceNumber)
		for _, r := range at {
			require.WithinDuration(t, time.Now(), *r.ApproximateArrivalTimestamp, time.Minute)
		}
	})
}
