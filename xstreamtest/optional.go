package xstreamtest

import (
	"errors"
	"math"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream"
)

// unsupported is the case of an optional capability the engine lacks:
// the package functions fail with errors.ErrUnsupported.
func unsupported(has func(Caps) bool, name string, call func(t *T) error) tcase {
	return tcase{"Unsupported", func(t *T) {
		if has(t.caps) {
			t.Skipf("Caps.%s is set", name)
		}
		s := t.pel()
		err := call(t)
		isErr(t, err, errors.ErrUnsupported)
		require.Equal(t, pelRows, t.pendingOwners(s, "g"), "an unsupported call changes nothing")
		require.Len(t, t.all(s), 6)
	}}
}

// needs skips the test unless the engine has a capability.
func (t *T) needs(has bool, name string) {
	t.Helper()
	if !has {
		t.Skipf("Caps.%s is not set", name)
	}
}

func (t *T) nack(stream, group string, mode xstream.NackMode, ids []string, args xstream.NackArgs) int64 {
	t.Helper()
	n, err := xstream.Nack(t.ctx, t.e, stream, group, mode, ids, args)
	require.NoError(t, err, "Nack %v %+v", ids, args)
	return n
}

var nackCases = []tcase{
	{"Nack", func(t *T) {
		t.needs(t.caps.Nack, "Nack")
		s := t.pel()
		require.Equal(t, int64(2), t.nack(s, "g", xstream.NackFail, []string{"1-1", "3-1", "6-1", "9-9"}, xstream.NackArgs{}), "pending IDs only")
		rows := t.pending(s, "g")
		require.Equal(t, []string{"1-1::1", "2-1:alice:1", "3-1::2", "4-1:bob:2", "5-1:alice:1"}, owners(rows), "given back: no owner, the count left as it was")
		require.Equal(t, xstream.NackIdle, rows[0].Idle)
		require.Equal(t, xstream.NackIdle, rows[2].Idle)
		sum, err := t.e.Pending(t.ctx, s, "g")
		require.NoError(t, err)
		require.Equal(t, int64(5), sum.Count)
		require.Equal(t, []xstream.ConsumerPending{{Name: "alice", Count: 2}, {Name: "bob", Count: 1}}, sum.Consumers)

		require.Equal(t, int64(2), t.nack(s, "g", xstream.NackSilent, []string{"2-1", "3-1"}, xstream.NackArgs{}), "an entry given back already counts")
		require.Equal(t, int64(1), t.nack(s, "g", xstream.NackFatal, []string{"4-1"}, xstream.NackArgs{}))
		require.Equal(t, int64(1), t.nack(s, "g", xstream.NackFail, []string{"5-1"}, xstream.NackArgs{RetryCount: ptr(int64(9))}))
		require.Equal(t, []string{"1-1::1", "2-1::0", "3-1::1", "4-1::" + itoa(math.MaxInt64), "5-1::9"}, t.pendingOwners(s, "g"))

		// ReadGroup delivers them neither as new entries nor as history.
		require.Equal(t, []string{"6-1"}, t.readNew(s, "g", "alice", 0))
		require.Equal(t, []streamIDs{{s, []string{"6-1"}}}, t.readGroup("g", "alice", xstream.ReadGroupArgs{}, s, "0"))
		// Claim, AutoClaim and PendingRange take them whatever the idle time.
		got, err := t.e.PendingRange(t.ctx, s, "g", xstream.PendingArgs{MinIdle: time.Hour})
		require.NoError(t, err)
		require.Equal(t, []string{"1-1", "2-1", "3-1", "4-1", "5-1"}, idsOfRows(got))
		require.Equal(t, []string{"1-1"}, t.claim(s, "g", "carol", time.Hour, []string{"1-1", "6-1"}, xstream.ClaimArgs{}))
		res := t.autoClaim(s, "g", "dave", time.Hour, "0", xstream.AutoClaimArgs{Count: 2})
		require.Equal(t, []string{"2-1", "3-1"}, idsOf(res.Entries))
		require.Equal(t, []string{"1-1:carol:2", "2-1:dave:1", "3-1:dave:2", "4-1::" + itoa(math.MaxInt64), "5-1::9", "6-1:alice:2"}, t.pendingOwners(s, "g"))
	}},
	{"Force", func(t *T) {
		t.needs(t.caps.Nack, "Nack")
		s := t.pel()
		require.Zero(t, t.nack(s, "g", xstream.NackFail, []string{"6-1"}, xstream.NackArgs{}))
		require.Equal(t, int64(1), t.nack(s, "g", xstream.NackFail, []string{"6-1", "9-9"}, xstream.NackArgs{Force: true}), "Force: an entry of the stream")
		require.Equal(t, "6-1::0", t.pendingOwners(s, "g")[5])
		_, err := t.e.Ack(t.ctx, s, "g", "6-1")
		require.NoError(t, err)
		require.Equal(t, int64(1), t.nack(s, "g", xstream.NackFatal, []string{"6-1"}, xstream.NackArgs{Force: true}))
		require.Equal(t, "6-1::"+itoa(math.MaxInt64), t.pendingOwners(s, "g")[5])
	}},
	{"Errors", func(t *T) {
		t.needs(t.caps.Nack, "Nack")
		s := t.pel()
		for _, sg := range [][2]string{{t.key("missing"), "g"}, {s, "nope"}} {
			_, err := xstream.Nack(t.ctx, t.e, sg[0], sg[1], xstream.NackFail, []string{"1-1"}, xstream.NackArgs{})
			isErr(t, err, xstream.ErrNoGroup, "Nack %s %s", sg[0], sg[1])
		}
		for _, bad := range []struct {
			mode xstream.NackMode
			ids  []string
			args xstream.NackArgs
			want error
		}{
			{0, []string{"1-1"}, xstream.NackArgs{}, xstream.ErrInvalidArgument},
			{99, []string{"1-1"}, xstream.NackArgs{}, xstream.ErrInvalidArgument},
			{xstream.NackFail, []string{"1-1"}, xstream.NackArgs{RetryCount: ptr(int64(-1))}, xstream.ErrInvalidArgument},
			{xstream.NackFail, []string{"1-1", "x"}, xstream.NackArgs{}, xstream.ErrInvalidID},
		} {
			_, err := xstream.Nack(t.ctx, t.e, s, "g", bad.mode, bad.ids, bad.args)
			isErr(t, err, bad.want, "Nack %d %v %+v", bad.mode, bad.ids, bad.args)
		}
		require.Equal(t, pelRows, t.pendingOwners(s, "g"), "a failed Nack changes nothing")
	}},
	unsupported(func(c Caps) bool { return c.Nack }, "Nack", func(t *T) error {
		_, err := xstream.Nack(t.ctx, t.e, t.key("s"), "g", xstream.NackFail, []string{"1-1"}, xstream.NackArgs{})
		return err
	}),
}

