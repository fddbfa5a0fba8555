package kinesis_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsk "github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"
	"github.com/stretchr/testify/require"
	"github.com/xstreamgo/xstream/kinesis"
	"github.com/xstreamgo/xstream/kinesis/kinesistest"
)

func requireAPIErr(t *testing.T, err error, typ, msg string) {
	t.Helper()
	require.Error(t, err)
	gt, gm := apiErr(t, err)
	require.Equal(t, typ, gt)
	if msg != "" {
		require.Equal(t, msg, gm)
	}
}

// The statuses CREATING, UPDATING and DELETING last their delays, moved
// by the handler's clock, and what needs an ACTIVE stream is refused
// meanwhile.
func TestStatusDelays(t *testing.T) {
	eachBackend(t, func(t *testing.T, start startFunc) {
		clk := newFakeClock()
		ep := start(t, kinesis.WithClock(clk.Now), kinesis.WithDelays(kinesis.Delays{Create: time.Second, Update: 2 * time.Second, Delete: 3 * time.Second}))
		c, ctx := client(ep), context.Background()
		createStream(t, c, ctx, "s", 2)
		describe := func() *types.StreamDescription {
			d, err := c.DescribeStream(ctx, &awsk.DescribeStreamInput{StreamName: aws.String("s")})
			require.NoError(t, err)
			return d.StreamDescription
		}
		d := describe()
		require.Equal(t, types.StreamStatusCreating, d.StreamStatus)
		require.Empty(t, d.Shards)
		_, err := c.PutRecord(ctx, &awsk.PutRecordInput{StreamName: aws.String("s"), PartitionKey: aws.String("k"), Data: []byte("x")})
		requireAPIErr(t, err, "ResourceNotFoundException", "Stream s under account 000000000000 not found.")
		_, err = c.SplitShard(ctx, &awsk.SplitShardInput{StreamName: aws.String("s"), ShardToSplit: aws.String("shardId-000000000000"), NewStartingHashKey: aws.String("1000")})
		requireAPIErr(t, err, "ResourceInUseException", "Stream s under account 000000000000 not ACTIVE, instead in state CREATING")

		clk.Add(time.Second)
		d = describe()
		require.Equal(t, types.StreamStatusActive, d.StreamStatus)
		require.Len(t, d.Shards, 2)

		_, err = c.SplitShard(ctx, &awsk.SplitShardInput{StreamName: aws.String("s"), ShardToSplit: aws.String("shardId-000000000000"), NewStartingHashKey: aws.String("1000")})
		require.NoError(t, err)
		d = describe()
		require.Equal(t, types.StreamStatusUpdating, d.StreamStatus)
		require.Len(t, d.Shards, 2, "the new shards appear when the update ends")
		_, err = c.PutRecord(ctx, &awsk.PutRecordInput{StreamName: aws.String("s"), PartitionKey: aws.String("k"), Data: []byte("x")})
		require.NoError(t, err, "an UPDATING stream takes records")
		_, err = c.MergeShards(ctx, &awsk.MergeShardsInput{StreamName: aws.String("s"), ShardToMerge: aws.String("shardId-000000000000"), AdjacentShardToMerge: aws.String("shardId-000000000001")})
		requireAPIErr(t, err, "ResourceInUseException", "Stream s under account 000000000000 not ACTIVE, instead in state UPDATING")
		clk.Add(2 * time.Second)
		d = describe()
		require.Equal(t, types.StreamStatusActive, d.StreamStatus)
		require.Len(t, d.Shards, 4)
		require.NotNil(t, d.Shards[0].SequenceNumberRange.EndingSequenceNumber)

		_, err = c.DeleteStream(ctx, &awsk.DeleteStreamInput{StreamName: aws.String("s")})
		require.NoError(t, err)
		require.Equal(t, types.StreamStatusDeleting, describe().StreamStatus)
		_, err = c.CreateStream(ctx, &awsk.CreateStreamInput{StreamName: aws.String("s"), ShardCount: aws.Int32(1)})
		requireAPIErr(t, err, "ResourceInUseException", "Stream s under account 000000000000 already exists.")
		clk.Add(3 * time.Second)
		_, err = c.DescribeStream(ctx, &awsk.DescribeStreamInput{StreamName: aws.String("s")})
		requireAPIErr(t, err, "ResourceNotFoundException", "")
		_, err = c.CreateStream(ctx, &awsk.CreateStreamInput{StreamName: aws.String("s"), ShardCount: aws.Int32(1)})
		require.NoError(t, err)
	})
}

