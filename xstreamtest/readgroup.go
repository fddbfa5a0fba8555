package xstreamtest

import (
	"context"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream"
)

// readGroup calls ReadGroup, which must succeed, and returns its result
// as IDs.
func (t *T) readGroup(group, consumer string, args xstream.ReadGroupArgs, streamsAndIDs ...string) []streamIDs {
	t.Helper()
	res, err := t.e.ReadGroup(t.ctx, group, consumer, args, streamsAndIDs...)
	require.NoError(t, err, "ReadGroup %s %s %v", group, consumer, streamsAndIDs)
	return readIDs(res)
}

// readGroupOver tests ReadGroup over the streams a and b.
func readGroupOver(t *T, a, b string) {
	t.fill(a, "1-1", "2-1", "3-1")
	t.fill(b, "1-5")
	t.group(a, "g", "0")
	t.group(b, "g", "0")
	require.Equal(t, []streamIDs{{a, []string{"1-1", "2-1"}}, {b, []string{"1-5"}}},
		t.readGroup("g", "c", xstream.ReadGroupArgs{Count: 2}, a, ">", b, ">"))
	require.Equal(t, []streamIDs{{a, []string{"3-1"}}},
		t.readGroup("g", "c", xstream.ReadGroupArgs{}, b, ">", a, ">"), "a stream with nothing new is left out")
	require.Empty(t, t.readGroup("g", "c", xstream.ReadGroupArgs{}, a, ">", b, ">"))
	// History: a stream read by history is there even when its history
	// is empty.
	hist := t.readGroup("g", "c", xstream.ReadGroupArgs{}, b, "0", a, "1-1")
	require.Equal(t, []streamIDs{{b, []string{"1-5"}}, {a, []string{"2-1", "3-1"}}}, hist)
	hist = t.readGroup("g", "other", xstream.ReadGroupArgs{}, a, "0", b, "0")
	require.Len(t, hist, 2)
	require.Equal(t, a, hist[0].Stream)
	require.Empty(t, hist[0].IDs)
	require.Equal(t, b, hist[1].Stream)
	require.Empty(t, hist[1].IDs)
	require.Equal(t, []string{"1-1:c:1", "2-1:c:2", "3-1:c:2"}, t.pendingOwners(a, "g"))
	require.Equal(t, []string{"1-5:c:2"}, t.pendingOwners(b, "g"))
}

