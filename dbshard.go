package xstream

import (
	"slices"
	"strings"
)

// Sharded streams of a DB. A DB holds sharded streams by name, apart from
// its streams (the two namespaces do not meet). In a durable DB (Open) a
// sharded stream made here is durable with everything in it: its shards,
// their hash key ranges, states and lineage, their records and sequence
// numbers, the retention, and its consumer groups. A ShardedStream made by
// NewShardedStream stays in memory.

// CreateShardedStream creates the sharded stream name in the DB with
// args.Shards OPEN shards, as NewShardedStream does, with the DB's
// options. It fails, creating nothing, with ErrResourceInUse when the DB
// already holds a sharded stream of that name (as Kinesis's CreateStream
// does), or with ErrInvalidArgument for bad arguments. O(Shards).
func (db *DB) CreateShardedStream(name string, args ShardedArgs) (*ShardedStream, error) {
	if err := args.check(); err != nil {
		return nil, err
	}
	if err := db.gate.write(); err != nil {
		return nil, err
	}
	db.mu.Lock()
	if _, ok := db.sharded[name]; ok {
		db.mu.Unlock()
		return nil, errorf(ErrResourceInUse, "the DB already holds the sharded stream %q", name)
	}
	ss := newShardedStream(db.cfg, args.Retention, db.cfg.clock().UnixMilli())
	ss.name = name
	ss.mu.Lock()
	if d := db.dur; d != nil {
		ss.log = d.newLog()
		ss.log.begin(effCreateSharded)
		ss.log.str(name)
		ss.log.varint(args.Retention.Milliseconds())
		ss.log.varint(ss.created)
	}
	ss.initShardsLocked(args.Shards)
	ss.unlock()
	db.sharded[name] = ss
	db.mu.Unlock()
	if err := ss.settle(); err != nil {
		return nil, err
	}
	return ss, nil
}

// ShardedStream returns the sharded stream called name, if the DB holds
// one. O(1).
func (db *DB) ShardedStream(name string) (*ShardedStream, bool) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	ss, ok := db.sharded[name]
	return ss, ok
}

// ShardedNames returns the names of the DB's sharded streams, in byte
// order. O(n log n).
func (db *DB) ShardedNames() []string {
	db.mu.RLock()
	defer db.mu.RUnlock()
	out := make([]string, 0, len(db.sharded))
	for name := range db.sharded {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

// RemoveShardedStream deletes the sharded stream called name from the DB
// and reports whether there was one. A *ShardedStream obtained before is
// detached: it stays usable in memory, and its changes are no longer kept
// by a durable DB. Its lease tables (DB.LeaseTable) and the streams of
// their checkpoints go with it, so that a sharded stream made again under
// the name starts with none. It fails with ErrClosed or ErrLogFailed.
func (db *DB) RemoveShardedStream(name string) (bool, error) {
	if err := db.gate.write(); err != nil {
		return false, err
	}
	db.mu.Lock()
	ss, ok := db.sharded[name]
	if !ok {
		db.mu.Unlock()
		return false, nil
	}
	delete(db.sharded, name)
	ss.mu.Lock()
	if l := ss.log; l != nil {
		l.begin(effRemove)
		l.commit()
		ss.log, ss.was = nil, l
		for _, sh := range ss.shards {
			sh.s.mu.Lock()
			sh.s.log, sh.s.was = nil, sh.s.log
			sh.s.mu.Unlock()
		}
	}
	ss.mu.Unlock()
	db.mu.Unlock()
	if d := db.dur; d != nil {
		if err := d.j.settleAll(); err != nil {
			return false, err
		}
	}
	prefix := LeaseStreamName(name, "")
	db.leases.Range(func(k, _ any) bool {
		if strings.HasPrefix(k.(string), prefix) {
			db.leases.Delete(k)
		}
		return true
	})
	if names := db.Names(prefix); len(names) > 0 {
		if _, err := db.Remove(names...); err != nil {
			return false, err
		}
	}
	return true, nil
}
