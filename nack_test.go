package xstream

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The rules below follow Redis's xnackCommand (t_stream.c, Redis 8.8) and
// its tests "XNACK ..." in tests/unit/type/stream-cgroups.tcl.

// nkStream returns a stream with entries 1-0 … n-0 and a group g whose
// consumer c1 has read them all (delivery count 1 each).
func nkStream(t *testing.T, n int) (*Stream, *testClock) {
	t.Helper()
	clk := newTestClock(1_700_000_000_000)
	s := gtStream(t, clk, n)
	require.NoError(t, s.CreateGroup("g", "0", GroupOptions{}))
	_, err := s.ReadGroup(context.Background(), "g", "c1", ">", ReadGroupArgs{})
	require.NoError(t, err)
	clk.advance(time.Second)
	return s, clk
}

func doNack(t *testing.T, s *Stream, mode NackMode, args NackArgs, ids ...string) int64 {
	t.Helper()
	n, err := s.Nack("g", mode, ids, args)
	require.NoError(t, err)
	return n
}

func rowsOf(t *testing.T, s *Stream, args PendingArgs) []PendingEntry {
	t.Helper()
	rows, err := s.PendingRange("g", args)
	require.NoError(t, err)
	return rows
}

// nacked is the PendingRange row of an entry given back by Nack.
func nacked(id uint64, deliveries int64) PendingEntry {
	return PendingEntry{ID: gtID(id), Idle: NackIdle, Deliveries: deliveries}
}

func TestNackModes(t *testing.T) {
	s, _ := nkStream(t, 3)
	assert.Equal(t, int64(1), doNack(t, s, NackSilent, NackArgs{}, "1"))
	assert.Equal(t, int64(1), doNack(t, s, NackFail, NackArgs{}, "2"))
	assert.Equal(t, int64(1), doNack(t, s, NackFatal, NackArgs{}, "3"))
	assert.Equal(t, []PendingEntry{nacked(1, 0), nacked(2, 1), nacked(3, math.MaxInt64)}, rowsOf(t, s, PendingArgs{}))

	// SILENT stops at 0.
	assert.Equal(t, int64(1), doNack(t, s, NackSilent, NackArgs{}, "1"))
	assert.Equal(t, nacked(1, 0), rowsOf(t, s, PendingArgs{})[0])
}

// An entry given back already is given back again: it counts, and the
// mode applies again.
func TestNackAgain(t *testing.T) {
	s, _ := nkStream(t, 1)
	_, err := s.Claim("g", "c1", 0, []string{"1"}, ClaimArgs{RetryCount: i64(3)})
	require.NoError(t, err)
	assert.Equal(t, int64(1), doNack(t, s, NackFail, NackArgs{}, "1"))
	assert.Equal(t, int64(1), doNack(t, s, NackFail, NackArgs{}, "1"))
	assert.Equal(t, int64(1), doNack(t, s, NackSilent, NackArgs{}, "1"))
	assert.Equal(t, []PendingEntry{nacked(1, 2)}, rowsOf(t, s, PendingArgs{}))
	assert.Equal(t, int64(2), doNack(t, s, NackSilent, NackArgs{}, "1", "1"), "a repeated ID counts twice")
	assert.Equal(t, []PendingEntry{nacked(1, 0)}, rowsOf(t, s, PendingArgs{}))
}

func TestNackRetryCountOverridesMode(t *testing.T) {
	s, _ := nkStream(t, 3)
	assert.Equal(t, int64(3), doNack(t, s, NackFatal, NackArgs{RetryCount: i64(42)}, "1", "2", "3"))
	assert.Equal(t, []PendingEntry{nacked(1, 42), nacked(2, 42), nacked(3, 42)}, rowsOf(t, s, PendingArgs{}))
	assert.Equal(t, int64(1), doNack(t, s, NackSilent, NackArgs{RetryCount: i64(0)}, "2"))
	assert.Equal(t, nacked(2, 0), rowsOf(t, s, PendingArgs{})[1])
}

