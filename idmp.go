package xstream

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"slices"
	"time"
)

// Idempotent production, as Redis 8.6's XADD IDMP and IDMPAUTO.
//
// A stream remembers, for each producer, the idempotent IDs of its last
// adds and the entry ID each add got. An Add that repeats a remembered
// (producer, idempotent ID) pair adds nothing and returns the ID of the
// first add. A pair is remembered for the stream's Duration, counted from
// the millisecond of the entry's ID (auto IDs only, so that is when it
// was added), and at most the MaxSize latest pairs of each producer are
// kept. A pair aged past the duration no longer matches; it is dropped
// from memory by the producer's next idempotent add, or by the sweep of
// every producer that an idempotent add makes once a second at most
// (Redis's serverCron does the same), which also forgets the producers
// left with no pair. Deleting or trimming the entry does not forget its
// pair: a repeat within the window still returns its ID and adds nothing.

// Idempotency makes an Add idempotent (Redis 8.6 XADD IDMP and IDMPAUTO).
// The zero value is a plain Add.
type Idempotency struct {
	// Producer names the producer; idempotent IDs are kept apart per
	// producer. It must not be empty.
	Producer string

	// ID is the idempotent ID (IDMP): an Add repeating a (Producer, ID)
	// the stream still remembers returns the first add's entry ID and
	// adds nothing. It must be empty when Auto is set, and must not be
	// empty otherwise.
	ID string

	// Auto makes the idempotent ID a hash of the entry's fields
	// (IDMPAUTO): of its field/value pairs whatever their order, so two
	// adds with the same pairs in any order are one.
	Auto bool
}

// asked reports whether i asks for idempotence: i is not the zero value.
// Field by field, as the hottest path calls it: comparing i with
// Idempotency{} compiles to a call comparing the whole struct.
func (i *Idempotency) asked() bool { return i.Producer != "" || i.ID != "" || i.Auto }

// IdempotenceConfig is a stream's setting of idempotent production
// (Redis XCFGSET). A zero field is left as it is by SetIdempotence.
type IdempotenceConfig struct {
	// Duration is how long an idempotent ID is remembered: whole
	// seconds from 1s to 24h (Redis IDMP-DURATION, 1 to 86400 seconds).
	Duration time.Duration
	// MaxSize is how many of each producer's latest idempotent IDs are
	// remembered, from 1 to 10000 (Redis IDMP-MAXSIZE).
	MaxSize int
}

// IdempotenceInfo describes a stream's idempotent production (the IDMP
// fields of Redis 8.6's XINFO STREAM).
type IdempotenceInfo struct {
	IdempotenceConfig       // the setting (defaults 100s and 100)
	Producers         int   // producers with remembered IDs (pids-tracked)
	Tracked           int   // idempotent IDs remembered (iids-tracked)
	Added             int64 // idempotent adds that added an entry, ever (iids-added)
	Duplicates        int64 // idempotent adds that found their ID (iids-duplicates)
}

// UnusedIdempotence is the IdempotenceInfo of a stream that never used
// idempotent production: the default setting and zero counts.
var UnusedIdempotence = IdempotenceInfo{IdempotenceConfig: IdempotenceConfig{DefaultIdempotenceDuration, DefaultIdempotenceMaxSize}}

// The defaults and limits of IdempotenceConfig, Redis's.
const (
	DefaultIdempotenceDuration = 100 * time.Second
	DefaultIdempotenceMaxSize  = 100
	MaxIdempotenceDuration     = 24 * time.Hour
	MaxIdempotenceMaxSize      = 10000
)

// idmpState is what a stream knows of idempotent production; nil until
// the first idempotent add or setting. Guarded by the stream's lock.
type idmpState struct {
	durationMs uint64
	maxSize    int
	producers  map[string]*idmpProducer
	tracked    int
	added      int64
	dups       int64
	sweptMs    uint64 // when the last sweep of every producer ran
}

// idmpSweepEvery is how often, at most, an idempotent add sweeps every
// producer of aged IDs.
const idmpSweepEvery = 1000 // ms

// idmpProducer holds one producer's remembered IDs: ids maps an
// idempotent ID to its entry's ID; ring keeps the same IDs oldest first
// (a ring of at most maxSize slots, grown as needed), with the
// millisecond of their entry's ID, for aging and eviction.
type idmpProducer struct {
	ids  map[string]ID
	ring []idmpRef
	head int // the oldest slot
	n    int
}

type idmpRef struct {
	iid string
	ms  uint64
}

