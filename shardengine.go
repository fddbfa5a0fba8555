package xstream

import (
	"context"
	"time"
)

// ShardedEngine is the API of one sharded stream (Kinesis-style shards,
// resharding, lineage, iterators, the parent-before-child reader and the
// sharded consumer groups) behind an interface, with a context first on
// every call, as Engine is for named streams. LocalSharded is the
// in-process implementation (a ShardedStream); an implementation on a
// remote engine does I/O in its calls, and cancelling ctx ends a blocked
// read promptly.
//
// The calls are those of ShardedStream, with the same arguments, results
// and sentinel errors, but for the iterators: a shard iterator is an
// opaque string here, as in Kinesis, which GetShardIterator returns and
// GetRecords takes (see ShardRecords). An iterator belongs to the stream
// that made it; any other string fails with ErrInvalidIterator.
type ShardedEngine interface {
	// Put adds a record routed by the MD5 of partitionKey (or
	// args.ExplicitHashKey) to the OPEN shard owning that hash key.
	Put(ctx context.Context, partitionKey string, args PutArgs, fields ...Field) (PutResult, error)
	// PutRecords puts several records; it returns one result per
	// record and the number that failed.
	PutRecords(ctx context.Context, records []PutRecordsEntry) ([]PutRecordsResult, int, error)

	// ListShards describes the shards the filter selects.
	ListShards(ctx context.Context, f ShardFilter) ([]ShardInfo, error)
	// Lineage returns every shard with its parents and children.
	Lineage(ctx context.Context) (Lineage, error)
	// Status returns the stream's status (UPDATING during a reshard).
	Status(ctx context.Context) (StreamStatus, error)
	// SplitShard closes shardID and opens two children that divide its
	// hash keys at newStartingHashKey.
	SplitShard(ctx context.Context, shardID, newStartingHashKey string) error
	// MergeShards closes two adjacent shards and opens one child that
	// owns both ranges.
	MergeShards(ctx context.Context, shardID, adjacentShardID string) error
	// UpdateShardCount reshards to target shards of uniform width.
	UpdateShardCount(ctx context.Context, target int) error
	// Retention returns how long records are kept.
	Retention(ctx context.Context) (time.Duration, error)
	// SetRetention changes how long records are kept.
	SetRetention(ctx context.Context, d time.Duration) error

	// GetShardIterator returns an iterator over shardID starting as args
	// says.
	GetShardIterator(ctx context.Context, shardID string, args IteratorArgs) (string, error)
	// GetRecords returns up to limit records (0: 10,000) from the
	// iterator's position and the iterator to continue with. It never
	// blocks.
	GetRecords(ctx context.Context, iterator string, limit int) (ShardRecords, error)
	// NewReader returns a reader of the whole stream that reads every
	// parent to its end before its children, starting from the given
	// checkpoints.
	NewReader(ctx context.Context, from ...Checkpoint) (RecordReader, error)

	// CreateGroup creates a consumer group over every shard.
	CreateGroup(ctx context.Context, name string, opts ShardGroupOptions) error
	// ReadGroup delivers records to consumer of group (a child shard's
	// only after every ancestor's were delivered and, with StrictOrder,
	// acknowledged); it may block as args.Block says. With args.Claim it
	// first takes over the records pending for at least
	// args.ClaimMinIdle, as ShardedStream.ReadGroup does.
	ReadGroup(ctx context.Context, group, consumer string, args ReadGroupArgs) ([]Record, error)
	// Ack acknowledges delivered records.
	Ack(ctx context.Context, group string, refs ...RecordRef) (int64, error)
	// Pending summarizes group's pending records, shard by shard.
	Pending(ctx context.Context, group string) ([]ShardPending, error)
	// Claim gives consumer the pending records idle at least minIdle.
	Claim(ctx context.Context, group, consumer string, minIdle time.Duration, refs []RecordRef, args ClaimArgs) ([]Record, error)
	// AutoClaim claims idle pending records from start on.
	AutoClaim(ctx context.Context, group, consumer string, minIdle time.Duration, start RecordRef, args AutoClaimArgs) (ShardAutoClaimResult, error)

	// Close releases the engine. For LocalSharded it does nothing (the
	// stream's DB, if any, is closed by its owner).
	Close() error
}

// ShardRecords is the result of ShardedEngine.GetRecords: GetRecordsResult
// with the next iterator as a string.
type ShardRecords struct {
	Records []Record
	// NextShardIterator continues after Records. It is "" only when a
	// CLOSED shard has been read to its end; ChildShards then lists the
	// shard's children.
	NextShardIterator string
	// MillisBehindLatest is 0 when the shard has no record after Records,
	// else how old (by the clock) the next unread record is.
	MillisBehindLatest int64
	ChildShards        []ChildShard
}

// RecordReader reads a whole sharded stream, parents before children, as
// ShardReader does; ShardedEngine.NewReader returns one.
type RecordReader interface {
	// Read returns the next records; it may block as args.Block says.
	Read(ctx context.Context, args ReadArgs) ([]Record, error)
	// Checkpoints returns the reader's position, from which NewReader
	// resumes.
	Checkpoints() []Checkpoint
}

var _ RecordReader = (*ShardReader)(nil)
