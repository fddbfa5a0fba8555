package xstream

import (
	"github.com/armon/go-radix"

	"github.com/xstreamgo/xstream/internal/store"
)

// Consumer groups.
//
// A consumer group lets several consumers share one stream, as a Redis
// consumer group does: each entry read with ReadGroup ">" goes to one
// consumer of the group and stays in the group's pending entries list (PEL)
// until it is acknowledged. All group state lives under the stream's lock,
// so Add, Delete, Trim and group operations are atomic together. Groups and
// the consumers of a group are kept in radix trees keyed by name, so they
// are listed in name order. A PEL is a B-tree keyed by ID (store.BTree);
// the group's PEL holds the record of each pending entry, and each
// consumer's PEL holds the IDs it owns. Only the operations of groupops.go
// change them.

// entriesReadUnknown marks a group whose entries-read counter is not known
// (Redis SCG_INVALID_ENTRIES_READ).
const entriesReadUnknown = -1

// nack is the record of a pending entry. It holds no pointer, so the
// garbage collector does not scan PELs.
type nack struct {
	deliveryMs int64  // time of the last delivery, Unix ms; 0 after Nack
	count      int64  // number of deliveries
	owner      uint32 // consumer number (group.byNum); 0: given back by Nack
}

type consumer struct {
	name     string
	num      uint32 // in group.byNum
	pel      store.BTree[struct{}]
	seenMs   int64 // last attempted read or claim
	activeMs int64 // last successful read or claim; -1: never
}

type group struct {
	name        string
	lastID      ID    // last delivered ID
	entriesRead int64 // entries-read counter, or entriesReadUnknown
	pel         store.BTree[nack]
	consumers   *radix.Tree // name → *consumer
	byNum       []*consumer // consumer number → consumer; 0 is unused
	freeNums    []uint32    // numbers of deleted consumers

	dead         DeadLetterPolicy // zero: none
	deadLettered int64            // entries the policy moved
}

// ownerLocked returns the consumer that owns rec, or nil.
func (g *group) ownerLocked(rec *nack) *consumer {
	if rec.owner == 0 {
		return nil
	}
	return g.byNum[rec.owner]
}

// pendingLocked returns the record of id in the group's PEL, if it is pending.
func (g *group) pendingLocked(id ID) (nack, bool) {
	if rec := g.pel.Get(sid(id)); rec != nil {
		return *rec, true
	}
	return nack{}, false
}

// GroupOptions holds the options of CreateGroup and SetGroupID.
type GroupOptions struct {
	// EntriesRead sets the group's entries-read counter (Redis
	// ENTRIESREAD), used to compute its lag. nil, or -1, leaves it
	// unknown: the lag is then estimated from the stream when it can be.
	// Values below -1 are an ErrInvalidArgument error.
	EntriesRead *int64

	// MkStream makes DB.CreateGroup create a missing stream (Redis
	// MKSTREAM). Stream methods ignore it.
	MkStream bool

	// DeadLetter, when set, is the group's dead-letter policy (see
	// DeadLetterPolicy); CreateGroup applies it, SetGroupID ignores it
	// (SetDeadLetterPolicy changes it).
	DeadLetter DeadLetterPolicy
}

func (o GroupOptions) entriesRead() (int64, error) {
	if o.EntriesRead == nil {
		return entriesReadUnknown, nil
	}
	if v := *o.EntriesRead; v < -1 {
		return 0, errorf(ErrInvalidArgument, "EntriesRead must be >= -1, got %d", v)
	}
	return *o.EntriesRead, nil
}

// noGroup returns the NOGROUP error for group on s.
func (s *Stream) noGroup(group string) error {
	return errorf(ErrNoGroup, "stream %q has no consumer group %q", s.Name(), group)
}

// groupLocked returns the group called name, or a NOGROUP error.
func (s *Stream) groupLocked(name string) (*group, error) {
	if s.groups != nil {
		if v, ok := s.groups.Get(name); ok {
			return v.(*group), nil
		}
	}
	return nil, s.noGroup(name)
}

// hasGroup reports whether the stream has the group called name.
func (s *Stream) hasGroup(name string) bool {
	s.mu.RLock()
	defer s.runlock()
	_, err := s.groupLocked(name)
	return err == nil
}

func (s *Stream) nowMs() int64 { return s.cfg.clock().UnixMilli() }

// parseGroupStart parses the ID of CreateGroup and SetGroupID: "$" (the
// stream's last ID) or an entry ID ("ms-seq" or "ms").
func (s *Stream) parseGroupStart(start string) (id ID, dollar bool, err error) {
	if start == "$" {
		return ID{}, true, nil
	}
	id, err = ParseID(start)
	return id, false, err
}