// The account's shard limit counts OPEN shards over all streams.
func TestShardLimit(t *testing.T) {
	eachBackend(t, func(t *testing.T, start startFunc) {
		ep := start(t, kinesis.WithShardLimit(3))
		c, ctx := client(ep), context.Background()
		createStream(t, c, ctx, "a", 2)
		_, err := c.CreateStream(ctx, &awsk.CreateStreamInput{StreamName: aws.String("b"), ShardCount: aws.Int32(2)})
		requireAPIErr(t, err, "LimitExceededException", "This request would exceed the shard limit for the account 000000000000 in us-east-1. "+
			"Current shard count for the account: 2. Limit: 3. Number of additional shards that would have resulted from this request: 2. "+
			"Refer to the AWS Service Limits page (http://docs.aws.amazon.com/general/latest/gr/aws_service_limits.html) for current limits and how to request higher limits.")
		_, err = c.SplitShard(ctx, &awsk.SplitShardInput{StreamName: aws.String("a"), ShardToSplit: aws.String("shardId-000000000000"), NewStartingHashKey: aws.String("1000")})
		require.NoError(t, err)
		_, err = c.SplitShard(ctx, &awsk.SplitShardInput{StreamName: aws.String("a"), ShardToSplit: aws.String("shardId-000000000001"), NewStartingHashKey: aws.String("170141183460469231731687303715884105729")})
		requireAPIErr(t, err, "LimitExceededException", "")
		l, err := c.DescribeLimits(ctx, &awsk.DescribeLimitsInput{})
		require.NoError(t, err)
		require.Equal(t, int32(3), *l.ShardLimit)
		require.Equal(t, int32(3), *l.OpenShardCount)
		_, err = c.UpdateShardCount(ctx, &awsk.UpdateShardCountInput{StreamName: aws.String("a"), TargetShardCount: aws.Int32(4), ScalingType: types.ScalingTypeUniformScaling})
		requireAPIErr(t, err, "LimitExceededException", "")
	})
}

// Validation errors name the field, the constraint and the value, as
// Kinesis writes them.
func TestValidationWording(t *testing.T) {
	ep := kinesistest.Start(t)
	r := rawJSON(t, ep.URL, "CreateStream", map[string]any{"StreamName": "a b", "ShardCount": 0})
	require.Equal(t, 400, r.Status)
	typ, msg := r.errType(t)
	require.Equal(t, "ValidationException", typ)
	require.Equal(t, "2 validation errors detected: Value '0' at 'shardCount' failed to satisfy constraint: Member must have value greater than or equal to 1; "+
		"Value 'a b' at 'streamName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+", msg)

	r = rawJSON(t, ep.URL, "CreateStream", map[string]any{"ShardCount": 1})
	typ, msg = r.errType(t)
	require.Equal(t, "ValidationException", typ)
	require.Equal(t, "1 validation error detected: Value null at 'streamName' failed to satisfy constraint: Member must not be null", msg)

	r = rawJSON(t, ep.URL, "CreateStream", map[string]any{"StreamName": "s", "ShardCount": "two"})
	typ, msg = r.errType(t)
	require.Equal(t, "SerializationException", typ)
	require.Equal(t, "class java.lang.String can not be converted to an Integer", msg)

	r = rawJSON(t, ep.URL, "PutRecord", map[string]any{"StreamName": "s", "PartitionKey": "", "Data": "abc"})
	typ, msg = r.errType(t)
	require.Equal(t, "SerializationException", typ)
	require.Equal(t, "'abc' can not be converted to a Blob: Base64 encoded length is expected a multiple of 4 bytes but found: 3", msg)

	r = rawJSON(t, ep.URL, "PutRecord", map[string]any{"StreamName": "s", "PartitionKey": "", "Data": "", "ExplicitHashKey": "01"})
	typ, msg = r.errType(t)
	require.Equal(t, "ValidationException", typ)
	require.Equal(t, "2 validation errors detected: Value '' at 'partitionKey' failed to satisfy constraint: Member must have length greater than or equal to 1; "+
		"Value '01' at 'explicitHashKey' failed to satisfy constraint: Member must satisfy regular expression pattern: 0|([1-9]\\d{0,38})", msg)

	r = rawJSON(t, ep.URL, "GetRecords", map[string]any{"ShardIterator": "x", "Limit": 10001})
	typ, msg = r.errType(t)
	require.Equal(t, "ValidationException", typ)
	require.Equal(t, "1 validation error detected: Value '10001' at 'limit' failed to satisfy constraint: Member must have value less than or equal to 10000", msg)
}

