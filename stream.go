package xstream

import (
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/armon/go-radix"

	"github.com/xstreamgo/xstream/internal/store"
)

// Field is one field/value pair of an entry. Names and values are
// binary-safe strings; an entry may repeat a name.
type Field struct {
	Name  string
	Value string
}

// Fields builds a field list from alternating names and values:
// Fields("sensor-id", "1234", "temperature", "19.8"). It panics when given
// an odd number of strings.
func Fields(kv ...string) []Field {
	if len(kv)%2 != 0 {
		panic("xstream.Fields: odd number of strings")
	}
	fs := make([]Field, len(kv)/2)
	for i := range fs {
		fs[i] = Field{kv[2*i], kv[2*i+1]}
	}
	return fs
}

// Entry is one entry of a stream: its ID and its fields in the order they
// were added.
type Entry struct {
	ID     ID
	Fields []Field
}

// Option configures a Stream or a DB: WithClock, WithNodeSize, and for
// durable DBs (Open) WithSync, WithMustExist, WithTruncateCorrupt and
// WithAutoSnapshot. Its zero value does nothing.
type Option struct{ apply func(*config) }

type config struct {
	clock     func() time.Time
	wallClock bool         // clock is time.Now: idMs may use its cheaper reading
	limits    store.Limits // of the storage blocks (WithNodeSize)
	gate      *gate        // of the DB the object belongs to; nil alone (gate.go)

	// Of durable DBs (Open).
	sync            SyncPolicy
	mustExist       bool
	truncateCorrupt bool
	autoSnapshot    int64
	autoSnapshotSet bool
	deferSync       bool
}

// WithClock makes a Stream or DB take the time from now instead of the
// wall clock: for auto IDs and, with consumer groups, idle times. Tests use
// it to control time.
func WithClock(now func() time.Time) Option {
	return Option{func(c *config) { c.clock = now }}
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		if o.apply != nil {
			o.apply(&c)
		}
	}
	if c.clock == nil {
		c.clock, c.wallClock = time.Now, true
	}
	return c
}

// Stream is an append-only log of entries ordered by ID, with the
// semantics of a Redis stream. The zero Stream is not usable: create one
// with NewStream, or through a DB. A Stream is safe for concurrent use.
type Stream struct {
	mu   sync.RWMutex
	name atomic.Pointer[string] // changed only by DB.Rename, under the DB's and the stream's locks
	cfg  config

	st  store.Blocks // the entries; changed only by the operations of ops.go
	log *objLog      // records changes in a durable DB; nil in memory
	was *objLog      // the log it had before it was removed from its DB

	waiters  waitList
	removed  bool  // removed from its DB: DB calls look the name up again
	expireMs int64 // when it expires, Unix ms (0: never); written under the DB's lock too (expire.go)

	groups   *radix.Tree // group name → *group; nil until the first group
	gwaiters []groupWait // readers blocked in ReadGroup ">", in arrival order

	db           *DB    // the DB that made it (nil: NewStream, a shard): where dead-letter streams are
	rank         uint64 // lock order between two streams: the lower first
	deadPolicies int    // groups with a dead-letter policy

	idmp *idmpState // idempotent production (idmp.go); nil until used

	ctr counters // what it did (streamstats.go)
}

// streamRanks numbers streams in the order they are made.
var streamRanks atomic.Uint64

// NewStream returns an empty stream.
func NewStream(opts ...Option) *Stream {
	return newStream("", newConfig(opts))
}

// newStream makes every Stream: alone, in a DB or as a shard.
func newStream(name string, cfg config) *Stream {
	s := &Stream{cfg: cfg, rank: streamRanks.Add(1)}
	s.name.Store(&name)
	s.st.SetLimits(cfg.limits)
	if testHookNewStream != nil {
		testHookNewStream(s)
	}
	return s
}

// testHookNewStream, set by tests, sees every new Stream (to check its
// invariants after the test).
var testHookNewStream func(*Stream)

