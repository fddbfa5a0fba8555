package xstreamtest

import (
	"errors"

	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream"
)

var removeCases = []tcase{
	{"Remove", func(t *T) {
		a, b, c := t.key("a"), t.key("b"), t.key("c")
		t.fill(a, "1-1", "2-1")
		t.fill(b, "1-1")
		t.group(b, "g", "0")
		n, err := t.e.Remove(t.ctx, a, b, c, a)
		require.NoError(t, err)
		require.Equal(t, int64(2), n, "the streams that existed, each once")
		for _, s := range []string{a, b} {
			require.Zero(t, t.length(s))
			require.Empty(t, t.all(s))
			_, err := t.e.Info(t.ctx, s)
			isErr(t, err, xstream.ErrNoStream)
		}
		_, err = t.e.Groups(t.ctx, b)
		isErr(t, err, xstream.ErrNoStream, "the groups went with the stream")
		_, err = t.e.ReadGroup(t.ctx, "g", "c", xstream.ReadGroupArgs{}, b, ">")
		isErr(t, err, xstream.ErrNoGroup)
		n, err = t.e.Remove(t.ctx, a)
		require.NoError(t, err)
		require.Zero(t, n)

		// A new stream of the same name starts afresh.
		require.Equal(t, id("1-1"), t.add(a, "1-1"))
		require.Equal(t, infoFields{
			Length: 1, LastGeneratedID: id("1-1"), EntriesAdded: 1, RecordedFirstEntryID: id("1-1"),
			FirstEntry: entryPtr("1-1"), LastEntry: entryPtr("1-1"),
		}, fieldsOf(t.info(a)))
	}},
	{"BlockedRead", func(t *T) {
		// A Read blocked on a stream that is removed waits on: the next
		// stream of that name wakes it.
		s := t.key("s")
		t.fill(s, "5-1")
		ch := async(func() ([]xstream.StreamEntries, error) {
			return t.e.Read(t.ctx, xstream.ReadArgs{Block: xstream.BlockForever}, s, "5-1")
		})
		n, err := t.e.Remove(t.ctx, s)
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		t.add(s, "6-1")
		res, err := await(t, ch, "a Read blocked on a removed stream")
		require.NoError(t, err)
		require.Equal(t, []xstream.StreamEntries{{Stream: s, Entries: entries("6-1")}}, res)
	}},
	{"BlockedReadGroup", func(t *T) {
		// A ReadGroup blocked on a stream that is removed ends with an
		// error: ErrNoStream (Redis: UNBLOCKED), or ErrNoGroup when the
		// stream was gone before the call.
		s := t.key("s")
		t.fill(s, "5-1")
		t.group(s, "g", "$")
		ch := async(func() ([]xstream.StreamEntries, error) {
			return t.e.ReadGroup(t.ctx, "g", "c", xstream.ReadGroupArgs{Block: xstream.BlockForever}, s, ">")
		})
		n, err := t.e.Remove(t.ctx, s)
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		res, err := await(t, ch, "a ReadGroup blocked on a removed stream")
		require.Error(t, err)
		require.True(t, errors.Is(err, xstream.ErrNoStream) || errors.Is(err, xstream.ErrNoGroup), "got %v", err)
		require.Empty(t, res)
	}},
}
