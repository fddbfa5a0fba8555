package kinesis_test

import (
	"fmt"
	"reflect"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsk "github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"
	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/require"
	"github.com/xstreamgo/xstream/kinesis/kinesistest"
)

// The CBOR encoding, as the Java SDK sends it: Data as a byte string,
// timestamps as tag 1 and epoch milliseconds.
func TestCBOR(t *testing.T) {
	ep := kinesistest.Start(t)
	send := func(action string, v any) (rawReply, map[string]any) {
		b, err := cbor.Marshal(v)
		require.NoError(t, err)
		r := raw(t, ep.URL, action, "application/x-amz-cbor-1.1", b, "")
		require.Equal(t, "application/x-amz-cbor-1.1", r.Header.Get("Content-Type"))
		var m map[string]any
		require.NoError(t, cborStrMaps.Unmarshal(r.Body, &m))
		return r, m
	}
	r, _ := send("CreateStream", map[string]any{"StreamName": "s", "ShardCount": 1})
	require.Equal(t, 200, r.Status)
	payload := []byte{0, 1, 2, 0xff, 'x'}
	r, put := send("PutRecord", map[string]any{"StreamName": "s", "PartitionKey": "k", "Data": payload})
	require.Equal(t, 200, r.Status, "%v", put)
	require.Equal(t, "shardId-000000000000", put["ShardId"])
	_, it := send("GetShardIterator", map[string]any{"StreamName": "s", "ShardId": "shardId-000000000000", "ShardIteratorType": "TRIM_HORIZON"})
	r, got := send("GetRecords", map[string]any{"ShardIterator": it["ShardIterator"]})
	require.Equal(t, 200, r.Status, "%v", got)
	recs := got["Records"].([]any)
	require.Len(t, recs, 1)
	rec := recs[0].(map[string]any)
	require.Equal(t, payload, rec["Data"])
	require.Equal(t, put["SequenceNumber"], rec["SequenceNumber"])
	// Tag 1 (0xc1) and a 64-bit integer (0x1b) of milliseconds, which the
	// decoder reads as a time.
	require.Contains(t, string(r.Body), "\xc1\x1b")
	ts, ok := rec["ApproximateArrivalTimestamp"].(time.Time)
	require.True(t, ok, "a tagged timestamp: %T", rec["ApproximateArrivalTimestamp"])
	// The decoder reads the tag's number as seconds (RFC 8949); it is
	// milliseconds, as the Java SDK reads it.
	require.WithinDuration(t, time.Now(), time.UnixMilli(ts.Unix()), time.Minute)

	// AT_TIMESTAMP with a Java-style timestamp.
	_, it = send("GetShardIterator", map[string]any{"StreamName": "s", "ShardId": "shardId-000000000000", "ShardIteratorType": "AT_TIMESTAMP",
		"Timestamp": cbor.Tag{Number: 1, Content: time.Now().Add(-time.Minute).UnixMilli()}})
	_, got = send("GetRecords", map[string]any{"ShardIterator": it["ShardIterator"]})
	require.Len(t, got["Records"].([]any), 1)

	// Errors in CBOR.
	r, _ = send("DescribeStream", map[string]any{"StreamName": "nope"})
	typ, msg := r.errType(t)
	require.Equal(t, 400, r.Status)
	require.Equal(t, "ResourceNotFoundException", typ)
	require.Equal(t, "Stream nope under account 000000000000 not found.", msg)
	r, _ = send("CreateStream", map[string]any{"StreamName": "t", "ShardCount": "x"})
	typ, _ = r.errType(t)
	require.Equal(t, "SerializationException", typ)
}