// Name returns the stream's name in its DB, or "" for a stream made by
// NewStream. A DB.Rename changes it. Safe for concurrent use, O(1).
func (s *Stream) Name() string {
	if p := s.name.Load(); p != nil {
		return *p
	}
	return "" // a Stream literal of the package, used for its checks
}

// Len returns the number of entries in the stream. It is O(1).
func (s *Stream) Len() int64 {
	s.mu.RLock()
	defer s.runlock()
	return s.st.Len()
}

// LastID returns the last ID generated in the stream (0-0 for a new
// stream). It does not change when entries are deleted or trimmed.
func (s *Stream) LastID() ID {
	s.mu.RLock()
	defer s.runlock()
	return ID(s.st.LastID())
}

// AddArgs holds the arguments of Add besides the fields.
type AddArgs struct {
	// ID is the new entry's ID: "" or "*" for an auto ID from the clock,
	// "ms-seq" (or a bare "ms", meaning ms-0) for an explicit ID, or
	// "ms-*" for an explicit ms with the next free sequence.
	ID string

	// NoMkStream makes DB.Add fail with ErrNoStream instead of creating a
	// missing stream. Stream.Add ignores it.
	NoMkStream bool

	// Trim, when its Strategy is set, trims the stream after the add, in
	// the same atomic step.
	Trim TrimArgs

	// Idempotency, when set, makes the add idempotent (Redis 8.6 XADD
	// IDMP and IDMPAUTO; see Idempotency and Stream.SetIdempotence): a
	// repeat of an idempotent ID the stream remembers adds nothing, does
	// not trim, and returns the ID of the entry the first add made. It
	// needs an auto ID.
	Idempotency Idempotency
}

// Add appends an entry with the given fields and returns its ID. The
// entry's ID comes from args.ID (see AddArgs); it must be greater than the
// stream's last ID. With args.Trim it then trims the stream.
//
// Add fails, changing nothing, with ErrNoFields (no fields), ErrInvalidID,
// ErrZeroID, ErrIDTooSmall, ErrStreamExhausted, an error of the trim
// arguments (ErrTrimConflict, ErrInvalidArgument), or of the idempotency
// (ErrInvalidArgument, ErrIdempotentWithID). It wakes readers blocked on
// the stream. Add is O(1) amortized, plus the trimming it does (and for
// Idempotency.Auto the hash of the fields).
func (s *Stream) Add(args AddArgs, fields ...Field) (ID, error) {
	return s.add(&args, fields, false, "")
}

// errRemoved tells DB.Add that its stream was removed or renamed after
// the lookup.
var errRemoved = errors.New("stream removed from its DB")

// goneLocked reports, for a call of the DB on the stream it found called
// name (inDB), that the stream is no longer that: removed, or renamed
// since the lookup. The caller then looks the name up again. s.mu is held.
func (s *Stream) goneLocked(inDB bool, name string) bool {
	return inDB && (s.removed || s.Name() != name)
}

// add is Add; inDB makes it fail with errRemoved, changing nothing, when
// the stream is no longer called name in its DB (goneLocked).
//
// An add with an auto ID and no idempotency, the hottest path (with or
// without a trim), is done here, with no parseAdd; any other goes to
// addSpecified. Both end the same way (append, trim, serve blocked
// readers, unlock), written out, with no defer and no call more.
func (s *Stream) add(args *AddArgs, fields []Field, inDB bool, name string) (ID, error) {
	if args.ID != "" || args.Idempotency.asked() || len(fields) == 0 {
		return s.addSpecified(args, fields, inDB, name)
	}
	var trim *trimSpec // nil: no trim
	if !args.Trim.isZero() {
		var spec trimSpec
		if err := args.Trim.parseTo(&spec); err != nil {
			return ID{}, err
		}
		if spec.strategy != TrimNone {
			trim = &spec
		}
	}
	if err := s.cfg.gate.write(); err != nil {
		return ID{}, err
	}
	nowMs := s.cfg.idMs()
	s.mu.Lock()
	if s.goneLocked(inDB, name) {
		s.mu.Unlock()
		return ID{}, errRemoved
	}
	// nextID's auto-ID case, inlined.
	id, ok := nextAutoID(nowMs, ID(s.st.LastID()))
	if !ok {
		s.mu.Unlock()
		return ID{}, s.exhausted()
	}
	if s.log == nil {
		s.appendMemLocked(id, fields) // appendLocked, its call inlined
	} else {
		s.appendLogged(id, fields)
	}
	if trim != nil {
		s.trimLocked(trim)
	}
	s.notifyLocked()
	if s.log != nil {
		if err := s.unlockLogged(); err != nil {
			return ID{}, err
		}
	} else {
		s.mu.Unlock()
	}
	return id, nil
}

