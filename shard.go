package xstream

import (
	"fmt"
	"math/bits"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// DefaultRetention is the retention period of a sharded stream created
// without one: 24 hours, as in Kinesis.
const DefaultRetention = 24 * time.Hour

// ShardState is the state of a shard of a sharded stream.
type ShardState uint8

const (
	// ShardOpen shards take new records.
	ShardOpen ShardState = iota
	// ShardClosed shards were split or merged: readable, no new records.
	ShardClosed
	// ShardExpired shards are closed shards all of whose records are past
	// the retention period. They are no longer listed or readable.
	ShardExpired
)

// String returns "OPEN", "CLOSED" or "EXPIRED".
func (s ShardState) String() string {
	switch s {
	case ShardOpen:
		return "OPEN"
	case ShardClosed:
		return "CLOSED"
	case ShardExpired:
		return "EXPIRED"
	}
	return fmt.Sprintf("ShardState(%d)", uint8(s))
}

// StreamStatus is the status of a sharded stream, as Kinesis reports it.
type StreamStatus uint8

const (
	// StreamActive: no reshard is in progress.
	StreamActive StreamStatus = iota
	// StreamUpdating: a reshard is in progress; another one fails with
	// ErrResourceInUse.
	StreamUpdating
)

// String returns "ACTIVE" or "UPDATING".
func (s StreamStatus) String() string {
	if s == StreamUpdating {
		return "UPDATING"
	}
	return "ACTIVE"
}

// partitionKeyField is the name of the field, first in each entry of a
// shard's stream, that holds the record's partition key.
const partitionKeyField = "pk"

// shard is one shard: a stream owning a range of hash keys.
type shard struct {
	num      int
	id       string
	keys     HashKeyRange
	parent   *shard // nil for a shard made at creation
	adjacent *shard // the second parent of a merge
	s        *Stream
	startSeq ID
	created  int64 // ms

	// Guarded by the sharded stream's mu.
	state    ShardState
	endSeq   ID // when not open: the shard's last ID at close
	closed   int64
	children []*shard

	// Guarded by s.mu.
	trimmed ID   // greatest ID dropped by retention
	sealed  bool // closed by a reshard: Put must route again
}

func shardID(n int) string { return fmt.Sprintf("shardId-%012d", n) }

// ShardedStream is a stream split into shards by the hash of a partition
// key, with the semantics of an Amazon Kinesis data stream: each shard is a
// Stream owning a contiguous range of 128-bit hash keys, the OPEN shards'
// ranges partition the whole key space, and resharding (SplitShard,
// MergeShards, UpdateShardCount) closes shards and opens children while the
// parents' records stay readable. Records older than the retention period
// are dropped. A ShardedStream is safe for concurrent use.
type ShardedStream struct {
	mu        sync.RWMutex
	cfg       config
	shards    []*shard                 // every shard ever made, by number
	live      []*shard                 // shards not expired, by number
	open      []*shard                 // OPEN shards by starting hash key
	routing   atomic.Pointer[[]*shard] // a copy of open for Put
	retention time.Duration
	created   int64  // ms
	epoch     uint64 // counts reshards and expiries

	updating atomic.Bool
	stepHook func() // called between the steps of UpdateShardCount

	expMu      sync.Mutex
	lastExpire int64 // ms of the last retention pass
	nextExpire atomic.Int64

	waitMu  sync.Mutex
	waiters waitList // readers waiting for a reshard or expiry

	groups map[string]*shardGroup // consumer groups; guarded by mu

	uid atomic.Uint64 // names the stream in iterator strings; 0 until asked

	name string  // its name in its DB; "" when made by NewShardedStream
	log  *objLog // records changes in a durable DB; nil in memory
	was  *objLog // the log it had before it was removed from its DB
}

// ShardedArgs holds the arguments of NewShardedStream.
type ShardedArgs struct {
	// Shards is the number of shards to start with, >= 1. They divide the
	// hash key space evenly: each is floor(2^128/Shards) wide and the last
	// one also takes the remainder.
	Shards int
	// Retention is how long records are kept; 0 means DefaultRetention.
	Retention time.Duration
}

// NewShardedStream returns a sharded stream with args.Shards OPEN shards,
// numbered from shardId-000000000000. Its options (WithClock) apply to every
// shard. It fails with ErrInvalidArgument for a shard count below 1 or a
// negative retention. O(Shards).
func NewShardedStream(args ShardedArgs, opts ...Option) (*ShardedStream, error) {
	if err := args.check(); err != nil {
		return nil, err
	}
	cfg := newConfig(opts)
	ss := newShardedStream(cfg, args.Retention, cfg.clock().UnixMilli())
	ss.mu.Lock()
	ss.initShardsLocked(args.Shards)
	ss.unlock()
	return ss, nil
}

func (a *ShardedArgs) check() error {
	if a.Shards < 1 {
		return errorf(ErrInvalidArgument, "shard count must be >= 1, got %d", a.Shards)
	}
	if a.Retention < 0 {
		return errorf(ErrInvalidArgument, "retention must be > 0, got %s", a.Retention)
	}
	if a.Retention == 0 {
		a.Retention = DefaultRetention
	}
	return nil
}

// newShardedStream makes a sharded stream with no shard yet.
func newShardedStream(cfg config, retention time.Duration, created int64) *ShardedStream {
	ss := &ShardedStream{cfg: cfg, retention: retention, created: created}
	ss.lastExpire = created
	ss.nextExpire.Store(created + expireEvery)
	return ss
}

// initShardsLocked makes the first n shards, dividing the hash key space
// evenly, and routes Put to them.
func (ss *ShardedStream) initShardsLocked(n int) {
	w := uniformWidth(uint64(n))
	for i := range n {
		r := HashKeyRange{StartingHashKey: w.mul(uint64(i)), EndingHashKey: w.mul(uint64(i + 1)).sub(HashKey{0, 1})}
		if i == n-1 {
			r.EndingHashKey = MaxHashKey()
		}
		ss.createShardLocked(r, nil, nil, ss.created, i)
	}
	ss.publishLocked()
}

// unlock releases the write lock; in a durable DB it first commits the
// record of the call's changes. The exported method that took the lock
// settles (see settle) once it holds no lock.
func (ss *ShardedStream) unlock() {
	if ss.log != nil {
		ss.log.commit()
	}
	ss.mu.Unlock()
}

// settle is the last step of every exported method of a sharded stream in
// a durable DB: holding no lock, it settles every record committed so far
// (the sharded stream's own and its shards'), as Stream.unlock does, and
// returns settle's error: the method must then fail and return nothing
// it read.
func (ss *ShardedStream) settle() error {
	if l := ss.log; l != nil {
		return l.j.settleAll()
	}
	return nil
}

// settleErr is settle for a deferred call that returns only an error: it
// sets *err to settle's error unless *err holds one already.
func (ss *ShardedStream) settleErr(err *error) {
	if e := ss.settle(); e != nil && *err == nil {
		*err = e
	}
}

// settleTo is settle for a deferred call whose result is *res: when
// settle fails and *err holds no error yet, it sets *err to settle's
// error and *res to its zero value.
func settleTo[T any](ss *ShardedStream, res *T, err *error) {
	if e := ss.settle(); e != nil && *err == nil {
		var zero T
		*res, *err = zero, e
	}
}

func (ss *ShardedStream) nowMs() int64 { return ss.cfg.clock().UnixMilli() }

// Status returns StreamUpdating while a reshard is in progress, else
// StreamActive. O(1).
func (ss *ShardedStream) Status() StreamStatus {
	if ss.updating.Load() {
		return StreamUpdating
	}
	return StreamActive
}

// Retention returns the retention period. O(1).
func (ss *ShardedStream) Retention() time.Duration {
	ss.mu.RLock()
	defer ss.mu.RUnlock()
	return ss.retention
}

// SetRetention changes the retention period and applies it at once:
// shortening it drops records and may expire closed shards. It fails with
// ErrInvalidArgument, changing nothing, for a period <= 0. It costs
// O(live shards) plus the storage blocks it frees.
func (ss *ShardedStream) SetRetention(d time.Duration) (err error) {
	if err = ss.cfg.gate.write(); err != nil {
		return
	}
	defer ss.settleErr(&err)
	if d <= 0 {
		return errorf(ErrInvalidArgument, "retention must be > 0, got %s", d)
	}
	ss.mu.Lock()
	ss.setRetentionLocked(d)
	ss.unlock()
	ss.expire(ss.nowMs(), true)
	return nil
}

// lookupLocked returns the shard called id, or an ErrShardNotFound error.
func (ss *ShardedStream) lookupLocked(id string) (*shard, error) {
	if n, ok := parseShardID(id); ok && n < len(ss.shards) {
		return ss.shards[n], nil
	}
	return nil, errorf(ErrShardNotFound, "%q", id)
}

// parseShardID returns the number of a shard ID "shardId-" + 12 digits.
func parseShardID(id string) (int, bool) {
	const prefix = "shardId-"
	if len(id) != len(prefix)+12 || id[:len(prefix)] != prefix {
		return 0, false
	}
	n, ok := parseUint(id[len(prefix):])
	return int(n), ok
}

// routeLocked returns the OPEN shard owning h. O(log open shards).
func (ss *ShardedStream) routeLocked(h HashKey) *shard { return route(ss.open, h) }

// route returns the shard of open (sorted by range) owning h: the first
// one not ending below h (the last shard ends at MaxHashKey). The search
// halves the candidates [base, base+n) without a branch on the keys, which
// random hash keys would mispredict half the time: the 128-bit comparison
// is a subtraction's borrow, and base moves by half or by nothing.
func route(open []*shard, h HashKey) *shard {
	base, n := 0, len(open)
	for n > 1 {
		half := n >> 1
		end := &open[base+half-1].keys.EndingHashKey
		_, below := bits.Sub64(end.Lo, h.Lo, 0)
		_, below = bits.Sub64(end.Hi, h.Hi, below) // 1 when end < h
		base += half & -int(below)
		n -= half
	}
	return open[base]
}

// publishLocked makes the current OPEN shards the ones Put routes to.
func (ss *ShardedStream) publishLocked() {
	open := slices.Clone(ss.open)
	ss.routing.Store(&open)
}

// add appends a record with an auto ID to the shard's stream, as
// Stream.Add does, unless the shard was sealed by a reshard: then it
// reports false and adds nothing. Like Stream.add, it unlocks on each
// path without a defer, as Put is hot.
func (sh *shard) add(fields []Field) (ID, bool, error) {
	s := sh.s
	nowMs := s.cfg.idMs()
	s.mu.Lock()
	if sh.sealed {
		s.unlock()
		return ID{}, false, nil
	}
	id, ok := nextAutoID(nowMs, ID(s.st.LastID())) // autoIDLocked, inlined
	if !ok {
		s.unlock()
		return ID{}, true, s.exhausted()
	}
	if s.log == nil {
		s.appendMemLocked(id, fields) // appendLocked, its call inlined as in Stream.add
	} else {
		s.appendLogged(id, fields)
	}
	s.notifyLocked()
	if s.log != nil {
		s.unlockLogged()
	} else {
		s.mu.Unlock()
	}
	return id, true, nil
}

// PutArgs holds the options of Put.
type PutArgs struct {
	// ExplicitHashKey, when not "", routes the record by this decimal hash
	// key instead of the hash of its partition key.
	ExplicitHashKey string
}

// PutResult says where a record went.
type PutResult struct {
	ShardID        string
	SequenceNumber ID
}

// Put appends a record with the given partition key and fields to the
// OPEN shard owning its hash key (the MD5 of the partition key, or
// args.ExplicitHashKey) and returns the shard's ID and the record's
// sequence number, which is its ID in the shard's stream. Records with the
// same partition key keep their order across reshards for readers that
// read parents before children (ShardReader).
//
// Put fails, changing nothing, with ErrInvalidPartitionKey (empty, or more
// than 256 characters), ErrInvalidHashKey, ErrNoFields, or
// ErrStreamExhausted. It is O(log open shards) plus an Add and takes no
// stream-wide lock: it routes by a published copy of the OPEN shards and
// checks, under the shard's own lock, that the shard is still open. So it
// is atomic with respect to reshards: a record lands in a shard before the
// shard's ending sequence number, or in a child, never in a closed shard.
func (ss *ShardedStream) Put(partitionKey string, args PutArgs, fields ...Field) (PutResult, error) {
	// Every return settles (see settle), written out instead of deferred
	// as Put is hot.
	if err := ss.cfg.gate.write(); err != nil {
		return PutResult{}, err
	}
	if err := checkPartitionKey(partitionKey); err != nil {
		ss.settle()
		return PutResult{}, err
	}
	var h HashKey
	if args.ExplicitHashKey != "" {
		var err error
		if h, err = ParseHashKey(args.ExplicitHashKey); err != nil {
			ss.settle()
			return PutResult{}, err
		}
	} else {
		h = PartitionHashKey(partitionKey)
	}
	if len(fields) == 0 {
		ss.settle()
		return PutResult{}, errorf(ErrNoFields, "Put of partition key %q was given no fields", partitionKey)
	}
	// The entry stored: the partition key, then the fields; on the stack
	// for up to 7 fields, in the smaller of two buffers that holds them, as
	// each one is zeroed first.
	var fs []Field
	switch {
	case len(fields) < 4:
		var buf [4]Field
		fs = keyFirst(buf[:], partitionKey, fields)
	case len(fields) < 8:
		var buf [8]Field
		fs = keyFirst(buf[:], partitionKey, fields)
	default:
		fs = keyFirst(make([]Field, len(fields)+1), partitionKey, fields)
	}

	open := *ss.routing.Load()
	for {
		sh := route(open, h)
		id, ok, err := sh.add(fs)
		if !ok {
			// A reshard closed the shard: wait for it to end and route
			// again.
			ss.mu.RLock()
			open = *ss.routing.Load()
			ss.mu.RUnlock()
			continue
		}
		if err == nil && int64(id.Ms) >= ss.nextExpire.Load() {
			ss.expire(int64(id.Ms), false)
		}
		if serr := ss.settle(); err == nil {
			err = serr
		}
		if err != nil {
			return PutResult{}, err
		}
		return PutResult{ShardID: sh.id, SequenceNumber: id}, nil
	}
}

// keyFirst writes the partition key field and then fields to dst, which
// has room for them, and returns that part of dst. It copies them one by
// one, as an append would call memmove for a few words.
func keyFirst(dst []Field, partitionKey string, fields []Field) []Field {
	dst[0] = Field{partitionKeyField, partitionKey}
	rest := dst[1:][:len(fields)]
	//lint:ignore S1001 the loop is faster than copy's memmove for the few fields of a record (6.8 against 8.5 ns for two)
	for i, f := range fields {
		rest[i] = f
	}
	return dst[:len(fields)+1]
}

// PutRecordsEntry is one record of a PutRecords batch.
type PutRecordsEntry struct {
	PartitionKey    string
	ExplicitHashKey string
	Fields          []Field
}

// PutRecordsResult is the outcome of one record of a PutRecords batch:
// where it went, or why it was not stored.
type PutRecordsResult struct {
	ShardID        string
	SequenceNumber ID
	Err            error
}

// maxPutRecords is the largest PutRecords batch, as in Kinesis.
const maxPutRecords = 500

// PutRecords puts a batch of 1 to 500 records, in order, as Put does, and
// returns one result per record together with the number of records that
// failed. A failed record does not stop the others. A batch of a bad size
// fails with ErrInvalidArgument and stores nothing; so does a batch put
// to the sharded stream of a closed DB (ErrClosed) or of a DB whose log
// fails (ErrLogFailed). O(batch × Put).
func (ss *ShardedStream) PutRecords(records []PutRecordsEntry) ([]PutRecordsResult, int, error) {
	if len(records) == 0 || len(records) > maxPutRecords {
		return nil, 0, errorf(ErrInvalidArgument, "a batch holds 1 to %d records, got %d", maxPutRecords, len(records))
	}
	if err := ss.cfg.gate.write(); err != nil {
		return nil, 0, err
	}
	out := make([]PutRecordsResult, len(records))
	failed := 0
	for i, r := range records {
		res, err := ss.Put(r.PartitionKey, PutArgs{ExplicitHashKey: r.ExplicitHashKey}, r.Fields...)
		out[i] = PutRecordsResult{ShardID: res.ShardID, SequenceNumber: res.SequenceNumber, Err: err}
		if err != nil {
			failed++
		}
	}
	return out, failed, nil
}

// wakeReaders wakes readers waiting for a change of the shard set.
func (ss *ShardedStream) wakeReaders() {
	ss.waitMu.Lock()
	ss.waiters.wake()
	ss.waitMu.Unlock()
}
