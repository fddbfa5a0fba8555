package xstream

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gtStream returns a stream on clk with entries 1-0 … n-0, each with the
// field "n" holding its number.
func gtStream(t testing.TB, clk *testClock, n int) *Stream {
	t.Helper()
	s := NewStream(WithClock(clk.now))
	for i := 1; i <= n; i++ {
		_, err := s.Add(AddArgs{ID: strconv.Itoa(i)}, Field{"n", strconv.Itoa(i)})
		require.NoError(t, err)
	}
	return s
}

func gtID(ms uint64) ID { return ID{ms, 0} }

func gtIDs(es []Entry) []ID {
	out := make([]ID, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

// gtSnapshot captures everything observable about a stream and its groups.
func gtSnapshot(t testing.TB, s *Stream) StreamInfo {
	t.Helper()
	info, err := s.InfoFull(0)
	require.NoError(t, err)
	return info
}

// gtUnchanged runs fn, which must fail with sentinel and a message that
// contains want, and checks that s did not change.
func gtUnchanged(t *testing.T, s *Stream, sentinel error, want string, fn func() error) {
	t.Helper()
	before := gtSnapshot(t, s)
	err := fn()
	require.Error(t, err)
	require.ErrorIs(t, err, sentinel)
	require.Contains(t, err.Error(), want)
	require.Equal(t, before, gtSnapshot(t, s))
}

func i64(v int64) *int64 { return &v }

func TestCreateGroup(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	s := gtStream(t, clk, 3)
	require.NoError(t, s.CreateGroup("zeta", "$", GroupOptions{}))
	require.NoError(t, s.CreateGroup("alpha", "0", GroupOptions{}))
	require.NoError(t, s.CreateGroup("mid", "2", GroupOptions{EntriesRead: i64(2)}))

	gs := s.Groups()
	require.Len(t, gs, 3)
	assert.Equal(t, []string{"alpha", "mid", "zeta"}, []string{gs[0].Name, gs[1].Name, gs[2].Name})
	assert.Equal(t, ID{}, gs[0].LastDeliveredID)
	assert.Equal(t, gtID(2), gs[1].LastDeliveredID)
	assert.Equal(t, gtID(3), gs[2].LastDeliveredID)
	// "0" on an unfragmented stream: lag is all of it, entries-read unknown.
	assert.Equal(t, GroupInfo{Name: "alpha", Lag: 3, LagKnown: true}, gs[0])
	assert.Equal(t, GroupInfo{Name: "mid", LastDeliveredID: gtID(2), EntriesRead: 2, EntriesReadKnown: true, Lag: 1, LagKnown: true}, gs[1])
	assert.Equal(t, GroupInfo{Name: "zeta", LastDeliveredID: gtID(3), Lag: 0, LagKnown: true}, gs[2])
	assert.Equal(t, 3, must(s.Info()).Groups)

	gtUnchanged(t, s, ErrGroupExists, `"alpha"`, func() error { return s.CreateGroup("alpha", "$", GroupOptions{}) })
	for _, bad := range []string{"x", "-", "+", ">", "*", "1-*", "", "(1"} {
		gtUnchanged(t, s, ErrInvalidID, strconv.Quote(bad), func() error { return s.CreateGroup("new", bad, GroupOptions{}) })
	}
	gtUnchanged(t, s, ErrInvalidArgument, "-2", func() error {
		return s.CreateGroup("new", "0", GroupOptions{EntriesRead: i64(-2)})
	})
	require.NoError(t, s.CreateGroup("unknown-read", "0", GroupOptions{EntriesRead: i64(-1)}))
	assert.False(t, s.Groups()[3].EntriesReadKnown)
}

func TestSetGroupID(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	s := gtStream(t, clk, 5)
	require.NoError(t, s.CreateGroup("g", "0", GroupOptions{}))
	es, err := s.ReadGroup(context.Background(), "g", "alice", ">", ReadGroupArgs{Count: 3})
	require.NoError(t, err)
	require.Equal(t, []ID{gtID(1), gtID(2), gtID(3)}, gtIDs(es))
	_, err = s.ReadGroup(context.Background(), "g", "alice", "0", ReadGroupArgs{}) // deliveries now 2
	require.NoError(t, err)

	gtUnchanged(t, s, ErrNoGroup, `"nope"`, func() error { return s.SetGroupID("nope", "0", GroupOptions{}) })
	gtUnchanged(t, s, ErrInvalidID, `"x"`, func() error { return s.SetGroupID("g", "x", GroupOptions{}) })
	gtUnchanged(t, s, ErrInvalidArgument, "-5", func() error { return s.SetGroupID("g", "0", GroupOptions{EntriesRead: i64(-5)}) })

	// Moving back re-delivers; pending entries move to the new reader
	// with a count of 1.
	require.NoError(t, s.SetGroupID("g", "1", GroupOptions{}))
	clk.advance(time.Second)
	es, err = s.ReadGroup(context.Background(), "g", "bob", ">", ReadGroupArgs{Count: 1})
	require.NoError(t, err)
	require.Equal(t, []ID{gtID(2)}, gtIDs(es))
	rows, err := s.PendingRange("g", PendingArgs{})
	require.NoError(t, err)
	require.Equal(t, []PendingEntry{
		{ID: gtID(1), Consumer: "alice", Idle: time.Second, Deliveries: 2},
		{ID: gtID(2), Consumer: "bob", Idle: 0, Deliveries: 1},
		{ID: gtID(3), Consumer: "alice", Idle: time.Second, Deliveries: 2},
	}, rows)
	// The consumers' own lists follow.
	hist, err := s.ReadGroup(context.Background(), "g", "alice", "0", ReadGroupArgs{})
	require.NoError(t, err)
	require.Equal(t, []ID{gtID(1), gtID(3)}, gtIDs(hist))

	require.NoError(t, s.SetGroupID("g", "$", GroupOptions{EntriesRead: i64(5)}))
	gi := s.Groups()[0]
	assert.Equal(t, gtID(5), gi.LastDeliveredID)
	assert.Equal(t, int64(5), gi.EntriesRead)
	assert.Equal(t, int64(0), gi.Lag)
}

func TestDestroyGroupAndConsumers(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	s := gtStream(t, clk, 4)
	assert.False(t, must(s.DestroyGroup("g")))
	require.NoError(t, s.CreateGroup("g", "0", GroupOptions{}))

	gtUnchanged(t, s, ErrNoGroup, `"h"`, func() error { _, err := s.CreateConsumer("h", "c"); return err })
	gtUnchanged(t, s, ErrNoGroup, `"h"`, func() error { _, err := s.DeleteConsumer("h", "c"); return err })

	created, err := s.CreateConsumer("g", "zed")
	require.NoError(t, err)
	assert.True(t, created)
	created, err = s.CreateConsumer("g", "zed")
	require.NoError(t, err)
	assert.False(t, created)

	_, err = s.ReadGroup(context.Background(), "g", "amy", ">", ReadGroupArgs{Count: 3})
	require.NoError(t, err)
	_, err = s.ReadGroup(context.Background(), "g", "zed", ">", ReadGroupArgs{})
	require.NoError(t, err)
	cs, err := s.Consumers("g")
	require.NoError(t, err)
	require.Len(t, cs, 2)
	assert.Equal(t, "amy", cs[0].Name)
	assert.Equal(t, int64(3), cs[0].Pending)
	assert.Equal(t, "zed", cs[1].Name)

	n, err := s.DeleteConsumer("g", "amy")
	require.NoError(t, err)
	assert.Equal(t, int64(3), n)
	n, err = s.DeleteConsumer("g", "amy")
	require.NoError(t, err)
	assert.Zero(t, n)
	sum, err := s.Pending("g")
	require.NoError(t, err)
	assert.Equal(t, PendingSummary{Count: 1, Lowest: gtID(4), Highest: gtID(4), Consumers: []ConsumerPending{{"zed", 1}}}, sum)

	assert.True(t, must(s.DestroyGroup("g")))
	assert.False(t, must(s.DestroyGroup("g")))
	assert.Empty(t, s.Groups())
	_, err = s.Pending("g")
	require.ErrorIs(t, err, ErrNoGroup)
}

func TestReadGroupNew(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	s := gtStream(t, clk, 5)
	s.name.Store(ptr("orders"))
	ctx := context.Background()
	require.NoError(t, s.CreateGroup("g", "0", GroupOptions{}))

	_, err := s.ReadGroup(ctx, "nope", "c", ">", ReadGroupArgs{})
	require.ErrorIs(t, err, ErrNoGroup)
	require.Contains(t, err.Error(), `"orders"`)
	require.Contains(t, err.Error(), `"nope"`)
	gtUnchanged(t, s, ErrInvalidArgument, "-1", func() error {
		_, err := s.ReadGroup(ctx, "g", "c", ">", ReadGroupArgs{Count: -1})
		return err
	})
	for _, bad := range []string{"$", "+", "x", "", "-"} {
		gtUnchanged(t, s, ErrInvalidID, strconv.Quote(bad), func() error {
			_, err := s.ReadGroup(ctx, "g", "c", bad, ReadGroupArgs{})
			return err
		})
	}

	es, err := s.ReadGroup(ctx, "g", "c1", ">", ReadGroupArgs{Count: 2})
	require.NoError(t, err)
	require.Equal(t, []Entry{{gtID(1), []Field{{"n", "1"}}}, {gtID(2), []Field{{"n", "2"}}}}, es)
	gi := s.Groups()[0]
	assert.Equal(t, gtID(2), gi.LastDeliveredID)
	assert.Equal(t, int64(2), gi.EntriesRead)
	assert.Equal(t, int64(3), gi.Lag)
	assert.Equal(t, int64(2), gi.Pending)

	// NoAck delivers without a PEL entry but moves the group on.
	es, err = s.ReadGroup(ctx, "g", "c2", ">", ReadGroupArgs{Count: 1, NoAck: true})
	require.NoError(t, err)
	require.Equal(t, []ID{gtID(3)}, gtIDs(es))
	gi = s.Groups()[0]
	assert.Equal(t, gtID(3), gi.LastDeliveredID)
	assert.Equal(t, int64(2), gi.Pending)

	es, err = s.ReadGroup(ctx, "g", "c2", ">", ReadGroupArgs{})
	require.NoError(t, err)
	require.Equal(t, []ID{gtID(4), gtID(5)}, gtIDs(es))
	// Nothing new: nil, without waiting.
	es, err = s.ReadGroup(ctx, "g", "c2", ">", ReadGroupArgs{})
	require.NoError(t, err)
	require.Nil(t, es)

	clk.advance(1500 * time.Millisecond)
	rows, err := s.PendingRange("g", PendingArgs{})
	require.NoError(t, err)
	require.Len(t, rows, 4)
	for _, r := range rows {
		assert.Equal(t, int64(1), r.Deliveries)
		assert.Equal(t, 1500*time.Millisecond, r.Idle)
	}
	assert.Equal(t, "c1", rows[0].Consumer)
	assert.Equal(t, "c2", rows[3].Consumer)
}

func TestReadGroupHistory(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	s := gtStream(t, clk, 4)
	ctx := context.Background()
	require.NoError(t, s.CreateGroup("g", "0", GroupOptions{}))
	_, err := s.ReadGroup(ctx, "g", "c", ">", ReadGroupArgs{Count: 3})
	require.NoError(t, err)

	// An unknown consumer has an empty, non-nil history, and now exists.
	es, err := s.ReadGroup(ctx, "g", "other", "0", ReadGroupArgs{})
	require.NoError(t, err)
	require.NotNil(t, es)
	require.Empty(t, es)
	cs, _ := s.Consumers("g")
	require.Len(t, cs, 2)

	_, err = s.Delete("2-0")
	require.NoError(t, err)
	clk.advance(time.Second)
	es, err = s.ReadGroup(ctx, "g", "c", "0", ReadGroupArgs{})
	require.NoError(t, err)
	require.Equal(t, []Entry{{gtID(1), []Field{{"n", "1"}}}, {ID: gtID(2)}, {gtID(3), []Field{{"n", "3"}}}}, es)
	rows, _ := s.PendingRange("g", PendingArgs{})
	require.Equal(t, []PendingEntry{
		{ID: gtID(1), Consumer: "c", Deliveries: 2},
		{ID: gtID(2), Consumer: "c", Idle: time.Second, Deliveries: 1}, // deleted: untouched
		{ID: gtID(3), Consumer: "c", Deliveries: 2},
	}, rows)

	es, err = s.ReadGroup(ctx, "g", "c", "1", ReadGroupArgs{Count: 1})
	require.NoError(t, err)
	require.Equal(t, []ID{gtID(2)}, gtIDs(es))
	es, err = s.ReadGroup(ctx, "g", "c", "3", ReadGroupArgs{Block: BlockForever})
	require.NoError(t, err) // history never blocks
	require.Equal(t, []Entry{}, es)
}

func TestAck(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	s := gtStream(t, clk, 5)
	require.NoError(t, s.CreateGroup("g", "0", GroupOptions{}))
	_, err := s.ReadGroup(context.Background(), "g", "c", ">", ReadGroupArgs{})
	require.NoError(t, err)

	gtUnchanged(t, s, ErrInvalidID, `"bad"`, func() error { _, err := s.Ack("g", "1-0", "bad"); return err })
	gtUnchanged(t, s, ErrNoGroup, `"h"`, func() error { _, err := s.Ack("h", "1-0"); return err })

	n, err := s.Ack("g", "1-0", "2", "2-0", "9-0")
	require.NoError(t, err)
	assert.Equal(t, int64(2), n)
	sum, _ := s.Pending("g")
	assert.Equal(t, PendingSummary{Count: 3, Lowest: gtID(3), Highest: gtID(5), Consumers: []ConsumerPending{{"c", 3}}}, sum)
	n, err = s.Ack("g", "3-0", "4-0", "5-0")
	require.NoError(t, err)
	assert.Equal(t, int64(3), n)
	sum, _ = s.Pending("g")
	assert.Equal(t, PendingSummary{}, sum)
	cs, _ := s.Consumers("g")
	assert.Zero(t, cs[0].Pending)
}

func TestPendingRange(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	s := gtStream(t, clk, 6)
	ctx := context.Background()
	require.NoError(t, s.CreateGroup("g", "0", GroupOptions{}))
	_, err := s.ReadGroup(ctx, "g", "bob", ">", ReadGroupArgs{Count: 2})
	require.NoError(t, err)
	clk.advance(10 * time.Second)
	_, err = s.ReadGroup(ctx, "g", "al", ">", ReadGroupArgs{Count: 3})
	require.NoError(t, err)
	clk.advance(time.Second)

	sum, err := s.Pending("g")
	require.NoError(t, err)
	assert.Equal(t, PendingSummary{Count: 5, Lowest: gtID(1), Highest: gtID(5), Consumers: []ConsumerPending{{"al", 3}, {"bob", 2}}}, sum)

	ids := func(rows []PendingEntry) []ID {
		var out []ID
		for _, r := range rows {
			out = append(out, r.ID)
		}
		return out
	}
	rows, err := s.PendingRange("g", PendingArgs{Start: "(1", End: "4"})
	require.NoError(t, err)
	assert.Equal(t, []ID{gtID(2), gtID(3), gtID(4)}, ids(rows))
	rows, _ = s.PendingRange("g", PendingArgs{Start: "-", End: "(5-0", Count: 2})
	assert.Equal(t, []ID{gtID(1), gtID(2)}, ids(rows))
	rows, _ = s.PendingRange("g", PendingArgs{Consumer: "al"})
	assert.Equal(t, []ID{gtID(3), gtID(4), gtID(5)}, ids(rows))
	rows, _ = s.PendingRange("g", PendingArgs{Consumer: "al", Start: "4"})
	assert.Equal(t, []ID{gtID(4), gtID(5)}, ids(rows))
	rows, _ = s.PendingRange("g", PendingArgs{MinIdle: 5 * time.Second})
	assert.Equal(t, []ID{gtID(1), gtID(2)}, ids(rows))
	assert.Equal(t, 11*time.Second, rows[0].Idle)
	rows, _ = s.PendingRange("g", PendingArgs{Consumer: "nobody"})
	assert.Empty(t, rows)
	rows, _ = s.PendingRange("g", PendingArgs{Start: "5", End: "3"})
	assert.Empty(t, rows)

	gtUnchanged(t, s, ErrNoGroup, `"h"`, func() error { _, err := s.PendingRange("h", PendingArgs{}); return err })
	gtUnchanged(t, s, ErrInvalidArgument, "-3", func() error { _, err := s.PendingRange("g", PendingArgs{Count: -3}); return err })
	gtUnchanged(t, s, ErrInvalidArgument, "-1s", func() error { _, err := s.PendingRange("g", PendingArgs{MinIdle: -time.Second}); return err })
	gtUnchanged(t, s, ErrInvalidID, `"x"`, func() error { _, err := s.PendingRange("g", PendingArgs{Start: "x"}); return err })
	gtUnchanged(t, s, ErrInvalidID, "(18446744073709551615-18446744073709551615", func() error {
		_, err := s.PendingRange("g", PendingArgs{Start: "(18446744073709551615-18446744073709551615"})
		return err
	})
}

func TestClaim(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	s := gtStream(t, clk, 6)
	ctx := context.Background()
	require.NoError(t, s.CreateGroup("g", "0", GroupOptions{}))
	_, err := s.ReadGroup(ctx, "g", "a", ">", ReadGroupArgs{Count: 3})
	require.NoError(t, err)
	clk.advance(10 * time.Second)
	_, err = s.ReadGroup(ctx, "g", "a", ">", ReadGroupArgs{Count: 1}) // 4-0, fresh
	require.NoError(t, err)

	// Only idle enough entries move; count + 1, idle reset.
	es, err := s.Claim("g", "b", 5*time.Second, []string{"1", "4", "9"}, ClaimArgs{})
	require.NoError(t, err)
	require.Equal(t, []Entry{{gtID(1), []Field{{"n", "1"}}}}, es)
	rows, _ := s.PendingRange("g", PendingArgs{End: "1"})
	assert.Equal(t, []PendingEntry{{ID: gtID(1), Consumer: "b", Deliveries: 2}}, rows)
	cs, _ := s.Consumers("g")
	assert.Equal(t, ConsumerInfo{Name: "b", Pending: 1, InactiveKnown: true}, cs[1])

	// Idle, RetryCount, JustID.
	es, err = s.Claim("g", "b", 0, []string{"2"}, ClaimArgs{Idle: 3 * time.Second, RetryCount: i64(7), JustID: true})
	require.NoError(t, err)
	require.Equal(t, []Entry{{ID: gtID(2)}}, es)
	rows, _ = s.PendingRange("g", PendingArgs{Start: "2", End: "2"})
	assert.Equal(t, []PendingEntry{{ID: gtID(2), Consumer: "b", Idle: 3 * time.Second, Deliveries: 7}}, rows)
	_, err = s.Claim("g", "b", 0, []string{"2"}, ClaimArgs{JustID: true})
	require.NoError(t, err)
	rows, _ = s.PendingRange("g", PendingArgs{Start: "2", End: "2"})
	assert.Equal(t, int64(7), rows[0].Deliveries, "JustID leaves the count")

	// Time, with a future time counting as now.
	_, err = s.Claim("g", "b", 0, []string{"3"}, ClaimArgs{Time: clk.now().Add(-4 * time.Second)})
	require.NoError(t, err)
	rows, _ = s.PendingRange("g", PendingArgs{Start: "3", End: "3"})
	assert.Equal(t, 4*time.Second, rows[0].Idle)
	_, err = s.Claim("g", "b", 0, []string{"3"}, ClaimArgs{Time: clk.now().Add(time.Hour)})
	require.NoError(t, err)
	rows, _ = s.PendingRange("g", PendingArgs{Start: "3", End: "3"})
	assert.Zero(t, rows[0].Idle)

	// Force creates a pending entry for a message that exists; not
	// without Force, and never for a missing message.
	es, err = s.Claim("g", "c", 0, []string{"5", "6"}, ClaimArgs{})
	require.NoError(t, err)
	assert.Empty(t, es)
	es, err = s.Claim("g", "c", time.Hour, []string{"5", "77"}, ClaimArgs{Force: true})
	require.NoError(t, err)
	require.Equal(t, []ID{gtID(5)}, gtIDs(es))
	rows, _ = s.PendingRange("g", PendingArgs{Start: "5", End: "5"})
	assert.Equal(t, []PendingEntry{{ID: gtID(5), Consumer: "c", Deliveries: 2}}, rows)

	// LastID raises the group's last delivered ID, never lowers it.
	_, err = s.Claim("g", "c", 0, []string{"5"}, ClaimArgs{LastID: "6"})
	require.NoError(t, err)
	assert.Equal(t, gtID(6), s.Groups()[0].LastDeliveredID)
	_, err = s.Claim("g", "c", 0, []string{"5"}, ClaimArgs{LastID: "2"})
	require.NoError(t, err)
	assert.Equal(t, gtID(6), s.Groups()[0].LastDeliveredID)

	// A pending entry whose message is gone leaves the PEL.
	_, err = s.Delete("4")
	require.NoError(t, err)
	es, err = s.Claim("g", "b", 0, []string{"4"}, ClaimArgs{})
	require.NoError(t, err)
	assert.Empty(t, es)
	rows, _ = s.PendingRange("g", PendingArgs{Start: "4", End: "4"})
	assert.Empty(t, rows)

	gtUnchanged(t, s, ErrNoGroup, `"h"`, func() error { _, err := s.Claim("h", "b", 0, []string{"1"}, ClaimArgs{}); return err })
	gtUnchanged(t, s, ErrInvalidArgument, "-1s", func() error { _, err := s.Claim("g", "z", -time.Second, []string{"1"}, ClaimArgs{}); return err })
	gtUnchanged(t, s, ErrInvalidArgument, "at least one ID", func() error { _, err := s.Claim("g", "z", 0, nil, ClaimArgs{}); return err })
	gtUnchanged(t, s, ErrInvalidID, `"q"`, func() error { _, err := s.Claim("g", "z", 0, []string{"1", "q"}, ClaimArgs{}); return err })
	gtUnchanged(t, s, ErrInvalidArgument, "-2s", func() error {
		_, err := s.Claim("g", "z", 0, []string{"1"}, ClaimArgs{Idle: -2 * time.Second})
		return err
	})
	gtUnchanged(t, s, ErrInvalidArgument, "together", func() error {
		_, err := s.Claim("g", "z", 0, []string{"1"}, ClaimArgs{Idle: time.Second, Time: clk.now()})
		return err
	})
	gtUnchanged(t, s, ErrInvalidArgument, "-1", func() error {
		_, err := s.Claim("g", "z", 0, []string{"1"}, ClaimArgs{RetryCount: i64(-1)})
		return err
	})
	gtUnchanged(t, s, ErrInvalidID, `"bad"`, func() error {
		_, err := s.Claim("g", "z", 0, []string{"1"}, ClaimArgs{LastID: "bad"})
		return err
	})
}

func TestAutoClaim(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	s := gtStream(t, clk, 10)
	ctx := context.Background()
	require.NoError(t, s.CreateGroup("g", "0", GroupOptions{}))
	_, err := s.ReadGroup(ctx, "g", "a", ">", ReadGroupArgs{Count: 6})
	require.NoError(t, err)
	clk.advance(time.Minute)
	_, err = s.ReadGroup(ctx, "g", "a", ">", ReadGroupArgs{})
	require.NoError(t, err)
	_, err = s.Delete("2", "3")
	require.NoError(t, err)

	// Count 2: 1-0 claimed, 2-0 deleted (counts too); cursor is 3-0.
	res, err := s.AutoClaim("g", "b", 30*time.Second, "0", AutoClaimArgs{Count: 2})
	require.NoError(t, err)
	assert.Equal(t, []ID{gtID(1)}, gtIDs(res.Entries))
	assert.Equal(t, []Field{{"n", "1"}}, res.Entries[0].Fields)
	assert.Equal(t, []ID{gtID(2)}, res.Deleted)
	assert.Equal(t, gtID(3), res.Next)

	res, err = s.AutoClaim("g", "b", 30*time.Second, res.Next.String(), AutoClaimArgs{JustID: true})
	require.NoError(t, err)
	assert.Equal(t, []Entry{{ID: gtID(4)}, {ID: gtID(5)}, {ID: gtID(6)}}, res.Entries)
	assert.Equal(t, []ID{gtID(3)}, res.Deleted)
	assert.Equal(t, ID{}, res.Next, "the scan reached the end")
	rows, _ := s.PendingRange("g", PendingArgs{Consumer: "b"})
	assert.Equal(t, []PendingEntry{
		{ID: gtID(1), Consumer: "b", Deliveries: 2},
		{ID: gtID(4), Consumer: "b", Deliveries: 1},
		{ID: gtID(5), Consumer: "b", Deliveries: 1},
		{ID: gtID(6), Consumer: "b", Deliveries: 1},
	}, rows)

	// Exclusive start; min idle 0 takes everything.
	res, err = s.AutoClaim("g", "c", 0, "(8", AutoClaimArgs{})
	require.NoError(t, err)
	assert.Equal(t, []ID{gtID(9), gtID(10)}, gtIDs(res.Entries))

	gtUnchanged(t, s, ErrNoGroup, `"h"`, func() error { _, err := s.AutoClaim("h", "c", 0, "0", AutoClaimArgs{}); return err })
	gtUnchanged(t, s, ErrInvalidArgument, "-1", func() error { _, err := s.AutoClaim("g", "c", 0, "0", AutoClaimArgs{Count: -1}); return err })
	gtUnchanged(t, s, ErrInvalidArgument, "-1s", func() error { _, err := s.AutoClaim("g", "c", -time.Second, "0", AutoClaimArgs{}); return err })
	gtUnchanged(t, s, ErrInvalidID, `"zz"`, func() error { _, err := s.AutoClaim("g", "c", 0, "zz", AutoClaimArgs{}); return err })
}

func TestAutoClaimScanBound(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	s := gtStream(t, clk, 50)
	require.NoError(t, s.CreateGroup("g", "0", GroupOptions{}))
	_, err := s.ReadGroup(context.Background(), "g", "a", ">", ReadGroupArgs{Count: 45})
	require.NoError(t, err)
	clk.advance(time.Minute)
	_, err = s.ReadGroup(context.Background(), "g", "a", ">", ReadGroupArgs{})
	require.NoError(t, err)
	// Entries 1..45 are idle; Claim re-times 1..25 so that the first 25 are
	// fresh: a scan with Count 2 examines at most 20 and claims none.
	ids := make([]string, 25)
	for i := range ids {
		ids[i] = strconv.Itoa(i + 1)
	}
	_, err = s.Claim("g", "a", 0, ids, ClaimArgs{JustID: true})
	require.NoError(t, err)
	res, err := s.AutoClaim("g", "b", 30*time.Second, "-", AutoClaimArgs{Count: 2})
	require.NoError(t, err)
	assert.Empty(t, res.Entries)
	assert.Equal(t, gtID(21), res.Next)
	res, err = s.AutoClaim("g", "b", 30*time.Second, res.Next.String(), AutoClaimArgs{Count: 2})
	require.NoError(t, err)
	assert.Equal(t, []ID{gtID(26), gtID(27)}, gtIDs(res.Entries))
	assert.Equal(t, gtID(28), res.Next)
}

// TestLagWithDeletes follows Redis's "Consumer group lag with XDELs".
func TestLagWithDeletes(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	s := gtStream(t, clk, 5)
	ctx := context.Background()
	_, err := s.Delete("3")
	require.NoError(t, err)
	require.NoError(t, s.CreateGroup("g1", "0", GroupOptions{}))
	require.NoError(t, s.CreateGroup("g2", "0", GroupOptions{}))
	g1 := func() GroupInfo { return s.Groups()[0] }
	g2 := func() GroupInfo { return s.Groups()[1] }
	assert.False(t, g1().EntriesReadKnown)
	assert.False(t, g1().LagKnown)
	for range 3 {
		_, err = s.ReadGroup(ctx, "g1", "c", ">", ReadGroupArgs{Count: 1})
		require.NoError(t, err)
		assert.False(t, g1().EntriesReadKnown)
		assert.False(t, g1().LagKnown)
	}
	_, err = s.ReadGroup(ctx, "g1", "c", ">", ReadGroupArgs{Count: 1})
	require.NoError(t, err)
	assert.Equal(t, GroupInfo{Name: "g1", Consumers: 1, Pending: 4, LastDeliveredID: gtID(5), EntriesRead: 5, EntriesReadKnown: true, Lag: 0, LagKnown: true}, g1())
	_, err = s.Add(AddArgs{ID: "6"}, Field{"n", "6"})
	require.NoError(t, err)
	assert.Equal(t, int64(1), g1().Lag)

	_, err = s.Trim(TrimArgs{Strategy: TrimMinID, MinID: "3"})
	require.NoError(t, err)
	assert.Equal(t, int64(1), g1().Lag)
	assert.False(t, g2().EntriesReadKnown)
	assert.Equal(t, int64(3), g2().Lag)
	assert.True(t, g2().LagKnown)
	_, err = s.Trim(TrimArgs{Strategy: TrimMinID, MinID: "5"})
	require.NoError(t, err)
	assert.Equal(t, int64(2), g2().Lag)

	// Reading on from an unknown counter makes it known.
	_, err = s.ReadGroup(ctx, "g2", "c", ">", ReadGroupArgs{Count: 1})
	require.NoError(t, err)
	assert.Equal(t, int64(5), g2().EntriesRead)
	assert.Equal(t, int64(1), g2().Lag)

	// An empty new stream has lag 0.
	e := NewStream()
	require.NoError(t, e.CreateGroup("g", "$", GroupOptions{}))
	assert.Equal(t, GroupInfo{Name: "g", LagKnown: true}, e.Groups()[0])
}

func TestConsumerIdleAndInfoFull(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	s := gtStream(t, clk, 3)
	ctx := context.Background()
	require.NoError(t, s.CreateGroup("g", "0", GroupOptions{}))
	_, err := s.CreateConsumer("g", "lazy")
	require.NoError(t, err)
	_, err = s.ReadGroup(ctx, "g", "busy", ">", ReadGroupArgs{Count: 2})
	require.NoError(t, err)
	clk.advance(5 * time.Second)
	_, err = s.ReadGroup(ctx, "g", "busy", ">", ReadGroupArgs{Count: 0, NoAck: false})
	require.NoError(t, err)
	clk.advance(2 * time.Second)
	_, err = s.ReadGroup(ctx, "g", "busy", ">", ReadGroupArgs{}) // nothing: seen, not active
	require.NoError(t, err)
	clk.advance(time.Second)

	cs, err := s.Consumers("g")
	require.NoError(t, err)
	assert.Equal(t, []ConsumerInfo{
		{Name: "busy", Pending: 3, Idle: time.Second, Inactive: 3 * time.Second, InactiveKnown: true},
		{Name: "lazy", Idle: 8 * time.Second},
	}, cs)
	gtUnchanged(t, s, ErrNoGroup, `"h"`, func() error { _, err := s.Consumers("h"); return err })

	info, err := s.InfoFull(2)
	require.NoError(t, err)
	require.Len(t, info.GroupDetails, 1)
	d := info.GroupDetails[0]
	assert.Equal(t, "g", d.Name)
	assert.Equal(t, int64(3), d.Pending)
	assert.Equal(t, []ID{gtID(1), gtID(2)}, []ID{d.PEL[0].ID, d.PEL[1].ID})
	require.Len(t, d.Consumers, 2)
	assert.Equal(t, "busy", d.Consumers[0].Name)
	assert.Len(t, d.Consumers[0].PEL, 2)
	assert.Equal(t, clk.now().Add(-time.Second), d.Consumers[0].SeenTime)
	assert.Equal(t, clk.now().Add(-3*time.Second), d.Consumers[0].ActiveTime)
	assert.True(t, d.Consumers[1].ActiveTime.IsZero())
	assert.Empty(t, d.Consumers[1].PEL)
}

func TestDBGroups(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	db := NewDB(WithClock(clk.now))
	ctx := context.Background()

	err := db.CreateGroup("s", "g", "$", GroupOptions{})
	require.ErrorIs(t, err, ErrNoStream)
	require.Contains(t, err.Error(), `"s"`)
	assert.Zero(t, db.Len())
	require.ErrorIs(t, db.CreateGroup("s", "g", "bad", GroupOptions{MkStream: true}), ErrInvalidID)
	assert.Zero(t, db.Len())
	require.NoError(t, db.CreateGroup("s", "g", "$", GroupOptions{MkStream: true}))
	require.ErrorIs(t, db.CreateGroup("s", "g", "$", GroupOptions{MkStream: true}), ErrGroupExists)
	require.NoError(t, db.CreateGroup("t", "g", "$", GroupOptions{MkStream: true}))

	_, err = db.ReadGroup(ctx, "g", "c", ReadGroupArgs{}, "s", ">", "missing", ">")
	require.ErrorIs(t, err, ErrNoGroup)
	require.ErrorIs(t, err, ErrNoStream)
	require.Contains(t, err.Error(), `"missing"`)
	_, err = db.ReadGroup(ctx, "h", "c", ReadGroupArgs{}, "s", ">")
	require.ErrorIs(t, err, ErrNoGroup)
	_, err = db.ReadGroup(ctx, "g", "c", ReadGroupArgs{}, "s")
	require.ErrorIs(t, err, ErrInvalidArgument)
	_, err = db.ReadGroup(ctx, "g", "c", ReadGroupArgs{}, "s", "$")
	require.ErrorIs(t, err, ErrInvalidID)
	cs, _ := db.Stream("s").Consumers("g")
	assert.Empty(t, cs, "a failed call creates no consumer")

	for i := 1; i <= 3; i++ {
		_, err = db.Add("t", AddArgs{ID: strconv.Itoa(i)}, Field{"n", strconv.Itoa(i)})
		require.NoError(t, err)
	}
	out, err := db.ReadGroup(ctx, "g", "c", ReadGroupArgs{Count: 2}, "s", ">", "t", ">")
	require.NoError(t, err)
	require.Len(t, out, 1)
	assert.Equal(t, "t", out[0].Stream)
	assert.Equal(t, []ID{gtID(1), gtID(2)}, gtIDs(out[0].Entries))
	// History reads are listed even when empty.
	out, err = db.ReadGroup(ctx, "g", "c", ReadGroupArgs{}, "s", "0", "t", "0")
	require.NoError(t, err)
	require.Equal(t, []StreamEntries{{"s", []Entry{}}, {"t", out[1].Entries}}, out)
	assert.Equal(t, []ID{gtID(1), gtID(2)}, gtIDs(out[1].Entries))
	out, err = db.ReadGroup(ctx, "g", "c", ReadGroupArgs{}, "s", ">")
	require.NoError(t, err)
	assert.Nil(t, out)
}

func TestGroupErrorsNameStreamAndGroup(t *testing.T) {
	db := NewDB()
	require.NoError(t, db.CreateGroup("jobs", "workers", "$", GroupOptions{MkStream: true}))
	s, _ := db.Lookup("jobs")
	for name, fn := range map[string]func() error{
		"Ack":          func() error { _, err := s.Ack("nope", "1"); return err },
		"Pending":      func() error { _, err := s.Pending("nope"); return err },
		"SetGroupID":   func() error { return s.SetGroupID("nope", "$", GroupOptions{}) },
		"CreateConsum": func() error { _, err := s.CreateConsumer("nope", "c"); return err },
		"AckDel":       func() error { _, err := s.AckDel("nope", KeepRef, "1"); return err },
	} {
		err := fn()
		require.ErrorIs(t, err, ErrNoGroup, name)
		require.Equal(t, `xstream: NOGROUP no such consumer group: stream "jobs" has no consumer group "nope"`, err.Error(), name)
		require.False(t, errors.Is(err, ErrNoStream), name)
	}
}

func TestAckIDs(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	s := gtStream(t, clk, 3)
	require.NoError(t, s.CreateGroup("g", "0", GroupOptions{}))
	es, err := s.ReadGroup(context.Background(), "g", "c", ">", ReadGroupArgs{})
	require.NoError(t, err)
	gtUnchanged(t, s, ErrNoGroup, `"h"`, func() error { _, err := s.AckIDs("h", es[0].ID); return err })
	n, err := s.AckIDs("g", es[0].ID, es[2].ID, es[2].ID, gtID(9))
	require.NoError(t, err)
	assert.Equal(t, int64(2), n)
	sum, _ := s.Pending("g")
	assert.Equal(t, PendingSummary{Count: 1, Lowest: gtID(2), Highest: gtID(2), Consumers: []ConsumerPending{{"c", 1}}}, sum)
}

func TestReadGroupNoAckLeavesPendingEntry(t *testing.T) {
	// As in Redis: a NoAck delivery of an entry that is pending (after
	// SetGroupID moved the group back) leaves its PEL entry as it was.
	clk := newTestClock(1_700_000_000_000)
	s := gtStream(t, clk, 2)
	ctx := context.Background()
	require.NoError(t, s.CreateGroup("g", "0", GroupOptions{}))
	_, err := s.ReadGroup(ctx, "g", "a", ">", ReadGroupArgs{Count: 1})
	require.NoError(t, err)
	require.NoError(t, s.SetGroupID("g", "0", GroupOptions{}))
	clk.advance(time.Second)
	es, err := s.ReadGroup(ctx, "g", "b", ">", ReadGroupArgs{NoAck: true})
	require.NoError(t, err)
	require.Equal(t, []ID{gtID(1), gtID(2)}, gtIDs(es))
	rows, err := s.PendingRange("g", PendingArgs{})
	require.NoError(t, err)
	require.Equal(t, []PendingEntry{{ID: gtID(1), Consumer: "a", Idle: time.Second, Deliveries: 1}}, rows)
	cs, _ := s.Consumers("g")
	require.Equal(t, ConsumerInfo{Name: "b", InactiveKnown: false}, cs[1], "a NoAck read is not an activity that fills the PEL")
}

func TestConsumerNumbersReusedSafely(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	s := gtStream(t, clk, 6)
	ctx := context.Background()
	require.NoError(t, s.CreateGroup("g", "0", GroupOptions{}))
	_, err := s.ReadGroup(ctx, "g", "a", ">", ReadGroupArgs{Count: 2})
	require.NoError(t, err)
	_, err = s.ReadGroup(ctx, "g", "b", ">", ReadGroupArgs{Count: 2})
	require.NoError(t, err)
	n, err := s.DeleteConsumer("g", "a")
	require.NoError(t, err)
	require.Equal(t, int64(2), n)
	// "c" takes the number "a" had; b's entries stay b's.
	_, err = s.ReadGroup(ctx, "g", "c", ">", ReadGroupArgs{Count: 1})
	require.NoError(t, err)
	rows, err := s.PendingRange("g", PendingArgs{})
	require.NoError(t, err)
	require.Equal(t, []PendingEntry{
		{ID: gtID(3), Consumer: "b", Deliveries: 1},
		{ID: gtID(4), Consumer: "b", Deliveries: 1},
		{ID: gtID(5), Consumer: "c", Deliveries: 1},
	}, rows)
	_, err = s.Claim("g", "c", 0, []string{"3"}, ClaimArgs{})
	require.NoError(t, err)
	sum, _ := s.Pending("g")
	assert.Equal(t, []ConsumerPending{{"b", 1}, {"c", 2}}, sum.Consumers)
}

func TestClaimSeenAndActiveTimes(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	s := gtStream(t, clk, 2)
	ctx := context.Background()
	require.NoError(t, s.CreateGroup("g", "0", GroupOptions{}))
	_, err := s.ReadGroup(ctx, "g", "a", ">", ReadGroupArgs{})
	require.NoError(t, err)
	clk.advance(time.Second)
	// A claim that takes nothing is an attempt, not an activity.
	es, err := s.Claim("g", "b", time.Hour, []string{"1"}, ClaimArgs{})
	require.NoError(t, err)
	require.Empty(t, es)
	res, err := s.AutoClaim("g", "c", time.Hour, "0", AutoClaimArgs{})
	require.NoError(t, err)
	require.Empty(t, res.Entries)
	clk.advance(time.Second)
	_, err = s.AutoClaim("g", "c", 0, "0", AutoClaimArgs{Count: 1})
	require.NoError(t, err)
	clk.advance(time.Second)
	cs, err := s.Consumers("g")
	require.NoError(t, err)
	assert.Equal(t, []ConsumerInfo{
		{Name: "a", Pending: 1, Idle: 3 * time.Second, Inactive: 3 * time.Second, InactiveKnown: true},
		{Name: "b", Idle: 2 * time.Second},
		{Name: "c", Pending: 1, Idle: time.Second, Inactive: time.Second, InactiveKnown: true},
	}, cs)
}

// A group that falls behind a trim must not keep a stale entries-read
// counter: once it has read everything its lag is 0 (Redis 7.2 rule).
func TestLagAfterTrimPastGroup(t *testing.T) {
	s := NewStream()
	for i := 1; i <= 10; i++ {
		_, err := s.Add(AddArgs{ID: strconv.Itoa(i)}, Fields("n", strconv.Itoa(i))...)
		require.NoError(t, err)
	}
	require.NoError(t, s.CreateGroup("g", "0", GroupOptions{}))
	got, err := s.ReadGroup(t.Context(), "g", "c", ">", ReadGroupArgs{Count: 3})
	require.NoError(t, err)
	require.Len(t, got, 3)
	_, err = s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 2})
	require.NoError(t, err)
	got, err = s.ReadGroup(t.Context(), "g", "c", ">", ReadGroupArgs{})
	require.NoError(t, err)
	require.Len(t, got, 2)
	gs := s.Groups()
	require.Len(t, gs, 1)
	require.Equal(t, int64(10), gs[0].EntriesRead)
	require.True(t, gs[0].EntriesReadKnown)
	require.Equal(t, int64(0), gs[0].Lag)
	require.True(t, gs[0].LagKnown)
}