// addSpecified is add for any arguments: an explicit ID or "*" (with or
// without a trim), idempotency, or no fields (ErrNoFields).
func (s *Stream) addSpecified(args *AddArgs, fields []Field, inDB bool, name string) (ID, error) {
	if len(fields) == 0 {
		return ID{}, errorf(ErrNoFields, "Add was given no fields")
	}
	var a addSpec
	if err := s.parseAdd(args, &a); err != nil {
		return ID{}, err
	}
	var idmp *idmpKey
	if args.Idempotency.asked() {
		k, err := args.Idempotency.check(a.explicit, fields)
		if err != nil {
			return ID{}, err
		}
		idmp = &k
	}
	if err := s.cfg.gate.write(); err != nil {
		return ID{}, err
	}

	s.mu.Lock()
	if s.goneLocked(inDB, name) {
		s.mu.Unlock()
		return ID{}, errRemoved
	}
	if idmp != nil {
		if id, ok := s.idmpDuplicateLocked(*idmp, a.nowMs); ok {
			if err := s.unlock(); err != nil {
				return ID{}, err
			}
			return id, nil
		}
	}
	// nextID, with its auto-ID case inlined (an Add with a trim is hot
	// too).
	id, ok := nextAutoID(a.nowMs, ID(s.st.LastID()))
	if a.explicit {
		var err error
		if id, err = s.explicitID(args.ID, a.want, a.seqGiven, ID(s.st.LastID())); err != nil {
			s.mu.Unlock()
			return ID{}, err
		}
	} else if !ok {
		s.mu.Unlock()
		return ID{}, s.exhausted()
	}
	s.appendLocked(id, fields)
	if idmp != nil {
		s.idmpTrackLocked(*idmp, id, a.nowMs)
	}
	if a.trims {
		s.trimLocked(&a.trim)
	}
	s.notifyLocked()
	if s.log != nil {
		if err := s.unlockLogged(); err != nil {
			return ID{}, err
		}
	} else {
		s.mu.Unlock()
	}
	return id, nil
}

// addSpec is what an add takes from its AddArgs before it locks the
// stream: the explicit ID asked for or the clock's millisecond, and the
// trim.
type addSpec struct {
	want     ID     // an explicit ID (explicit), or its millisecond when !seqGiven
	explicit bool   // the ID is "ms-seq", "ms" or "ms-*"
	seqGiven bool   // the ID is "ms-seq" (or "ms"): want is the ID
	nowMs    uint64 // for an auto ID: the clock's millisecond
	trims    bool   // trim has a strategy
	trim     trimSpec
}

// parseAdd checks args.ID and args.Trim into a (a zero addSpec), as Add
// does before it locks the stream, and reads the clock for an auto ID. It
// fails with ErrInvalidID, ErrZeroID or an error of the trim arguments.
func (s *Stream) parseAdd(args *AddArgs, a *addSpec) error {
	switch args.ID {
	case "", "*":
		a.nowMs = s.cfg.idMs()
	default:
		var err error
		a.want, a.seqGiven, err = parseID(args.ID, 0, true)
		if err != nil {
			return err
		}
		if a.seqGiven && a.want.IsZero() {
			return errorf(ErrZeroID, "got %q", args.ID)
		}
		a.explicit = true
	}
	if !args.Trim.isZero() {
		if err := args.Trim.parseTo(&a.trim); err != nil {
			return err
		}
		a.trims = a.trim.strategy != TrimNone
	}
	return nil
}

