package xstreamtest

import (
	"context"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream"
)

// streamIDs is a Read result as stream name → IDs, in the order given.
type streamIDs struct {
	Stream string
	IDs    []string
}

func readIDs(res []xstream.StreamEntries) []streamIDs {
	var out []streamIDs
	for _, r := range res {
		out = append(out, streamIDs{r.Stream, idsOf(r.Entries)})
	}
	return out
}

// read calls Read, which must succeed, and returns its result as IDs.
func (t *T) read(args xstream.ReadArgs, streamsAndIDs ...string) []streamIDs {
	t.Helper()
	res, err := t.e.Read(t.ctx, args, streamsAndIDs...)
	require.NoError(t, err, "Read %v", streamsAndIDs)
	return readIDs(res)
}

// readOver tests a Read over the streams a, b and a missing one.
func readOver(t *T, a, b, missing string) {
	t.fill(a, "1-1", "2-1", "3-1")
	t.fill(b, "1-5", "4-1")
	require.Equal(t, []streamIDs{{a, []string{"1-1", "2-1", "3-1"}}, {b, []string{"1-5", "4-1"}}},
		t.read(xstream.ReadArgs{}, a, "0", b, "0", missing, "0"))
	require.Equal(t, []streamIDs{{b, []string{"1-5", "4-1"}}, {a, []string{"1-1", "2-1", "3-1"}}},
		t.read(xstream.ReadArgs{}, missing, "0-0", b, "0-0", a, "0-0"), "streams come in the order given")
	require.Equal(t, []streamIDs{{a, []string{"3-1"}}, {b, []string{"4-1"}}},
		t.read(xstream.ReadArgs{}, a, "2-1", b, "1-5"), "entries after the ID given")
	require.Equal(t, []streamIDs{{a, []string{"1-1", "2-1"}}, {b, []string{"1-5", "4-1"}}},
		t.read(xstream.ReadArgs{Count: 2}, a, "0", b, "0"), "count is per stream")
	require.Equal(t, []streamIDs{{b, []string{"4-1"}}},
		t.read(xstream.ReadArgs{}, a, "3-1", b, "2"), "a stream without new entries is left out")
	require.Empty(t, t.read(xstream.ReadArgs{}, a, "3-1", b, "4-1", missing, "0"))
	require.Empty(t, t.read(xstream.ReadArgs{}, a, "$", b, "$", missing, "$"), `"$" without a wait reads nothing`)
}

