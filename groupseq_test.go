package xstream

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// pendingStream returns a stream of n entries (IDs 1-0 .. n-0), all
// delivered to consumer "c1" of group "g" at the clock's time.
func pendingStream(t *testing.T, clk *testClock, n int) *Stream {
	t.Helper()
	s := NewStream(WithClock(clk.now))
	for i := 1; i <= n; i++ {
		mustAdd(t, s, fmt.Sprintf("%d-0", i))
	}
	require.NoError(t, s.CreateGroup("g", "0", GroupOptions{}))
	es, err := s.ReadGroup(context.Background(), "g", "c1", ">", ReadGroupArgs{})
	require.NoError(t, err)
	require.Len(t, es, n)
	return s
}

func seqIDs[T any](t *testing.T, seq func(func(T, error) bool), id func(T) ID) []string {
	t.Helper()
	var out []string
	for v, err := range seq {
		require.NoError(t, err)
		out = append(out, id(v).String())
	}
	return out
}

func entryID(e Entry) ID          { return e.ID }
func pendingID(p PendingEntry) ID { return p.ID }

func wantIDs(from, to int) []string {
	var out []string
	for i := from; i <= to; i++ {
		out = append(out, fmt.Sprintf("%d-0", i))
	}
	return out
}

// AutoClaimSeq follows the cursor across calls to the end of the PEL.
func TestAutoClaimSeqWalksCursor(t *testing.T) {
	clk := newTestClock(1_000_000)
	s := pendingStream(t, clk, 250)
	clk.advance(time.Minute)
	// Count 7: 36 calls, each claiming 7 (the last 5).
	got := seqIDs(t, s.AutoClaimSeq("g", "c2", time.Minute, "-", AutoClaimArgs{Count: 7}), entryID)
	require.Equal(t, wantIDs(1, 250), got)
	sum, err := s.Pending("g")
	require.NoError(t, err)
	require.Equal(t, []ConsumerPending{{"c2", 250}}, sum.Consumers)
	// Claimed now, nothing is idle a minute: a second walk claims nothing.
	require.Empty(t, seqIDs(t, s.AutoClaimSeq("g", "c3", time.Minute, "0", AutoClaimArgs{}), entryID))
	// From a start within the PEL, and with JustID.
	clk.advance(time.Minute)
	var n int
	for e, err := range s.AutoClaimSeq("g", "c3", time.Minute, "(200-0", AutoClaimArgs{JustID: true, Count: 3}) {
		require.NoError(t, err)
		require.Nil(t, e.Fields, "JustID")
		n++
	}
	require.Equal(t, 50, n)
}

// Deleted entries leave the PEL and are not yielded; entries not idle
// enough are skipped; the cursor goes on past pages of 10×Count that
// claim nothing.
func TestAutoClaimSeqDeletedAndSkipped(t *testing.T) {
	clk := newTestClock(1_000_000)
	s := pendingStream(t, clk, 30)
	_, err := s.Delete("3-0", "4-0")
	require.NoError(t, err)
	clk.advance(time.Minute)
	// Entries 11..30 delivered again now: not idle.
	_, err = s.Claim("g", "c1", 0, wantIDs(11, 30), ClaimArgs{})
	require.NoError(t, err)
	got := seqIDs(t, s.AutoClaimSeq("g", "c2", time.Minute, "0", AutoClaimArgs{Count: 1}), entryID)
	require.Equal(t, append(wantIDs(1, 2), wantIDs(5, 10)...), got)
	sum, err := s.Pending("g")
	require.NoError(t, err)
	require.Equal(t, int64(28), sum.Count, "the deleted entries left the PEL")
}

// Breaking out of the loop stops claiming; the loop body may use the
// stream (no lock is held while it runs).
func TestAutoClaimSeqBreakAndBody(t *testing.T) {
	clk := newTestClock(1_000_000)
	s := pendingStream(t, clk, 20)
	clk.advance(time.Minute)
	n := 0
	for e, err := range s.AutoClaimSeq("g", "c2", time.Minute, "0", AutoClaimArgs{Count: 2}) {
		require.NoError(t, err)
		acked, err := s.AckIDs("g", e.ID)
		require.NoError(t, err)
		require.Equal(t, int64(1), acked)
		if n++; n == 5 {
			break
		}
	}
	sum, err := s.Pending("g")
	require.NoError(t, err)
	// 5 acked; the 6th was claimed by the same call as the 5th.
	require.Equal(t, int64(15), sum.Count)
	require.Equal(t, []ConsumerPending{{"c1", 14}, {"c2", 1}}, sum.Consumers)
}

