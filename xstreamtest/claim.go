package xstreamtest

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream"
)

// claim calls Claim, which must succeed, and returns the IDs claimed.
func (t *T) claim(stream, group, consumer string, minIdle time.Duration, ids []string, args xstream.ClaimArgs) []string {
	t.Helper()
	es, err := t.e.Claim(t.ctx, stream, group, consumer, minIdle, ids, args)
	require.NoError(t, err, "Claim %v %+v", ids, args)
	return idsOf(es)
}

// idleOf returns the Idle of the pending entry rawID.
func (t *T) idleOf(stream, group, rawID string) time.Duration {
	t.Helper()
	rows, err := t.e.PendingRange(t.ctx, stream, group, xstream.PendingArgs{Start: rawID, End: rawID})
	require.NoError(t, err)
	require.Len(t, rows, 1, "%s is pending", rawID)
	return rows[0].Idle
}

var claimCases = []tcase{
	{"Claim", func(t *T) {
		s := t.pel()
		es, err := t.e.Claim(t.ctx, s, "g", "carol", 0, []string{"1-1", "3-1"}, xstream.ClaimArgs{})
		require.NoError(t, err)
		require.Equal(t, entries("1-1", "3-1"), es)
		require.Equal(t, []string{"1-1:carol:2", "2-1:alice:1", "3-1:carol:3", "4-1:bob:2", "5-1:alice:1"}, t.pendingOwners(s, "g"),
			"the claimed entries move to carol, delivered once more")
		cs, err := t.e.Consumers(t.ctx, s, "g")
		require.NoError(t, err)
		require.Len(t, cs, 3, "Claim created carol")
		require.Equal(t, "carol", cs[2].Name)
		require.Equal(t, int64(2), cs[2].Pending)
		require.Equal(t, []streamIDs{{s, []string{"1-1", "3-1"}}}, t.readGroup("g", "carol", xstream.ReadGroupArgs{}, s, "0"))
		require.Equal(t, []streamIDs{{s, []string{"4-1"}}}, t.readGroup("g", "bob", xstream.ReadGroupArgs{}, s, "0"))
		require.Equal(t, []string{"2-1"}, t.claim(s, "g", "alice", 0, []string{"2-1"}, xstream.ClaimArgs{}), "its own owner may claim it")
		require.Equal(t, "2-1:alice:2", owners(t.pending(s, "g"))[1])
	}},
	{"NotPending", func(t *T) {
		s := t.pel()
		require.Empty(t, t.claim(s, "g", "carol", 0, []string{"6-1", "9-9"}, xstream.ClaimArgs{}), "IDs not pending are skipped")
		require.Equal(t, pelRows, t.pendingOwners(s, "g"))
	}},
	{"MinIdle", func(t *T) {
		s := t.pel()
		require.Empty(t, t.claim(s, "g", "carol", time.Hour, []string{"1-1", "3-1"}, xstream.ClaimArgs{}), "nothing is idle an hour")
		require.Equal(t, pelRows, t.pendingOwners(s, "g"))
	}},
	{"MinIdleClock", func(t *T) {
		t.needClock()
		s := t.pel()
		require.Empty(t, t.claim(s, "g", "carol", 5*time.Second, []string{"1-1"}, xstream.ClaimArgs{}))
		t.advance(6 * time.Second)
		require.Len(t, t.readGroup("g", "bob", xstream.ReadGroupArgs{}, s, "3-1"), 1) // 4-1 delivered again now
		require.Equal(t, []string{"1-1", "3-1"}, t.claim(s, "g", "carol", 5*time.Second, []string{"1-1", "3-1", "4-1"}, xstream.ClaimArgs{}))
		require.Less(t, t.idleOf(s, "g", "1-1"), 5*time.Second, "a claim resets the idle time")
		require.Equal(t, "4-1:bob:3", owners(t.pending(s, "g"))[3])
	}},
	{"Options", func(t *T) {
		s := t.pel()
		// Idle sets the idle time of the claimed entries.
		require.Equal(t, []string{"1-1"}, t.claim(s, "g", "carol", 0, []string{"1-1"}, xstream.ClaimArgs{Idle: time.Hour}))
		idle := t.idleOf(s, "g", "1-1")
		require.GreaterOrEqual(t, idle, time.Hour)
		require.Less(t, idle, time.Hour+time.Minute)
		require.Empty(t, t.claim(s, "g", "dave", 2*time.Hour, []string{"1-1"}, xstream.ClaimArgs{}))
		require.Equal(t, []string{"1-1"}, t.claim(s, "g", "dave", 30*time.Minute, []string{"1-1"}, xstream.ClaimArgs{}), "idle an hour")

		// A Time in the future counts as now.
		require.Equal(t, []string{"2-1"}, t.claim(s, "g", "carol", 0, []string{"2-1"}, xstream.ClaimArgs{Time: time.Now().Add(100 * 365 * 24 * time.Hour)}))
		require.Less(t, t.idleOf(s, "g", "2-1"), time.Minute)

		// RetryCount sets the delivery count; JustID leaves it.
		require.Equal(t, []string{"3-1"}, t.claim(s, "g", "carol", 0, []string{"3-1"}, xstream.ClaimArgs{RetryCount: ptr(int64(7))}))
		es, err := t.e.Claim(t.ctx, s, "g", "erin", 0, []string{"3-1", "4-1"}, xstream.ClaimArgs{JustID: true})
		require.NoError(t, err)
		require.Equal(t, []string{"3-1", "4-1"}, idsOf(es))
		for _, e := range es {
			require.Empty(t, e.Fields, "JustID: IDs only")
		}
		es, err = t.e.Claim(t.ctx, s, "g", "erin", 0, []string{"5-1"}, xstream.ClaimArgs{JustID: true, RetryCount: ptr(int64(0))})
		require.NoError(t, err)
		require.Equal(t, []string{"5-1"}, idsOf(es))
		require.Equal(t, []string{"1-1:dave:3", "2-1:carol:2", "3-1:erin:7", "4-1:erin:2", "5-1:erin:0"}, t.pendingOwners(s, "g"))
	}},
	{"Force", func(t *T) {
		s := t.pel()
		// 6-1 is in the stream but was never delivered; 9-9 is not in it.
		require.Empty(t, t.claim(s, "g", "carol", 0, []string{"6-1"}, xstream.ClaimArgs{}))
		es, err := t.e.Claim(t.ctx, s, "g", "carol", 0, []string{"6-1", "9-9"}, xstream.ClaimArgs{Force: true})
		require.NoError(t, err)
		require.Equal(t, entries("6-1"), es)
		require.Equal(t, append(append([]string{}, pelRows...), "6-1:carol:2"), t.pendingOwners(s, "g"),
			"Force makes 6-1 pending (a new pending entry claimed: 2 deliveries)")
		_, err = t.e.Ack(t.ctx, s, "g", "1-1")
		require.NoError(t, err)
		require.Equal(t, []string{"1-1"}, t.claim(s, "g", "carol", 0, []string{"1-1"}, xstream.ClaimArgs{Force: true, JustID: true}))
		require.Equal(t, "1-1:carol:1", t.pendingOwners(s, "g")[0], "JustID: a new pending entry keeps its count of 1")
		require.Equal(t, id("5-1"), t.groupInfo(s, "g").LastDeliveredID, "Force leaves the last delivered ID")
	}},
	{"Deleted", func(t *T) {
		s := t.pel()
		n, err := t.e.Delete(t.ctx, s, "1-1", "4-1")
		require.NoError(t, err)
		require.Equal(t, int64(2), n)
		require.Equal(t, []string{"2-1", "3-1"}, t.claim(s, "g", "carol", 0, []string{"1-1", "2-1", "3-1", "4-1"}, xstream.ClaimArgs{Force: true}),
			"deleted entries are not claimed")
		require.Equal(t, []string{"2-1:carol:2", "3-1:carol:3", "5-1:alice:1"}, t.pendingOwners(s, "g"), "and leave the PEL")
	}},
	{"LastID", func(t *T) {
		s := t.pel()
		require.Empty(t, t.claim(s, "g", "carol", 0, []string{"9-9"}, xstream.ClaimArgs{LastID: "5-9"}))
		require.Equal(t, id("5-9"), t.groupInfo(s, "g").LastDeliveredID, "LastID raises the last delivered ID")
		require.Equal(t, []string{"1-1"}, t.claim(s, "g", "carol", 0, []string{"1-1"}, xstream.ClaimArgs{LastID: "2-0"}))
		require.Equal(t, id("5-9"), t.groupInfo(s, "g").LastDeliveredID, "but never lowers it")
		require.Equal(t, []string{"6-1"}, t.readNew(s, "g", "alice", 0))
		t.claim(s, "g", "carol", 0, []string{"1-1"}, xstream.ClaimArgs{LastID: "7"})
		require.Equal(t, id("7-0"), t.groupInfo(s, "g").LastDeliveredID, "LastID may be past the stream's last ID")
		t.fill(s, "7-0", "7-1")
		require.Equal(t, []string{"7-1"}, t.readNew(s, "g", "alice", 0))
	}},
	{"Errors", func(t *T) {
		s := t.pel()
		for _, sg := range [][2]string{{t.key("missing"), "g"}, {s, "nope"}} {
			_, err := t.e.Claim(t.ctx, sg[0], sg[1], "c", 0, []string{"1-1"}, xstream.ClaimArgs{})
			isErr(t, err, xstream.ErrNoGroup, "Claim %s %s", sg[0], sg[1])
		}
		for _, bad := range []struct {
			minIdle time.Duration
			ids     []string
			args    xstream.ClaimArgs
			want    error
		}{
			{0, nil, xstream.ClaimArgs{}, xstream.ErrInvalidArgument},
			{-time.Second, []string{"1-1"}, xstream.ClaimArgs{}, xstream.ErrInvalidArgument},
			{0, []string{"1-1"}, xstream.ClaimArgs{Idle: -time.Second}, xstream.ErrInvalidArgument},
			{0, []string{"1-1"}, xstream.ClaimArgs{Idle: time.Second, Time: time.Now()}, xstream.ErrInvalidArgument},
			{0, []string{"1-1"}, xstream.ClaimArgs{RetryCount: ptr(int64(-1))}, xstream.ErrInvalidArgument},
			{0, []string{"1-1", "x"}, xstream.ClaimArgs{}, xstream.ErrInvalidID},
			{0, []string{"-"}, xstream.ClaimArgs{}, xstream.ErrInvalidID},
			{0, []string{"(1-1"}, xstream.ClaimArgs{}, xstream.ErrInvalidID},
			{0, []string{"1-1"}, xstream.ClaimArgs{LastID: "x"}, xstream.ErrInvalidID},
		} {
			_, err := t.e.Claim(t.ctx, s, "g", "carol", bad.minIdle, bad.ids, bad.args)
			isErr(t, err, bad.want, "Claim %s %v %+v", bad.minIdle, bad.ids, bad.args)
		}
		require.Equal(t, pelRows, t.pendingOwners(s, "g"), "a failed Claim changes nothing")
		require.Equal(t, id("5-1"), t.groupInfo(s, "g").LastDeliveredID)
	}},
}