func TestNackSkipsWhatIsNotPending(t *testing.T) {
	s, _ := nkStream(t, 3)
	assert.Equal(t, int64(2), doNack(t, s, NackFail, NackArgs{}, "1", "9", "3", "0-1"))
	_, err := s.Ack("g", "1", "2", "3")
	require.NoError(t, err)
	assert.Zero(t, doNack(t, s, NackFail, NackArgs{}, "1"), "empty PEL")
}

func TestNackForce(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	s := gtStream(t, clk, 3)
	require.NoError(t, s.CreateGroup("g", "0", GroupOptions{}))
	assert.Equal(t, int64(1), doNack(t, s, NackFail, NackArgs{Force: true}, "1"))
	assert.Equal(t, int64(1), doNack(t, s, NackFatal, NackArgs{Force: true}, "2"))
	assert.Equal(t, int64(1), doNack(t, s, NackSilent, NackArgs{Force: true, RetryCount: i64(5)}, "3"))
	assert.Zero(t, doNack(t, s, NackFail, NackArgs{Force: true}, "9"), "no such entry")
	assert.Equal(t, []PendingEntry{nacked(1, 0), nacked(2, math.MaxInt64), nacked(3, 5)}, rowsOf(t, s, PendingArgs{}))
	assert.Equal(t, int64(1), doNack(t, s, NackFail, NackArgs{Force: true}, "1"), "pending already: no second entry")
	assert.Len(t, rowsOf(t, s, PendingArgs{}), 3)

	// A forced entry beyond the group's last ID is delivered by ">" as a
	// first delivery.
	es, err := s.ReadGroup(context.Background(), "g", "c", ">", ReadGroupArgs{Count: 1})
	require.NoError(t, err)
	assert.Equal(t, []ID{gtID(1)}, gtIDs(es))
	assert.Equal(t, PendingEntry{ID: gtID(1), Consumer: "c", Deliveries: 1}, rowsOf(t, s, PendingArgs{})[0])
}

// Given-back entries have no owner: consumers' PELs and history reads no
// longer hold them, and ">" reads do not deliver them again.
func TestNackedEntriesAreNotRead(t *testing.T) {
	s, _ := nkStream(t, 3)
	ctx := context.Background()
	assert.Equal(t, int64(2), doNack(t, s, NackFail, NackArgs{}, "1", "3"))
	es, err := s.ReadGroup(ctx, "g", "c1", "0", ReadGroupArgs{})
	require.NoError(t, err)
	assert.Equal(t, []ID{gtID(2)}, gtIDs(es))
	es, err = s.ReadGroup(ctx, "g", "c2", ">", ReadGroupArgs{})
	require.NoError(t, err)
	assert.Empty(t, es)

	rows := rowsOf(t, s, PendingArgs{Consumer: "c1"})
	require.Len(t, rows, 1)
	assert.Equal(t, gtID(2), rows[0].ID)
	sum, err := s.Pending("g")
	require.NoError(t, err)
	assert.Equal(t, int64(3), sum.Count)
	assert.Equal(t, []ConsumerPending{{"c1", 1}}, sum.Consumers)
	cs, err := s.Consumers("g")
	require.NoError(t, err)
	assert.Len(t, cs, 2, "Nack creates and deletes no consumer")

	info, err := s.InfoFull(0)
	require.NoError(t, err)
	pel := info.GroupDetails[0].PEL
	assert.Equal(t, nacked(1, 1), pel[0])
	assert.Equal(t, "c1", pel[1].Consumer)
}

