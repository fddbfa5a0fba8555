package xstream

import (
	"time"

	"github.com/xstreamgo/xstream/internal/store"
)

// Group and consumer information, as XINFO GROUPS, XINFO CONSUMERS and
// XINFO STREAM FULL report it. The lag they show is computed in
// readgroup.go, beside the delivery cursor it measures.

// GroupInfo describes a consumer group, with the fields of Redis's XINFO
// GROUPS.
type GroupInfo struct {
	Name            string
	Consumers       int
	Pending         int64 // entries in the group's PEL
	LastDeliveredID ID
	// EntriesRead counts the entries delivered to the group, when
	// EntriesReadKnown.
	EntriesRead      int64
	EntriesReadKnown bool
	// Lag is the number of entries not yet delivered to the group, when
	// LagKnown. It is unknown (not zero) when deletions inside the
	// stream make it impossible to count, as in Redis 7.
	Lag      int64
	LagKnown bool
	// DeadLetter is the group's dead-letter policy (zero: none), and
	// DeadLettered counts the entries it moved to its dead-letter
	// stream. Redis has neither: its XINFO GROUPS lists them only for a
	// group that has a policy or dead letters.
	DeadLetter   DeadLetterPolicy
	DeadLettered int64
}

func (s *Stream) groupInfoLocked(g *group) GroupInfo {
	info := GroupInfo{
		Name:            g.name,
		Consumers:       g.consumers.Len(),
		Pending:         int64(g.pel.Len()),
		LastDeliveredID: g.lastID,
		DeadLetter:      g.dead,
		DeadLettered:    g.deadLettered,
	}
	if g.entriesRead != entriesReadUnknown {
		info.EntriesRead, info.EntriesReadKnown = g.entriesRead, true
	}
	info.Lag, info.LagKnown = s.lagLocked(g)
	return info
}

// Groups describes the stream's consumer groups in name order (Redis XINFO
// GROUPS). O(G).
func (s *Stream) Groups() []GroupInfo {
	s.mu.RLock()
	defer s.runlock()
	var out []GroupInfo
	s.eachGroupLocked(func(g *group) { out = append(out, s.groupInfoLocked(g)) })
	return out
}

func (s *Stream) eachGroupLocked(fn func(*group)) {
	if s.groups == nil {
		return
	}
	s.groups.Walk(func(_ string, v any) bool {
		fn(v.(*group))
		return false
	})
}

func eachConsumer(g *group, fn func(*consumer)) {
	g.consumers.Walk(func(_ string, v any) bool {
		fn(v.(*consumer))
		return false
	})
}

// ConsumerInfo describes a consumer of a group, with the fields of Redis's
// XINFO CONSUMERS.
type ConsumerInfo struct {
	Name    string
	Pending int64         // entries it owns in the group's PEL
	Idle    time.Duration // since its last attempted read or claim
	// Inactive is the time since its last successful read or claim (one
	// that delivered or claimed entries), when InactiveKnown; a consumer
	// that never had one has InactiveKnown false (Redis: -1).
	Inactive      time.Duration
	InactiveKnown bool
}

func consumerInfo(c *consumer, now int64) ConsumerInfo {
	info := ConsumerInfo{
		Name:    c.name,
		Pending: int64(c.pel.Len()),
		Idle:    msDuration(now - c.seenMs),
	}
	if c.activeMs >= 0 {
		info.Inactive, info.InactiveKnown = msDuration(now-c.activeMs), true
	}
	return info
}

// msDuration converts a difference of Unix milliseconds to a Duration; a
// clock that went back gives 0.
func msDuration(ms int64) time.Duration {
	if ms < 0 {
		ms = 0
	}
	return time.Duration(ms) * time.Millisecond
}

// Consumers describes the consumers of group in name order (Redis XINFO
// CONSUMERS). Idle times come from the stream's clock. It fails with
// ErrNoGroup. O(C).
func (s *Stream) Consumers(group string) (result []ConsumerInfo, err error) {
	now := s.nowMs()
	if err = s.cfg.gate.read(); err != nil {
		return
	}
	s.mu.RLock()
	defer runlockTo(s, &result, &err)
	g, err := s.groupLocked(group)
	if err != nil {
		return nil, err
	}
	var out []ConsumerInfo
	eachConsumer(g, func(c *consumer) { out = append(out, consumerInfo(c, now)) })
	return out, nil
}

// GroupDetail is a group as InfoFull lists it (Redis XINFO STREAM FULL):
// its description, its PEL and its consumers with their PELs.
type GroupDetail struct {
	GroupInfo
	PEL       []PendingEntry
	Consumers []ConsumerDetail

	// Nacked counts the group's pending entries given back by Nack and
	// not delivered since: pending to no one (Redis 8.8's nacked-count).
	Nacked int64
}

// ConsumerDetail is a consumer as InfoFull lists it.
type ConsumerDetail struct {
	ConsumerInfo
	SeenTime   time.Time // last attempted read or claim
	ActiveTime time.Time // last successful one; zero when never
	PEL        []PendingEntry
}

// groupDetailsLocked lists the groups for InfoFull; count caps each PEL
// listed (0: no cap). The nacked count reads each group's whole PEL.
func (s *Stream) groupDetailsLocked(count int) []GroupDetail {
	now := s.nowMs()
	var out []GroupDetail
	s.eachGroupLocked(func(g *group) {
		d := GroupDetail{GroupInfo: s.groupInfoLocked(g)}
		d.PEL = pendingRows(g, ID{}, MaxID(), count, nil, 0, now)
		d.Nacked = nackedLocked(g)
		eachConsumer(g, func(c *consumer) {
			cd := ConsumerDetail{ConsumerInfo: consumerInfo(c, now), SeenTime: time.UnixMilli(c.seenMs)}
			if c.activeMs >= 0 {
				cd.ActiveTime = time.UnixMilli(c.activeMs)
			}
			cd.PEL = pendingRows(g, ID{}, MaxID(), count, c, 0, now)
			d.Consumers = append(d.Consumers, cd)
		})
		out = append(out, d)
	})
	return out
}

// nackedLocked counts the entries of g's PEL that are pending to no one
// (given back by Nack). O(P) for P pending entries.
func nackedLocked(g *group) int64 {
	var n int64
	g.pel.Ascend(store.ID{}, store.MaxID, func(_ sID, rec *nack) bool {
		if rec.owner == 0 {
			n++
		}
		return true
	})
	return n
}
