package xstream

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// policyDB makes a DB with the stream "jobs" holding 1-1 … n-1 (fields
// job=i) and the group "g" with the policy max → "jobs.dead".
func policyDB(t testing.TB, db *DB, n int, max int64) *Stream {
	t.Helper()
	return jobsStream(t, db, n, GroupOptions{DeadLetter: DeadLetterPolicy{MaxDeliveries: max, Stream: "jobs.dead"}})
}

// jobsStream makes the stream "jobs" of db holding 1-1 … n-1 (fields
// job=i) and the group "g" from 0 with opts.
func jobsStream(t testing.TB, db *DB, n int, opts GroupOptions) *Stream {
	t.Helper()
	for i := 1; i <= n; i++ {
		_, err := db.Add("jobs", AddArgs{ID: fmt.Sprintf("%d-1", i)}, Field{"job", fmt.Sprint(i)})
		require.NoError(t, err)
	}
	s := db.Stream("jobs")
	require.NoError(t, s.CreateGroup("g", "0", opts))
	return s
}

// deadLetters returns the entries of the dead-letter stream, or nil when
// it does not exist.
func deadLetters(t testing.TB, db *DB) []Entry {
	t.Helper()
	dl, ok := db.Lookup("jobs.dead")
	if !ok {
		return nil
	}
	es, err := dl.Range("-", "+", 0)
	require.NoError(t, err)
	return es
}

func groupInfo(t testing.TB, s *Stream, name string) GroupInfo {
	t.Helper()
	for _, g := range s.Groups() {
		if g.Name == name {
			return g
		}
	}
	t.Fatalf("no group %q", name)
	return GroupInfo{}
}

func pendingOf(t testing.TB, s *Stream) []string {
	t.Helper()
	rows, err := s.PendingRange("g", PendingArgs{})
	require.NoError(t, err)
	var out []string
	for _, r := range rows {
		out = append(out, fmt.Sprintf("%s:%s:%d", r.ID, r.Consumer, r.Deliveries))
	}
	return out
}

func readNew(t testing.TB, s *Stream, consumer string, count int) []string {
	t.Helper()
	es, err := s.ReadGroup(context.Background(), "g", consumer, ">", ReadGroupArgs{Count: count})
	require.NoError(t, err)
	return ids(es)
}

func claimIDs(t testing.TB, s *Stream, consumer string, args ClaimArgs, ids_ ...string) []string {
	t.Helper()
	es, err := s.Claim("g", consumer, 0, ids_, args)
	require.NoError(t, err)
	return ids(es)
}

func TestDeadLetterPolicyClaim(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	db := NewDB(WithClock(clk.now))
	s := policyDB(t, db, 2, 2)
	require.Equal(t, []string{"1-1", "2-1"}, readNew(t, s, "alice", 0))
	require.Equal(t, []string{"1-1"}, claimIDs(t, s, "bob", ClaimArgs{}, "1-1"), "the second delivery is allowed")
	require.Nil(t, deadLetters(t, db), "no dead letter yet: the dead-letter stream is not made")

	// The third would pass the maximum: moved, acknowledged, not returned.
	require.Equal(t, []string{"2-1"}, claimIDs(t, s, "carol", ClaimArgs{}, "1-1", "2-1"), "2-1: its second delivery")
	require.Equal(t, []string{"2-1:carol:2"}, pendingOf(t, s))
	dead := deadLetters(t, db)
	require.Len(t, dead, 1)
	assert.Equal(t, Fields(
		DeadLetterStreamField, "jobs",
		DeadLetterGroupField, "g",
		DeadLetterIDField, "1-1",
		DeadLetterConsumerField, "bob",
		DeadLetterDeliveriesField, "2",
		"job", "1"), dead[0].Fields)
	assert.Equal(t, uint64(1_700_000_000_000), dead[0].ID.Ms, "an auto ID from the clock")
	info := groupInfo(t, s, "g")
	assert.Equal(t, int64(1), info.DeadLettered)
	assert.Equal(t, DeadLetterPolicy{MaxDeliveries: 2, Stream: "jobs.dead"}, info.DeadLetter)
	assert.Equal(t, int64(1), info.Pending)

	// RETRYCOUNT above the maximum moves too; JUSTID leaves the count,
	// so it moves only an entry above the maximum already.
	require.Equal(t, []string{"2-1"}, claimIDs(t, s, "dave", ClaimArgs{JustID: true}, "2-1"))
	require.Empty(t, claimIDs(t, s, "dave", ClaimArgs{RetryCount: i64(3)}, "2-1"))
	require.Empty(t, pendingOf(t, s))
	require.Len(t, deadLetters(t, db), 2)
	assert.Equal(t, int64(2), groupInfo(t, s, "g").DeadLettered)

	// Force claims an entry that was not pending: never a dead letter.
	require.Equal(t, []string{"1-1"}, claimIDs(t, s, "erin", ClaimArgs{Force: true}, "1-1"))
	require.Equal(t, []string{"1-1:erin:2"}, pendingOf(t, s))
}