// A MinIdle filter lets given-back entries through, and Claim and
// AutoClaim take them whatever their min idle time.
func TestNackedEntriesAreClaimable(t *testing.T) {
	s, _ := nkStream(t, 3)
	assert.Equal(t, int64(2), doNack(t, s, NackFail, NackArgs{}, "1", "2"))
	assert.Equal(t, []PendingEntry{nacked(1, 1), nacked(2, 1)}, rowsOf(t, s, PendingArgs{MinIdle: time.Hour}))

	es, err := s.Claim("g", "c2", time.Hour, []string{"1", "3"}, ClaimArgs{})
	require.NoError(t, err)
	assert.Equal(t, []ID{gtID(1)}, gtIDs(es), "3 is owned and idle only a second")
	res, err := s.AutoClaim("g", "c3", time.Hour, "-", AutoClaimArgs{})
	require.NoError(t, err)
	assert.Equal(t, []ID{gtID(2)}, gtIDs(res.Entries))
	assert.Equal(t, []PendingEntry{
		{ID: gtID(1), Consumer: "c2", Deliveries: 2},
		{ID: gtID(2), Consumer: "c3", Deliveries: 2},
		{ID: gtID(3), Consumer: "c1", Idle: time.Second, Deliveries: 1},
	}, rowsOf(t, s, PendingArgs{}))
}

// Deleting or trimming an entry leaves its given-back pending entry; a
// claim then drops it, as for any pending entry whose message is gone.
func TestNackedEntriesOutliveTheirMessage(t *testing.T) {
	s, _ := nkStream(t, 3)
	assert.Equal(t, int64(2), doNack(t, s, NackFail, NackArgs{}, "1", "3"))
	_, err := s.Delete("1", "3")
	require.NoError(t, err)
	assert.Equal(t, []PendingEntry{nacked(1, 1), {ID: gtID(2), Consumer: "c1", Idle: time.Second, Deliveries: 1}, nacked(3, 1)}, rowsOf(t, s, PendingArgs{}))
	es, err := s.Claim("g", "c2", 0, []string{"1"}, ClaimArgs{})
	require.NoError(t, err)
	assert.Empty(t, es)
	res, err := s.AutoClaim("g", "c2", 0, "-", AutoClaimArgs{})
	require.NoError(t, err)
	assert.Equal(t, []ID{gtID(2)}, gtIDs(res.Entries))
	assert.Equal(t, []ID{gtID(3)}, res.Deleted)
	assert.Len(t, rowsOf(t, s, PendingArgs{}), 1)

	s, _ = nkStream(t, 3)
	assert.Equal(t, int64(1), doNack(t, s, NackFail, NackArgs{}, "1"))
	trimN(t, s, TrimArgs{Strategy: TrimMaxLen, MaxLen: 1})
	assert.Len(t, rowsOf(t, s, PendingArgs{}), 3)
}

// Deleting a consumer drops what it owns, not what it gave back.
func TestNackedEntriesOutliveTheirConsumer(t *testing.T) {
	s, _ := nkStream(t, 2)
	assert.Equal(t, int64(1), doNack(t, s, NackFail, NackArgs{}, "1"))
	n, err := s.DeleteConsumer("g", "c1")
	require.NoError(t, err)
	assert.Equal(t, int64(1), n)
	assert.Equal(t, []PendingEntry{nacked(1, 1)}, rowsOf(t, s, PendingArgs{}))
}

func TestNackBadInputChangesNothing(t *testing.T) {
	s, _ := nkStream(t, 3)
	gtUnchanged(t, s, ErrInvalidArgument, "NackMode 0", func() error { _, err := s.Nack("g", 0, []string{"1"}, NackArgs{}); return err })
	gtUnchanged(t, s, ErrInvalidArgument, "NackMode 4", func() error { _, err := s.Nack("g", 4, []string{"1"}, NackArgs{}); return err })
	gtUnchanged(t, s, ErrInvalidArgument, "-4", func() error {
		_, err := s.Nack("g", NackFail, []string{"1"}, NackArgs{RetryCount: i64(-4)})
		return err
	})
	gtUnchanged(t, s, ErrInvalidID, `"?"`, func() error { _, err := s.Nack("g", NackFail, []string{"1", "?"}, NackArgs{}); return err })
	gtUnchanged(t, s, ErrNoGroup, `"h"`, func() error { _, err := s.Nack("h", NackFail, []string{"1"}, NackArgs{}); return err })
}