// Records up to 1 MiB, PutRecords up to 500 records and 5 MiB.
func TestRecordLimits(t *testing.T) {
	ep := kinesistest.Start(t)
	c, ctx := client(ep), context.Background()
	createStream(t, c, ctx, "s", 1)
	_, err := c.PutRecord(ctx, &awsk.PutRecordInput{StreamName: aws.String("s"), PartitionKey: aws.String("k"), Data: make([]byte, 1<<20)})
	require.NoError(t, err)
	_, err = c.PutRecord(ctx, &awsk.PutRecordInput{StreamName: aws.String("s"), PartitionKey: aws.String("k"), Data: make([]byte, 1<<20+1)})
	requireAPIErr(t, err, "ValidationException", "1 validation error detected: Value 'java.nio.HeapByteBuffer[pos=0 lim=1048577 cap=1048577]' at 'data' failed to satisfy constraint: Member must have length less than or equal to 1048576")

	many := make([]types.PutRecordsRequestEntry, 501)
	for i := range many {
		many[i] = types.PutRecordsRequestEntry{PartitionKey: aws.String("k"), Data: []byte("x")}
	}
	_, err = c.PutRecords(ctx, &awsk.PutRecordsInput{StreamName: aws.String("s"), Records: many})
	_, msg := apiErr(t, err)
	require.True(t, strings.HasPrefix(msg, "1 validation error detected: Value '[com.amazonaws.kinesis.v20131202.PutRecordsRequestEntry@c965e310, "), msg)
	require.True(t, strings.HasSuffix(msg, "]' at 'records' failed to satisfy constraint: Member must have length less than or equal to 500"), msg)

	big := make([]types.PutRecordsRequestEntry, 6)
	for i := range big {
		big[i] = types.PutRecordsRequestEntry{PartitionKey: aws.String("k"), Data: make([]byte, 1<<20)}
	}
	big[5].Data = make([]byte, 1024)
	_, err = c.PutRecords(ctx, &awsk.PutRecordsInput{StreamName: aws.String("s"), Records: big})
	requireAPIErr(t, err, "InvalidArgumentException", "Records size exceeds 5 MB limit")

	_, err = c.PutRecord(ctx, &awsk.PutRecordInput{StreamName: aws.String("s"), PartitionKey: aws.String("k"), Data: []byte("x"),
		ExplicitHashKey: aws.String("340282366920938463463374607431768211456")})
	requireAPIErr(t, err, "InvalidArgumentException", "Invalid ExplicitHashKey. ExplicitHashKey must be in the range: [0, 2^128-1]. Specified value was 340282366920938463463374607431768211456")
}

// Iterators are opaque, refused when changed, and expire after five
// minutes.
func TestIteratorExpiryAndValidity(t *testing.T) {
	eachBackend(t, func(t *testing.T, start startFunc) {
		clk := newFakeClock()
		ep := start(t, kinesis.WithClock(clk.Now))
		c, ctx := client(ep), context.Background()
		createStream(t, c, ctx, "s", 1)
		it, err := c.GetShardIterator(ctx, &awsk.GetShardIteratorInput{StreamName: aws.String("s"), ShardId: aws.String("shardId-000000000000"), ShardIteratorType: types.ShardIteratorTypeTrimHorizon})
		require.NoError(t, err)
		bad := []byte(*it.ShardIterator)
		bad[10] ^= 1
		_, err = c.GetRecords(ctx, &awsk.GetRecordsInput{ShardIterator: aws.String(string(bad))})
		requireAPIErr(t, err, "InvalidArgumentException", "Invalid ShardIterator.")

		clk.Add(5 * time.Minute)
		_, err = c.GetRecords(ctx, &awsk.GetRecordsInput{ShardIterator: it.ShardIterator})
		require.NoError(t, err, "valid for five minutes")
		issued := clk.Now().Add(-5 * time.Minute)
		clk.Add(time.Millisecond)
		_, err = c.GetRecords(ctx, &awsk.GetRecordsInput{ShardIterator: it.ShardIterator})
		requireAPIErr(t, err, "ExpiredIteratorException", "Iterator expired. The iterator was created at time "+issued.UTC().Format("Mon Jan 02 15:04:05 UTC 2006")+
			" while right now it is "+clk.Now().UTC().Format("Mon Jan 02 15:04:05 UTC 2006")+" which is further in the future than the tolerated delay of 300000 milliseconds.")

		// An iterator of a stream deleted and created again names no shard.
		it, err = c.GetShardIterator(ctx, &awsk.GetShardIteratorInput{StreamName: aws.String("s"), ShardId: aws.String("shardId-000000000000"), ShardIteratorType: types.ShardIteratorTypeLatest})
		require.NoError(t, err)
		_, err = c.DeleteStream(ctx, &awsk.DeleteStreamInput{StreamName: aws.String("s")})
		require.NoError(t, err)
		clk.Add(time.Second)
		createStream(t, c, ctx, "s", 1)
		_, err = c.GetRecords(ctx, &awsk.GetRecordsInput{ShardIterator: it.ShardIterator})
		requireAPIErr(t, err, "ResourceNotFoundException", "Shard shardId-000000000000 in stream s under account 000000000000 does not exist")
	})
}