func TestTagsRetentionAndPaging(t *testing.T) {
	c, ctx := newClient(t)
	for i := range 5 {
		createStream(t, c, ctx, fmt.Sprintf("s%d", i), 1)
	}
	// ListStreams pages.
	p := awsk.NewListStreamsPaginator(c, &awsk.ListStreamsInput{Limit: aws.Int32(2)})
	var names []string
	pages := 0
	for p.HasMorePages() {
		out, err := p.NextPage(ctx)
		require.NoError(t, err)
		names = append(names, out.StreamNames...)
		pages++
	}
	require.Equal(t, []string{"s0", "s1", "s2", "s3", "s4"}, names)
	require.Equal(t, 3, pages)
	ls, err := c.ListStreams(ctx, &awsk.ListStreamsInput{ExclusiveStartStreamName: aws.String("s2")})
	require.NoError(t, err)
	require.Equal(t, []string{"s3", "s4"}, ls.StreamNames)
	require.False(t, *ls.HasMoreStreams)
	require.Len(t, ls.StreamSummaries, 2)

	// Tags.
	_, err = c.AddTagsToStream(ctx, &awsk.AddTagsToStreamInput{StreamName: aws.String("s0"), Tags: map[string]string{"b": "2", "a": "1", "c": "3"}})
	require.NoError(t, err)
	tl, err := c.ListTagsForStream(ctx, &awsk.ListTagsForStreamInput{StreamName: aws.String("s0"), Limit: aws.Int32(2)})
	require.NoError(t, err)
	require.Equal(t, []types.Tag{{Key: aws.String("a"), Value: aws.String("1")}, {Key: aws.String("b"), Value: aws.String("2")}}, tl.Tags)
	require.True(t, *tl.HasMoreTags)
	_, err = c.RemoveTagsFromStream(ctx, &awsk.RemoveTagsFromStreamInput{StreamName: aws.String("s0"), TagKeys: []string{"a"}})
	require.NoError(t, err)
	tl, err = c.ListTagsForStream(ctx, &awsk.ListTagsForStreamInput{StreamName: aws.String("s0"), ExclusiveStartTagKey: aws.String("b")})
	require.NoError(t, err)
	require.Equal(t, []types.Tag{{Key: aws.String("c"), Value: aws.String("3")}}, tl.Tags)
	many := map[string]string{}
	for i := range 49 {
		many[fmt.Sprintf("k%d", i)] = "v"
	}
	_, err = c.AddTagsToStream(ctx, &awsk.AddTagsToStreamInput{StreamName: aws.String("s0"), Tags: many})
	requireAPIErr(t, err, "InvalidArgumentException", "Failed to add tags to stream s0 under account 000000000000 because a given stream cannot have more than 50 tags associated with it.")
	_, err = c.AddTagsToStream(ctx, &awsk.AddTagsToStreamInput{StreamName: aws.String("s0"), Tags: map[string]string{"a": "<b>"}})
	requireAPIErr(t, err, "InvalidArgumentException", "Some tags contain invalid characters. Valid characters: Unicode letters, digits, white space, _ . / = + - % @.")

	// Retention.
	_, err = c.IncreaseStreamRetentionPeriod(ctx, &awsk.IncreaseStreamRetentionPeriodInput{StreamName: aws.String("s1"), RetentionPeriodHours: aws.Int32(48)})
	require.NoError(t, err)
	d, err := c.DescribeStreamSummary(ctx, &awsk.DescribeStreamSummaryInput{StreamName: aws.String("s1")})
	require.NoError(t, err)
	require.Equal(t, int32(48), *d.StreamDescriptionSummary.RetentionPeriodHours)
	_, err = c.IncreaseStreamRetentionPeriod(ctx, &awsk.IncreaseStreamRetentionPeriodInput{StreamName: aws.String("s1"), RetentionPeriodHours: aws.Int32(30)})
	requireAPIErr(t, err, "InvalidArgumentException", "Requested retention period (30 hours) for stream s1 can not be shorter than existing retention period (48 hours). Use DecreaseRetentionPeriod API.")
	_, err = c.DecreaseStreamRetentionPeriod(ctx, &awsk.DecreaseStreamRetentionPeriodInput{StreamName: aws.String("s1"), RetentionPeriodHours: aws.Int32(12)})
	requireAPIErr(t, err, "InvalidArgumentException", "Minimum allowed retention period is 24 hours. Requested retention period (12 hours) is too short.")
	_, err = c.DecreaseStreamRetentionPeriod(ctx, &awsk.DecreaseStreamRetentionPeriodInput{StreamName: aws.String("s1"), RetentionPeriodHours: aws.Int32(24)})
	require.NoError(t, err)
}

