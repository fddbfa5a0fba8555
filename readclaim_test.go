package xstream

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func claimRead(t testing.TB, s *Stream, consumer string, args ReadGroupArgs) ([]string, []Delivery) {
	t.Helper()
	args.Claim = true
	es, ds, err := s.ReadGroupDeliveries(context.Background(), "g", consumer, ">", args)
	require.NoError(t, err)
	require.Len(t, ds, len(es), "one delivery per entry")
	return ids(es), ds
}

func TestReadGroupClaim(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	db := NewDB(WithClock(clk.now))
	s := jobsStream(t, db, 5, GroupOptions{})
	require.Equal(t, []string{"1-1", "2-1"}, readNew(t, s, "alice", 2))
	clk.advance(time.Second)
	require.Equal(t, []string{"3-1"}, readNew(t, s, "bob", 1))
	clk.advance(time.Second) // idle: 1-1 and 2-1 2 s, 3-1 1 s

	// Not idle enough: nothing claimed, the new entries come with zeros.
	got, ds := claimRead(t, s, "carol", ReadGroupArgs{Count: 1, ClaimMinIdle: 3 * time.Second})
	assert.Equal(t, []string{"4-1"}, got)
	assert.Equal(t, []Delivery{{}}, ds)

	// 3-1 is pending to bob (1 s); 1-1 and 2-1 to alice (2 s): the longest
	// idle first, then by ID, then the new entry, within Count.
	clk.advance(time.Second) // 4-1 idle 1 s
	got, ds = claimRead(t, s, "carol", ReadGroupArgs{Count: 4, ClaimMinIdle: 2 * time.Second})
	assert.Equal(t, []string{"1-1", "2-1", "3-1", "5-1"}, got)
	assert.Equal(t, []Delivery{{3 * time.Second, 1}, {3 * time.Second, 1}, {2 * time.Second, 1}, {}}, ds)
	assert.Equal(t, []string{"1-1:carol:2", "2-1:carol:2", "3-1:carol:2", "4-1:carol:1", "5-1:carol:1"}, pendingOf(t, s))
	var es []Entry
	rows, err := s.PendingRange("g", PendingArgs{})
	require.NoError(t, err)
	assert.Equal(t, time.Duration(0), rows[0].Idle, "a claimed entry's idle time restarts")
	assert.Equal(t, time.Second, rows[3].Idle, "4-1 was not claimed")

	// Count caps claims before new entries; ClaimMinIdle 0 takes every
	// pending entry; nothing left: nil.
	got, ds = claimRead(t, s, "dave", ReadGroupArgs{Count: 2})
	assert.Equal(t, []string{"4-1", "1-1"}, got, "4-1 was delivered first (1 s before the others)")
	assert.Equal(t, []Delivery{{time.Second, 1}, {0, 2}}, ds)
	n, err := s.Ack("g", "1-1", "2-1", "3-1", "4-1", "5-1")
	require.NoError(t, err)
	require.Equal(t, int64(5), n)
	es, ds, err = s.ReadGroupDeliveries(context.Background(), "g", "dave", ">", ReadGroupArgs{Claim: true})
	require.NoError(t, err)
	assert.Nil(t, es)
	assert.Nil(t, ds)
}

func TestReadGroupClaimErrors(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	db := NewDB(WithClock(clk.now))
	s := jobsStream(t, db, 2, GroupOptions{})
	readNew(t, s, "alice", 1)
	clk.advance(time.Second)
	before := snap(t, s)
	_, _, err := s.ReadGroupDeliveries(context.Background(), "g", "bob", ">", ReadGroupArgs{Claim: true, ClaimMinIdle: -time.Millisecond})
	requireErr(t, err, ErrInvalidArgument, "ClaimMinIdle", "-1ms")
	_, err = s.ReadGroup(context.Background(), "g", "bob", ">", ReadGroupArgs{ClaimMinIdle: time.Millisecond})
	requireErr(t, err, ErrInvalidArgument, "ClaimMinIdle", "without Claim")
	_, _, err = db.ReadGroupDeliveries(context.Background(), "g", "bob", ReadGroupArgs{Claim: true, ClaimMinIdle: -time.Second}, "jobs", ">")
	requireErr(t, err, ErrInvalidArgument, "ClaimMinIdle", "-1s")
	_, _, err = s.ReadGroupDeliveries(context.Background(), "nope", "bob", ">", ReadGroupArgs{Claim: true})
	requireErr(t, err, ErrNoGroup, "nope")
	requireUnchanged(t, s, before)
}