// CreateGroup creates the consumer group name, whose last delivered ID is
// start: "$" for the stream's last ID (only entries added later will be
// delivered), "0" for the whole history, or any entry ID (Redis XGROUP
// CREATE), with the dead-letter policy opts.DeadLetter. It fails with
// ErrGroupExists when the group exists, and with ErrInvalidID or
// ErrInvalidArgument on bad arguments (a bad policy: see
// SetDeadLetterPolicy), changing nothing. O(log G) for G groups.
func (s *Stream) CreateGroup(name, start string, opts GroupOptions) (err error) {
	id, dollar, err := s.parseGroupStart(start)
	if err != nil {
		return err
	}
	read, err := opts.entriesRead()
	if err != nil {
		return err
	}
	if err := s.checkDeadLetterPolicy(opts.DeadLetter); err != nil {
		return err
	}
	if err = s.cfg.gate.write(); err != nil {
		return
	}
	s.mu.Lock()
	defer s.unlockTo(&err)
	if _, err := s.groupLocked(name); err == nil {
		return errorf(ErrGroupExists, "stream %q already has group %q", s.Name(), name)
	}
	if dollar {
		id = ID(s.st.LastID())
	}
	g := s.createGroupLocked(name, id, read)
	if opts.DeadLetter != (DeadLetterPolicy{}) {
		s.setDeadLetterPolicyLocked(g, opts.DeadLetter)
	}
	return nil
}

// SetGroupID sets the last delivered ID of a group (Redis XGROUP SETID): id
// is "$" for the stream's last ID or an entry ID. It also sets the group's
// entries-read counter from opts.EntriesRead (unknown when nil). Moving the
// ID back makes ReadGroup ">" deliver entries again; an entry still pending
// then moves to its new reader. It fails with ErrNoGroup, ErrInvalidID or
// ErrInvalidArgument, changing nothing. O(log G), and it serves blocked
// readers of the group.
func (s *Stream) SetGroupID(name, id string, opts GroupOptions) (err error) {
	to, dollar, err := s.parseGroupStart(id)
	if err != nil {
		return err
	}
	read, err := opts.entriesRead()
	if err != nil {
		return err
	}
	if err = s.cfg.gate.write(); err != nil {
		return
	}
	s.mu.Lock()
	defer s.unlockTo(&err)
	g, err := s.groupLocked(name)
	if err != nil {
		return err
	}
	if dollar {
		to = ID(s.st.LastID())
	}
	s.setGroupLastLocked(g, to, read)
	s.serveGroupWaitersLocked()
	return nil
}

// DestroyGroup removes the group called name with its consumers and
// pending entries (Redis XGROUP DESTROY) and reports whether it existed.
// Readers blocked in ReadGroup on the group return an ErrNoGroup error.
// In a DB it fails, changing nothing, with ErrClosed or ErrLogFailed.
// O(log G) plus the blocked readers.
func (s *Stream) DestroyGroup(name string) (_ bool, err error) {
	if err = s.cfg.gate.write(); err != nil {
		return
	}
	s.mu.Lock()
	defer s.unlockTo(&err)
	g, err := s.groupLocked(name)
	if err != nil {
		return false, nil
	}
	s.destroyGroupLocked(g)
	s.failGroupWaitersLocked(g, s.noGroup(name))
	return true, nil
}

// CreateConsumer creates the consumer called name in group and reports
// whether it was new (Redis XGROUP CREATECONSUMER). ReadGroup, Claim and
// AutoClaim also create consumers on first mention. It fails with
// ErrNoGroup. O(log G + log C).
func (s *Stream) CreateConsumer(group, name string) (_ bool, err error) {
	now := s.nowMs()
	if err = s.cfg.gate.write(); err != nil {
		return
	}
	s.mu.Lock()
	defer s.unlockTo(&err)
	g, err := s.groupLocked(group)
	if err != nil {
		return false, err
	}
	c, created := s.consumerLocked(g, name)
	if created {
		s.seeConsumerLocked(g, c, now)
	}
	return created, nil
}

// DeleteConsumer removes the consumer called name from group and returns how many entries
// it had pending; those entries leave the group's PEL too (Redis XGROUP
// DELCONSUMER). A consumer that does not exist gives 0. It fails with
// ErrNoGroup. O(p log P) for the consumer's p pending entries.
func (s *Stream) DeleteConsumer(group, name string) (_ int64, err error) {
	if err = s.cfg.gate.write(); err != nil {
		return
	}
	s.mu.Lock()
	defer s.unlockTo(&err)
	g, err := s.groupLocked(group)
	if err != nil {
		return 0, err
	}
	v, ok := g.consumers.Get(name)
	if !ok {
		return 0, nil
	}
	return s.deleteConsumerLocked(g, v.(*consumer)), nil
}
