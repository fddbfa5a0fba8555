package xstream

import (
	"context"
	"errors"
	"slices"
	"strings"
	"sync"
)

// ErrLeaseLost reports a lease write (a checkpoint, a renewal, a take)
// refused because the lease moved on since the writer last saw it: its
// counter changed (another worker took it, or renewed it) or it was
// deleted. A worker that gets it has lost the lease and must stop
// processing the shard; see Checkpointer.
var ErrLeaseLost = errors.New("lease lost")

// Lease is a shard's entry in a LeaseTable, as in the KCL's lease table:
// the shard (Checkpoint.ShardID), the position processed so far
// (Checkpoint: the last sequence number processed, zero for none, or
// ShardEnd once the shard was processed to its end), the worker holding it
// and a counter that every update of the lease increments.
//
// The counter fences: UpdateLease stores a lease only if the table's
// counter is still the one the writer read, so a worker whose lease was
// taken by another one (which incremented the counter) can no longer
// write it, and a lease whose counter has not moved for a lease duration
// is known to be abandoned.
type Lease struct {
	Checkpoint
	Owner   string // the ID of the worker holding it; "" for none
	Counter uint64
}

// LeaseTable is where the workers of one application keep the leases of
// one sharded stream's shards (see Worker). Its writes are conditional,
// so that workers in several goroutines or processes share it safely.
//
// In process, NewLeaseTable keeps one in memory and DB.LeaseTable in a
// DB (kept on disk when the DB is durable); the Redis engine keeps one in
// a hash of its server (xredis.Sharded.LeaseTable). Another store can
// implement it: each method must be atomic, and UpdateLease a
// compare-and-set on the counter.
//
// Besides a lease per shard, the workers keep an entry per worker in the
// table, its ID prefixed by "worker:" (renewed as leases are, with no
// checkpoint), by which they count the live workers: Leases returns
// those too, and a table must take such IDs.
type LeaseTable interface {
	// Leases returns every lease of the table, by shard ID.
	Leases(ctx context.Context) ([]Lease, error)
	// CreateLease adds a lease of shardID with no owner, no checkpoint
	// and counter 0 unless the table has one, and reports whether it
	// added it.
	CreateLease(ctx context.Context, shardID string) (bool, error)
	// UpdateLease stores l with its counter incremented, if the table's
	// lease of l.ShardID still has l.Counter, and returns what it stored.
	// Otherwise (the counter differs, or there is no such lease) it
	// fails with ErrLeaseLost and changes nothing.
	UpdateLease(ctx context.Context, l Lease) (Lease, error)
	// DeleteLease removes the lease of shardID, if there is one.
	DeleteLease(ctx context.Context, shardID string) error
}

// NewLeaseTable returns an empty lease table in memory, for the workers
// of one application in this process. It suits any ShardedEngine, and in
// particular a ShardedStream made by NewShardedStream; DB.LeaseTable
// keeps one in a DB.
func NewLeaseTable() LeaseTable { return &memLeases{m: map[string]*memLease{}} }

// memLeases is the lease table of NewLeaseTable and DB.LeaseTable: the
// leases in a map under a mutex, and in a DB a stream that keeps their
// checkpoints (see DB.LeaseTable).
type memLeases struct {
	mu sync.Mutex
	m  map[string]*memLease

	db   *DB    // nil in memory
	name string // the stream in db that keeps the checkpoints
	err  error  // why loading the stream failed; nil once loaded
}

type memLease struct {
	l     Lease
	entry ID // the entry of db's stream holding its checkpoint; zero: none
}

func (t *memLeases) Leases(context.Context) ([]Lease, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make([]Lease, 0, len(t.m))
	for _, e := range t.m {
		out = append(out, e.l)
	}
	slices.SortFunc(out, func(a, b Lease) int { return strings.Compare(a.ShardID, b.ShardID) })
	return out, nil
}