func newIdmpState() *idmpState {
	return &idmpState{
		durationMs: uint64(DefaultIdempotenceDuration.Milliseconds()),
		maxSize:    DefaultIdempotenceMaxSize,
	}
}

// config returns the setting of st, the default one when st is nil.
func (st *idmpState) config() IdempotenceConfig {
	if st == nil {
		return IdempotenceConfig{DefaultIdempotenceDuration, DefaultIdempotenceMaxSize}
	}
	return IdempotenceConfig{time.Duration(st.durationMs) * time.Millisecond, st.maxSize}
}

// oldest returns p's oldest remembered reference.
func (p *idmpProducer) oldest() idmpRef { return p.ring[p.head] }

// pop forgets p's oldest ID.
func (p *idmpProducer) pop() {
	delete(p.ids, p.ring[p.head].iid)
	p.ring[p.head] = idmpRef{}
	p.head = (p.head + 1) % len(p.ring)
	p.n--
}

// push remembers iid, newer than every ID p holds; p holds fewer than
// limit, the most its ring grows to.
func (p *idmpProducer) push(iid string, id ID, limit int) {
	if p.n == len(p.ring) {
		grown := make([]idmpRef, min(limit, max(4, 2*len(p.ring))))
		for i := range p.n {
			grown[i] = p.ring[(p.head+i)%len(p.ring)]
		}
		p.ring, p.head = grown, 0
	}
	p.ring[(p.head+p.n)%len(p.ring)] = idmpRef{iid, id.Ms}
	p.n++
	p.ids[iid] = id
}

// idmpKey is the checked idempotency of an Add.
type idmpKey struct {
	producer, iid string
}

// check checks the idempotency of an Add whose ID is explicit or not, and
// returns its key (the hash of fields for Auto). It fails with
// ErrInvalidArgument or ErrIdempotentWithID.
func (im Idempotency) check(explicit bool, fields []Field) (idmpKey, error) {
	switch {
	case im.Producer == "":
		return idmpKey{}, errorf(ErrInvalidArgument, "idempotent Add: empty producer (idempotent ID %q, auto %v)", im.ID, im.Auto)
	case im.Auto && im.ID != "":
		return idmpKey{}, errorf(ErrInvalidArgument, "idempotent Add of producer %q: an idempotent ID (%q) with Auto", im.Producer, im.ID)
	case !im.Auto && im.ID == "":
		return idmpKey{}, errorf(ErrInvalidArgument, "idempotent Add of producer %q: empty idempotent ID", im.Producer)
	case explicit:
		return idmpKey{}, errorf(ErrIdempotentWithID, "producer %q", im.Producer)
	}
	if im.Auto {
		return idmpKey{im.Producer, autoIID(fields)}, nil
	}
	return idmpKey{im.Producer, im.ID}, nil
}

// autoIID returns the idempotent ID of Auto: the first 16 bytes of the
// SHA-256 of the field/value pairs in sorted order, each name and value
// written with its length, so that the same pairs in any order give the
// same ID and different pairs (but for a collision of 128 bits) differ.
// O(F log F) for F fields, plus their bytes.
func autoIID(fields []Field) string {
	sorted := fields
	if !slices.IsSortedFunc(fields, compareFields) {
		sorted = slices.SortedFunc(slices.Values(fields), compareFields)
	}
	var buf [512]byte
	b := buf[:0]
	for _, f := range sorted {
		b = binary.AppendUvarint(b, uint64(len(f.Name)))
		b = append(b, f.Name...)
		b = binary.AppendUvarint(b, uint64(len(f.Value)))
		b = append(b, f.Value...)
	}
	sum := sha256.Sum256(b)
	return string(sum[:16])
}

func compareFields(a, b Field) int {
	if c := cmp.Compare(a.Name, b.Name); c != 0 {
		return c
	}
	return cmp.Compare(a.Value, b.Value)
}

// idmpDuplicateLocked reports whether k is remembered at nowMs, and then
// counts the duplicate and returns the first add's ID.
func (s *Stream) idmpDuplicateLocked(k idmpKey, nowMs uint64) (ID, bool) {
	st := s.idmp
	if st == nil {
		return ID{}, false
	}
	p := st.producers[k.producer]
	if p == nil {
		return ID{}, false
	}
	id, ok := p.ids[k.iid]
	if !ok || st.expired(id.Ms, nowMs) {
		return ID{}, false
	}
	s.idmpDupLocked()
	return id, true
}

// expired reports whether an ID remembered from the millisecond ms has
// aged past the duration at nowMs.
func (st *idmpState) expired(ms, nowMs uint64) bool {
	return nowMs >= ms && nowMs-ms >= st.durationMs
}