func TestDeadLetterPolicyJustIDAboveMax(t *testing.T) {
	db := NewDB(WithClock(newTestClock(1_700_000_000_000).now))
	s := policyDB(t, db, 1, 3)
	readNew(t, s, "alice", 0)
	_, err := s.Nack("g", NackFatal, []string{"1-1"}, NackArgs{})
	require.NoError(t, err)
	require.Empty(t, claimIDs(t, s, "bob", ClaimArgs{JustID: true}, "1-1"), "a FATAL nack's count is above any maximum")
	dead := deadLetters(t, db)
	require.Len(t, dead, 1)
	assert.Equal(t, Field{DeadLetterConsumerField, ""}, dead[0].Fields[3], "given back by Nack: no owner")
	assert.Equal(t, Field{DeadLetterDeliveriesField, fmt.Sprint(int64(math.MaxInt64))}, dead[0].Fields[4])
}

func TestDeadLetterPolicyAutoClaim(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	db := NewDB(WithClock(clk.now))
	s := policyDB(t, db, 4, 1)
	require.Equal(t, []string{"1-1", "2-1", "3-1"}, readNew(t, s, "alice", 3))
	res, err := s.AutoClaim("g", "bob", 0, "0", AutoClaimArgs{Count: 2})
	require.NoError(t, err)
	require.Empty(t, res.Entries)
	require.Len(t, res.DeadLetters, 2, "moved entries count toward Count")
	assert.Equal(t, DeadLetter{ID: ID{1, 1}, DeadID: ID{1_700_000_000_000, 0}, Consumer: "alice", Deliveries: 1}, res.DeadLetters[0])
	assert.Equal(t, DeadLetter{ID: ID{2, 1}, DeadID: ID{1_700_000_000_000, 1}, Consumer: "alice", Deliveries: 1}, res.DeadLetters[1])
	assert.Equal(t, ID{3, 1}, res.Next)
	require.Equal(t, []string{"3-1:alice:1"}, pendingOf(t, s))
	assert.Equal(t, int64(2), groupInfo(t, s, "g").DeadLettered)

	// A ">" read never dead-letters: a new entry's count is 1.
	require.Equal(t, []string{"4-1"}, readNew(t, s, "bob", 0))
	require.Equal(t, []string{"3-1:alice:1", "4-1:bob:1"}, pendingOf(t, s))

	// Entries not idle enough are neither claimed nor moved.
	clk.advance(10 * time.Millisecond)
	res, err = s.AutoClaim("g", "carol", time.Second, "0", AutoClaimArgs{})
	require.NoError(t, err)
	require.Empty(t, res.Entries)
	require.Empty(t, res.DeadLetters)
	require.Len(t, deadLetters(t, db), 2)
}

func TestDeadLetterPolicyHistoryRead(t *testing.T) {
	db := NewDB(WithClock(newTestClock(1_700_000_000_000).now))
	s := policyDB(t, db, 3, 2)
	ctx := context.Background()
	readNew(t, s, "alice", 0)
	es, err := s.ReadGroup(ctx, "g", "alice", "0", ReadGroupArgs{Count: 1})
	require.NoError(t, err)
	require.Equal(t, []string{"1-1"}, ids(es), "the second delivery")
	// 1-1 would be delivered a third time: moved, and not counted
	// toward Count, so the read returns the next two.
	es, err = s.ReadGroup(ctx, "g", "alice", "0", ReadGroupArgs{Count: 2})
	require.NoError(t, err)
	require.Equal(t, []string{"2-1", "3-1"}, ids(es))
	require.Equal(t, []string{"2-1:alice:2", "3-1:alice:2"}, pendingOf(t, s))
	require.Len(t, deadLetters(t, db), 1)

	// DB.ReadGroup reads history the same way.
	res, err := db.ReadGroup(ctx, "g", "alice", ReadGroupArgs{}, "jobs", "0")
	require.NoError(t, err)
	require.Equal(t, []StreamEntries{{Stream: "jobs", Entries: []Entry{}}}, res)
	require.Empty(t, pendingOf(t, s))
	dead := deadLetters(t, db)
	require.Len(t, dead, 3)
	assert.Equal(t, Field{DeadLetterIDField, "3-1"}, dead[2].Fields[2])
	assert.Equal(t, int64(3), groupInfo(t, s, "g").DeadLettered)
}

