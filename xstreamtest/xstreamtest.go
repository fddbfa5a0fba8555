package xstreamtest

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream"
)

// Caps says which optional capabilities the engine under test has. The
// suite tests a capability only when it is set; for Nack, DeleteEx,
// DeadLetters and DeadLetterPolicy unset, it checks that the package
// functions fail with errors.ErrUnsupported.
type Caps struct {
	// Nack: xstream.Nack works (Redis 8.8 XNACK).
	Nack bool
	// DeleteEx: xstream.DeleteEx and AckDel work, and so do the DelRef
	// and Acked policies of trims (Redis 8.2 XDELEX, XACKDEL, DELREF,
	// ACKED).
	DeleteEx bool
	// DeadLetters: xstream.MoveDeadLetters works.
	DeadLetters bool
	// DeadLetterPolicy: the engine keeps a group's dead-letter policy
	// (xstream.DeadLetterPolicyEngine, GroupOptions.DeadLetter). Redis
	// has none.
	DeadLetterPolicy bool
	// ReadLast: Read takes "+" for a stream's last entry (Redis 7.4).
	ReadLast bool
}

// Target is what a Factory makes for one test.
type Target struct {
	// Engine is a fresh engine, or one shared with other tests whose
	// streams have other prefixes. The suite never closes it: the
	// factory does (t.Cleanup).
	Engine xstream.Engine
	// Prefix starts the name of every stream the test uses. It must be
	// unique to the test when tests share a server; on a Redis Cluster it
	// should hold a hash tag, so that the test's streams share a slot.
	Prefix string
	// SlotPrefix, when not nil, returns for i >= 1 a prefix unique to the
	// test whose names are in another hash slot than Prefix's and than
	// the other SlotPrefix(j)'s. Tests of reads over several slots use
	// it. When nil, they use Prefix + "slot<i>-".
	SlotPrefix func(i int) string
	// Advance, when not nil, moves the engine's clock forward by d: the
	// clock of auto IDs and idle times. The suite then checks MinIdle,
	// idle times and auto IDs against it. nil when the clock is real.
	Advance func(d time.Duration)
}

// Factory makes the Target of one test. It may fail the test (t.Fatal)
// or skip it.
type Factory func(t *testing.T) Target

// Run runs the conformance suite: one subtest per area, and in each one
// subtest per case, each with a Target of its own from newEngine.
func Run(t *testing.T, newEngine Factory, caps Caps) {
	t.Helper()
	for _, a := range areas() {
		t.Run(a.name, func(t *testing.T) {
			for _, c := range a.cases {
				t.Run(c.name, func(t *testing.T) {
					c.run(newT(t, newEngine, caps))
				})
			}
		})
	}
}

// An area of the suite and its cases.
type area struct {
	name  string
	cases []tcase
}

type tcase struct {
	name string
	run  func(t *T)
}

func areas() []area {
	return []area{
		{"Add", addCases},
		{"Range", rangeCases},
		{"Len", lenCases},
		{"Delete", deleteCases},
		{"Trim", trimCases},
		{"SetID", setIDCases},
		{"Info", infoCases},
		{"Read", readCases},
		{"Remove", removeCases},
		{"Groups", groupCases},
		{"ReadGroup", readGroupCases},
		{"Ack", ackCases},
		{"Pending", pendingCases},
		{"Claim", claimCases},
		{"AutoClaim", autoClaimCases},
		{"Lag", lagCases},
		{"Nack", nackCases},
		{"DeleteEx", deleteExCases},
		{"DeadLetters", deadLetterCases},
		{"DeadLetterPolicy", deadPolicyCases},
	}
}

// Waits of the suite. Short blocks are long enough to be measured, and
// every wait for a goroutine is bounded by waitLimit.
const (
	shortBlock = 50 * time.Millisecond
	waitLimit  = 5 * time.Second
)

