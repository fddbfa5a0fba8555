package xstream

import (
	"context"
	"sync"

	"github.com/armon/go-radix"

	"github.com/xstreamgo/xstream/internal/store"
)

// DB is a set of named streams, as one Redis database is. A name holds a
// stream from its first Add (or Stream call) until Remove. The DB's own
// lock guards only the name table: operations on one stream never wait for
// another stream. A DB is safe for concurrent use.
type DB struct {
	mu      sync.RWMutex
	cfg     config
	streams *radix.Tree // name → *Stream
	missing map[string]*waitList
	sharded map[string]*ShardedStream
	exp     expiries // the streams with an expiry (expire.go)
	dur     *durable // the files of a durable DB (Open); nil in memory
	gate    *gate    // closed by Close; shows the log's failures (gate.go)

	limits    store.Limits // set by SetNodeSize, for the streams made later
	limitsSet bool

	leases sync.Map // lease tables by stream name (DB.LeaseTable)
}

// NewDB returns an empty DB. Its options apply to every stream it creates.
func NewDB(opts ...Option) *DB {
	return newDB(newConfig(opts))
}

func newDB(cfg config) *DB {
	cfg.gate = newGate()
	return &DB{cfg: cfg, streams: radix.New(), missing: map[string]*waitList{}, sharded: map[string]*ShardedStream{}, gate: cfg.gate}
}

// Lookup returns the stream called name, if there is one.
func (db *DB) Lookup(name string) (*Stream, bool) {
	db.mu.RLock()
	defer db.mu.RUnlock()
	return db.lookupLocked(name)
}

func (db *DB) lookupLocked(name string) (*Stream, bool) {
	v, ok := db.streams.Get(name)
	if !ok {
		return nil, false
	}
	return v.(*Stream), true
}

// Stream returns the stream called name, creating an empty one if there is
// none.
func (db *DB) Stream(name string) *Stream {
	if s, ok := db.Lookup(name); ok {
		return s
	}
	db.mu.Lock()
	if s, ok := db.lookupLocked(name); ok {
		db.mu.Unlock()
		return s
	}
	s := db.newStreamLocked(name)
	s.mu.Lock()
	j, lsn := s.unlockDeferred() // the record of its creation
	db.insertLocked(s)
	db.mu.Unlock()
	j.settle(lsn)
	return s
}

// newStreamLocked makes a stream of the DB; in a durable DB it records its
// creation, which the stream's first call commits. The caller inserts it.
func (db *DB) newStreamLocked(name string) *Stream {
	s := newStream(name, db.cfg)
	s.db = db
	if db.limitsSet {
		s.st.SetLimits(db.limits)
	}
	if d := db.dur; d != nil {
		s.log = d.newLog()
		s.log.begin(effCreateStream)
		s.log.str(name)
	}
	return s
}

func (db *DB) insertLocked(s *Stream) {
	db.streams.Insert(s.Name(), s)
	if l, ok := db.missing[s.Name()]; ok {
		l.wake()
		delete(db.missing, s.Name())
	}
}

// Add appends an entry to the stream called name, as Stream.Add does. A
// missing stream is created, unless args.NoMkStream is set: then Add fails
// with ErrNoStream. A failed Add creates nothing.
func (db *DB) Add(name string, args AddArgs, fields ...Field) (ID, error) {
	if err := db.gate.write(); err != nil {
		return ID{}, err
	}
	for {
		s, ok := db.Lookup(name)
		if !ok {
			break
		}
		if id, err := s.add(&args, fields, true, name); err != errRemoved {
			return id, err
		}
	}
	if args.NoMkStream {
		return ID{}, errorf(ErrNoStream, "%q", name)
	}
	var id ID
	done, err := db.createWith(name, func(s *Stream) (err error) {
		id, err = s.Add(args, fields...)
		return err
	})
	if !done {
		return db.Add(name, args, fields...) // created meanwhile
	}
	return id, err
}