// autoClaim calls AutoClaim, which must succeed.
func (t *T) autoClaim(stream, group, consumer string, minIdle time.Duration, start string, args xstream.AutoClaimArgs) xstream.AutoClaimResult {
	t.Helper()
	res, err := t.e.AutoClaim(t.ctx, stream, group, consumer, minIdle, start, args)
	require.NoError(t, err, "AutoClaim %s %+v", start, args)
	return res
}

var autoClaimCases = []tcase{
	{"Cursor", func(t *T) {
		s := t.pel()
		res := t.autoClaim(s, "g", "carol", 0, "0-0", xstream.AutoClaimArgs{Count: 2})
		require.Equal(t, entries("1-1", "2-1"), res.Entries)
		require.Equal(t, id("3-1"), res.Next, "the cursor is the next pending ID")
		require.Empty(t, res.Deleted)
		res = t.autoClaim(s, "g", "carol", 0, res.Next.String(), xstream.AutoClaimArgs{Count: 2})
		require.Equal(t, []string{"3-1", "4-1"}, idsOf(res.Entries))
		require.Equal(t, id("5-1"), res.Next)
		res = t.autoClaim(s, "g", "carol", 0, res.Next.String(), xstream.AutoClaimArgs{Count: 2})
		require.Equal(t, []string{"5-1"}, idsOf(res.Entries))
		require.Equal(t, xstream.ID{}, res.Next, "0-0 at the end of the PEL")
		require.Equal(t, []string{"1-1:carol:2", "2-1:carol:2", "3-1:carol:3", "4-1:carol:3", "5-1:carol:2"}, t.pendingOwners(s, "g"))

		res = t.autoClaim(s, "g", "dave", 0, "4-1", xstream.AutoClaimArgs{Count: 1})
		require.Equal(t, []string{"4-1"}, idsOf(res.Entries))
		require.Equal(t, id("5-1"), res.Next)
		res = t.autoClaim(s, "g", "dave", 0, "5-1", xstream.AutoClaimArgs{Count: 1})
		require.Equal(t, []string{"5-1"}, idsOf(res.Entries))
		require.Equal(t, xstream.ID{}, res.Next, "0-0 when the count ends at the last pending ID")
	}},
	{"Start", func(t *T) {
		s := t.pel()
		require.Equal(t, []string{"1-1", "2-1", "3-1", "4-1", "5-1"}, idsOf(t.autoClaim(s, "g", "carol", 0, "-", xstream.AutoClaimArgs{}).Entries))
		require.Equal(t, []string{"3-1", "4-1", "5-1"}, idsOf(t.autoClaim(s, "g", "carol", 0, "(2-1", xstream.AutoClaimArgs{}).Entries), "an exclusive start")
		require.Equal(t, []string{"3-1", "4-1", "5-1"}, idsOf(t.autoClaim(s, "g", "carol", 0, "3", xstream.AutoClaimArgs{}).Entries))
		res := t.autoClaim(s, "g", "carol", 0, "5-2", xstream.AutoClaimArgs{})
		require.Empty(t, res.Entries)
		require.Equal(t, xstream.ID{}, res.Next)
	}},
	{"DefaultCount", func(t *T) {
		s := t.key("s")
		for i := 1; i <= 120; i++ {
			t.add(s, "1-"+itoa(i))
		}
		t.group(s, "g", "0")
		require.Len(t, t.readNew(s, "g", "alice", 0), 120)
		res := t.autoClaim(s, "g", "bob", 0, "0", xstream.AutoClaimArgs{})
		require.Len(t, res.Entries, 100, "Count 0 is Redis's default, 100")
		require.Equal(t, id("1-101"), res.Next)
	}},
	{"JustID", func(t *T) {
		s := t.pel()
		res := t.autoClaim(s, "g", "carol", 0, "0", xstream.AutoClaimArgs{JustID: true, Count: 3})
		require.Equal(t, []string{"1-1", "2-1", "3-1"}, idsOf(res.Entries))
		for _, e := range res.Entries {
			require.Empty(t, e.Fields, "JustID: IDs only")
		}
		require.Equal(t, []string{"1-1:carol:1", "2-1:carol:1", "3-1:carol:2", "4-1:bob:2", "5-1:alice:1"}, t.pendingOwners(s, "g"), "JustID leaves the delivery counts")
	}},
	{"Deleted", func(t *T) {
		s := t.pel()
		_, err := t.e.Delete(t.ctx, s, "2-1", "3-1")
		require.NoError(t, err)
		res := t.autoClaim(s, "g", "carol", 0, "0", xstream.AutoClaimArgs{Count: 3})
		require.Equal(t, []string{"1-1"}, idsOf(res.Entries))
		require.Equal(t, []string{"2-1", "3-1"}, strs(res.Deleted), "deleted entries are reported and count toward Count")
		require.Equal(t, id("4-1"), res.Next)
		require.Equal(t, []string{"1-1:carol:2", "4-1:bob:2", "5-1:alice:1"}, t.pendingOwners(s, "g"), "and leave the PEL")
	}},
	{"MinIdle", func(t *T) {
		s := t.pel()
		res := t.autoClaim(s, "g", "carol", time.Hour, "0", xstream.AutoClaimArgs{})
		require.Empty(t, res.Entries, "nothing is idle an hour")
		require.Equal(t, xstream.ID{}, res.Next)
		require.Equal(t, pelRows, t.pendingOwners(s, "g"))
	}},
	{"MinIdleClock", func(t *T) {
		t.needClock()
		s := t.pel()
		t.advance(10 * time.Second)
		require.Len(t, t.readGroup("g", "bob", xstream.ReadGroupArgs{Count: 1}, s, "0"), 1) // 3-1 delivered again now
		res := t.autoClaim(s, "g", "carol", 5*time.Second, "0", xstream.AutoClaimArgs{Count: 3})
		require.Equal(t, []string{"1-1", "2-1", "4-1"}, idsOf(res.Entries), "3-1 is not idle long enough")
		require.Equal(t, id("5-1"), res.Next)
		require.Less(t, t.idleOf(s, "g", "1-1"), 5*time.Second, "a claim resets the idle time")
	}},
	{"Errors", func(t *T) {
		s := t.pel()
		for _, sg := range [][2]string{{t.key("missing"), "g"}, {s, "nope"}} {
			_, err := t.e.AutoClaim(t.ctx, sg[0], sg[1], "c", 0, "0", xstream.AutoClaimArgs{})
			isErr(t, err, xstream.ErrNoGroup, "AutoClaim %s %s", sg[0], sg[1])
		}
		for _, bad := range []struct {
			minIdle time.Duration
			start   string
			args    xstream.AutoClaimArgs
			want    error
		}{
			{-time.Second, "0", xstream.AutoClaimArgs{}, xstream.ErrInvalidArgument},
			{0, "0", xstream.AutoClaimArgs{Count: -1}, xstream.ErrInvalidArgument},
			{0, "x", xstream.AutoClaimArgs{}, xstream.ErrInvalidID},
			{0, "", xstream.AutoClaimArgs{}, xstream.ErrInvalidID},
			{0, "(-", xstream.AutoClaimArgs{}, xstream.ErrInvalidID},
			{0, "(18446744073709551615-18446744073709551615", xstream.AutoClaimArgs{}, xstream.ErrInvalidID},
		} {
			_, err := t.e.AutoClaim(t.ctx, s, "g", "carol", bad.minIdle, bad.start, bad.args)
			isErr(t, err, bad.want, "AutoClaim %s %q %+v", bad.minIdle, bad.start, bad.args)
		}
		require.Equal(t, pelRows, t.pendingOwners(s, "g"), "a failed AutoClaim changes nothing")
	}},
}