// GetShardIterator's argument errors.
func TestGetShardIteratorErrors(t *testing.T) {
	eachBackend(t, func(t *testing.T, start startFunc) {
		c, ctx := newClientOn(t, start)
		createStream(t, c, ctx, "s", 2)
		out, err := c.PutRecord(ctx, &awsk.PutRecordInput{StreamName: aws.String("s"), PartitionKey: aws.String("k"), Data: []byte("x")})
		require.NoError(t, err)
		other := "shardId-000000000001"
		if *out.ShardId == other {
			other = "shardId-000000000000"
		}
		gsi := func(shard string, typ types.ShardIteratorType, seq *string) error {
			_, err := c.GetShardIterator(ctx, &awsk.GetShardIteratorInput{StreamName: aws.String("s"), ShardId: aws.String(shard), ShardIteratorType: typ, StartingSequenceNumber: seq})
			return err
		}
		requireAPIErr(t, gsi(other, types.ShardIteratorTypeAtSequenceNumber, out.SequenceNumber), "InvalidArgumentException",
			"Invalid StartingSequenceNumber. It encodes "+*out.ShardId+", while it was used in a call to a shard with "+other)
		requireAPIErr(t, gsi(*out.ShardId, types.ShardIteratorTypeTrimHorizon, out.SequenceNumber), "InvalidArgumentException",
			"Must either specify (1) AT_SEQUENCE_NUMBER or AFTER_SEQUENCE_NUMBER and StartingSequenceNumber or (2) TRIM_HORIZON or LATEST and no StartingSequenceNumber. Request specified TRIM_HORIZON and also a StartingSequenceNumber.")
		requireAPIErr(t, gsi(*out.ShardId, types.ShardIteratorTypeAtSequenceNumber, nil), "InvalidArgumentException", "")
		requireAPIErr(t, gsi("shardId-000000000009", types.ShardIteratorTypeLatest, nil), "ResourceNotFoundException",
			"Shard shardId-000000000009 in stream s under account 000000000000 does not exist")
		requireAPIErr(t, gsi("nope", types.ShardIteratorTypeLatest, nil), "ResourceNotFoundException",
			"Could not find shard nope in stream s under account 000000000000.")
		_, err = c.GetShardIterator(ctx, &awsk.GetShardIteratorInput{StreamName: aws.String("s"), ShardId: aws.String(*out.ShardId),
			ShardIteratorType: types.ShardIteratorTypeAtTimestamp})
		requireAPIErr(t, err, "InvalidArgumentException", "Must specify timestampInMillis parameter for iterator of type AT_TIMESTAMP. Current request has no timestamp parameter.")
		it, err := c.GetShardIterator(ctx, &awsk.GetShardIteratorInput{StreamName: aws.String("s"), ShardId: aws.String(*out.ShardId),
			ShardIteratorType: types.ShardIteratorTypeAtTimestamp, Timestamp: aws.Time(time.Now().Add(-time.Minute))})
		require.NoError(t, err)
		recs, err := c.GetRecords(ctx, &awsk.GetRecordsInput{ShardIterator: it.ShardIterator})
		require.NoError(t, err)
		require.Len(t, recs.Records, 1)
	})
}