// AddBatch appends entries to the stream called name, as Stream.AddBatch
// does. A missing stream is created, unless args.NoMkStream is set: then
// AddBatch fails with ErrNoStream. A failed AddBatch creates nothing; in
// a durable DB a new stream and its batch are one record.
func (db *DB) AddBatch(name string, args AddArgs, entries ...[]Field) ([]ID, error) {
	if err := db.gate.write(); err != nil {
		return nil, err
	}
	for {
		s, ok := db.Lookup(name)
		if !ok {
			break
		}
		if ids, err := s.addBatch(args, entries, true, name); err != errRemoved {
			return ids, err
		}
	}
	if args.NoMkStream {
		return nil, errorf(ErrNoStream, "%q", name)
	}
	var ids []ID
	done, err := db.createWith(name, func(s *Stream) (err error) {
		ids, err = s.AddBatch(args, entries...)
		return err
	})
	if !done {
		return db.AddBatch(name, args, entries...) // created meanwhile
	}
	return ids, err
}

// createWith creates the stream called name and runs add on it before
// the DB shows it: the stream is inserted only when add succeeds. It
// returns done false, having done nothing, when the stream exists
// (created meanwhile); else add's error, or settle's. It holds the DB's
// lock while add runs, and settles the record once it holds no lock.
func (db *DB) createWith(name string, add func(*Stream) error) (done bool, err error) {
	db.mu.Lock()
	if _, ok := db.lookupLocked(name); ok {
		db.mu.Unlock()
		return false, nil
	}
	// The new stream is not visible yet. In a durable DB its creation and
	// the add go in one record, settled once the DB's lock is released.
	// An add that fails on a new stream changes nothing before it fails
	// (its arguments are bad, or the IDs it asks for cannot be made), so
	// nothing is committed.
	s := db.newStreamLocked(name)
	if s.log != nil {
		s.log.deferred = true
	}
	if err := add(s); err != nil {
		db.mu.Unlock()
		return true, err
	}
	var lsn uint64
	if s.log != nil {
		s.mu.Lock()
		s.log.deferred = false
		lsn = s.log.lsn
		s.mu.Unlock()
	}
	db.insertLocked(s)
	db.mu.Unlock()
	if s.log != nil {
		return true, s.log.j.settle(lsn)
	}
	return true, nil
}

// Remove deletes the named streams, as Redis DEL does, and returns how
// many existed. Readers blocked in DB.Read go on waiting for a new stream
// of that name; readers blocked in ReadGroup return an ErrNoStream error.
// It fails with ErrClosed, or ErrLogFailed (see DB.Err), removing nothing
// (under SyncAlways, when the removal could not be synced, it may be kept
// or not, as for any call).
//
// A *Stream obtained from the DB before Remove is detached, like an
// unlinked file: it stays usable, but what is added to it is not seen
// through the DB, and Stream.Read calls blocked on it keep waiting on it.
// DB methods never use a removed stream.
func (db *DB) Remove(names ...string) (int, error) {
	if err := db.gate.write(); err != nil {
		return 0, err
	}
	db.mu.Lock()
	n := 0
	var j *journal
	var last uint64
	for _, name := range names {
		v, ok := db.streams.Get(name)
		if !ok {
			continue
		}
		n++
		if jj, lsn := db.removeLocked(v.(*Stream), errorf(ErrNoStream, "stream %q was removed", name)); jj != nil {
			j, last = jj, max(last, lsn)
		}
	}
	db.mu.Unlock()
	if j != nil {
		if err := j.settle(last); err != nil {
			return 0, err
		}
	}
	return n, nil
}

// removeLocked takes s out of the DB, as Remove does: its DB.Read
// readers look at its name again and its ReadGroup readers end with
// groupErr. It returns the journal and LSN of the removal's record, which
// the caller settles once it holds no lock (nil in memory). The caller
// holds db.mu.
func (db *DB) removeLocked(s *Stream, groupErr error) (*journal, uint64) {
	db.streams.Delete(s.Name())
	db.dropExpiryLocked(s)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.removed = true
	s.waiters.wake()
	s.failGroupWaitersLocked(nil, groupErr)
	l := s.log
	if l == nil {
		return nil, 0
	}
	l.begin(effRemove)
	lsn := l.commit()
	s.log, s.was = nil, l // detached: its changes are no longer the DB's
	return l.j, lsn
}

// Names returns the names of the streams whose name starts with prefix, in
// byte order.
func (db *DB) Names(prefix string) []string {
	db.mu.RLock()
	defer db.mu.RUnlock()
	var out []string
	db.streams.WalkPrefix(prefix, func(k string, _ any) bool {
		out = append(out, k)
		return false
	})
	return out
}

// Len returns the number of streams.
func (db *DB) Len() int {
	db.mu.RLock()
	defer db.mu.RUnlock()
	return db.streams.Len()
}

