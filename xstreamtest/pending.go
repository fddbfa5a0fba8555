package xstreamtest

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream"
)

// pel makes a stream s with entries 1-1 ... 6-1 and a group g in which
// alice has 1-1, 2-1 and 5-1 pending, bob 3-1 and 4-1 (read twice), and
// 6-1 is not delivered.
func (t *T) pel() string {
	t.Helper()
	s := t.key("s")
	t.fill(s, "1-1", "2-1", "3-1", "4-1", "5-1", "6-1")
	t.group(s, "g", "0")
	require.Equal(t, []string{"1-1", "2-1"}, t.readNew(s, "g", "alice", 2))
	require.Equal(t, []string{"3-1", "4-1"}, t.readNew(s, "g", "bob", 2))
	require.Equal(t, []string{"5-1"}, t.readNew(s, "g", "alice", 1))
	require.Len(t, t.readGroup("g", "bob", xstream.ReadGroupArgs{}, s, "0"), 1)
	return s
}

// pelRows is the PEL that pel makes.
var pelRows = []string{"1-1:alice:1", "2-1:alice:1", "3-1:bob:2", "4-1:bob:2", "5-1:alice:1"}

var ackCases = []tcase{
	{"Ack", func(t *T) {
		s := t.pel()
		n, err := t.e.Ack(t.ctx, s, "g", "1-1", "3-1", "6-1", "9-9", "1-1")
		require.NoError(t, err)
		require.Equal(t, int64(2), n, "pending IDs only, each once")
		require.Equal(t, []string{"2-1:alice:1", "4-1:bob:2", "5-1:alice:1"}, t.pendingOwners(s, "g"))
		n, err = t.e.Ack(t.ctx, s, "g", "1-1")
		require.NoError(t, err)
		require.Zero(t, n, "acknowledged already")
		n, err = t.e.Ack(t.ctx, s, "g", "2")
		require.NoError(t, err)
		require.Zero(t, n, "a bare ms is ms-0")
		cs, err := t.e.Consumers(t.ctx, s, "g")
		require.NoError(t, err)
		require.Equal(t, int64(2), cs[0].Pending) // alice
		require.Equal(t, int64(1), cs[1].Pending) // bob
		hist := t.readGroup("g", "bob", xstream.ReadGroupArgs{}, s, "0")
		require.Equal(t, []streamIDs{{s, []string{"4-1"}}}, hist)
		_, err = t.e.Delete(t.ctx, s, "5-1")
		require.NoError(t, err)
		n, err = t.e.Ack(t.ctx, s, "g", "5-1")
		require.NoError(t, err)
		require.Equal(t, int64(1), n, "an entry deleted from the stream is still acknowledged")
	}},
	{"Missing", func(t *T) {
		s := t.pel()
		for _, sg := range [][2]string{{t.key("missing"), "g"}, {s, "nope"}} {
			n, err := t.e.Ack(t.ctx, sg[0], sg[1], "1-1")
			require.NoError(t, err)
			require.Zero(t, n)
			n, err = t.e.Ack(t.ctx, sg[0], sg[1], "not-an-id")
			require.NoError(t, err, "XACK of a missing key or group is 0 before the IDs are looked at")
			require.Zero(t, n)
		}
		_, err := t.e.Info(t.ctx, t.key("missing"))
		isErr(t, err, xstream.ErrNoStream, "Ack creates nothing")
	}},
	{"ErrInvalidID", func(t *T) {
		s := t.pel()
		for _, bad := range []string{"x", "-", "+", "*", ">", "(1-1", ""} {
			_, err := t.e.Ack(t.ctx, s, "g", "1-1", bad)
			isErr(t, err, xstream.ErrInvalidID, "Ack %q", bad)
		}
		require.Equal(t, pelRows, t.pendingOwners(s, "g"), "one bad ID fails the whole call")
	}},
}