var readGroupCases = []tcase{
	{"New", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1", "2-1", "3-1")
		t.group(s, "g", "0")
		res, err := t.e.ReadGroup(t.ctx, "g", "alice", xstream.ReadGroupArgs{Count: 2}, s, ">")
		require.NoError(t, err)
		require.Equal(t, []xstream.StreamEntries{{Stream: s, Entries: entries("1-1", "2-1")}}, res)
		require.Equal(t, []string{"3-1"}, t.readNew(s, "g", "bob", 0), "each entry goes to one consumer")
		require.Empty(t, t.readNew(s, "g", "alice", 0))
		require.Equal(t, []string{"1-1:alice:1", "2-1:alice:1", "3-1:bob:1"}, t.pendingOwners(s, "g"))
		g := t.groupInfo(s, "g")
		require.Equal(t, id("3-1"), g.LastDeliveredID)
		require.Equal(t, int64(3), g.Pending)
		require.Equal(t, 2, g.Consumers)
		t.add(s, "4-1")
		require.Equal(t, []string{"4-1"}, t.readNew(s, "g", "alice", 0))
	}},
	{"History", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1", "2-1", "3-1", "4-1")
		t.group(s, "g", "0")
		require.Len(t, t.readNew(s, "g", "alice", 3), 3)
		require.Len(t, t.readNew(s, "g", "bob", 0), 1)
		res, err := t.e.ReadGroup(t.ctx, "g", "alice", xstream.ReadGroupArgs{}, s, "0")
		require.NoError(t, err)
		require.Equal(t, []xstream.StreamEntries{{Stream: s, Entries: entries("1-1", "2-1", "3-1")}}, res, "a consumer's own pending entries")
		require.Equal(t, []streamIDs{{s, []string{"2-1", "3-1"}}}, t.readGroup("g", "alice", xstream.ReadGroupArgs{}, s, "1-1"), "after the ID given")
		require.Equal(t, []streamIDs{{s, []string{"2-1"}}}, t.readGroup("g", "alice", xstream.ReadGroupArgs{Count: 1}, s, "1-5"))
		require.Equal(t, []string{"1-1:alice:2", "2-1:alice:4", "3-1:alice:3", "4-1:bob:1"}, t.pendingOwners(s, "g"), "a history read counts as a delivery")
		_, err = t.e.Ack(t.ctx, s, "g", "2-1")
		require.NoError(t, err)
		require.Equal(t, []streamIDs{{s, []string{"1-1", "3-1"}}}, t.readGroup("g", "alice", xstream.ReadGroupArgs{}, s, "0-0"))
		hist := t.readGroup("g", "alice", xstream.ReadGroupArgs{}, s, "3-1")
		require.Len(t, hist, 1, "an empty history is still a stream of the result")
		require.Equal(t, s, hist[0].Stream)
		require.Empty(t, hist[0].IDs)
		require.Equal(t, id("4-1"), t.groupInfo(s, "g").LastDeliveredID, "history reads leave the last delivered ID")
	}},
	{"HistoryDeleted", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1", "2-1", "3-1")
		t.group(s, "g", "0")
		require.Len(t, t.readNew(s, "g", "c", 0), 3)
		_, err := t.e.Delete(t.ctx, s, "2-1")
		require.NoError(t, err)
		res, err := t.e.ReadGroup(t.ctx, "g", "c", xstream.ReadGroupArgs{}, s, "0")
		require.NoError(t, err)
		require.Len(t, res, 1)
		es := res[0].Entries
		require.Equal(t, []string{"1-1", "2-1", "3-1"}, idsOf(es), "a deleted entry stays pending")
		require.Equal(t, entry("1-1"), es[0])
		require.Empty(t, es[1].Fields, "a deleted entry comes with no fields")
		require.Equal(t, entry("3-1"), es[2])
	}},
	{"NoAck", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1", "2-1")
		t.group(s, "g", "0")
		require.Equal(t, []streamIDs{{s, []string{"1-1", "2-1"}}}, t.readGroup("g", "c", xstream.ReadGroupArgs{NoAck: true}, s, ">"))
		g := t.groupInfo(s, "g")
		require.Zero(t, g.Pending, "NoAck: nothing pending")
		require.Equal(t, id("2-1"), g.LastDeliveredID)
		require.Equal(t, int64(2), g.EntriesRead)
		require.Zero(t, g.Lag)
		sum, err := t.e.Pending(t.ctx, s, "g")
		require.NoError(t, err)
		require.Zero(t, sum.Count)
		hist := t.readGroup("g", "c", xstream.ReadGroupArgs{}, s, "0")
		require.Len(t, hist, 1)
		require.Empty(t, hist[0].IDs)
	}},
	{"Streams", func(t *T) {
		readGroupOver(t, t.key("a"), t.key("b"))
	}},
	{"StreamsInSlots", func(t *T) {
		readGroupOver(t, t.slotKey(1, "a"), t.slotKey(2, "b"))
	}},
	{"BlockTimeout", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1")
		t.group(s, "g", "$")
		start := time.Now()
		res, err := t.e.ReadGroup(t.ctx, "g", "c", xstream.ReadGroupArgs{Block: shortBlock}, s, ">")
		elapsed := time.Since(start)
		require.NoError(t, err, "a timeout is not an error")
		require.Empty(t, res)
		require.GreaterOrEqual(t, elapsed, shortBlock-5*time.Millisecond, "ReadGroup returned before its Block passed")
		require.Less(t, elapsed, waitLimit)

		// A history read never waits.
		start = time.Now()
		hist := t.readGroup("g", "c", xstream.ReadGroupArgs{Block: waitLimit}, s, "0")
		require.Less(t, time.Since(start), waitLimit)
		require.Len(t, hist, 1)
		require.Empty(t, hist[0].IDs)
	}},
	{"BlockWokenByAdd", func(t *T) {
		readGroupWoken(t, t.key("a"), t.key("b"), xstream.ReadGroupArgs{Block: waitLimit})
		readGroupWoken(t, t.key("c"), t.key("d"), xstream.ReadGroupArgs{Block: xstream.BlockForever, Count: 1})
	}},
	{"BlockWokenInSlots", func(t *T) {
		readGroupWoken(t, t.slotKey(1, "a"), t.slotKey(2, "b"), xstream.ReadGroupArgs{Block: xstream.BlockForever})
	}},
	{"BlockNoAck", func(t *T) {
		s := t.key("s")
		require.NoError(t, t.e.CreateGroup(t.ctx, s, "g", "$", xstream.GroupOptions{MkStream: true}))
		ch := async(func() ([]xstream.StreamEntries, error) {
			return t.e.ReadGroup(t.ctx, "g", "c", xstream.ReadGroupArgs{Block: xstream.BlockForever, NoAck: true}, s, ">")
		})
		t.add(s, "1-1")
		res, err := await(t, ch, "a blocked ReadGroup with NoAck")
		require.NoError(t, err)
		require.Equal(t, []xstream.StreamEntries{{Stream: s, Entries: entries("1-1")}}, res)
		g := t.groupInfo(s, "g")
		require.Zero(t, g.Pending, "NoAck holds for a blocked read too")
		require.Equal(t, id("1-1"), g.LastDeliveredID)
	}},
	{"Cancel", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1")
		t.group(s, "g", "$")
		ctx, cancel := context.WithTimeout(t.ctx, shortBlock)
		defer cancel()
		start := time.Now()
		res, err := t.e.ReadGroup(ctx, "g", "c", xstream.ReadGroupArgs{Block: xstream.BlockForever}, s, ">")
		isErr(t, err, context.DeadlineExceeded)
		require.Empty(t, res)
		require.Less(t, time.Since(start), waitLimit, "the deadline ended the read promptly")

		ctx, cancel = context.WithCancel(t.ctx)
		ch := async(func() ([]xstream.StreamEntries, error) {
			return t.e.ReadGroup(ctx, "g", "c", xstream.ReadGroupArgs{Block: xstream.BlockForever}, s, ">")
		})
		timer := time.AfterFunc(shortBlock, cancel)
		defer timer.Stop()
		_, err = await(t, ch, "a ReadGroup whose context was canceled")
		isErr(t, err, context.Canceled)

		// Nothing was delivered meanwhile, and the engine goes on.
		require.Zero(t, t.groupInfo(s, "g").Pending)
		t.add(s, "2-1")
		require.Equal(t, []streamIDs{{s, []string{"2-1"}}}, t.readGroup("g", "c", xstream.ReadGroupArgs{Block: waitLimit}, s, ">"))
	}},
	{"Errors", func(t *T) {
		s, other := t.key("s"), t.key("other")
		t.fill(s, "1-1")
		t.fill(other, "1-1")
		t.group(s, "g", "0")
		missing := t.key("missing")
		for _, args := range []xstream.ReadGroupArgs{{}, {Block: shortBlock}} {
			_, err := t.e.ReadGroup(t.ctx, "g", "c", args, missing, ">")
			isErr(t, err, xstream.ErrNoGroup, "a missing stream")
			_, err = t.e.ReadGroup(t.ctx, "nope", "c", args, s, ">")
			isErr(t, err, xstream.ErrNoGroup, "a missing group")
			_, err = t.e.ReadGroup(t.ctx, "g", "c", args, s, ">", other, ">")
			isErr(t, err, xstream.ErrNoGroup, "one stream without the group")
			_, err = t.e.ReadGroup(t.ctx, "g", "c", args, s, "0", missing, "0")
			isErr(t, err, xstream.ErrNoGroup, "one missing stream")
		}
		require.Zero(t, t.groupInfo(s, "g").Pending, "a failed ReadGroup delivers nothing")
		for _, bad := range []string{"$", "+", "x", "-", "*", "(1-1", ""} {
			_, err := t.e.ReadGroup(t.ctx, "g", "c", xstream.ReadGroupArgs{}, s, bad)
			isErr(t, err, xstream.ErrInvalidID, "ReadGroup ID %q", bad)
		}
		_, err := t.e.ReadGroup(t.ctx, "g", "c", xstream.ReadGroupArgs{})
		isErr(t, err, xstream.ErrInvalidArgument, "no streams")
		_, err = t.e.ReadGroup(t.ctx, "g", "c", xstream.ReadGroupArgs{}, s)
		isErr(t, err, xstream.ErrInvalidArgument, "a stream without an ID")
		_, err = t.e.ReadGroup(t.ctx, "g", "c", xstream.ReadGroupArgs{Count: -1}, s, ">")
		isErr(t, err, xstream.ErrInvalidArgument, "a negative count")
		require.Zero(t, t.groupInfo(s, "g").Pending)
		_, err = t.e.Info(t.ctx, missing)
		isErr(t, err, xstream.ErrNoStream, "ReadGroup creates no stream")
	}},
}

// readGroupWoken checks that an Add to b wakes a ReadGroup ">" of a and b.
func readGroupWoken(t *T, a, b string, args xstream.ReadGroupArgs) {
	t.Helper()
	t.fill(a, "1-1")
	t.group(a, "g", "$")
	require.NoError(t, t.e.CreateGroup(t.ctx, b, "g", "$", xstream.GroupOptions{MkStream: true}))
	ch := async(func() ([]xstream.StreamEntries, error) {
		return t.e.ReadGroup(t.ctx, "g", "c", args, a, ">", b, ">")
	})
	// Whether the reader is blocked yet or not, it gets the entry: the
	// group has not delivered it.
	t.add(b, "5-1")
	res, err := await(t, ch, "a blocked ReadGroup")
	require.NoError(t, err)
	require.Equal(t, []xstream.StreamEntries{{Stream: b, Entries: entries("5-1")}}, res)
	require.Equal(t, []string{"5-1:c:1"}, t.pendingOwners(b, "g"))
	require.Zero(t, t.groupInfo(a, "g").Pending)
}