// nextID returns the ID of an entry added by a after last, the stream's
// last ID (raw is the ID argument, for messages): it fails with
// ErrIDTooSmall or ErrStreamExhausted.
func (s *Stream) nextID(a *addSpec, raw string, last ID) (ID, error) {
	if a.explicit {
		return s.explicitID(raw, a.want, a.seqGiven, last)
	}
	id, ok := nextAutoID(a.nowMs, last)
	if !ok {
		return ID{}, s.exhausted()
	}
	return id, nil
}

// explicitID resolves the ID an explicit Add asks for after last, the
// stream's last ID: want, or with a "ms-*" ID (seqGiven false) the next
// sequence in want's millisecond. It fails with ErrIDTooSmall when the
// result is not above last, and with ErrStreamExhausted when last is
// MaxID.
func (s *Stream) explicitID(raw string, want ID, seqGiven bool, last ID) (ID, error) {
	if last == MaxID() {
		return ID{}, s.exhausted()
	}
	id := want
	if !seqGiven && want.Ms == last.Ms {
		if last.Seq == math.MaxUint64 {
			return ID{}, errorf(ErrIDTooSmall, "%q: sequence of %d exhausted (last ID %s)", raw, want.Ms, last)
		}
		id = ID{want.Ms, last.Seq + 1}
	}
	if !last.Less(id) {
		return ID{}, errorf(ErrIDTooSmall, "%q resolves to %s, last ID is %s", raw, id, last)
	}
	return id, nil
}

// autoIDLocked returns the ID an auto-ID Add made at nowMs gives (see
// nextAutoID); ok is false when the last ID is MaxID (ErrStreamExhausted).
func (s *Stream) autoIDLocked(nowMs uint64) (id ID, ok bool) {
	return nextAutoID(nowMs, ID(s.st.LastID()))
}

// nextAutoID returns the auto ID made at nowMs after last: nowMs-0, or
// the next after last when the clock has not passed it; ok is false when
// last is MaxID.
func nextAutoID(nowMs uint64, last ID) (id ID, ok bool) {
	if nowMs > last.Ms {
		return ID{nowMs, 0}, true
	}
	return last.Next()
}

// exhausted returns the ErrStreamExhausted error of s.
func (s *Stream) exhausted() error {
	return errorf(ErrStreamExhausted, "%slast ID is %s", s.namePrefix(), MaxID())
}

// namePrefix returns "name: " for messages, or "" for a stream without a
// name.
func (s *Stream) namePrefix() string {
	if s.Name() == "" {
		return ""
	}
	return s.Name() + ": "
}

// notifyLocked serves the readers waiting for new entries: blocked group
// reads first, in order, then plain reads.
func (s *Stream) notifyLocked() {
	if len(s.gwaiters)+len(s.waiters.ws) > 0 { // inlined: no call without readers
		s.wakeLocked()
	}
}

func (s *Stream) wakeLocked() {
	s.serveGroupWaitersLocked()
	s.waiters.wake()
}

// walkLocked calls fn for each live entry with lo <= ID <= hi, in ascending (or,
// with rev, descending) order, until fn returns false (see
// store.Blocks.Walk). The caller holds at least the read lock.
func (s *Stream) walkLocked(lo, hi ID, rev bool, fn func(b *store.Block, id store.ID, flags byte, body int) bool) {
	s.st.Walk(store.ID(lo), store.ID(hi), rev, fn)
}

// Range returns the entries with start <= ID <= end in ascending order, at
// most count of them (count 0 means no limit; a negative count is an
// ErrInvalidArgument error). Bounds take the forms "-" (the smallest ID),
// "+" (the largest), "ms-seq", a bare "ms" (ms-0 as start, the last ID of
// that millisecond as end), and "(ID" for an exclusive bound. Deleted
// entries are never returned. Finding the start is O(log N); the returned
// entries share one allocation for their strings.
func (s *Stream) Range(start, end string, count int) ([]Entry, error) {
	return s.rangeGeneric(start, end, count, false)
}

