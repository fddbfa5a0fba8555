package xstream

import (
	"errors"
	"math"
	"strings"
	"sync"
	"time"

	"github.com/armon/go-radix"
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

// Option configures a Stream or a DB.
type Option func(*config)

type config struct {
	clock     func() time.Time
	wallClock bool // clock is time.Now: Add may use wallUnixMilli
}

// WithClock makes a Stream or DB take the time from now instead of the
// wall clock: for auto IDs and, with consumer groups, idle times. Tests use
// it to control time.
func WithClock(now func() time.Time) Option {
	return func(c *config) { c.clock = now }
}

func newConfig(opts []Option) config {
	var c config
	for _, o := range opts {
		o(&c)
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
	name string
	cfg  config

	blocks    []*block // ordered by ID
	firsts    []ID     // firsts[i] is blocks[i].firstID(); changed with blocks
	open      *block   // the last block, while it takes new entries
	openNames []string // field names of open's master entry

	length       int64
	lastID       ID // last ID generated (XINFO last-generated-id)
	firstID      ID // recorded-first-entry-id
	maxDeleted   ID // max-deleted-entry-id
	entriesAdded int64

	waiters waitList
	removed bool // removed from its DB: DB calls look the name up again

	groups   *radix.Tree // group name → *group; nil until the first group
	gwaiters []groupWait // readers blocked in ReadGroup ">", in arrival order
}

// NewStream returns an empty stream.
func NewStream(opts ...Option) *Stream {
	return &Stream{cfg: newConfig(opts)}
}

// Name returns the stream's name in its DB, or "" for a stream made by
// NewStream.
func (s *Stream) Name() string { return s.name }

// Len returns the number of entries in the stream. It is O(1).
func (s *Stream) Len() int64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.length
}

// LastID returns the last ID generated in the stream (0-0 for a new
// stream). It does not change when entries are deleted or trimmed.
func (s *Stream) LastID() ID {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.lastID
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
}

// Add appends an entry with the given fields and returns its ID. The
// entry's ID comes from args.ID (see AddArgs); it must be greater than the
// stream's last ID. With args.Trim it then trims the stream.
//
// Add fails, changing nothing, with ErrNoFields (no fields), ErrInvalidID,
// ErrZeroID, ErrIDTooSmall, ErrStreamExhausted, or an error of the trim
// arguments (ErrTrimConflict, ErrInvalidArgument). It wakes readers blocked
// on the stream. Add is O(1) amortized, plus the trimming it does.
func (s *Stream) Add(args AddArgs, fields ...Field) (ID, error) {
	return s.add(args, fields, false)
}

// errRemoved tells DB.Add that its stream was removed after the lookup.
var errRemoved = errors.New("stream removed from its DB")

// add is Add; inDB makes it fail with errRemoved, changing nothing, when
// the stream was removed from its DB.
func (s *Stream) add(args AddArgs, fields []Field, inDB bool) (ID, error) {
	if len(fields) == 0 {
		return ID{}, errorf(ErrNoFields, "Add was given no fields")
	}
	var (
		want     ID
		explicit bool
		seqGiven bool
		nowMs    uint64
	)
	switch args.ID {
	case "", "*":
		nowMs = s.cfg.idMs()
	default:
		var err error
		want, seqGiven, err = parseID(args.ID, 0, true)
		if err != nil {
			return ID{}, err
		}
		if seqGiven && want.IsZero() {
			return ID{}, errorf(ErrZeroID, "got %q", args.ID)
		}
		explicit = true
	}
	var trim trimSpec // TrimNone
	if args.Trim != (TrimArgs{}) {
		var err error
		if trim, err = args.Trim.parse(); err != nil {
			return ID{}, err
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	if inDB && s.removed {
		return ID{}, errRemoved
	}
	if s.lastID == MaxID {
		return ID{}, errorf(ErrStreamExhausted, "last ID is %s", s.lastID)
	}
	var id ID
	switch {
	case !explicit:
		id = s.autoIDLocked(nowMs)
	case seqGiven:
		id = want
	case want.Ms == s.lastID.Ms:
		if s.lastID.Seq == math.MaxUint64 {
			return ID{}, errorf(ErrIDTooSmall, "%q: sequence of %d exhausted (last ID %s)", args.ID, want.Ms, s.lastID)
		}
		id = ID{want.Ms, s.lastID.Seq + 1}
	default:
		id = want
	}
	if !s.lastID.Less(id) {
		return ID{}, errorf(ErrIDTooSmall, "%q resolves to %s, last ID is %s", args.ID, id, s.lastID)
	}
	s.appendLocked(id, fields)
	if trim.strategy != TrimNone {
		s.trimLocked(trim)
	}
	s.notifyLocked()
	return id, nil
}

// autoIDLocked returns the ID an auto-ID Add made at nowMs gives: nowMs-0,
// or the next after the last ID when the clock has not passed it. The
// caller has checked that the last ID is not MaxID.
func (s *Stream) autoIDLocked(nowMs uint64) ID {
	if nowMs > s.lastID.Ms {
		return ID{nowMs, 0}
	}
	id, _ := s.lastID.Next()
	return id
}

// notifyLocked serves the readers waiting for new entries: blocked group
// reads first, in order, then plain reads.
func (s *Stream) notifyLocked() {
	s.serveGroupWaitersLocked()
	s.waiters.wake()
}

// appendLocked stores an entry; id is greater than every stored ID.
func (s *Stream) appendLocked(id ID, fields []Field) {
	tail := s.open
	var msd, seq uint64
	same := false
	if tail != nil {
		msd, seq = tail.idDelta(id)
		same = sameNames(s.openNames, fields)
		if !tail.fits(entrySize(msd, seq, same, fields)) {
			tail.seal()
			tail = nil
		}
	}
	if tail == nil {
		tail = newBlock(id, fields)
		s.blocks = append(s.blocks, tail)
		s.firsts = append(s.firsts, id)
		s.open = tail
		names := make([]string, len(fields))
		for i, f := range fields {
			names[i] = strings.Clone(f.Name) // not a part of a caller's larger string
		}
		s.openNames = names
		msd, seq, same = 0, 0, true
	}
	tail.append(id, msd, seq, same, fields)
	if s.length == 0 {
		s.firstID = id
	}
	s.length++
	s.lastID = id
	s.entriesAdded++
}

// blockFor returns the index of the last block whose first ID is <= id, or
// -1 if there is none. O(log blocks).
//
// It is a binary search over the contiguous firsts that, while it compares
// at one level, already loads the two places the next level may look at
// and the block pointer it may end on: the loads do not depend on the
// comparison, so in a large stream their cache misses overlap instead of
// coming one after another. x gathers what they load; it feeds the result
// through a term that is always 0 (len(f) < 1<<48) so that they stay.
func (s *Stream) blockFor(id ID) int {
	f := s.firsts
	if len(f) == 0 || id.Less(f[0]) {
		return -1
	}
	var x uint64
	base, n := 0, len(f) // the answer is in [base, base+n)
	for n > 1 {
		half := n >> 1
		next := (n - half) >> 1
		x += f[base+next].Ms + f[base+half+next].Ms
		if s.blocks[base+half] == nil {
			x++
		}
		if !id.Less(f[base+half]) {
			base += half
		}
		n -= half
	}
	return base + int(x>>63&uint64(len(f)>>48))
}

// cursor addresses entry i of block bi.
type cursor struct{ bi, i int }

// seekGE returns the position of the first stored entry (deleted or not)
// with ID >= id.
func (s *Stream) seekGE(id ID) cursor {
	bi := s.blockFor(id)
	if bi < 0 {
		return cursor{0, 0}
	}
	b := s.blocks[bi]
	i := b.search(id)
	if i == len(b.offs) {
		return cursor{bi + 1, 0}
	}
	return cursor{bi, i}
}

// seekLE returns the position of the last stored entry with ID <= id;
// bi is -1 when there is none.
func (s *Stream) seekLE(id ID) cursor {
	bi := s.blockFor(id)
	if bi < 0 {
		return cursor{-1, 0}
	}
	b := s.blocks[bi]
	var i int
	if id == MaxID {
		i = len(b.offs)
	} else {
		next, _ := id.Next()
		i = b.search(next)
	}
	// i > 0: the block's first ID is <= id.
	return cursor{bi, i - 1}
}

// walk calls fn for each live entry with lo <= ID <= hi, in ascending (or,
// with rev, descending) order, until fn returns false. It holds no lock:
// the caller holds at least the read lock.
func (s *Stream) walk(lo, hi ID, rev bool, fn func(b *block, id ID, flags byte, body int) bool) {
	if hi.Less(lo) || s.length == 0 {
		return
	}
	if !rev {
		for c := s.seekGE(lo); c.bi < len(s.blocks); c.bi, c.i = c.bi+1, 0 {
			b := s.blocks[c.bi]
			for ; c.i < len(b.offs); c.i++ {
				id, flags, body := b.at(c.i)
				if hi.Less(id) {
					return
				}
				if flags&flagDeleted == 0 && !fn(b, id, flags, body) {
					return
				}
			}
		}
		return
	}
	for c := s.seekLE(hi); c.bi >= 0; c.bi-- {
		b := s.blocks[c.bi]
		if c.i < 0 {
			c.i = len(b.offs) - 1
		}
		for ; c.i >= 0; c.i-- {
			id, flags, body := b.at(c.i)
			if id.Less(lo) {
				return
			}
			if flags&flagDeleted == 0 && !fn(b, id, flags, body) {
				return
			}
		}
	}
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
	c := getCollector()
	defer putCollector(c)
	s.mu.RLock()
	s.collectRange(c, lo, hi, count, rev)
	s.mu.RUnlock()
	return c.entries(), nil
}

// collectRange gathers up to count (0: all) entries of [lo, hi] into c.
func (s *Stream) collectRange(c *collector, lo, hi ID, count int, rev bool) {
	s.walk(lo, hi, rev, func(b *block, id ID, flags byte, body int) bool {
		c.add(b, id, flags, body)
		return count == 0 || len(c.ids) < count
	})
}
