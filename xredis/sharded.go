package xredis

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/rueidis"
	"github.com/xstreamgo/xstream"
)

// Sharded is a sharded stream (xstream.ShardedEngine) on Redis or Redis
// Cluster, shared by every process that opens it by name: Kinesis-style
// shards, each its own stream key with a hash tag of its own so that the
// shards spread over the cluster's slots and nodes, and a shard map in a
// metadata hash (the package documentation lists the keys and the steps
// of a reshard). Its methods are safe for concurrent use, in one process
// and across processes. Each engine runs retention passes on its own (see
// ApplyRetention).
type Sharded struct {
	e       Engine
	c       *failoverClient
	name    string
	metaKey string
	events  string // the stream that each published map adds an event to
	cfg     shardedConfig
	id      string        // names this engine in reshard locks
	calls   atomic.Uint64 // numbers its reshard calls
	cached  atomic.Pointer[shardMap]

	groupStates sync.Map      // group name: *groupState
	nextExpire  atomic.Int64  // when (ms) the next retention pass is due
	rr          atomic.Uint64 // rotates the first shard of a group read
}

var _ xstream.ShardedEngine = (*Sharded)(nil)

// ShardedOption configures a Sharded.
type ShardedOption func(*shardedConfig)

type shardedConfig struct {
	clock func() time.Time
	lease time.Duration
}

// DefaultReshardLease is how long a reshard holds a sharded stream's lock
// without finishing before another process may take the stream over (and
// complete the step the first one left midway).
const DefaultReshardLease = 30 * time.Second

// WithShardClock sets the clock of the engine (time.Now by default): the
// trim horizon of ListShards, the creation and closing times of shards,
// MillisBehindLatest, and the deadlines of reshard locks. Sequence
// numbers are the servers' stream IDs, on the servers' clocks.
func WithShardClock(now func() time.Time) ShardedOption {
	return func(c *shardedConfig) { c.clock = now }
}

// WithReshardLease sets how long a reshard of this engine holds the lock
// before others may take over (DefaultReshardLease by default); each step
// of a reshard renews it.
func WithReshardLease(d time.Duration) ShardedOption {
	return func(c *shardedConfig) {
		if d > 0 {
			c.lease = d
		}
	}
}

// The keys of a sharded stream called name: the metadata hash
// "xs:{name}:meta" and the events stream "xs:{name}:events" share the
// slot of the tag {name}; shard n is the stream "xs:{name:n}" with its
// state hash "xs:{name:n}:state" in the slot of {name:n}.
func metaKey(name string) string          { return "xs:{" + name + "}:meta" }
func eventsKey(name string) string        { return "xs:{" + name + "}:events" }
func (s *Sharded) streamKey(n int) string { return "xs:{" + s.name + ":" + strconv.Itoa(n) + "}" }
func (s *Sharded) stateKey(n int) string  { return s.streamKey(n) + ":state" }

func newSharded(e Engine, name string, opts []ShardedOption) (*Sharded, error) {
	if name == "" || strings.ContainsAny(name, "{}") {
		return nil, errorf(xstream.ErrInvalidArgument, "a sharded stream's name must be non-empty, without { or }: %q", name)
	}
	var b [8]byte
	rand.Read(b[:])
	s := &Sharded{e: e, c: clientOf(e), name: name, metaKey: metaKey(name), events: eventsKey(name), id: hex.EncodeToString(b[:]),
		cfg: shardedConfig{clock: time.Now, lease: DefaultReshardLease}}
	for _, o := range opts {
		o(&s.cfg)
	}
	return s, nil
}

func (s *Sharded) nowMs() int64 { return s.cfg.clock().UnixMilli() }

// CreateSharded creates the sharded stream name on e's server with
// args.Shards OPEN shards of equal width (see xstream.ShardedArgs) and
// returns it. The stream is shared by every process that opens it with
// OpenSharded. It fails, creating nothing, with ErrInvalidArgument (bad
// arguments, or a name that is empty or holds { or }), or with
// ErrResourceInUse when the stream exists, as Kinesis's CreateStream
// does. The creation is a reshard step like the others: when the process
// dies midway, OpenSharded completes it. It costs one round trip for the
// metadata and one per node for the shards.
func CreateSharded(ctx context.Context, e Engine, name string, args xstream.ShardedArgs, opts ...ShardedOption) (*Sharded, error) {
	if args.Shards < 1 {
		return nil, errorf(xstream.ErrInvalidArgument, "shard count must be >= 1, got %d", args.Shards)
	}
	if args.Retention < 0 {
		return nil, errorf(xstream.ErrInvalidArgument, "retention must be > 0, got %s", args.Retention)
	}
	if args.Retention == 0 {
		args.Retention = xstream.DefaultRetention
	}
	s, err := newSharded(e, name, opts)
	if err != nil {
		return nil, err
	}
	op := reshardOp{Kind: "create", Created: s.nowMs()}
	for i, r := range uniformRanges(args.Shards) {
		op.Children = append(op.Children, childSpec{N: i, Start: r.StartingHashKey, End: r.EndingHashKey, Parent: -1, Adjacent: -1})
	}
	raw, err := op.encode()
	if err != nil {
		return nil, err
	}
	ok, err := createMetaScript.Exec(ctx, s.c, []string{s.metaKey}, []string{raw, itoa(args.Retention.Milliseconds())}).AsInt64()
	if strings.HasPrefix(redisText(err), "unknown command") {
		return nil, fmt.Errorf("xredis: %w: a sharded stream needs Lua scripts (EVALSHA), which the server lacks: %w", errors.ErrUnsupported, err)
	}
	if err != nil {
		return nil, mapErr(err)
	}
	if ok == 0 {
		return nil, errorf(xstream.ErrResourceInUse, "the sharded stream %q exists", name)
	}
	if _, err := s.settled(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// OpenSharded returns the existing sharded stream name on e's server,
// completing a reshard step left midway if there is one. It fails with
// ErrNoStream when there is no such stream. One round trip.
func OpenSharded(ctx context.Context, e Engine, name string, opts ...ShardedOption) (*Sharded, error) {
	s, err := newSharded(e, name, opts)
	if err != nil {
		return nil, err
	}
	if _, err := s.settled(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// Name returns the stream's name.
func (s *Sharded) Name() string { return s.name }

// Retention returns how long records are kept. One round trip.
func (s *Sharded) Retention(ctx context.Context) (time.Duration, error) {
	m, err := s.load(ctx)
	if err != nil {
		return 0, err
	}
	return time.Duration(m.retention) * time.Millisecond, nil
}

// SetRetention changes how long records are kept (whole milliseconds)
// and applies it at once (ApplyRetention).
// It fails with ErrInvalidArgument, changing nothing, for d <= 0, and
// with ErrNoStream when the stream is gone. One round trip.
func (s *Sharded) SetRetention(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return errorf(xstream.ErrInvalidArgument, "retention must be > 0, got %s", d)
	}
	n, err := setRetentionScript.Exec(ctx, s.c, []string{s.metaKey}, []string{itoa(d.Milliseconds())}).AsInt64()
	if err != nil {
		return mapErr(err)
	}
	if n == 0 {
		return errorf(xstream.ErrNoStream, "no sharded stream %q", s.name)
	}
	return s.ApplyRetention(ctx)
}

// setRetentionScript sets the retention of an existing metadata hash; 0
// when there is none.
var setRetentionScript = rueidis.NewLuaScript(`
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'retention', ARGV[1])
return 1
`)

// Close does nothing: the engine's client belongs to the Engine.
func (s *Sharded) Close() error { return nil }