func TestReadGroupClaimNoAckDeletedAndNacked(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	db := NewDB(WithClock(clk.now))
	s := jobsStream(t, db, 5, GroupOptions{})
	readNew(t, s, "alice", 3)
	_, err := s.Nack("g", NackFail, []string{"3-1"}, NackArgs{})
	require.NoError(t, err)
	n, err := s.Delete("2-1")
	require.NoError(t, err)
	require.Equal(t, int64(1), n)
	clk.advance(10 * time.Millisecond)

	// 3-1, given back by Nack, comes first whatever the min idle; 2-1 is
	// gone, so it leaves the PEL; NoAck applies to new entries only.
	got, ds := claimRead(t, s, "bob", ReadGroupArgs{ClaimMinIdle: 10 * time.Millisecond, NoAck: true})
	assert.Equal(t, []string{"3-1", "1-1", "4-1", "5-1"}, got)
	assert.Equal(t, []Delivery{{NackIdle, 1}, {10 * time.Millisecond, 1}, {}, {}}, ds)
	assert.Equal(t, []string{"1-1:bob:2", "3-1:bob:2"}, pendingOf(t, s))
}

func TestReadGroupClaimDeadLetterPolicy(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	db := NewDB(WithClock(clk.now))
	s := policyDB(t, db, 3, 2)
	require.Equal(t, []string{"1-1", "2-1"}, readNew(t, s, "alice", 2))
	_, err := s.Claim("g", "alice", 0, []string{"1-1"}, ClaimArgs{}) // 1-1: a second delivery
	require.NoError(t, err)

	// 1-1's third delivery would pass the maximum: dead-lettered, not
	// returned nor counted; 2-1 is claimed, and 3-1 delivered.
	got, ds := claimRead(t, s, "bob", ReadGroupArgs{Count: 2})
	assert.Equal(t, []string{"2-1", "3-1"}, got)
	assert.Equal(t, []Delivery{{0, 1}, {}}, ds)
	assert.Equal(t, []string{"2-1:bob:2", "3-1:bob:1"}, pendingOf(t, s))
	dead := deadLetters(t, db)
	require.Len(t, dead, 1)
	assert.Equal(t, Field{DeadLetterIDField, "1-1"}, dead[0].Fields[2])
	assert.Equal(t, int64(1), groupInfo(t, s, "g").DeadLettered)
}

func TestReadGroupClaimDBAndHistory(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	db := NewDB(WithClock(clk.now))
	s := jobsStream(t, db, 2, GroupOptions{})
	readNew(t, s, "alice", 1)
	_, err := db.Add("other", AddArgs{ID: "1-1"}, Field{"a", "b"})
	require.NoError(t, err)
	require.NoError(t, db.CreateGroup("other", "g", "0", GroupOptions{}))
	_, err = db.ReadGroup(context.Background(), "g", "bob", ReadGroupArgs{}, "other", ">")
	require.NoError(t, err)

	// A history stream ignores Claim (nil deliveries); the ">" stream claims
	// 1-1 from alice, then delivers 2-1.
	out, dels, err := db.ReadGroupDeliveries(context.Background(), "g", "bob", ReadGroupArgs{Claim: true}, "other", "0", "jobs", ">")
	require.NoError(t, err)
	require.Len(t, out, 2)
	require.Len(t, dels, 2)
	assert.Equal(t, []string{"1-1"}, ids(out[0].Entries))
	assert.Nil(t, dels[0])
	assert.Equal(t, []string{"1-1", "2-1"}, ids(out[1].Entries))
	assert.Equal(t, []Delivery{{0, 1}, {}}, dels[1])

	// Without Claim, ReadGroupDeliveries returns no deliveries.
	_, dels, err = db.ReadGroupDeliveries(context.Background(), "g", "bob", ReadGroupArgs{}, "jobs", "0")
	require.NoError(t, err)
	assert.Nil(t, dels)
}