// A deleted entry is not moved: a claim drops it from the PEL, a history
// read returns its ID, as without a policy.
func TestDeadLetterPolicyDeletedEntry(t *testing.T) {
	db := NewDB(WithClock(newTestClock(1_700_000_000_000).now))
	s := policyDB(t, db, 2, 1)
	readNew(t, s, "alice", 0)
	_, err := s.Delete("1-1", "2-1")
	require.NoError(t, err)
	es, err := s.ReadGroup(context.Background(), "g", "alice", "0", ReadGroupArgs{})
	require.NoError(t, err)
	require.Equal(t, []Entry{{ID: ID{1, 1}}, {ID: ID{2, 1}}}, es)
	require.Empty(t, claimIDs(t, s, "bob", ClaimArgs{}, "1-1"))
	require.Equal(t, []string{"2-1:alice:1"}, pendingOf(t, s))
	require.Nil(t, deadLetters(t, db))
	assert.Zero(t, groupInfo(t, s, "g").DeadLettered)
}

func TestDeadLetterPolicySet(t *testing.T) {
	db := NewDB(WithClock(newTestClock(1_700_000_000_000).now))
	s := policyDB(t, db, 2, 5)
	readNew(t, s, "alice", 0)
	// Lower the maximum: the next claim moves.
	require.NoError(t, s.SetDeadLetterPolicy("g", DeadLetterPolicy{MaxDeliveries: 1, Stream: "other"}))
	assert.Equal(t, DeadLetterPolicy{MaxDeliveries: 1, Stream: "other"}, groupInfo(t, s, "g").DeadLetter)
	require.Empty(t, claimIDs(t, s, "bob", ClaimArgs{}, "1-1"))
	other, ok := db.Lookup("other")
	require.True(t, ok)
	require.Equal(t, int64(1), other.Len())
	// The zero policy removes it; the count stays.
	require.NoError(t, s.SetDeadLetterPolicy("g", DeadLetterPolicy{}))
	require.Equal(t, []string{"2-1"}, claimIDs(t, s, "bob", ClaimArgs{}, "2-1"))
	info := groupInfo(t, s, "g")
	assert.Equal(t, DeadLetterPolicy{}, info.DeadLetter)
	assert.Equal(t, int64(1), info.DeadLettered)
	assert.Zero(t, s.deadPolicies)

	// A group destroyed with its policy leaves no policy counted.
	require.NoError(t, s.CreateGroup("h", "0", GroupOptions{DeadLetter: DeadLetterPolicy{MaxDeliveries: 1, Stream: "other"}}))
	assert.Equal(t, 1, s.deadPolicies)
	require.True(t, must(s.DestroyGroup("h")))
	assert.Zero(t, s.deadPolicies)
}

func TestDeadLetterPolicyBadInput(t *testing.T) {
	db := NewDB(WithClock(newTestClock(1_700_000_000_000).now))
	s := policyDB(t, db, 2, 2)
	readNew(t, s, "alice", 0)
	for _, c := range []struct {
		p    DeadLetterPolicy
		want string
	}{
		{DeadLetterPolicy{MaxDeliveries: 0, Stream: "x"}, "MaxDeliveries must be >= 1, got 0"},
		{DeadLetterPolicy{MaxDeliveries: -3, Stream: "x"}, "got -3"},
		{DeadLetterPolicy{MaxDeliveries: 2}, "no dead-letter stream named"},
		{DeadLetterPolicy{MaxDeliveries: 2, Stream: "jobs"}, `"jobs" is the group's own stream`},
	} {
		gtUnchanged(t, s, ErrInvalidArgument, c.want, func() error { return s.SetDeadLetterPolicy("g", c.p) })
		gtUnchanged(t, s, ErrInvalidArgument, c.want, func() error {
			return s.CreateGroup("new", "0", GroupOptions{DeadLetter: c.p})
		})
		p, want := c.p, c.want
		if p.Stream == "jobs" {
			p.Stream, want = "missing", `"missing" is the group's own stream`
		}
		gtUnchanged(t, s, ErrInvalidArgument, want, func() error {
			return db.CreateGroup("missing", "g", "0", GroupOptions{MkStream: true, DeadLetter: p})
		})
		_, ok := db.Lookup("missing")
		require.False(t, ok, "a refused CreateGroup makes no stream")
	}
	gtUnchanged(t, s, ErrNoGroup, `"nope"`, func() error {
		return s.SetDeadLetterPolicy("nope", DeadLetterPolicy{MaxDeliveries: 1, Stream: "x"})
	})
	alone := NewStream()
	_, err := alone.Add(AddArgs{}, Field{"a", "b"})
	require.NoError(t, err)
	gtUnchanged(t, alone, ErrInvalidArgument, "not in a DB", func() error {
		return alone.CreateGroup("g", "0", GroupOptions{DeadLetter: DeadLetterPolicy{MaxDeliveries: 1, Stream: "x"}})
	})
	require.Equal(t, DeadLetterPolicy{MaxDeliveries: 2, Stream: "jobs.dead"}, groupInfo(t, s, "g").DeadLetter)
	require.Nil(t, deadLetters(t, db))
}