// RevRange is Range in descending order: it takes the end bound first, as
// XREVRANGE does, and returns at most count entries from the end.
func (s *Stream) RevRange(end, start string, count int) ([]Entry, error) {
	return s.rangeGeneric(start, end, count, true)
}

func (s *Stream) rangeGeneric(start, end string, count int, rev bool) ([]Entry, error) {
	if count < 0 {
		return nil, errorf(ErrInvalidArgument, "count must be >= 0, got %d", count)
	}
	lo, hi, empty, err := parseRange(start, end)
	if err != nil || empty {
		return nil, err
	}
	if err := s.cfg.gate.read(); err != nil {
		return nil, err
	}
	c := getCollector()
	defer putCollector(c)
	s.mu.RLock()
	s.collectRangeLocked(c, lo, hi, count, rev)
	if err := s.runlock(); err != nil {
		return nil, err
	}
	es := c.entries()
	s.ctr.read.Add(int64(len(es)))
	return es, nil
}

// collectRangeLocked gathers up to count (0: all) entries of [lo, hi] into c.
func (s *Stream) collectRangeLocked(c *collector, lo, hi ID, count int, rev bool) {
	if !rev {
		c.Walk(&s.st, sid(lo), sid(hi), collectLimit(count, len(c.IDs)))
		return
	}
	s.walkLocked(lo, hi, rev, func(b *store.Block, id store.ID, flags byte, body int) bool {
		c.add(b, ID(id), flags, body)
		return count == 0 || len(c.IDs) < count
	})
}

// unlock releases the stream's write lock. In a durable DB it first
// commits the record of the call's changes, if any, and then, holding no
// lock, settles it: under SyncAlways it waits until the record (for a call
// that changed nothing, the stream's last record) is on disk. It returns
// the error of settling (journal.settle): the call must then fail. A
// deferred log (the stream of a shard) leaves settling to the caller.
func (s *Stream) unlock() error {
	if s.log == nil {
		s.mu.Unlock()
		return nil
	}
	return s.unlockLogged()
}

func (s *Stream) unlockLogged() error {
	l := s.log
	changed := l.dirty
	lsn := l.commit()
	s.mu.Unlock()
	switch {
	case l.deferred:
		return nil
	case !changed && l.j.deferSync:
		// A read under the write lock (a blocking Read) waits for what
		// it read as a reader does, with WithDeferredSync too.
		return l.j.durable(lsn)
	}
	return l.j.settle(lsn)
}

// unlockTo is unlock for a deferred call: it sets *err to unlock's error
// unless *err holds one already.
func (s *Stream) unlockTo(err *error) {
	if e := s.unlock(); e != nil && *err == nil {
		*err = e
	}
}

// unlockDeferred releases the write lock after committing the call's
// record, and returns what the caller must settle (journal.settle) once
// it holds no lock: the record's LSN, 0 when there is nothing to settle.
func (s *Stream) unlockDeferred() (*journal, uint64) {
	l := s.log
	if l == nil {
		s.mu.Unlock()
		return nil, 0
	}
	lsn := l.commit()
	s.mu.Unlock()
	return l.j, lsn
}

// runlock releases the read lock. In a durable DB under SyncAlways it
// then waits until the stream's last record is on disk, so that nothing
// the reader saw can be lost; when that fails it returns the log's error,
// and the reader must return it instead of what it read.
func (s *Stream) runlock() error {
	if s.log == nil {
		s.mu.RUnlock()
		return nil
	}
	return s.runlockLogged()
}

func (s *Stream) runlockLogged() error {
	l := s.log
	lsn := l.lsn
	s.mu.RUnlock()
	if !l.deferred {
		return l.j.durable(lsn)
	}
	return nil
}

// runlockTo is runlock for a deferred call of a reader whose result is
// *res: when runlock fails and *err holds no error yet, it sets *err to
// runlock's error and *res to its zero value, so that the reader returns
// nothing of what it read.
func runlockTo[T any](s *Stream, res *T, err *error) {
	if e := s.runlock(); e != nil && *err == nil {
		var zero T
		*res, *err = zero, e
	}
}