func idsOfRows(rows []xstream.PendingEntry) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = r.ID.String()
	}
	return out
}

func (t *T) deleteEx(stream string, policy xstream.DeletePolicy, ids ...string) []xstream.DeleteResult {
	t.Helper()
	res, err := xstream.DeleteEx(t.ctx, t.e, stream, policy, ids...)
	require.NoError(t, err, "DeleteEx %d %v", policy, ids)
	return res
}

func (t *T) ackDel(stream, group string, policy xstream.DeletePolicy, ids ...string) []xstream.DeleteResult {
	t.Helper()
	res, err := xstream.AckDel(t.ctx, t.e, stream, group, policy, ids...)
	require.NoError(t, err, "AckDel %d %v", policy, ids)
	return res
}

// Short names of the DeleteResults.
const (
	notFound   = xstream.DeleteNotFound
	deleted    = xstream.Deleted
	referenced = xstream.DeleteReferenced
)

var deleteExCases = []tcase{
	{"DeleteEx", func(t *T) {
		t.needs(t.caps.DeleteEx, "DeleteEx")
		s := t.pel()
		require.Equal(t, []xstream.DeleteResult{deleted, notFound}, t.deleteEx(s, xstream.KeepRef, "1-1", "9-9"))
		require.Equal(t, pelRows, t.pendingOwners(s, "g"), "KeepRef leaves the references")
		require.Equal(t, []xstream.DeleteResult{deleted, notFound}, t.deleteEx(s, xstream.DelRef, "2-1", "1-1"))
		require.Equal(t, pelRows[2:], t.pendingOwners(s, "g"), "DelRef drops them, even of an entry already gone")
		// Acked: 3-1 is pending, 6-1 and 9-9 not read yet, 0-5 neither.
		require.Equal(t, []xstream.DeleteResult{referenced, referenced, referenced, notFound}, t.deleteEx(s, xstream.Acked, "3-1", "6-1", "9-9", "0-5"))
		_, err := t.e.Ack(t.ctx, s, "g", "3-1")
		require.NoError(t, err)
		require.Equal(t, []xstream.DeleteResult{deleted}, t.deleteEx(s, xstream.Acked, "3-1"))
		require.Equal(t, []string{"4-1", "5-1", "6-1"}, t.all(s))
		require.Equal(t, id("3-1"), t.info(s).MaxDeletedEntryID)
	}},
	{"DeleteExMissing", func(t *T) {
		t.needs(t.caps.DeleteEx, "DeleteEx")
		m := t.key("missing")
		require.Equal(t, []xstream.DeleteResult{notFound, notFound}, t.deleteEx(m, xstream.Acked, "1-1", "2-1"))
		require.Equal(t, []xstream.DeleteResult{notFound}, t.deleteEx(m, xstream.KeepRef, "not-an-id"), "the IDs of a missing key are not looked at")
		_, err := t.e.Info(t.ctx, m)
		isErr(t, err, xstream.ErrNoStream, "DeleteEx creates nothing")
	}},
	{"AckDel", func(t *T) {
		t.needs(t.caps.DeleteEx, "DeleteEx")
		s := t.pel()
		t.group(s, "h", "0") // h refers to every entry: it has read none
		require.Equal(t, []xstream.DeleteResult{deleted, notFound}, t.ackDel(s, "g", xstream.KeepRef, "1-1", "6-1"))
		require.Equal(t, []string{"2-1", "3-1", "4-1", "5-1", "6-1"}, t.all(s), "an ID not pending is left alone")
		require.Equal(t, pelRows[1:], t.pendingOwners(s, "g"))
		require.Equal(t, []xstream.DeleteResult{referenced}, t.ackDel(s, "g", xstream.Acked, "2-1"))
		require.Equal(t, pelRows[2:], t.pendingOwners(s, "g"), "acknowledged")
		require.Contains(t, t.all(s), "2-1", "but kept: h refers to it")
		require.Len(t, t.readNew(s, "h", "c", 2), 2) // 2-1, 3-1
		require.Equal(t, []xstream.DeleteResult{deleted}, t.ackDel(s, "g", xstream.DelRef, "3-1"))
		require.Equal(t, []string{"2-1:c:1"}, t.pendingOwners(s, "h"), "DelRef dropped 3-1 from h too")
		_, err := t.e.Delete(t.ctx, s, "4-1")
		require.NoError(t, err)
		require.Equal(t, []xstream.DeleteResult{deleted}, t.ackDel(s, "g", xstream.KeepRef, "4-1"), "a pending entry whose message is gone")
		require.Equal(t, []string{"5-1:alice:1"}, t.pendingOwners(s, "g"))
	}},
	{"AckDelMissing", func(t *T) {
		t.needs(t.caps.DeleteEx, "DeleteEx")
		s := t.pel()
		for _, sg := range [][2]string{{t.key("missing"), "g"}, {s, "nope"}} {
			require.Equal(t, []xstream.DeleteResult{notFound, notFound}, t.ackDel(sg[0], sg[1], xstream.KeepRef, "1-1", "not-an-id"),
				"a missing key or group: -1 for each ID, not looked at")
		}
		require.Len(t, t.all(s), 6)
	}},
	{"Errors", func(t *T) {
		t.needs(t.caps.DeleteEx, "DeleteEx")
		s := t.pel()
		_, err := xstream.DeleteEx(t.ctx, t.e, s, 99, "1-1")
		isErr(t, err, xstream.ErrInvalidArgument, "an unknown policy")
		_, err = xstream.DeleteEx(t.ctx, t.e, s, xstream.KeepRef, "1-1", "x")
		isErr(t, err, xstream.ErrInvalidID)
		_, err = xstream.AckDel(t.ctx, t.e, s, "g", 99, "1-1")
		isErr(t, err, xstream.ErrInvalidArgument, "an unknown policy")
		_, err = xstream.AckDel(t.ctx, t.e, s, "g", xstream.KeepRef, "1-1", "x")
		isErr(t, err, xstream.ErrInvalidID)
		require.Equal(t, pelRows, t.pendingOwners(s, "g"), "a failed call changes nothing")
		require.Len(t, t.all(s), 6)
	}},
	unsupported(func(c Caps) bool { return c.DeleteEx }, "DeleteEx", func(t *T) error {
		_, err := xstream.DeleteEx(t.ctx, t.e, t.key("s"), xstream.KeepRef, "1-1")
		if !errors.Is(err, errors.ErrUnsupported) {
			return err
		}
		_, err = xstream.AckDel(t.ctx, t.e, t.key("s"), "g", xstream.KeepRef, "1-1")
		return err
	}),
}

