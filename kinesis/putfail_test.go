package kinesis_test

import (
	"context"
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsk "github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"
	"github.com/stretchr/testify/require"
	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/kinesis"
	"github.com/xstreamgo/xstream/kinesis/kinesistest"
)

// flakyBackend's streams fail every other record of a PutRecords.
type flakyBackend struct{ kinesis.Backend }

type flakyEngine struct{ xstream.ShardedEngine }

func (b flakyBackend) Create(ctx context.Context, name string, args xstream.ShardedArgs) (xstream.ShardedEngine, error) {
	e, err := b.Backend.Create(ctx, name, args)
	return flakyEngine{e}, err
}

func (b flakyBackend) Open(ctx context.Context, name string) (xstream.ShardedEngine, error) {
	e, err := b.Backend.Open(ctx, name)
	return flakyEngine{e}, err
}

func (e flakyEngine) PutRecords(ctx context.Context, records []xstream.PutRecordsEntry) ([]xstream.PutRecordsResult, int, error) {
	out := make([]xstream.PutRecordsResult, len(records))
	failed := 0
	for i, r := range records {
		if i%2 == 1 {
			out[i].Err = errors.New("disk on fire")
			failed++
			continue
		}
		res, err := e.Put(ctx, r.PartitionKey, xstream.PutArgs{ExplicitHashKey: r.ExplicitHashKey}, r.Fields...)
		out[i] = xstream.PutRecordsResult{ShardID: res.ShardID, SequenceNumber: res.SequenceNumber, Err: err}
	}
	return out, failed, nil
}

// PutRecords reports a record the engine failed to store in its place,
// as Kinesis does, and stores the others.
func TestPutRecordsPartialFailure(t *testing.T) {
	ep := kinesistest.StartWith(t, flakyBackend{kinesis.LocalBackend(xstream.NewDB())})
	c, ctx := awsk.NewFromConfig(ep.Config), context.Background()
	_, err := c.CreateStream(ctx, &awsk.CreateStreamInput{StreamName: aws.String("f"), ShardCount: aws.Int32(1)})
	require.NoError(t, err)
	var recs []types.PutRecordsRequestEntry
	for _, d := range []string{"a", "b", "c"} {
		recs = append(recs, types.PutRecordsRequestEntry{PartitionKey: aws.String("k"), Data: []byte(d)})
	}
	out, err := c.PutRecords(ctx, &awsk.PutRecordsInput{StreamName: aws.String("f"), Records: recs})
	require.NoError(t, err)
	require.Equal(t, int32(1), *out.FailedRecordCount)
	require.NotNil(t, out.Records[0].SequenceNumber)
	require.Equal(t, "InternalFailure", *out.Records[1].ErrorCode)
	require.Nil(t, out.Records[1].SequenceNumber)
	require.NotNil(t, out.Records[2].SequenceNumber)
}