// The dead-letter stream, removed, is made again by the next dead letter;
// a waiting reader of it gets the dead letter.
func TestDeadLetterPolicyStreamRemoved(t *testing.T) {
	db := NewDB(WithClock(newTestClock(1_700_000_000_000).now))
	s := policyDB(t, db, 2, 1)
	readNew(t, s, "alice", 0)
	require.Empty(t, claimIDs(t, s, "bob", ClaimArgs{}, "1-1"))
	require.Equal(t, 1, must(db.Remove("jobs.dead")))

	ctx := context.Background()
	got := make(chan []StreamEntries, 1)
	go func() {
		res, err := db.Read(ctx, ReadArgs{Block: BlockForever}, "jobs.dead", "0")
		assert.NoError(t, err)
		got <- res
	}()
	waitBlockedOnMissing(t, db, "jobs.dead")
	require.Empty(t, claimIDs(t, s, "bob", ClaimArgs{}, "2-1"))
	res := <-got
	require.Len(t, res, 1)
	require.Len(t, res[0].Entries, 1)
	assert.Equal(t, Field{DeadLetterIDField, "2-1"}, res[0].Entries[0].Fields[2])
	assert.Equal(t, int64(2), groupInfo(t, s, "g").DeadLettered)
}

// waitBlockedOnMissing waits until a reader waits for the missing stream
// name.
func waitBlockedOnMissing(t testing.TB, db *DB, name string) {
	t.Helper()
	for {
		db.mu.RLock()
		l, ok := db.missing[name]
		n := 0
		if ok {
			n = len(l.ws)
		}
		db.mu.RUnlock()
		if n > 0 {
			return
		}
		runtime.Gosched()
	}
}

// Two streams whose groups dead-letter into each other, claimed at once
// from both sides: the locks are taken in one order, so neither waits for
// the other forever, and every entry ends once in the other stream.
func TestDeadLetterPolicyCrossed(t *testing.T) {
	db := NewDB()
	const n = 200
	for _, name := range []string{"a", "b"} {
		for i := 1; i <= n; i++ {
			_, err := db.Add(name, AddArgs{ID: fmt.Sprintf("%d-1", i)}, Field{"n", fmt.Sprint(i)})
			require.NoError(t, err)
		}
	}
	a, b := db.Stream("a"), db.Stream("b")
	require.NoError(t, a.CreateGroup("g", "0", GroupOptions{DeadLetter: DeadLetterPolicy{MaxDeliveries: 1, Stream: "b"}}))
	require.NoError(t, b.CreateGroup("g", "0", GroupOptions{DeadLetter: DeadLetterPolicy{MaxDeliveries: 1, Stream: "a"}}))
	ctx := context.Background()
	for _, s := range []*Stream{a, b} {
		_, err := s.ReadGroup(ctx, "g", "c", ">", ReadGroupArgs{Count: n})
		require.NoError(t, err)
	}
	var wg sync.WaitGroup
	for _, s := range []*Stream{a, b} {
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 1 + w; i <= n; i += 4 {
					_, err := s.Claim("g", "k", 0, []string{fmt.Sprintf("%d-1", i)}, ClaimArgs{})
					assert.NoError(t, err)
					if i%3 == 0 {
						_, err = s.ReadGroup(ctx, "g", "c", "0", ReadGroupArgs{Count: 1})
						assert.NoError(t, err)
					}
				}
			}()
		}
	}
	wg.Wait()
	for _, s := range []*Stream{a, b} {
		info := groupInfo(t, s, "g")
		assert.Equal(t, int64(n), info.DeadLettered, s.Name())
		assert.Zero(t, info.Pending, s.Name())
		assert.Equal(t, int64(2*n), s.Len(), s.Name())
	}
}
