package xstream

import (
	"context"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The rules below follow Redis's t_stream.c (xdelexCommand,
// xackdelCommand, streamTrim) and its tests in
// tests/unit/type/stream-cgroups.tcl.

// dpStream returns a stream with entries 1-0 … n-0 and groups a and b,
// both created at 0: a has read 1..4 and acknowledged 1..3, b has read
// 1..2 and acknowledged 1. So 1 is referenced by nobody, 2 is pending in
// b, 3 is beyond b's last ID, 4 is pending in a and beyond b.
func dpStream(t *testing.T, n int) *Stream {
	t.Helper()
	s := gtStream(t, newTestClock(1_700_000_000_000), n)
	ctx := context.Background()
	require.NoError(t, s.CreateGroup("a", "0", GroupOptions{}))
	require.NoError(t, s.CreateGroup("b", "0", GroupOptions{}))
	_, err := s.ReadGroup(ctx, "a", "c", ">", ReadGroupArgs{Count: 4})
	require.NoError(t, err)
	_, err = s.ReadGroup(ctx, "b", "c", ">", ReadGroupArgs{Count: 2})
	require.NoError(t, err)
	_, err = s.Ack("a", "1", "2", "3")
	require.NoError(t, err)
	_, err = s.Ack("b", "1")
	require.NoError(t, err)
	return s
}

// dpPending lists the pending IDs of group g.
func dpPending(t *testing.T, s *Stream, g string) []ID {
	t.Helper()
	rows, err := s.PendingRange(g, PendingArgs{})
	require.NoError(t, err)
	var out []ID
	for _, r := range rows {
		out = append(out, r.ID)
	}
	return out
}

// dpLive lists the IDs in the stream.
func dpLive(t *testing.T, s *Stream) []ID {
	t.Helper()
	es, err := s.Range("-", "+", 0)
	require.NoError(t, err)
	return gtIDs(es)
}

func TestDeleteExKeepRef(t *testing.T) {
	s := dpStream(t, 6)
	res, err := s.DeleteEx(KeepRef, "2", "9", "2")
	require.NoError(t, err)
	assert.Equal(t, []DeleteResult{Deleted, DeleteNotFound, DeleteNotFound}, res)
	assert.Equal(t, []ID{gtID(1), gtID(3), gtID(4), gtID(5), gtID(6)}, dpLive(t, s))
	assert.Equal(t, []ID{gtID(2)}, dpPending(t, s, "b"), "KEEPREF leaves the reference")
	assert.Equal(t, gtID(2), must(s.Info()).MaxDeletedEntryID)
}

func TestDeleteExDelRefDropsEveryReference(t *testing.T) {
	s := dpStream(t, 6)
	_, err := s.Delete("4") // gone from the stream, still pending in a
	require.NoError(t, err)
	res, err := s.DeleteEx(DelRef, "2", "4")
	require.NoError(t, err)
	assert.Equal(t, []DeleteResult{Deleted, DeleteNotFound}, res)
	assert.Empty(t, dpPending(t, s, "a"), "the reference to 4 goes although its entry was gone")
	assert.Empty(t, dpPending(t, s, "b"))
}

func TestDeleteExAcked(t *testing.T) {
	s := dpStream(t, 6)
	// 1: nobody refers to it. 2: pending in b. 3: b has not read it.
	// 8: not in the stream, but beyond b's last ID, so referenced all
	// the same. 0-5: not in the stream and below every last ID.
	res, err := s.DeleteEx(Acked, "1", "2", "3", "8", "0-5")
	require.NoError(t, err)
	assert.Equal(t, []DeleteResult{Deleted, DeleteReferenced, DeleteReferenced, DeleteReferenced, DeleteNotFound}, res)
	assert.Equal(t, []ID{gtID(2), gtID(3), gtID(4), gtID(5), gtID(6)}, dpLive(t, s))
	assert.Equal(t, []ID{gtID(2)}, dpPending(t, s, "b"))

	// A pending ID whose entry is gone is still referenced.
	_, err = s.Delete("2")
	require.NoError(t, err)
	res, err = s.DeleteEx(Acked, "2")
	require.NoError(t, err)
	assert.Equal(t, []DeleteResult{DeleteReferenced}, res)

	// Without groups, Acked deletes what is there.
	plain := gtStream(t, newTestClock(0), 2)
	res, err = plain.DeleteEx(Acked, "1", "7")
	require.NoError(t, err)
	assert.Equal(t, []DeleteResult{Deleted, DeleteNotFound}, res)
}

func TestDeleteExBadInputChangesNothing(t *testing.T) {
	s := dpStream(t, 6)
	gtUnchanged(t, s, ErrInvalidArgument, "DeletePolicy 9", func() error { _, err := s.DeleteEx(9, "1"); return err })
	gtUnchanged(t, s, ErrInvalidID, `"x"`, func() error { _, err := s.DeleteEx(DelRef, "2", "x"); return err })
	gtUnchanged(t, s, ErrInvalidID, `"+"`, func() error { _, err := s.DeleteEx(KeepRef, "+"); return err })
}

func TestAckDelOnlyPendingIDs(t *testing.T) {
	s := dpStream(t, 6)
	// 5 is in the stream but not pending in a: nothing happens to it.
	res, err := s.AckDel("a", KeepRef, "5", "4", "4")
	require.NoError(t, err)
	assert.Equal(t, []DeleteResult{DeleteNotFound, Deleted, DeleteNotFound}, res)
	assert.Equal(t, []ID{gtID(1), gtID(2), gtID(3), gtID(5), gtID(6)}, dpLive(t, s))
	assert.Empty(t, dpPending(t, s, "a"))
}

func TestAckDelEntryAlreadyGone(t *testing.T) {
	s := dpStream(t, 6)
	_, err := s.Delete("2")
	require.NoError(t, err)
	res, err := s.AckDel("b", KeepRef, "2")
	require.NoError(t, err)
	assert.Equal(t, []DeleteResult{Deleted}, res, "acknowledged: Redis counts it deleted")
	assert.Empty(t, dpPending(t, s, "b"))
}

// As Redis's "XACKDEL with KEEPREF": the other group's references stay.
func TestAckDelKeepRef(t *testing.T) {
	s := dpStream(t, 6)
	_, err := s.ReadGroup(context.Background(), "b", "c", ">", ReadGroupArgs{Count: 2}) // b: 2..4 pending
	require.NoError(t, err)
	res, err := s.AckDel("a", KeepRef, "4")
	require.NoError(t, err)
	assert.Equal(t, []DeleteResult{Deleted}, res)
	assert.Equal(t, []ID{gtID(2), gtID(3), gtID(4)}, dpPending(t, s, "b"))
	res, err = s.AckDel("b", KeepRef, "4")
	require.NoError(t, err)
	assert.Equal(t, []DeleteResult{Deleted}, res)
	assert.Equal(t, []ID{gtID(2), gtID(3)}, dpPending(t, s, "b"))
}

// As Redis's "XACKDEL with ACKED option only deletes messages acknowledged
// by all groups".
func TestAckDelAcked(t *testing.T) {
	s := dpStream(t, 6)
	_, err := s.ReadGroup(context.Background(), "b", "c", ">", ReadGroupArgs{Count: 2}) // b: 2..4 pending
	require.NoError(t, err)
	res, err := s.AckDel("a", Acked, "4")
	require.NoError(t, err)
	assert.Equal(t, []DeleteResult{DeleteReferenced}, res, "b still has 4 pending")
	assert.Empty(t, dpPending(t, s, "a"), "acknowledged all the same")
	assert.Contains(t, dpLive(t, s), gtID(4))
	res, err = s.AckDel("b", Acked, "4", "2")
	require.NoError(t, err)
	assert.Equal(t, []DeleteResult{Deleted, Deleted}, res)
	assert.Equal(t, []ID{gtID(1), gtID(3), gtID(5), gtID(6)}, dpLive(t, s))
}

// As Redis's "XACKDEL with DELREF option acknowledges will remove entry
// from all PELs".
func TestAckDelDelRef(t *testing.T) {
	s := dpStream(t, 6)
	_, err := s.ReadGroup(context.Background(), "b", "c", ">", ReadGroupArgs{Count: 2}) // b: 2..4 pending
	require.NoError(t, err)
	res, err := s.AckDel("a", DelRef, "4")
	require.NoError(t, err)
	assert.Equal(t, []DeleteResult{Deleted}, res)
	assert.Equal(t, []ID{gtID(2), gtID(3)}, dpPending(t, s, "b"))
	res, err = s.AckDel("b", DelRef, "4")
	require.NoError(t, err)
	assert.Equal(t, []DeleteResult{DeleteNotFound}, res, "no longer pending in b")
}

func TestAckDelBadInputChangesNothing(t *testing.T) {
	s := dpStream(t, 6)
	gtUnchanged(t, s, ErrNoGroup, `"z"`, func() error { _, err := s.AckDel("z", KeepRef, "2"); return err })
	gtUnchanged(t, s, ErrInvalidID, `"x"`, func() error { _, err := s.AckDel("b", KeepRef, "2", "x"); return err })
	gtUnchanged(t, s, ErrInvalidArgument, "DeletePolicy 3", func() error { _, err := s.AckDel("b", 3, "2"); return err })
}

// bigStream returns a stream of entries 1-0 … n-0, in blocks of 100, and
// a group g created at last (0 for none) with pending entries pending.
func bigStream(t *testing.T, n int, last int, pending ...int) *Stream {
	t.Helper()
	s := gtStream(t, newTestClock(1_700_000_000_000), n)
	require.NoError(t, s.CreateGroup("g", strconv.Itoa(last), GroupOptions{}))
	for _, p := range pending {
		_, err := s.Claim("g", "c", 0, []string{strconv.Itoa(p)}, ClaimArgs{Force: true})
		require.NoError(t, err)
	}
	return s
}

func trimN(t *testing.T, s *Stream, args TrimArgs) int64 {
	t.Helper()
	n, err := s.Trim(args)
	require.NoError(t, err)
	return n
}

// Acked skips the referenced entries and deletes those after them.
func TestTrimAckedLeavesHoles(t *testing.T) {
	s := dpStream(t, 6)
	_, err := s.Ack("b", "2")
	require.NoError(t, err)
	_, err = s.ReadGroup(context.Background(), "b", "c", ">", ReadGroupArgs{Count: 3}) // b: 3..5 pending
	require.NoError(t, err)
	_, err = s.Ack("b", "3", "5")
	require.NoError(t, err)
	_, err = s.ReadGroup(context.Background(), "a", "c", ">", ReadGroupArgs{Count: 1}) // a: 4, 5 pending
	require.NoError(t, err)
	_, err = s.Ack("a", "5")
	require.NoError(t, err)
	// Referenced now: 4 (pending in a and b) and 6 (read by nobody); 5,
	// past the kept 4, goes.
	assert.Equal(t, int64(4), trimN(t, s, TrimArgs{Strategy: TrimMaxLen, MaxLen: 0, Policy: Acked}))
	assert.Equal(t, []ID{gtID(4), gtID(6)}, dpLive(t, s))
	assert.Equal(t, gtID(4), must(s.Info()).RecordedFirstEntryID)
}

// A block that the trim passes whole is looked at entry by entry, and the
// trim goes on; in the block where it ends, it stops at the block's end
// even when references kept it from reaching its bound.
func TestTrimAckedStopsInItsLastBlock(t *testing.T) {
	s := bigStream(t, 250, 250, 50)
	require.Equal(t, 3, must(s.Info()).RadixTreeKeys, "blocks of 100 entries")
	assert.Equal(t, int64(130), trimN(t, s, TrimArgs{Strategy: TrimMaxLen, MaxLen: 120, Policy: Acked}))
	live := dpLive(t, s)
	assert.Len(t, live, 120)
	assert.Equal(t, gtID(50), live[0])
	assert.Equal(t, gtID(132), live[1])

	s = bigStream(t, 250, 250)
	for i := 101; i <= 200; i++ {
		_, err := s.Claim("g", "c", 0, []string{strconv.Itoa(i)}, ClaimArgs{Force: true})
		require.NoError(t, err)
	}
	assert.Equal(t, int64(100), trimN(t, s, TrimArgs{Strategy: TrimMaxLen, MaxLen: 120, Policy: Acked}))
	assert.Equal(t, int64(150), s.Len(), "201..250 are not referenced, but lie past the block where the trim ended")
}

// Blocks emptied behind a block that keeps an entry are freed.
func TestTrimAckedFreesBlocksBehindAKeptOne(t *testing.T) {
	s := bigStream(t, 250, 250, 50)
	assert.Equal(t, int64(249), trimN(t, s, TrimArgs{Strategy: TrimMaxLen, MaxLen: 0, Policy: Acked}))
	assert.Equal(t, []ID{gtID(50)}, dpLive(t, s))
	info := must(s.Info())
	assert.Equal(t, 1, info.RadixTreeKeys)
	assert.Equal(t, gtID(50), info.RecordedFirstEntryID)
	_, err := s.Add(AddArgs{ID: "300"}, Field{"n", "300"})
	require.NoError(t, err)
	assert.Equal(t, []ID{gtID(50), gtID(300)}, dpLive(t, s))
	es, err := s.Range("51", "+", 0)
	require.NoError(t, err)
	assert.Equal(t, []ID{gtID(300)}, gtIDs(es))
}

func TestTrimMinIDAcked(t *testing.T) {
	s := bigStream(t, 250, 150, 20, 120)
	assert.Equal(t, int64(148), trimN(t, s, TrimArgs{Strategy: TrimMinID, MinID: "201", Policy: Acked}))
	live := dpLive(t, s)
	assert.Equal(t, []ID{gtID(20), gtID(120), gtID(151)}, live[:3], "151..200 are beyond the group's last ID")
	assert.Len(t, live, 2+50+50)
}

// With DelRef and Acked, "~" does not stop the trim at a block boundary:
// entries are deleted one by one as in an exact trim. KeepRef alone trims
// whole blocks only.
func TestTrimApproxWithPolicies(t *testing.T) {
	s := bigStream(t, 250, 0)
	assert.Equal(t, int64(100), trimN(t, s, TrimArgs{Strategy: TrimMaxLen, MaxLen: 120, Approx: true}))
	s = bigStream(t, 250, 250, 10, 160)
	assert.Equal(t, int64(130), trimN(t, s, TrimArgs{Strategy: TrimMaxLen, MaxLen: 120, Approx: true, Policy: DelRef}))
	assert.Equal(t, int64(120), s.Len())
	assert.Equal(t, []ID{gtID(160)}, dpPending(t, s, "g"), "the reference to 10 went with it")
	s = bigStream(t, 250, 150)
	assert.Equal(t, int64(150), trimN(t, s, TrimArgs{Strategy: TrimMaxLen, MaxLen: 0, Approx: true, Policy: Acked}))
	assert.Equal(t, gtID(151), dpLive(t, s)[0])
}

// Limit counts whole blocks before each, whatever the policy.
func TestTrimLimitWithPolicies(t *testing.T) {
	s := bigStream(t, 250, 250)
	assert.Equal(t, int64(100), trimN(t, s, TrimArgs{Strategy: TrimMaxLen, MaxLen: 0, Approx: true, Limit: 150, Policy: DelRef}))
	s = bigStream(t, 250, 250)
	assert.Equal(t, int64(0), trimN(t, s, TrimArgs{Strategy: TrimMaxLen, MaxLen: 0, Approx: true, Limit: 99, Policy: Acked}))
}

func TestTrimDelRefAndKeepRef(t *testing.T) {
	s := dpStream(t, 6)
	assert.Equal(t, int64(3), trimN(t, s, TrimArgs{Strategy: TrimMinID, MinID: "4", Policy: DelRef}))
	assert.Empty(t, dpPending(t, s, "b"))
	assert.Equal(t, []ID{gtID(4)}, dpPending(t, s, "a"), "4 was not trimmed")
	s = dpStream(t, 6)
	assert.Equal(t, int64(3), trimN(t, s, TrimArgs{Strategy: TrimMinID, MinID: "4"}))
	assert.Equal(t, []ID{gtID(2)}, dpPending(t, s, "b"), "KeepRef keeps references")

	s = dpStream(t, 6)
	_, err := s.Add(AddArgs{Trim: TrimArgs{Strategy: TrimMaxLen, MaxLen: 1, Policy: DelRef}}, Field{"n", "7"})
	require.NoError(t, err)
	assert.Equal(t, int64(1), s.Len())
	assert.Empty(t, dpPending(t, s, "a"))
	assert.Empty(t, dpPending(t, s, "b"))
}

func TestTrimPolicyBadInputChangesNothing(t *testing.T) {
	s := dpStream(t, 6)
	gtUnchanged(t, s, ErrInvalidArgument, "DeletePolicy 7", func() error {
		_, err := s.Trim(TrimArgs{Strategy: TrimMaxLen, Policy: 7})
		return err
	})
	gtUnchanged(t, s, ErrTrimConflict, "strategy", func() error {
		_, err := s.Trim(TrimArgs{Policy: DelRef})
		return err
	})
	gtUnchanged(t, s, ErrInvalidArgument, "DeletePolicy 4", func() error {
		_, err := s.Add(AddArgs{Trim: TrimArgs{Strategy: TrimMaxLen, Policy: 4}}, Field{"n", "7"})
		return err
	})
}