var pendingCases = []tcase{
	{"Summary", func(t *T) {
		s := t.pel()
		sum, err := t.e.Pending(t.ctx, s, "g")
		require.NoError(t, err)
		require.Equal(t, xstream.PendingSummary{
			Count: 5, Lowest: id("1-1"), Highest: id("5-1"),
			Consumers: []xstream.ConsumerPending{{Name: "alice", Count: 3}, {Name: "bob", Count: 2}},
		}, sum)
		_, err = t.e.CreateConsumer(t.ctx, s, "g", "carol")
		require.NoError(t, err)
		_, err = t.e.Ack(t.ctx, s, "g", "1-1", "5-1")
		require.NoError(t, err)
		sum, err = t.e.Pending(t.ctx, s, "g")
		require.NoError(t, err)
		require.Equal(t, xstream.PendingSummary{
			Count: 3, Lowest: id("2-1"), Highest: id("4-1"),
			Consumers: []xstream.ConsumerPending{{Name: "alice", Count: 1}, {Name: "bob", Count: 2}},
		}, sum, "only consumers with pending entries")
		_, err = t.e.Ack(t.ctx, s, "g", "2-1", "3-1", "4-1")
		require.NoError(t, err)
		sum, err = t.e.Pending(t.ctx, s, "g")
		require.NoError(t, err)
		require.Zero(t, sum.Count)
		require.Equal(t, xstream.ID{}, sum.Lowest)
		require.Equal(t, xstream.ID{}, sum.Highest)
		require.Empty(t, sum.Consumers)
	}},
	{"Range", func(t *T) {
		s := t.pel()
		rows := t.pending(s, "g")
		require.Equal(t, pelRows, owners(rows))
		for _, r := range rows {
			require.GreaterOrEqual(t, r.Idle, time.Duration(0))
		}
		for _, c := range []struct {
			args xstream.PendingArgs
			want []string
		}{
			{xstream.PendingArgs{}, pelRows}, // "" is "-" and "+"
			{xstream.PendingArgs{Start: "-", End: "+", Count: 2}, pelRows[:2]},
			{xstream.PendingArgs{Start: "2-1", End: "4-1"}, pelRows[1:4]},
			{xstream.PendingArgs{Start: "2", End: "4"}, pelRows[1:4]},
			{xstream.PendingArgs{Start: "(2-1", End: "+"}, pelRows[2:]},
			{xstream.PendingArgs{Start: "-", End: "(4-1"}, pelRows[:3]},
			{xstream.PendingArgs{Start: "(1-1", End: "(5-1", Count: 2}, pelRows[1:3]},
			{xstream.PendingArgs{Start: "5-2", End: "+"}, nil},
			{xstream.PendingArgs{Start: "4-1", End: "2-1"}, nil},
			{xstream.PendingArgs{Start: "-", End: "+", Consumer: "alice"}, []string{pelRows[0], pelRows[1], pelRows[4]}},
			{xstream.PendingArgs{Start: "2", End: "+", Consumer: "alice", Count: 1}, []string{pelRows[1]}},
			{xstream.PendingArgs{Start: "-", End: "+", Consumer: "bob"}, pelRows[2:4]},
			{xstream.PendingArgs{Start: "-", End: "+", Consumer: "nobody"}, nil},
			{xstream.PendingArgs{Start: "-", End: "+", MinIdle: time.Hour}, nil}, // nothing was delivered an hour ago
		} {
			rows, err := t.e.PendingRange(t.ctx, s, "g", c.args)
			require.NoError(t, err, "PendingRange %+v", c.args)
			require.Equal(t, c.want, nilIfEmpty(owners(rows)), "PendingRange %+v", c.args)
		}
	}},
	{"Idle", func(t *T) {
		t.needClock()
		s := t.pel()
		t.advance(10 * time.Second)
		require.Len(t, t.readGroup("g", "alice", xstream.ReadGroupArgs{Count: 1}, s, "1-1"), 1) // 2-1 delivered again now
		rows := t.pending(s, "g")
		require.Equal(t, []string{"1-1:alice:1", "2-1:alice:2", "3-1:bob:2", "4-1:bob:2", "5-1:alice:1"}, owners(rows))
		for _, r := range rows {
			if r.ID == id("2-1") {
				require.Less(t, r.Idle, 10*time.Second, "a delivery resets the idle time")
				continue
			}
			require.GreaterOrEqual(t, r.Idle, 10*time.Second, r.ID.String())
			require.Less(t, r.Idle, 10*time.Second+time.Minute, r.ID.String())
		}
		got, err := t.e.PendingRange(t.ctx, s, "g", xstream.PendingArgs{MinIdle: 5 * time.Second})
		require.NoError(t, err)
		require.Equal(t, []string{"1-1:alice:1", "3-1:bob:2", "4-1:bob:2", "5-1:alice:1"}, owners(got))
		got, err = t.e.PendingRange(t.ctx, s, "g", xstream.PendingArgs{MinIdle: 5 * time.Second, Consumer: "alice", Count: 1})
		require.NoError(t, err)
		require.Equal(t, []string{"1-1:alice:1"}, owners(got))
		got, err = t.e.PendingRange(t.ctx, s, "g", xstream.PendingArgs{MinIdle: 5 * time.Second, Start: "(1-1", Count: 1})
		require.NoError(t, err)
		require.Equal(t, []string{"3-1:bob:2"}, owners(got), "MinIdle filters before Count")
	}},
	{"Errors", func(t *T) {
		s := t.pel()
		for _, sg := range [][2]string{{t.key("missing"), "g"}, {s, "nope"}} {
			_, err := t.e.Pending(t.ctx, sg[0], sg[1])
			isErr(t, err, xstream.ErrNoGroup, "Pending %s %s", sg[0], sg[1])
			_, err = t.e.PendingRange(t.ctx, sg[0], sg[1], xstream.PendingArgs{})
			isErr(t, err, xstream.ErrNoGroup, "PendingRange %s %s", sg[0], sg[1])
		}
		for _, b := range [][2]string{{"x", "+"}, {"-", "x"}, {"*", "+"}, {"(-", "+"}, {"(18446744073709551615-18446744073709551615", "+"}, {"-", "(0-0"}} {
			_, err := t.e.PendingRange(t.ctx, s, "g", xstream.PendingArgs{Start: b[0], End: b[1]})
			isErr(t, err, xstream.ErrInvalidID, "PendingRange %q %q", b[0], b[1])
		}
		_, err := t.e.PendingRange(t.ctx, s, "g", xstream.PendingArgs{Count: -1})
		isErr(t, err, xstream.ErrInvalidArgument, "a negative count")
		_, err = t.e.PendingRange(t.ctx, s, "g", xstream.PendingArgs{MinIdle: -time.Second})
		isErr(t, err, xstream.ErrInvalidArgument, "a negative MinIdle")
		_, err = t.e.Info(t.ctx, t.key("missing"))
		isErr(t, err, xstream.ErrNoStream, "no call created the stream")
	}},
}