func TestReadGroupClaimBlocks(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	db := NewDB(WithClock(clk.now))
	s := jobsStream(t, db, 1, GroupOptions{})
	readNew(t, s, "alice", 0)
	done := make(chan struct{})
	var es []Entry
	var ds []Delivery
	var err error
	go func() {
		defer close(done)
		es, ds, err = s.ReadGroupDeliveries(context.Background(), "g", "bob", ">", ReadGroupArgs{Claim: true, ClaimMinIdle: time.Hour, Block: BlockForever})
	}()
	require.Eventually(t, func() bool { return groupInfo(t, s, "g").Consumers == 2 }, 5*time.Second, time.Millisecond)
	mustAdd(t, s, "2-1", Field{"job", "2"})
	<-done
	require.NoError(t, err)
	assert.Equal(t, []string{"2-1"}, ids(es))
	assert.Equal(t, []Delivery{{}}, ds)
}

func TestReadGroupClaimDurable(t *testing.T) {
	dir := t.TempDir()
	clk := newTestClock(1_700_000_000_000)
	db, err := Open(dir, WithClock(clk.now))
	require.NoError(t, err)
	s := jobsStream(t, db, 3, GroupOptions{})
	readNew(t, s, "alice", 2)
	clk.advance(time.Second)
	got, _ := claimRead(t, s, "bob", ReadGroupArgs{ClaimMinIdle: time.Second})
	require.Equal(t, []string{"1-1", "2-1", "3-1"}, got)
	want := pendingOf(t, s)
	require.Equal(t, []string{"1-1:bob:2", "2-1:bob:2", "3-1:bob:1"}, want)
	wantDump := dumpDB(t, db)
	require.NoError(t, db.Close())

	db = openT(t, dir, clk)
	s, ok := db.Lookup("jobs")
	require.True(t, ok)
	assert.Equal(t, want, pendingOf(t, s))
	assert.Equal(t, wantDump, dumpDB(t, db))
	checkDB(t, db)
}

// ClaimMinIdle 0 takes every pending entry, even one delivered "after"
// now (the clock went back), as Claim with a min idle of 0 does.
func TestReadGroupClaimZeroMinIdleClockBack(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	db := NewDB(WithClock(clk.now))
	s := jobsStream(t, db, 1, GroupOptions{})
	readNew(t, s, "alice", 0)
	clk.set(1_700_000_000_000 - 5000)
	got, ds := claimRead(t, s, "bob", ReadGroupArgs{})
	assert.Equal(t, []string{"1-1"}, got)
	assert.Equal(t, []Delivery{{0, 1}}, ds, "a negative idle time counts as 0")
	got, _ = claimRead(t, s, "carol", ReadGroupArgs{ClaimMinIdle: time.Millisecond})
	assert.Empty(t, got, "idle 0 now: not idle enough")
}

// claimIdle takes count entries at most, listing the candidates count at
// a time: past candidates whose message is gone, it lists the next ones.
func TestClaimIdleCountPastGone(t *testing.T) {
	s := NewStream()
	var added []ID
	for i := range 5 {
		added = append(added, must(s.Add(AddArgs{}, Fields("n", string(rune('a'+i)))...)))
	}
	require.NoError(t, s.CreateGroup("g", "0", GroupOptions{}))
	_, err := s.ReadGroup(context.Background(), "g", "a", ">", ReadGroupArgs{})
	require.NoError(t, err)
	_, err = s.Delete(added[0].String(), added[1].String())
	require.NoError(t, err)

	es, ds, dropped, err := s.claimIdle("g", "b", 0, 2)
	require.NoError(t, err)
	require.Equal(t, []ID{added[2], added[3]}, idsOf(es))
	require.Len(t, ds, 2)
	require.True(t, dropped, "the gone entries left the PEL")
	es, _, _, err = s.claimIdle("g", "b", time.Hour, 1)
	require.NoError(t, err)
	require.Empty(t, es, "nothing idle an hour")
	es, _, _, err = s.claimIdle("g", "c", 0, 0)
	require.NoError(t, err)
	require.Equal(t, []ID{added[2], added[3], added[4]}, idsOf(es))
}