func (t *memLeases) CreateLease(_ context.Context, shardID string) (bool, error) {
	if shardID == "" {
		return false, errorf(ErrInvalidArgument, "CreateLease: the shard ID is empty")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, ok := t.m[shardID]; ok {
		return false, nil
	}
	t.m[shardID] = &memLease{l: Lease{Checkpoint: Checkpoint{ShardID: shardID}}}
	return true, nil
}

func (t *memLeases) UpdateLease(_ context.Context, l Lease) (Lease, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.m[l.ShardID]
	if !ok {
		return Lease{}, errorf(ErrLeaseLost, "no lease of shard %s", l.ShardID)
	}
	if e.l.Counter != l.Counter {
		return Lease{}, errorf(ErrLeaseLost, "lease of shard %s: counter %d, not %d (owner %q)", l.ShardID, e.l.Counter, l.Counter, e.l.Owner)
	}
	l.Counter++
	if t.db != nil && l.Checkpoint != e.l.Checkpoint {
		// Only checkpoints are kept: owners and counters mean nothing
		// to the workers of a later process (see DB.LeaseTable).
		id, err := t.db.Add(t.name, AddArgs{}, leaseFields(l.Checkpoint)...)
		if err != nil {
			return Lease{}, err
		}
		t.dropEntry(e.entry)
		e.entry = id
	}
	e.l = l
	return l, nil
}

func (t *memLeases) DeleteLease(_ context.Context, shardID string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	e, ok := t.m[shardID]
	if !ok {
		return nil
	}
	if t.db != nil && !e.entry.IsZero() {
		if s, ok := t.db.Lookup(t.name); ok {
			if _, err := s.DeleteIDs(e.entry); err != nil {
				return err
			}
		}
	}
	delete(t.m, shardID)
	return nil
}

// dropEntry deletes an entry of the stream that a newer one replaced. A
// failure leaves it there, which does no harm: loading takes the newest
// entry of each shard.
func (t *memLeases) dropEntry(id ID) {
	if id.IsZero() {
		return
	}
	if s, ok := t.db.Lookup(t.name); ok {
		s.DeleteIDs(id)
	}
}

// The fields of an entry of a DB's lease stream.
const (
	leaseFieldShard = "shard"
	leaseFieldSeq   = "seq"
	leaseFieldEnd   = "end"
)

func leaseFields(cp Checkpoint) []Field {
	end := "0"
	if cp.ShardEnd {
		end = "1"
	}
	return []Field{{leaseFieldShard, cp.ShardID}, {leaseFieldSeq, cp.SequenceNumber.String()}, {leaseFieldEnd, end}}
}

// LeaseStreamName is the name of the stream in which DB.LeaseTable keeps
// the checkpoints of application app over the sharded stream called
// sharded: "xs:{sharded}:leases:app", the name of the Redis engine's
// lease hash.
func LeaseStreamName(sharded, app string) string { return "xs:{" + sharded + "}:leases:" + app }

// LeaseTable returns the lease table of application app (the workers
// that share the work, as a KCL application name does) over the DB's
// sharded stream called sharded. Every call with the same names returns
// the same table.
//
// The leases are in memory, and their checkpoints are also kept in the
// DB's stream LeaseStreamName(sharded, app), one entry per shard, which a
// durable DB keeps on disk: after Open, the workers of the new process
// resume from them. Owners and counters are not kept: the workers of a
// DB all live in the process that opened it, so after a restart no lease
// has a live owner and every one can be taken at once. Do not change
// that stream; removing it forgets the checkpoints (of a table made after
// that).
//
// It fails with ErrInvalidArgument for an empty app, ErrNoStream when
// the DB has no sharded stream called sharded, ErrClosed, or an error of
// reading the stream (ErrCorrupt for an entry that is not a checkpoint).
func (db *DB) LeaseTable(sharded, app string) (LeaseTable, error) {
	if app == "" {
		return nil, errorf(ErrInvalidArgument, "LeaseTable: the application name is empty")
	}
	if err := db.gate.read(); err != nil {
		return nil, err
	}
	if _, ok := db.ShardedStream(sharded); !ok {
		return nil, errorf(ErrNoStream, "no sharded stream %q", sharded)
	}
	name := LeaseStreamName(sharded, app)
	v, _ := db.leases.LoadOrStore(name, &memLeases{m: map[string]*memLease{}, db: db, name: name, err: errNotLoaded})
	t := v.(*memLeases)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.err != nil {
		if t.err = t.loadLocked(); t.err != nil {
			return nil, t.err
		}
	}
	return t, nil
}

var errNotLoaded = errors.New("not loaded")

// loadLocked reads the checkpoints from the DB's stream: the newest
// entry of each shard (it deletes the older ones). t.m changes only when
// it succeeds, so that a load tried again after a failure does not take
// the entries of the first try for older ones. The caller holds t.mu.
func (t *memLeases) loadLocked() error {
	s, ok := t.db.Lookup(t.name)
	if !ok {
		return nil
	}
	es, err := s.Range("-", "+", 0)
	if err != nil {
		return err
	}
	m := make(map[string]*memLease, len(es))
	for _, e := range es {
		cp, ok := leaseCheckpoint(e.Fields)
		if !ok {
			return errorf(ErrCorrupt, "entry %s of the lease stream %q is not a checkpoint: %v", e.ID, t.name, e.Fields)
		}
		if old, ok := m[cp.ShardID]; ok {
			t.dropEntry(old.entry)
		}
		m[cp.ShardID] = &memLease{l: Lease{Checkpoint: cp}, entry: e.ID}
	}
	t.m = m
	return nil
}

func leaseCheckpoint(fs []Field) (Checkpoint, bool) {
	if len(fs) != 3 || fs[0].Name != leaseFieldShard || fs[1].Name != leaseFieldSeq || fs[2].Name != leaseFieldEnd || fs[0].Value == "" {
		return Checkpoint{}, false
	}
	seq, err := ParseID(fs[1].Value)
	if err != nil {
		return Checkpoint{}, false
	}
	return Checkpoint{ShardID: fs[0].Value, SequenceNumber: seq, ShardEnd: fs[2].Value == "1"}, true
}