// IdempotenceInfo returns the stream's idempotent production: its setting
// and what it remembers. O(1).
func (s *Stream) IdempotenceInfo() IdempotenceInfo {
	s.mu.RLock()
	defer s.runlock()
	return s.idmpInfoLocked()
}

func (s *Stream) idmpInfoLocked() IdempotenceInfo {
	st := s.idmp
	info := IdempotenceInfo{IdempotenceConfig: st.config()}
	if st != nil {
		info.Producers, info.Tracked = len(st.producers), st.tracked
		info.Added, info.Duplicates = st.added, st.dups
	}
	return info
}

// check checks a setting for SetIdempotence.
func (c IdempotenceConfig) check() error {
	switch {
	case c == IdempotenceConfig{}:
		return errorf(ErrInvalidArgument, "idempotence setting: neither Duration nor MaxSize given")
	case c.Duration != 0 && (c.Duration < time.Second || c.Duration > MaxIdempotenceDuration || c.Duration%time.Second != 0):
		return errorf(ErrInvalidArgument, "idempotence setting: Duration must be whole seconds from 1s to 24h, got %v (MaxSize %d)", c.Duration, c.MaxSize)
	case c.MaxSize != 0 && (c.MaxSize < 1 || c.MaxSize > MaxIdempotenceMaxSize):
		return errorf(ErrInvalidArgument, "idempotence setting: MaxSize must be from 1 to %d, got %d (Duration %v)", MaxIdempotenceMaxSize, c.MaxSize, c.Duration)
	}
	return nil
}

// SetIdempotence sets the stream's idempotent production (Redis XCFGSET):
// the fields of c that are not zero replace the stream's. A change of
// either forgets every remembered idempotent ID (the counters of
// IdempotenceInfo stay); setting the values the stream has changes
// nothing. It fails, changing nothing, with ErrInvalidArgument (neither
// field given, or one out of its range). O(1) without a change, O(T) for
// T remembered IDs with one.
func (s *Stream) SetIdempotence(c IdempotenceConfig) error {
	if err := c.check(); err != nil {
		return err
	}
	return s.setIdempotence(c, false, "")
}

// setIdempotence is SetIdempotence of a checked c; inDB makes it fail with
// errRemoved, changing nothing, when s is no longer called name in its DB.
func (s *Stream) setIdempotence(c IdempotenceConfig, inDB bool, name string) (err error) {
	if err = s.cfg.gate.write(); err != nil {
		return
	}
	s.mu.Lock()
	defer s.unlockTo(&err)
	if s.goneLocked(inDB, name) {
		return errRemoved
	}
	cur := s.idmp.config()
	if c.Duration == 0 {
		c.Duration = cur.Duration
	}
	if c.MaxSize == 0 {
		c.MaxSize = cur.MaxSize
	}
	if c != cur {
		s.idmpConfigLocked(uint64(c.Duration.Seconds()), c.MaxSize)
	}
	return nil
}

// SetIdempotence sets the idempotent production of the stream called
// name, as Stream.SetIdempotence does; it fails with ErrNoStream when
// there is none (Redis XCFGSET needs the key).
func (db *DB) SetIdempotence(name string, c IdempotenceConfig) error {
	if err := c.check(); err != nil {
		return err
	}
	for {
		s, ok := db.Lookup(name)
		if !ok {
			return errorf(ErrNoStream, "%q", name)
		}
		if err := s.setIdempotence(c, true, name); err != errRemoved {
			return err
		}
	}
}

// IdempotenceEngine is an Engine with idempotent production (Redis 8.6):
// its Add takes AddArgs.Idempotency, and SetIdempotence sets a stream's
// setting (XCFGSET; a missing stream is an ErrNoStream error). An engine
// without it fails an idempotent Add with an error wrapping
// errors.ErrUnsupported.
type IdempotenceEngine interface {
	SetIdempotence(ctx context.Context, stream string, c IdempotenceConfig) error
}

// SetIdempotence calls e's SetIdempotence, or fails with an error wrapping
// errors.ErrUnsupported.
func SetIdempotence(ctx context.Context, e Engine, stream string, c IdempotenceConfig) error {
	if d, ok := e.(IdempotenceEngine); ok {
		return d.SetIdempotence(ctx, stream, c)
	}
	return unsupported(e, "SetIdempotence")
}

func (l local) SetIdempotence(_ context.Context, stream string, c IdempotenceConfig) error {
	return l.db.SetIdempotence(stream, c)
}