func TestListShardsFiltersAndPaging(t *testing.T) {
	eachBackend(t, func(t *testing.T, start startFunc) {
		c, ctx := newClientOn(t, start)
		createStream(t, c, ctx, "s", 4)
		_, err := c.SplitShard(ctx, &awsk.SplitShardInput{StreamName: aws.String("s"), ShardToSplit: aws.String("shardId-000000000000"), NewStartingHashKey: aws.String("1000")})
		require.NoError(t, err)
		var ids []string
		var token, first *string
		in := &awsk.ListShardsInput{StreamName: aws.String("s"), MaxResults: aws.Int32(2)}
		for {
			out, err := c.ListShards(ctx, in)
			require.NoError(t, err)
			for _, s := range out.Shards {
				ids = append(ids, *s.ShardId)
			}
			token = out.NextToken
			if token == nil {
				break
			}
			if first == nil {
				first = token
			}
			in = &awsk.ListShardsInput{NextToken: token, MaxResults: aws.Int32(2)}
		}
		require.Len(t, ids, 6)
		latest, err := c.ListShards(ctx, &awsk.ListShardsInput{StreamName: aws.String("s"), ShardFilter: &types.ShardFilter{Type: types.ShardFilterTypeAtLatest}})
		require.NoError(t, err)
		require.Len(t, latest.Shards, 5)
		after, err := c.ListShards(ctx, &awsk.ListShardsInput{StreamName: aws.String("s"), ShardFilter: &types.ShardFilter{Type: types.ShardFilterTypeAfterShardId, ShardId: aws.String("shardId-000000000003")}})
		require.NoError(t, err)
		require.Len(t, after.Shards, 2)
		ex, err := c.ListShards(ctx, &awsk.ListShardsInput{StreamName: aws.String("s"), ExclusiveStartShardId: aws.String("shardId-000000000004")})
		require.NoError(t, err)
		require.Len(t, ex.Shards, 1)
		_, err = c.ListShards(ctx, &awsk.ListShardsInput{StreamName: aws.String("s"), NextToken: first})
		requireAPIErr(t, err, "InvalidArgumentException", "NextToken and StreamName cannot be provided together.")
		d, err := c.DescribeStream(ctx, &awsk.DescribeStreamInput{StreamName: aws.String("s"), Limit: aws.Int32(4)})
		require.NoError(t, err)
		require.Len(t, d.StreamDescription.Shards, 4)
		require.True(t, *d.StreamDescription.HasMoreShards)
		d, err = c.DescribeStream(ctx, &awsk.DescribeStreamInput{StreamName: aws.String("s"), ExclusiveStartShardId: aws.String("shardId-000000000003")})
		require.NoError(t, err)
		require.Len(t, d.StreamDescription.Shards, 2)
		require.False(t, *d.StreamDescription.HasMoreShards)
	})
}

// StreamARN names the stream wherever StreamName does.
func TestStreamARN(t *testing.T) {
	c, ctx := newClient(t)
	createStream(t, c, ctx, "s", 1)
	arn := aws.String("arn:aws:kinesis:us-east-1:000000000000:stream/s")
	out, err := c.PutRecord(ctx, &awsk.PutRecordInput{StreamARN: arn, PartitionKey: aws.String("k"), Data: []byte("x")})
	require.NoError(t, err)
	it, err := c.GetShardIterator(ctx, &awsk.GetShardIteratorInput{StreamARN: arn, ShardId: out.ShardId, ShardIteratorType: types.ShardIteratorTypeTrimHorizon})
	require.NoError(t, err)
	recs, err := c.GetRecords(ctx, &awsk.GetRecordsInput{StreamARN: arn, ShardIterator: it.ShardIterator})
	require.NoError(t, err)
	require.Len(t, recs.Records, 1)
	_, err = c.DescribeStreamSummary(ctx, &awsk.DescribeStreamSummaryInput{StreamARN: aws.String("arn:aws:kinesis:us-east-1:123456789012:stream/s")})
	requireAPIErr(t, err, "ResourceNotFoundException", "Stream s under account 000000000000 not found.")
}

