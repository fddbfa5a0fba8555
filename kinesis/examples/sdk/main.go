// Command sdk is a Kinesis producer and consumer written with the AWS SDK
// for Go v2, pointed at xstream's Kinesis endpoint:
//
//	xstream-server -kinesis-addr 127.0.0.1:4567 &
//	cd kinesis && go run ./examples/sdk -endpoint http://127.0.0.1:4567
//
// The producer creates the stream "orders" with two shards and puts
// records with PutRecords; a split of one shard happens in the middle,
// as it might in production. The consumer then reads every shard from
// TRIM_HORIZON, a child shard only after its parents are read to their
// end (following the ChildShards that GetRecords gives at a CLOSED
// shard's end), and prints each customer's orders in the order they were
// put. Nothing in it is specific to xstream but the endpoint URL.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"
)

func main() {
	endpoint := flag.String("endpoint", "http://127.0.0.1:4567", "the Kinesis endpoint")
	flag.Parse()
	cfg := aws.Config{
		Region:       "us-east-1",
		BaseEndpoint: endpoint,
		// Any keys do: the endpoint checks that requests are signed.
		Credentials: aws.CredentialsProviderFunc(func(context.Context) (aws.Credentials, error) {
			return aws.Credentials{AccessKeyID: "AKIDEXAMPLE", SecretAccessKey: "secret"}, nil
		}),
	}
	if err := run(context.Background(), kinesis.NewFromConfig(cfg), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "sdk:", err)
		os.Exit(1)
	}
}

const stream = "orders"

func run(ctx context.Context, c *kinesis.Client, out io.Writer) error {
	if err := produce(ctx, c); err != nil {
		return fmt.Errorf("producer: %w", err)
	}
	return consume(ctx, c, out)
}

// produce creates the stream, waits until it is ACTIVE, and puts orders
// of three customers, splitting shard 0 halfway.
func produce(ctx context.Context, c *kinesis.Client) error {
	_, err := c.CreateStream(ctx, &kinesis.CreateStreamInput{StreamName: aws.String(stream), ShardCount: aws.Int32(2)})
	var inUse *types.ResourceInUseException
	if err != nil && !errors.As(err, &inUse) {
		return err
	}
	w := kinesis.NewStreamExistsWaiter(c)
	if err := w.Wait(ctx, &kinesis.DescribeStreamInput{StreamName: aws.String(stream)}, time.Minute); err != nil {
		return err
	}
	put := func(from, to int) error {
		var recs []types.PutRecordsRequestEntry
		for i := from; i < to; i++ {
			customer := []string{"alice", "bob", "carol"}[i%3]
			recs = append(recs, types.PutRecordsRequestEntry{PartitionKey: aws.String(customer), Data: []byte(fmt.Sprintf("order %d", i))})
		}
		res, err := c.PutRecords(ctx, &kinesis.PutRecordsInput{StreamName: aws.String(stream), Records: recs})
		if err == nil && aws.ToInt32(res.FailedRecordCount) > 0 {
			err = fmt.Errorf("%d records failed", *res.FailedRecordCount)
		}
		return err
	}
	if err := put(0, 6); err != nil {
		return err
	}
	if _, err := c.SplitShard(ctx, &kinesis.SplitShardInput{StreamName: aws.String(stream),
		ShardToSplit: aws.String("shardId-000000000000"), NewStartingHashKey: aws.String("85070591730234615865843651857942052864")}); err != nil {
		return err
	}
	if err := w.Wait(ctx, &kinesis.DescribeStreamInput{StreamName: aws.String(stream)}, time.Minute); err != nil {
		return err
	}
	return put(6, 12)
}

// consume reads every shard, parents before children, and prints each
// customer's orders.
func consume(ctx context.Context, c *kinesis.Client, out io.Writer) error {
	shards, err := c.ListShards(ctx, &kinesis.ListShardsInput{StreamName: aws.String(stream)})
	if err != nil {
		return err
	}
	var queue []string
	for _, s := range shards.Shards {
		if s.ParentShardId == nil {
			queue = append(queue, *s.ShardId)
		}
	}
	parents := map[string][]string{}
	done := map[string]bool{}
	orders := map[string][]string{}
	for len(queue) > 0 {
		shard := queue[0]
		queue = queue[1:]
		if done[shard] {
			continue
		}
		if slices.ContainsFunc(parents[shard], func(p string) bool { return !done[p] }) {
			queue = append(queue, shard) // a parent is not read to its end yet
			continue
		}
		children, err := readShard(ctx, c, shard, func(r types.Record) {
			orders[*r.PartitionKey] = append(orders[*r.PartitionKey], string(r.Data))
		})
		if err != nil {
			return err
		}
		done[shard] = true
		for _, ch := range children {
			parents[*ch.ShardId] = ch.ParentShards
			queue = append(queue, *ch.ShardId)
		}
	}
	for _, customer := range []string{"alice", "bob", "carol"} {
		fmt.Fprintf(out, "%s: %v\n", customer, orders[customer])
	}
	return nil
}

// readShard reads a shard from TRIM_HORIZON: to its end when it is
// CLOSED (then it returns its children), to its last record when it is
// OPEN.
func readShard(ctx context.Context, c *kinesis.Client, shard string, each func(types.Record)) ([]types.ChildShard, error) {
	it, err := c.GetShardIterator(ctx, &kinesis.GetShardIteratorInput{StreamName: aws.String(stream), ShardId: aws.String(shard),
		ShardIteratorType: types.ShardIteratorTypeTrimHorizon})
	if err != nil {
		return nil, err
	}
	iter := it.ShardIterator
	for {
		res, err := c.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: iter})
		if err != nil {
			return nil, err
		}
		for _, r := range res.Records {
			each(r)
		}
		if res.NextShardIterator == nil {
			return res.ChildShards, nil // the end of a CLOSED shard
		}
		if len(res.Records) == 0 {
			return nil, nil // caught up with an OPEN shard
		}
		iter = res.NextShardIterator
	}
}