// StreamEntries is the part of a Read result that comes from one stream.
type StreamEntries struct {
	Stream  string
	Entries []Entry
}

// Read reads several streams at once, as XREAD does. streamsAndIDs
// alternates stream names and IDs: Read(ctx, args, "a", "0", "b", "$").
// Each ID is an entry ID, "$" or "+", with the meaning it has in
// Stream.Read. Read returns, for each stream with entries after its ID, up
// to args.Count of them, in the order the streams were given. When none
// has any and args.Block is not 0, it waits as Stream.Read does, for any of
// the streams, including one that does not exist yet.
func (db *DB) Read(ctx context.Context, args ReadArgs, streamsAndIDs ...string) ([]StreamEntries, error) {
	if err := args.check(); err != nil {
		return nil, err
	}
	if len(streamsAndIDs) == 0 || len(streamsAndIDs)%2 != 0 {
		return nil, errorf(ErrInvalidArgument, "Read wants stream names and IDs in pairs, got %d strings", len(streamsAndIDs))
	}
	n := len(streamsAndIDs) / 2
	names := make([]string, n)
	pos := make([]readPos, n)
	for i := range n {
		names[i] = streamsAndIDs[2*i]
		p, err := parseReadID(streamsAndIDs[2*i+1])
		if err != nil {
			return nil, err
		}
		pos[i] = p
	}
	if err := db.gate.read(); err != nil {
		return nil, err
	}
	block := args.Block != 0
	timeout, stop := newTimeout(args.Block)
	defer stop()
	var w *waiter
	if block {
		w = newWaiter(db.gate)
	}
	for {
		out, regs, err := db.readOnce(names, pos, args.Count, w)
		if err != nil {
			return nil, err
		}
		if len(out) > 0 || !block {
			return out, nil
		}
		again, err := w.wait(ctx, timeout)
		db.unregister(w, names, regs)
		if !again {
			return nil, err
		}
	}
}

// readOnce looks at each stream once. With w, it registers w on every
// stream (or missing name) that it finds without data, and returns those
// streams; registration happens under the same lock as the look, so no Add
// in between is missed. It fails when what it read cannot be made durable
// (runlock), having unregistered w.
func (db *DB) readOnce(names []string, pos []readPos, count int, w *waiter) ([]StreamEntries, []*Stream, error) {
	var out []StreamEntries
	var regs []*Stream
	for i, name := range names {
		s, ok := db.Lookup(name)
		if !ok {
			if pos[i].dollar {
				pos[i] = readPos{} // "$" of a missing stream is 0-0
			}
			if w != nil && len(out) == 0 {
				db.mu.Lock()
				if _, ok := db.lookupLocked(name); ok {
					w.notify() // created meanwhile: look again
				} else {
					l := db.missing[name]
					if l == nil {
						l = &waitList{}
						db.missing[name] = l
					}
					l.add(w)
				}
				db.mu.Unlock()
				regs = append(regs, nil)
			}
			continue
		}
		s.mu.Lock()
		if s.removed {
			// Removed since the lookup: look at the name again.
			s.unlock()
			if w != nil {
				w.notify()
			}
			continue
		}
		es := s.readLocked(&pos[i], count)
		if len(es) == 0 && w != nil && len(out) == 0 {
			s.waiters.add(w)
			regs = append(regs, s)
		}
		if err := s.unlock(); err != nil {
			if w != nil {
				db.unregister(w, names, regs)
			}
			return nil, nil, err
		}
		if len(es) > 0 {
			out = append(out, StreamEntries{Stream: name, Entries: es})
		}
	}
	if len(out) > 0 && w != nil {
		db.unregister(w, names, regs)
	}
	return out, regs, nil
}

// unregister removes w from the streams and missing names it was put on.
func (db *DB) unregister(w *waiter, names []string, regs []*Stream) {
	missing := false
	for _, s := range regs {
		if s == nil {
			missing = true
			continue
		}
		s.mu.Lock()
		s.waiters.remove(w)
		s.mu.Unlock() // no record: nothing to wait for on disk
	}
	if !missing {
		return
	}
	db.mu.Lock()
	defer db.mu.Unlock()
	for _, name := range names {
		if l, ok := db.missing[name]; ok {
			l.remove(w)
			if len(l.ws) == 0 {
				delete(db.missing, name)
			}
		}
	}
}