func TestAutoClaimSeqErrors(t *testing.T) {
	clk := newTestClock(1_000_000)
	s := pendingStream(t, clk, 5)
	clk.advance(time.Minute)
	before := snap(t, s)
	for _, tc := range []struct {
		name     string
		seq      func(func(Entry, error) bool)
		sentinel error
		names    []string
	}{
		{"negative min idle", s.AutoClaimSeq("g", "c2", -time.Second, "0", AutoClaimArgs{}), ErrInvalidArgument, []string{"min idle", "-1s"}},
		{"bad count", s.AutoClaimSeq("g", "c2", 0, "0", AutoClaimArgs{Count: -1}), ErrInvalidArgument, []string{"count", "-1"}},
		{"bad start", s.AutoClaimSeq("g", "c2", 0, "x-y", AutoClaimArgs{}), ErrInvalidID, []string{"x-y"}},
		{"no group", s.AutoClaimSeq("nope", "c2", 0, "0", AutoClaimArgs{}), ErrNoGroup, []string{"nope"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			for e, err := range tc.seq {
				calls++
				require.Equal(t, Entry{}, e)
				requireErr(t, err, tc.sentinel, tc.names...)
			}
			require.Equal(t, 1, calls, "one error, then the end")
			requireUnchanged(t, s, before)
		})
	}
	// The group destroyed between two calls: the error ends the loop.
	var errs []error
	n := 0
	for _, err := range s.AutoClaimSeq("g", "c2", time.Minute, "0", AutoClaimArgs{Count: 2}) {
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if n++; n == 2 {
			require.True(t, must(s.DestroyGroup("g")))
		}
	}
	require.Equal(t, 2, n)
	require.Len(t, errs, 1)
	requireErr(t, errs[0], ErrNoGroup, "g")
}

// PendingRangeSeq yields what PendingRange does, page after page.
func TestPendingRangeSeq(t *testing.T) {
	clk := newTestClock(1_000_000)
	s := pendingStream(t, clk, 250)
	// Half of them to c2, a minute later.
	clk.advance(time.Minute)
	var evens []string
	for i := 2; i <= 250; i += 2 {
		evens = append(evens, fmt.Sprintf("%d-0", i))
	}
	_, err := s.Claim("g", "c2", 0, evens, ClaimArgs{})
	require.NoError(t, err)
	clk.advance(time.Second)

	for _, args := range []PendingArgs{
		{},
		{Consumer: "c2"},
		{Consumer: "c1", Count: 150},
		{Count: 201},
		{Start: "(99-0", End: "230"},
		{MinIdle: time.Minute},
		{Consumer: "c2", MinIdle: time.Minute},
		{Consumer: "nobody"},
		{Start: "5", End: "4"},
	} {
		t.Run(fmt.Sprintf("%+v", args), func(t *testing.T) {
			want, err := s.PendingRange("g", args)
			require.NoError(t, err)
			var got []PendingEntry
			for p, err := range s.PendingRangeSeq("g", args) {
				require.NoError(t, err)
				got = append(got, p)
			}
			require.Equal(t, want, got)
		})
	}
	all := seqIDs(t, s.PendingRangeSeq("g", PendingArgs{Consumer: "c1"}), pendingID)
	require.Len(t, all, 125)
	require.Equal(t, "249-0", all[len(all)-1])
}

// The loop body may acknowledge what it is given; breaking ends the
// iteration.
func TestPendingRangeSeqBodyAndBreak(t *testing.T) {
	clk := newTestClock(1_000_000)
	s := pendingStream(t, clk, 230)
	n := 0
	for p, err := range s.PendingRangeSeq("g", PendingArgs{Consumer: "c1"}) {
		require.NoError(t, err)
		_, err := s.AckIDs("g", p.ID)
		require.NoError(t, err)
		if n++; n == 150 {
			break
		}
	}
	sum, err := s.Pending("g")
	require.NoError(t, err)
	require.Equal(t, int64(80), sum.Count)
	require.Equal(t, "151-0", sum.Lowest.String())
}

func TestPendingRangeSeqErrors(t *testing.T) {
	clk := newTestClock(1_000_000)
	s := pendingStream(t, clk, 120)
	before := snap(t, s)
	for _, tc := range []struct {
		name     string
		group    string
		args     PendingArgs
		sentinel error
		names    []string
	}{
		{"negative count", "g", PendingArgs{Count: -2}, ErrInvalidArgument, []string{"count", "-2"}},
		{"negative min idle", "g", PendingArgs{MinIdle: -time.Second}, ErrInvalidArgument, []string{"MinIdle", "-1s"}},
		{"bad start", "g", PendingArgs{Start: "abc"}, ErrInvalidID, []string{"abc"}},
		{"no group", "nope", PendingArgs{}, ErrNoGroup, []string{"nope"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			for p, err := range s.PendingRangeSeq(tc.group, tc.args) {
				calls++
				require.Equal(t, PendingEntry{}, p)
				requireErr(t, err, tc.sentinel, tc.names...)
			}
			require.Equal(t, 1, calls)
			requireUnchanged(t, s, before)
		})
	}
	// The group destroyed after the first page.
	n, errs := 0, 0
	for _, err := range s.PendingRangeSeq("g", PendingArgs{}) {
		if err != nil {
			requireErr(t, err, ErrNoGroup, "g")
			errs++
			continue
		}
		if n++; n == 1 {
			require.True(t, must(s.DestroyGroup("g")))
		}
	}
	require.Equal(t, pendingSeqPage, n)
	require.Equal(t, 1, errs)
}
