package xstream

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// LocalSharded returns ss as a ShardedEngine: the in-process
// implementation. Its calls are ss's; the context ends blocked reads
// (ReadGroup, and RecordReader.Read), and the other calls, which never
// wait, do not look at it. Iterators are strings that name ss, the shard
// and the position; they stay valid as long as ss does (Kinesis's expire
// after five minutes). Close does nothing.
func LocalSharded(ss *ShardedStream) ShardedEngine { return localSharded{ss} }

// localSharded is the ShardedEngine of a ShardedStream; a single pointer,
// so turning it into an interface allocates nothing.
type localSharded struct{ ss *ShardedStream }

func (l localSharded) Put(_ context.Context, partitionKey string, args PutArgs, fields ...Field) (PutResult, error) {
	return l.ss.Put(partitionKey, args, fields...)
}

func (l localSharded) PutRecords(_ context.Context, records []PutRecordsEntry) ([]PutRecordsResult, int, error) {
	return l.ss.PutRecords(records)
}

func (l localSharded) ListShards(_ context.Context, f ShardFilter) ([]ShardInfo, error) {
	return l.ss.ListShards(f)
}

func (l localSharded) Lineage(context.Context) (Lineage, error) { return l.ss.Lineage(), nil }

func (l localSharded) Status(context.Context) (StreamStatus, error) { return l.ss.Status(), nil }

func (l localSharded) SplitShard(_ context.Context, shardID, newStartingHashKey string) error {
	return l.ss.SplitShard(shardID, newStartingHashKey)
}

func (l localSharded) MergeShards(_ context.Context, shardID, adjacentShardID string) error {
	return l.ss.MergeShards(shardID, adjacentShardID)
}

func (l localSharded) UpdateShardCount(_ context.Context, target int) error {
	return l.ss.UpdateShardCount(target)
}

func (l localSharded) Retention(context.Context) (time.Duration, error) {
	return l.ss.Retention(), nil
}

func (l localSharded) SetRetention(_ context.Context, d time.Duration) error {
	return l.ss.SetRetention(d)
}

func (l localSharded) GetShardIterator(_ context.Context, shardID string, args IteratorArgs) (string, error) {
	it, err := l.ss.GetShardIterator(shardID, args)
	if err != nil {
		return "", err
	}
	return l.ss.iteratorString(it), nil
}

func (l localSharded) GetRecords(_ context.Context, iterator string, limit int) (ShardRecords, error) {
	it, err := l.ss.parseIterator(iterator)
	if err != nil {
		return ShardRecords{}, err
	}
	res, err := l.ss.GetRecords(it, limit)
	if err != nil {
		return ShardRecords{}, err
	}
	out := ShardRecords{Records: res.Records, MillisBehindLatest: res.MillisBehindLatest, ChildShards: res.ChildShards}
	if res.NextShardIterator != nil {
		out.NextShardIterator = l.ss.iteratorString(res.NextShardIterator)
	}
	return out, nil
}

func (l localSharded) NewReader(_ context.Context, from ...Checkpoint) (RecordReader, error) {
	r, err := l.ss.NewReader(from...)
	if err != nil {
		return nil, err // not a typed nil in the interface
	}
	return r, nil
}

func (l localSharded) CreateGroup(_ context.Context, name string, opts ShardGroupOptions) error {
	return l.ss.CreateGroup(name, opts)
}

func (l localSharded) ReadGroup(ctx context.Context, group, consumer string, args ReadGroupArgs) ([]Record, error) {
	return l.ss.ReadGroup(ctx, group, consumer, args)
}

func (l localSharded) Ack(_ context.Context, group string, refs ...RecordRef) (int64, error) {
	return l.ss.Ack(group, refs...)
}

func (l localSharded) Pending(_ context.Context, group string) ([]ShardPending, error) {
	return l.ss.Pending(group)
}

func (l localSharded) Claim(_ context.Context, group, consumer string, minIdle time.Duration, refs []RecordRef, args ClaimArgs) ([]Record, error) {
	return l.ss.Claim(group, consumer, minIdle, refs, args)
}

func (l localSharded) AutoClaim(_ context.Context, group, consumer string, minIdle time.Duration, start RecordRef, args AutoClaimArgs) (ShardAutoClaimResult, error) {
	return l.ss.AutoClaim(group, consumer, minIdle, start, args)
}

func (l localSharded) Close() error { return nil }

// shardedUIDs numbers the sharded streams whose iterators were written as
// strings.
var shardedUIDs atomic.Uint64

// streamUID returns the number that names ss in its iterator strings,
// giving it one the first time.
func (ss *ShardedStream) streamUID() uint64 {
	if u := ss.uid.Load(); u != 0 {
		return u
	}
	ss.uid.CompareAndSwap(0, shardedUIDs.Add(1))
	return ss.uid.Load()
}

// iteratorString writes it as "<stream>/<shard number>/<position>", the
// position being "h" (the trim horizon) or the next sequence number.
func (ss *ShardedStream) iteratorString(it *ShardIterator) string {
	b := strconv.AppendUint(make([]byte, 0, 64), ss.streamUID(), 10)
	b = append(b, '/')
	b = strconv.AppendInt(b, int64(it.sh.num), 10)
	b = append(b, '/')
	if it.horizon {
		b = append(b, 'h')
	} else {
		b = it.next.AppendText(b)
	}
	return string(b)
}

// parseIterator reads a string of iteratorString back. It fails with
// ErrInvalidIterator for a string that is not one of ss's.
func (ss *ShardedStream) parseIterator(s string) (*ShardIterator, error) {
	bad := func(why string) (*ShardIterator, error) {
		return nil, errorf(ErrInvalidIterator, "iterator %q: %s", s, why)
	}
	us, rest, ok1 := strings.Cut(s, "/")
	ns, pos, ok2 := strings.Cut(rest, "/")
	if !ok1 || !ok2 {
		return bad("not an iterator")
	}
	u, ok := parseUint(us)
	if !ok || u != ss.streamUID() {
		return bad("not an iterator of this stream")
	}
	n, ok := parseUint(ns)
	ss.mu.RLock()
	if !ok || n >= uint64(len(ss.shards)) {
		ss.mu.RUnlock()
		return bad("no such shard")
	}
	it := &ShardIterator{ss: ss, sh: ss.shards[n]}
	ss.mu.RUnlock()
	if pos == "h" {
		it.horizon = true
		return it, nil
	}
	id, err := ParseID(pos)
	if err != nil {
		return bad("bad position")
	}
	it.next = id
	return it, nil
}
