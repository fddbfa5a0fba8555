package kinesistest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"errors"
	"github.com/aws/aws-sdk-go-v2/aws"
	awsk "github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"
	"github.com/aws/smithy-go"
	"github.com/stretchr/testify/require"
	"github.com/xstreamgo/xstream/kinesis"
)

// StartFunc starts an endpoint with the given handler options over a
// backend of its own (for StartWith: a new in-memory DB, or a new
// kredis.WithPrefix on a shared Redis), closed at the end of the test.
type StartFunc func(t *testing.T, opts ...kinesis.Option) *Endpoint

// RunBackend runs the endpoint's behaviour tests, through the AWS SDK
// for Go v2, on endpoints that start makes: a backend (the in-process DB,
// the Redis engine, one of your own) passes when every subtest does.
// They cover each action end to end, reading every shard following
// ChildShards, iterator positions and expiry, the status delays (moved
// by an injected clock), the account shard limit, record limits, tags,
// retention, paging, consumers and the errors of each.
func RunBackend(t *testing.T, start StartFunc) {
	t.Run("Property", func(t *testing.T) { testProperty(t, start) })
	t.Run("SubscribeToShard", func(t *testing.T) { testSubscribeToShard(t, start) })
	t.Run("SubscriptionEnds", func(t *testing.T) { testSubscriptionEnds(t, start) })
	t.Run("CoreActionsEndToEnd", func(t *testing.T) { testCoreActionsEndToEnd(t, start) })
	t.Run("GetRecordsIteratorsAndPositions", func(t *testing.T) { testGetRecordsIteratorsAndPositions(t, start) })
	t.Run("StatusDelays", func(t *testing.T) { testStatusDelays(t, start) })
	t.Run("ShardLimit", func(t *testing.T) { testShardLimit(t, start) })
	t.Run("IteratorExpiryAndValidity", func(t *testing.T) { testIteratorExpiryAndValidity(t, start) })
	t.Run("GetShardIteratorErrors", func(t *testing.T) { testGetShardIteratorErrors(t, start) })
	t.Run("ReshardErrors", func(t *testing.T) { testReshardErrors(t, start) })
	t.Run("ListShardsFiltersAndPaging", func(t *testing.T) { testListShardsFiltersAndPaging(t, start) })
	t.Run("Consumers", func(t *testing.T) { testConsumers(t, start) })
	t.Run("PutRecordsOrder", func(t *testing.T) { testPutRecordsOrder(t, start) })
	t.Run("TagsRetentionAndPaging", func(t *testing.T) { testTagsRetentionAndPaging(t, start) })
	t.Run("StreamARN", func(t *testing.T) { testStreamARN(t, start) })
	t.Run("RecordLimits", func(t *testing.T) { testRecordLimits(t, start) })
}

// newClientOn starts an endpoint and returns a client of it.
func newClientOn(t *testing.T, start StartFunc) (*awsk.Client, context.Context) {
	return client(start(t)), context.Background()
}

// Clock is a clock a test moves by hand, for kinesis.WithClock: it
// starts at the time it is made.
type Clock struct {
	mu sync.Mutex
	t  time.Time
}

// NewClock returns a clock at time.Now().
func NewClock() *Clock { return &Clock{t: time.Now()} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

// Add moves the clock by d.
func (c *Clock) Add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func testCoreActionsEndToEnd(t *testing.T, start StartFunc) {
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
	got := readAll(t, c, ctx, "orders")
	require.Equal(t, sent, got)

	_, err = c.DeleteStream(ctx, &awsk.DeleteStreamInput{StreamName: aws.String("orders")})
	require.NoError(t, err)
	_, err = c.DescribeStream(ctx, &awsk.DescribeStreamInput{StreamName: aws.String("orders")})
	typ, msg := apiErr(t, err)
	require.Equal(t, "ResourceNotFoundException", typ)
	require.Equal(t, "Stream orders under account 000000000000 not found.", msg)
}

func testGetRecordsIteratorsAndPositions(t *testing.T, start StartFunc) {
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
}

// The statuses CREATING, UPDATING and DELETING last their delays, moved
// by the handler's clock, and what needs an ACTIVE stream is refused
// meanwhile.
func testStatusDelays(t *testing.T, start StartFunc) {
	clk := NewClock()
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
}

// The account's shard limit counts OPEN shards over all streams.
func testShardLimit(t *testing.T, start StartFunc) {
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
}

// Iterators are opaque, refused when changed, and expire after five
// minutes.
func testIteratorExpiryAndValidity(t *testing.T, start StartFunc) {
	clk := NewClock()
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
}

// GetShardIterator's argument errors.
func testGetShardIteratorErrors(t *testing.T, start StartFunc) {
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
}

// Split and merge refuse what Kinesis refuses.
func testReshardErrors(t *testing.T, start StartFunc) {
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
}

func testListShardsFiltersAndPaging(t *testing.T, start StartFunc) {
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
}

func testConsumers(t *testing.T, start StartFunc) {
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
}

// PutRecords reports every record's shard and sequence number, in order,
// and sequence numbers grow within a shard.
func testPutRecordsOrder(t *testing.T, start StartFunc) {
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
}

func testTagsRetentionAndPaging(t *testing.T, start StartFunc) {
	c, ctx := newClientOn(t, start)
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

// StreamARN names the stream wherever StreamName does.
func testStreamARN(t *testing.T, start StartFunc) {
	c, ctx := newClientOn(t, start)
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

// Records up to 1 MiB, PutRecords up to 500 records and 5 MiB.
func testRecordLimits(t *testing.T, start StartFunc) {
	ep := start(t)
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

// client is an SDK client of ep that does not retry, so that the tests
// see each error at once (the SDK retries LimitExceededException).
func client(ep *Endpoint) *awsk.Client {
	return awsk.NewFromConfig(ep.Config, func(o *awsk.Options) { o.RetryMaxAttempts = 1 })
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

func requireAPIErr(t *testing.T, err error, typ, msg string) {
	t.Helper()
	require.Error(t, err)
	gt, gm := apiErr(t, err)
	require.Equal(t, typ, gt)
	if msg != "" {
		require.Equal(t, msg, gm)
	}
}

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

// StartPairFunc starts two endpoints with the given handler options over
// one shared backend (two handlers, each with an engine of its own, as
// two endpoint processes would have), closed at the end of the test.
type StartPairFunc func(t *testing.T, opts ...kinesis.Option) [2]*Endpoint

// RunShared runs the test of a shared backend on two endpoints that start
// makes: what one does the other sees, a split asked of one is applied by
// the other after the UPDATING delay, and a deletion by one is seen by
// the other's next put.
func RunShared(t *testing.T, start StartPairFunc) {
	clk := NewClock()
	opts := []kinesis.Option{kinesis.WithClock(clk.Now), kinesis.WithDelays(kinesis.Delays{Update: time.Second}), kinesis.WithCatalogCache(0)}
	eps := start(t, opts...)
	a, b, ctx := client(eps[0]), client(eps[1]), context.Background()
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
}