var deadLetterCases = []tcase{
	{"Move", func(t *T) {
		t.needs(t.caps.DeadLetters, "DeadLetters")
		s, dead := t.pel(), t.key("dead")
		_, err := t.e.Delete(t.ctx, s, "4-1")
		require.NoError(t, err)
		moved, err := xstream.MoveDeadLetters(t.ctx, t.e, s, "g", 1, dead, 0)
		require.NoError(t, err)
		require.Len(t, moved, 2)
		for i, want := range []string{"3-1", "4-1"} {
			require.Equal(t, id(want), moved[i].ID)
			require.Equal(t, "bob", moved[i].Consumer)
			require.Equal(t, int64(2), moved[i].Deliveries)
		}
		require.Equal(t, []string{"1-1:alice:1", "2-1:alice:1", "5-1:alice:1"}, t.pendingOwners(s, "g"), "moved entries are acknowledged")
		es, err := t.e.Range(t.ctx, dead, "-", "+", 0)
		require.NoError(t, err)
		require.Len(t, es, 2)
		meta := func(src string) []xstream.Field {
			return xstream.Fields(
				xstream.DeadLetterStreamField, s, xstream.DeadLetterGroupField, "g", xstream.DeadLetterIDField, src,
				xstream.DeadLetterConsumerField, "bob", xstream.DeadLetterDeliveriesField, "2")
		}
		require.Equal(t, xstream.Entry{ID: moved[0].DeadID, Fields: append(meta("3-1"), f("3-1")...)}, es[0])
		require.Equal(t, xstream.Entry{ID: moved[1].DeadID, Fields: meta("4-1")}, es[1], "a deleted message: the metadata alone")

		// Count caps what one call moves.
		t.claim(s, "g", "alice", 0, []string{"1-1", "2-1"}, xstream.ClaimArgs{RetryCount: ptr(int64(5))})
		moved, err = xstream.MoveDeadLetters(t.ctx, t.e, s, "g", 3, dead, 1)
		require.NoError(t, err)
		require.Len(t, moved, 1)
		require.Equal(t, id("1-1"), moved[0].ID)
		require.Equal(t, int64(3), t.length(dead))
		moved, err = xstream.MoveDeadLetters(t.ctx, t.e, s, "g", 5, dead, 0)
		require.NoError(t, err)
		require.Empty(t, moved, "more than MaxDeliveries only")
	}},
	{"Errors", func(t *T) {
		t.needs(t.caps.DeadLetters, "DeadLetters")
		s, dead := t.pel(), t.key("dead")
		for _, sg := range [][2]string{{t.key("missing"), "g"}, {s, "nope"}} {
			_, err := xstream.MoveDeadLetters(t.ctx, t.e, sg[0], sg[1], 1, dead, 0)
			isErr(t, err, xstream.ErrNoGroup, "MoveDeadLetters %s %s", sg[0], sg[1])
		}
		_, err := xstream.MoveDeadLetters(t.ctx, t.e, s, "g", 0, dead, 0)
		isErr(t, err, xstream.ErrInvalidArgument, "MaxDeliveries below 1")
		_, err = xstream.MoveDeadLetters(t.ctx, t.e, s, "g", 1, dead, -1)
		isErr(t, err, xstream.ErrInvalidArgument, "a negative count")
		_, err = xstream.MoveDeadLetters(t.ctx, t.e, s, "g", 1, s, 0)
		isErr(t, err, xstream.ErrInvalidArgument, "the source stream as the dead-letter stream")
		require.Equal(t, pelRows, t.pendingOwners(s, "g"), "a failed call changes nothing")
		require.Zero(t, t.length(dead))
	}},
	unsupported(func(c Caps) bool { return c.DeadLetters }, "DeadLetters", func(t *T) error {
		_, err := xstream.MoveDeadLetters(t.ctx, t.e, t.key("s"), "g", 1, t.key("dead"), 0)
		return err
	}),
}
