package kinesistest

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsk "github.com/aws/aws-sdk-go-v2/service/kinesis"
	"github.com/aws/aws-sdk-go-v2/service/kinesis/types"
	"github.com/stretchr/testify/require"
)

// testProperty: random puts (single and batched), splits, merges and
// rescales through the API; then reading every shard from TRIM_HORIZON,
// each child once all its parents are read (following ChildShards, as
// KCL does), finds every acknowledged record exactly once, and each
// partition key's records in the order they were put.
func testProperty(t *testing.T, start StartFunc) {
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			c, ctx := newClientOn(t, start)
			r := rand.New(rand.NewPCG(seed, 99))
			createStream(t, c, ctx, "p", int32(1+r.IntN(3)))
			sent := map[string][]string{} // key: data, in put order
			n := 0
			put := func() {
				key := fmt.Sprintf("key-%d", r.IntN(12))
				n++
				data := fmt.Sprintf("r%d", n)
				_, err := c.PutRecord(ctx, &awsk.PutRecordInput{StreamName: aws.String("p"), PartitionKey: aws.String(key), Data: []byte(data)})
				require.NoError(t, err)
				sent[key] = append(sent[key], data)
			}
			batch := func() {
				var entries []types.PutRecordsRequestEntry
				var keys, datas []string
				for range 1 + r.IntN(20) {
					key := fmt.Sprintf("key-%d", r.IntN(12))
					n++
					data := fmt.Sprintf("r%d", n)
					entries = append(entries, types.PutRecordsRequestEntry{PartitionKey: aws.String(key), Data: []byte(data)})
					keys, datas = append(keys, key), append(datas, data)
				}
				out, err := c.PutRecords(ctx, &awsk.PutRecordsInput{StreamName: aws.String("p"), Records: entries})
				require.NoError(t, err)
				for i, res := range out.Records {
					if res.ErrorCode == nil {
						sent[keys[i]] = append(sent[keys[i]], datas[i])
					}
				}
			}
			for range 150 {
				switch op := r.IntN(20); {
				case op < 10:
					put()
				case op < 15:
					batch()
				case op < 17:
					propertySplit(t, c, ctx, r)
				case op < 19:
					propertyMerge(t, c, ctx, r)
				default:
					open := len(openShards(t, c, ctx))
					target := max(1, min(8, open/2+r.IntN(open+open/2+1)))
					if 2*target < open {
						target = (open + 1) / 2
					}
					_, err := c.UpdateShardCount(ctx, &awsk.UpdateShardCountInput{StreamName: aws.String("p"),
						TargetShardCount: aws.Int32(int32(target)), ScalingType: types.ScalingTypeUniformScaling})
					require.NoError(t, err, "from %d to %d shards", open, target)
				}
			}
			got := readAll(t, c, ctx, "p")
			all, err := c.ListShards(ctx, &awsk.ListShardsInput{StreamName: aws.String("p")})
			require.NoError(t, err)
			t.Logf("%d records put, %d shards made", n, len(all.Shards))
			seen := map[string]int{}
			for _, recs := range got {
				for _, d := range recs {
					seen[d]++
				}
			}
			total := 0
			for _, ds := range sent {
				total += len(ds)
				for _, d := range ds {
					require.Equal(t, 1, seen[d], "record %s read %d times", d, seen[d])
				}
			}
			require.Len(t, seen, total, "records read that were not acknowledged")
			require.Equal(t, sent, got, "per partition key order")
		})
	}
}

// openShards lists the OPEN shards.
func openShards(t *testing.T, c *awsk.Client, ctx context.Context) []types.Shard {
	out, err := c.ListShards(ctx, &awsk.ListShardsInput{StreamName: aws.String("p"), ShardFilter: &types.ShardFilter{Type: types.ShardFilterTypeAtLatest}})
	require.NoError(t, err)
	return out.Shards
}

func bigOf(s *string) *big.Int {
	b, _ := new(big.Int).SetString(*s, 10)
	return b
}

// propertySplit splits a random OPEN shard wide enough at a random key.
func propertySplit(t *testing.T, c *awsk.Client, ctx context.Context, r *rand.Rand) {
	shards := openShards(t, c, ctx)
	if len(shards) >= 8 {
		return
	}
	s := shards[r.IntN(len(shards))]
	lo, hi := bigOf(s.HashKeyRange.StartingHashKey), bigOf(s.HashKeyRange.EndingHashKey)
	width := new(big.Int).Sub(hi, lo)
	if width.Cmp(big.NewInt(4)) < 0 {
		return
	}
	// A key in (lo+1, hi): lo + 2 + a random part of width - 3.
	off := new(big.Int).Lsh(new(big.Int).SetUint64(r.Uint64()), 64)
	off.Or(off, new(big.Int).SetUint64(r.Uint64()))
	off.Mod(off, new(big.Int).Sub(width, big.NewInt(3)))
	key := off.Add(off, lo).Add(off, big.NewInt(2))
	_, err := c.SplitShard(ctx, &awsk.SplitShardInput{StreamName: aws.String("p"), ShardToSplit: s.ShardId, NewStartingHashKey: aws.String(key.String())})
	require.NoError(t, err)
}

// propertyMerge merges a random pair of adjacent OPEN shards.
func propertyMerge(t *testing.T, c *awsk.Client, ctx context.Context, r *rand.Rand) {
	shards := openShards(t, c, ctx)
	if len(shards) < 2 {
		return
	}
	byStart := map[string]types.Shard{}
	for _, s := range shards {
		byStart[*s.HashKeyRange.StartingHashKey] = s
	}
	s := shards[r.IntN(len(shards))]
	next := new(big.Int).Add(bigOf(s.HashKeyRange.EndingHashKey), big.NewInt(1)).String()
	adj, ok := byStart[next]
	if !ok {
		return
	}
	_, err := c.MergeShards(ctx, &awsk.MergeShardsInput{StreamName: aws.String("p"), ShardToMerge: s.ShardId, AdjacentShardToMerge: adj.ShardId})
	require.NoError(t, err)
}

// readAll reads every shard of stream from TRIM_HORIZON, a child only
// once each of its parents is read to its end, starting from the shards
// without parents and following ChildShards; it returns the Data read
// per partition key.
func readAll(t *testing.T, c *awsk.Client, ctx context.Context, stream string) map[string][]string {
	all, err := c.ListShards(ctx, &awsk.ListShardsInput{StreamName: aws.String(stream)})
	require.NoError(t, err)
	var queue []string
	parents := map[string][]string{}
	for _, s := range all.Shards {
		if s.ParentShardId == nil {
			queue = append(queue, *s.ShardId)
		}
	}
	got := map[string][]string{}
	done := map[string]bool{}
	for stalls := 0; len(queue) > 0; {
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
			stalls++
			require.Less(t, stalls, 10000, "a child whose parents are never read")
			continue
		}
		recs, children := readShard(t, c, ctx, stream, s)
		done[s] = true
		for _, r := range recs {
			got[*r.PartitionKey] = append(got[*r.PartitionKey], string(r.Data))
		}
		for _, ch := range children {
			parents[*ch.ShardId] = ch.ParentShards
			queue = append(queue, *ch.ShardId)
		}
	}
	for _, s := range all.Shards {
		require.True(t, done[*s.ShardId], "shard %s was never reached by ChildShards", *s.ShardId)
	}
	return got
}