// T is one test: the testing.T, the engine and a context that ends with
// the test (and after a minute at most, so that no call hangs forever).
type T struct {
	*testing.T
	ctx    context.Context
	e      xstream.Engine
	target Target
	caps   Caps
}

func newT(t *testing.T, newEngine Factory, caps Caps) *T {
	t.Helper()
	target := newEngine(t)
	require.NotNil(t, target.Engine, "the Factory returned no Engine")
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	t.Cleanup(cancel)
	return &T{T: t, ctx: ctx, e: target.Engine, target: target, caps: caps}
}

// key returns the name of the test's stream called name.
func (t *T) key(name string) string { return t.target.Prefix + name }

// slotKey returns the name of the test's stream called name in key group
// i >= 1, in another slot than key's.
func (t *T) slotKey(i int, name string) string {
	if t.target.SlotPrefix != nil {
		return t.target.SlotPrefix(i) + name
	}
	return t.target.Prefix + "slot" + strconv.Itoa(i) + "-" + name
}

// needClock skips the test unless the engine's clock can be moved.
func (t *T) needClock() {
	t.Helper()
	if t.target.Advance == nil {
		t.Skip("the engine's clock is real (Target.Advance is nil)")
	}
}

// advance moves the engine's clock; the caller has checked needClock.
func (t *T) advance(d time.Duration) { t.target.Advance(d) }

// id parses an ID the test wrote.
func id(s string) xstream.ID {
	v, err := xstream.ParseID(s)
	if err != nil {
		panic(err)
	}
	return v
}

// f is the fields of the entry that add gives the ID s: ("f", s).
func f(s string) []xstream.Field { return xstream.Fields("f", s) }

// add adds an entry with an explicit ID (fields ("f", ID) unless given)
// and fails the test on error.
func (t *T) add(stream, rawID string, fields ...xstream.Field) xstream.ID {
	t.Helper()
	if len(fields) == 0 {
		fields = f(rawID)
	}
	got, err := t.e.Add(t.ctx, stream, xstream.AddArgs{ID: rawID}, fields...)
	require.NoError(t, err, "Add %s %s", stream, rawID)
	return got
}

// fill adds an entry ("f", ID) for each ID.
func (t *T) fill(stream string, ids ...string) {
	t.Helper()
	for _, s := range ids {
		t.add(stream, s)
	}
}

// entry is the entry that add makes for the ID s.
func entry(s string) xstream.Entry { return xstream.Entry{ID: id(s), Fields: f(s)} }

// entries is entry for each ID.
func entries(ids ...string) []xstream.Entry {
	out := make([]xstream.Entry, len(ids))
	for i, s := range ids {
		out[i] = entry(s)
	}
	return out
}

// idsOf returns the IDs of es as strings.
func idsOf(es []xstream.Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID.String()
	}
	return out
}

// strs formats IDs.
func strs(ids []xstream.ID) []string {
	out := make([]string, len(ids))
	for i, v := range ids {
		out[i] = v.String()
	}
	return out
}

// rangeIDs returns the IDs of Range(start, end, count), which must
// succeed.
func (t *T) rangeIDs(stream, start, end string, count int) []string {
	t.Helper()
	es, err := t.e.Range(t.ctx, stream, start, end, count)
	require.NoError(t, err, "Range %s %s %d", start, end, count)
	return idsOf(es)
}

// all returns the IDs of every entry of the stream.
func (t *T) all(stream string) []string {
	t.Helper()
	return t.rangeIDs(stream, "-", "+", 0)
}

// length returns the stream's Len.
func (t *T) length(stream string) int64 {
	t.Helper()
	n, err := t.e.Len(t.ctx, stream)
	require.NoError(t, err)
	return n
}

// info returns the stream's Info.
func (t *T) info(stream string) xstream.StreamInfo {
	t.Helper()
	in, err := t.e.Info(t.ctx, stream)
	require.NoError(t, err, "Info %s", stream)
	return in
}