var readCases = []tcase{
	{"Streams", func(t *T) {
		readOver(t, t.key("a"), t.key("b"), t.key("missing"))
	}},
	{"StreamsInSlots", func(t *T) {
		readOver(t, t.slotKey(1, "a"), t.slotKey(2, "b"), t.slotKey(3, "missing"))
	}},
	{"Entries", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1", "2-1")
		_, err := t.e.Delete(t.ctx, s, "1-1")
		require.NoError(t, err)
		res, err := t.e.Read(t.ctx, xstream.ReadArgs{}, s, "0")
		require.NoError(t, err)
		require.Equal(t, []xstream.StreamEntries{{Stream: s, Entries: entries("2-1")}}, res, "deleted entries are not read")
		res, err = t.e.Read(t.ctx, xstream.ReadArgs{}, s, "18446744073709551615-18446744073709551615")
		require.NoError(t, err)
		require.Empty(t, res)
	}},
	{"Last", func(t *T) {
		if !t.caps.ReadLast {
			t.Skip("Caps.ReadLast is not set")
		}
		a, b, empty := t.key("a"), t.key("b"), t.key("empty")
		t.fill(a, "1-1", "2-1", "3-1")
		t.fill(b, "5-5")
		require.NoError(t, t.e.CreateGroup(t.ctx, empty, "g", "$", xstream.GroupOptions{MkStream: true}))
		require.Equal(t, []streamIDs{{a, []string{"3-1"}}, {b, []string{"5-5"}}},
			t.read(xstream.ReadArgs{Count: 10}, a, "+", empty, "+", t.key("missing"), "+", b, "+"), `"+" is the last entry alone, whatever the count`)
		require.Equal(t, []streamIDs{{a, []string{"3-1"}}, {b, []string{"5-5"}}},
			t.read(xstream.ReadArgs{Block: shortBlock}, a, "+", b, "+"))
	}},
	{"BlockTimeout", func(t *T) {
		a, b := t.key("a"), t.key("b")
		t.fill(a, "1-1")
		for _, ids := range [][]string{{a, "1-1", b, "0"}, {a, "$", b, "$"}} {
			start := time.Now()
			res, err := t.e.Read(t.ctx, xstream.ReadArgs{Block: shortBlock}, ids...)
			elapsed := time.Since(start)
			require.NoError(t, err, "a timeout is not an error")
			require.Empty(t, res)
			require.GreaterOrEqual(t, elapsed, shortBlock-5*time.Millisecond, "Read returned before its Block passed")
			require.Less(t, elapsed, waitLimit)
		}
		_, err := t.e.Info(t.ctx, b)
		isErr(t, err, xstream.ErrNoStream, "a blocked Read creates nothing")
	}},
	{"BlockData", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1", "2-1")
		start := time.Now()
		require.Equal(t, []streamIDs{{s, []string{"2-1"}}}, t.read(xstream.ReadArgs{Block: waitLimit}, s, "1-1"), "data there: no wait")
		require.Less(t, time.Since(start), waitLimit)
	}},
	{"BlockWokenByAdd", func(t *T) {
		blockWoken(t, t.key("a"), t.key("b"), xstream.ReadArgs{Block: waitLimit})
		blockWoken(t, t.key("c"), t.key("d"), xstream.ReadArgs{Block: xstream.BlockForever})
	}},
	{"BlockWokenInSlots", func(t *T) {
		blockWoken(t, t.slotKey(1, "a"), t.slotKey(2, "b"), xstream.ReadArgs{Block: xstream.BlockForever})
	}},
	{"BlockDollar", func(t *T) {
		a, b := t.key("a"), t.key("b")
		t.fill(a, "1-1")
		t.fill(b, "1-1")
		done := make(chan struct{})
		// "$" is the last ID when the call starts: feed adds entries
		// until the reader has one, and it gets only new ones.
		ch := async(func() ([]xstream.StreamEntries, error) {
			defer close(done)
			return t.e.Read(t.ctx, xstream.ReadArgs{Block: xstream.BlockForever, Count: 1}, a, "$", b, "$")
		})
		fed := t.feed(b, 10, done)
		res, err := await(t, ch, "a blocked Read of $")
		added := <-fed
		require.NoError(t, err)
		require.Len(t, res, 1)
		require.Equal(t, b, res[0].Stream)
		require.Len(t, res[0].Entries, 1)
		require.Contains(t, added, res[0].Entries[0].ID.String(), "only an entry added after the call")
		require.Equal(t, entry(res[0].Entries[0].ID.String()), res[0].Entries[0])
	}},
	{"BlockMissingStream", func(t *T) {
		s := t.key("s")
		ch := async(func() ([]xstream.StreamEntries, error) {
			return t.e.Read(t.ctx, xstream.ReadArgs{Block: xstream.BlockForever}, s, "0")
		})
		t.add(s, "1-1")
		res, err := await(t, ch, "a blocked Read of a missing stream")
		require.NoError(t, err)
		require.Equal(t, []xstream.StreamEntries{{Stream: s, Entries: entries("1-1")}}, res, "the Add that creates the stream wakes the reader")
	}},
	{"Cancel", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1")
		// The context's deadline ends a read that would wait forever.
		ctx, cancel := context.WithTimeout(t.ctx, shortBlock)
		defer cancel()
		start := time.Now()
		res, err := t.e.Read(ctx, xstream.ReadArgs{Block: xstream.BlockForever}, s, "$", t.key("missing"), "0")
		isErr(t, err, context.DeadlineExceeded)
		require.Empty(t, res)
		require.Less(t, time.Since(start), waitLimit, "the deadline ended the read promptly")

		// So does a cancel from another goroutine.
		ctx, cancel = context.WithCancel(t.ctx)
		ch := async(func() ([]xstream.StreamEntries, error) {
			return t.e.Read(ctx, xstream.ReadArgs{Block: xstream.BlockForever}, s, "1-1")
		})
		timer := time.AfterFunc(shortBlock, cancel)
		defer timer.Stop()
		res, err = await(t, ch, "a Read whose context was canceled")
		isErr(t, err, context.Canceled)
		require.Empty(t, res)

		// A context done before the call.
		ctx, cancel = context.WithCancel(t.ctx)
		cancel()
		_, err = t.e.Read(ctx, xstream.ReadArgs{Block: xstream.BlockForever}, s, "1-1")
		isErr(t, err, context.Canceled)

		// The engine goes on working.
		t.add(s, "2-1")
		require.Equal(t, []streamIDs{{s, []string{"2-1"}}}, t.read(xstream.ReadArgs{Block: waitLimit}, s, "1-1"))
	}},
	{"Errors", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1")
		for _, bad := range []string{"x", ">", "*", "-", "(1-1", "1-*", ""} {
			_, err := t.e.Read(t.ctx, xstream.ReadArgs{}, s, bad)
			isErr(t, err, xstream.ErrInvalidID, "Read ID %q", bad)
			_, err = t.e.Read(t.ctx, xstream.ReadArgs{Block: shortBlock}, s, "0", t.key("other"), bad)
			isErr(t, err, xstream.ErrInvalidID, "Read ID %q", bad)
		}
		_, err := t.e.Read(t.ctx, xstream.ReadArgs{})
		isErr(t, err, xstream.ErrInvalidArgument, "no streams")
		_, err = t.e.Read(t.ctx, xstream.ReadArgs{}, s)
		isErr(t, err, xstream.ErrInvalidArgument, "a stream without an ID")
		_, err = t.e.Read(t.ctx, xstream.ReadArgs{}, s, "0", t.key("other"))
		isErr(t, err, xstream.ErrInvalidArgument, "an odd number of strings")
		_, err = t.e.Read(t.ctx, xstream.ReadArgs{Count: -1}, s, "0")
		isErr(t, err, xstream.ErrInvalidArgument, "a negative count")
	}},
}

// blockWoken checks that an Add to b wakes a Read of a and b.
func blockWoken(t *T, a, b string, args xstream.ReadArgs) {
	t.Helper()
	t.fill(a, "1-1")
	ch := async(func() ([]xstream.StreamEntries, error) {
		return t.e.Read(t.ctx, args, a, "1-1", b, "0")
	})
	// Whether the reader is blocked yet or not, it gets the entry: it
	// reads after 0 in b.
	t.add(b, "5-1")
	res, err := await(t, ch, "a blocked Read")
	require.NoError(t, err)
	require.Equal(t, []xstream.StreamEntries{{Stream: b, Entries: entries("5-1")}}, res)
}