// Split and merge refuse what Kinesis refuses.
func TestReshardErrors(t *testing.T) {
	eachBackend(t, func(t *testing.T, start startFunc) {
		c, ctx := newClientOn(t, start)
		createStream(t, c, ctx, "s", 3)
		_, err := c.SplitShard(ctx, &awsk.SplitShardInput{StreamName: aws.String("s"), ShardToSplit: aws.String("shardId-000000000001"), NewStartingHashKey: aws.String("1")})
		requireAPIErr(t, err, "InvalidArgumentException", "NewStartingHashKey 1 used in SplitShard() on shard shardId-000000000001 in stream s under account 000000000000 is not both "+
			"greater than one plus the shard's StartingHashKey 113427455640312821154458202477256070485 and less than the shard's EndingHashKey 226854911280625642308916404954512140969.")
		_, err = c.MergeShards(ctx, &awsk.MergeShardsInput{StreamName: aws.String("s"), ShardToMerge: aws.String("shardId-000000000000"), AdjacentShardToMerge: aws.String("shardId-000000000002")})
		requireAPIErr(t, err, "InvalidArgumentException", "Shards shardId-000000000000 and shardId-000000000002 in stream s under account 000000000000 are not an adjacent pair of shards eligible for merging")
		_, err = c.MergeShards(ctx, &awsk.MergeShardsInput{StreamName: aws.String("s"), ShardToMerge: aws.String("shardId-000000000001"), AdjacentShardToMerge: aws.String("shardId-000000000000")})
		requireAPIErr(t, err, "InvalidArgumentException", "")
		_, err = c.MergeShards(ctx, &awsk.MergeShardsInput{StreamName: aws.String("s"), ShardToMerge: aws.String("shardId-000000000000"), AdjacentShardToMerge: aws.String("shardId-000000000001")})
		require.NoError(t, err)
		_, err = c.SplitShard(ctx, &awsk.SplitShardInput{StreamName: aws.String("s"), ShardToSplit: aws.String("shardId-000000000000"), NewStartingHashKey: aws.String("1000")})
		requireAPIErr(t, err, "InvalidArgumentException", "Shard shardId-000000000000 in stream s under account 000000000000 has already been merged or split, and thus is not eligible for splitting.")
		_, err = c.UpdateShardCount(ctx, &awsk.UpdateShardCountInput{StreamName: aws.String("s"), TargetShardCount: aws.Int32(5), ScalingType: types.ScalingTypeUniformScaling})
		requireAPIErr(t, err, "InvalidArgumentException", "UpdateShardCount cannot scale up over double your current open shard count. Current open shard count: 2 Target shard count: 5")
		_, err = c.SplitShard(ctx, &awsk.SplitShardInput{StreamName: aws.String("nope"), ShardToSplit: aws.String("shardId-000000000000"), NewStartingHashKey: aws.String("1000")})
		requireAPIErr(t, err, "ResourceNotFoundException", "Stream nope under account 000000000000 not found.")
	})
}

// Requests must be signed, with a known target and a known content type.
func TestRequestChecks(t *testing.T) {
	ep := kinesistest.Start(t)
	body := []byte(`{"StreamName":"s"}`)
	r := raw(t, ep.URL, "DescribeStream", "application/x-amz-json-1.1", body, "-")
	require.Equal(t, 400, r.Status)
	typ, msg := r.errType(t)
	require.Equal(t, "MissingAuthenticationTokenException", typ)
	require.Equal(t, "Missing Authentication Token", msg)

	r = raw(t, ep.URL, "DescribeStream", "application/x-amz-json-1.1", body, "AWS4-HMAC-SHA256 Credential=abc")
	typ, msg = r.errType(t)
	require.Equal(t, "IncompleteSignatureException", typ)
	require.Equal(t, "Authorization header requires 'Signature' parameter. Authorization header requires 'SignedHeaders' parameter. "+
		"Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. Authorization=AWS4-HMAC-SHA256 Credential=abc", msg)

	r = raw(t, ep.URL, "Frobnicate", "application/x-amz-json-1.1", body, "")
	typ, _ = r.errType(t)
	require.Equal(t, "UnknownOperationException", typ)

	r = raw(t, ep.URL, "DescribeStream", "application/x-amz-json-1.1", []byte("{"), "")
	typ, _ = r.errType(t)
	require.Equal(t, "SerializationException", typ)

	r = raw(t, ep.URL, "DescribeStream", "text/plain", body, "")
	require.Equal(t, 404, r.Status)
	require.Equal(t, "<UnknownOperationException/>\n", string(r.Body))
	require.NotEmpty(t, r.Header.Get("x-amzn-RequestId"))
}