// group creates a group, which must succeed.
func (t *T) group(stream, group, start string) {
	t.Helper()
	require.NoError(t, t.e.CreateGroup(t.ctx, stream, group, start, xstream.GroupOptions{}), "CreateGroup %s %s %s", stream, group, start)
}

// groupInfo returns the GroupInfo of the named group.
func (t *T) groupInfo(stream, group string) xstream.GroupInfo {
	t.Helper()
	gs, err := t.e.Groups(t.ctx, stream)
	require.NoError(t, err)
	for _, g := range gs {
		if g.Name == group {
			return g
		}
	}
	t.Fatalf("stream %s has no group %s: %+v", stream, group, gs)
	return xstream.GroupInfo{}
}

// readNew reads stream as consumer of group with ">" and no wait, and
// returns the IDs delivered.
func (t *T) readNew(stream, group, consumer string, count int) []string {
	t.Helper()
	res, err := t.e.ReadGroup(t.ctx, group, consumer, xstream.ReadGroupArgs{Count: count}, stream, ">")
	require.NoError(t, err, "ReadGroup %s %s %s >", stream, group, consumer)
	if len(res) == 0 {
		return nil
	}
	require.Len(t, res, 1)
	require.Equal(t, stream, res[0].Stream)
	return idsOf(res[0].Entries)
}

// pending returns the rows of PendingRange over the whole PEL.
func (t *T) pending(stream, group string) []xstream.PendingEntry {
	t.Helper()
	rows, err := t.e.PendingRange(t.ctx, stream, group, xstream.PendingArgs{Start: "-", End: "+"})
	require.NoError(t, err)
	return rows
}

// owners returns "ID:consumer:deliveries" for each pending entry.
func owners(rows []xstream.PendingEntry) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.ID.String() + ":" + r.Consumer + ":" + strconv.FormatInt(r.Deliveries, 10)
	}
	return out
}

// pendingOwners is owners of the whole PEL.
func (t *T) pendingOwners(stream, group string) []string {
	t.Helper()
	return owners(t.pending(stream, group))
}

// isErr checks that err wraps want.
func isErr(t *T, err, want error, msgAndArgs ...any) {
	t.Helper()
	require.Error(t, err, msgAndArgs...)
	require.ErrorIs(t, err, want, msgAndArgs...)
}

// result is what a call run in another goroutine returned.
type result[V any] struct {
	v   V
	err error
}

// async runs fn in a goroutine and returns the channel of its result.
func async[V any](fn func() (V, error)) <-chan result[V] {
	ch := make(chan result[V], 1)
	go func() {
		v, err := fn()
		ch <- result[V]{v, err}
	}()
	return ch
}

// await waits for the result of an async call, for waitLimit at most.
func await[V any](t *T, ch <-chan result[V], what string) (V, error) {
	t.Helper()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-time.After(waitLimit):
		t.Fatalf("%s did not return within %s", what, waitLimit)
	}
	var zero V
	return zero, nil
}

// feed adds entries ("f", ID) with IDs ms-0 for ms = from, from+1, ...
// every few milliseconds until done is closed (or waitLimit passes), for
// tests that must wait until a reader is blocked: the reader returns once
// an entry comes after it blocked. It returns the IDs added.
func (t *T) feed(stream string, from uint64, done <-chan struct{}) <-chan []string {
	out := make(chan []string, 1)
	go func() {
		var added []string
		defer func() { out <- added }()
		limit := time.After(waitLimit)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for ms := from; ; ms++ {
			s := strconv.FormatUint(ms, 10) + "-0"
			if _, err := t.e.Add(t.ctx, stream, xstream.AddArgs{ID: s}, f(s)...); err != nil {
				return
			}
			added = append(added, s)
			select {
			case <-done:
				return
			case <-limit:
				return
			case <-tick.C:
			}
		}
	}()
	return out
}

// ptr returns a pointer to v.
func ptr[V any](v V) *V { return &v }

// itoa formats an int.
func itoa(i int) string { return strconv.Itoa(i) }