func TestConsumers(t *testing.T) {
	eachBackend(t, func(t *testing.T, start startFunc) {
		c, ctx := newClientOn(t, start)
		createStream(t, c, ctx, "s", 1)
		arn := aws.String("arn:aws:kinesis:us-east-1:000000000000:stream/s")
		reg, err := c.RegisterStreamConsumer(ctx, &awsk.RegisterStreamConsumerInput{StreamARN: arn, ConsumerName: aws.String("app")})
		require.NoError(t, err)
		require.Equal(t, types.ConsumerStatusActive, reg.Consumer.ConsumerStatus)
		_, err = c.RegisterStreamConsumer(ctx, &awsk.RegisterStreamConsumerInput{StreamARN: arn, ConsumerName: aws.String("app")})
		requireAPIErr(t, err, "ResourceInUseException", "")
		d, err := c.DescribeStreamConsumer(ctx, &awsk.DescribeStreamConsumerInput{ConsumerARN: reg.Consumer.ConsumerARN})
		require.NoError(t, err)
		require.Equal(t, "app", *d.ConsumerDescription.ConsumerName)
		require.Equal(t, *arn, *d.ConsumerDescription.StreamARN)
		for i := range 19 {
			_, err := c.RegisterStreamConsumer(ctx, &awsk.RegisterStreamConsumerInput{StreamARN: arn, ConsumerName: aws.String(fmt.Sprintf("c%02d", i))})
			require.NoError(t, err)
		}
		_, err = c.RegisterStreamConsumer(ctx, &awsk.RegisterStreamConsumerInput{StreamARN: arn, ConsumerName: aws.String("one-too-many")})
		requireAPIErr(t, err, "LimitExceededException", "")
		p := awsk.NewListStreamConsumersPaginator(c, &awsk.ListStreamConsumersInput{StreamARN: arn, MaxResults: aws.Int32(7)})
		n := 0
		for p.HasMorePages() {
			out, err := p.NextPage(ctx)
			require.NoError(t, err)
			n += len(out.Consumers)
		}
		require.Equal(t, 20, n)
		_, err = c.DeleteStream(ctx, &awsk.DeleteStreamInput{StreamName: aws.String("s")})
		requireAPIErr(t, err, "ResourceInUseException", "")
		_, err = c.DeregisterStreamConsumer(ctx, &awsk.DeregisterStreamConsumerInput{StreamARN: arn, ConsumerName: aws.String("app")})
		require.NoError(t, err)
		_, err = c.DescribeStreamConsumer(ctx, &awsk.DescribeStreamConsumerInput{StreamARN: arn, ConsumerName: aws.String("app")})
		requireAPIErr(t, err, "ResourceNotFoundException", "")
		_, err = c.DeleteStream(ctx, &awsk.DeleteStreamInput{StreamName: aws.String("s"), EnforceConsumerDeletion: aws.Bool(true)})
		require.NoError(t, err)
	})
}

// PutRecords reports every record's shard and sequence number, in order,
// and sequence numbers grow within a shard.
func TestPutRecordsOrder(t *testing.T) {
	eachBackend(t, func(t *testing.T, start startFunc) {
		c, ctx := newClientOn(t, start)
		createStream(t, c, ctx, "s", 3)
		var entries []types.PutRecordsRequestEntry
		for i := range 300 {
			entries = append(entries, types.PutRecordsRequestEntry{PartitionKey: aws.String(fmt.Sprint(i % 17)), Data: []byte(fmt.Sprint(i))})
		}
		entries[5].ExplicitHashKey = aws.String("0")
		out, err := c.PutRecords(ctx, &awsk.PutRecordsInput{StreamName: aws.String("s"), Records: entries})
		require.NoError(t, err)
		require.Equal(t, "shardId-000000000000", *out.Records[5].ShardId)
		last := map[string]string{}
		for _, r := range out.Records {
			if prev, ok := last[*r.ShardId]; ok {
				require.Less(t, cmpDec(prev, *r.SequenceNumber), 0)
			}
			last[*r.ShardId] = *r.SequenceNumber
		}
	})
}

var cborStrMaps, _ = cbor.DecOptions{DefaultMapType: reflect.TypeOf(map[string]any(nil))}.DecMode()

// cmpDec compares two decimal strings as numbers.
func cmpDec(a, b string) int {
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
