package xstreamtest

import (
	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream"
)

// progress is the lag part of a GroupInfo: entries-read and lag, "?" when
// unknown.
func progress(g xstream.GroupInfo) [2]string {
	out := [2]string{"?", "?"}
	if g.EntriesReadKnown {
		out[0] = itoa(int(g.EntriesRead))
	}
	if g.LagKnown {
		out[1] = itoa(int(g.Lag))
	}
	return out
}

func (t *T) progress(stream, group string) [2]string {
	t.Helper()
	return progress(t.groupInfo(stream, group))
}

var lagCases = []tcase{
	{"Reads", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1", "2-1", "3-1", "4-1", "5-1")
		t.group(s, "g", "0")
		t.group(s, "d", "$")
		require.Equal(t, [2]string{"?", "5"}, t.progress(s, "g"), "a new group: entries-read unknown, lag estimated")
		require.Equal(t, [2]string{"?", "0"}, t.progress(s, "d"))
		t.readNew(s, "g", "c", 2)
		require.Equal(t, [2]string{"2", "3"}, t.progress(s, "g"))
		t.readNew(s, "g", "c", 0)
		require.Equal(t, [2]string{"5", "0"}, t.progress(s, "g"))
		t.fill(s, "6-1", "7-1")
		require.Equal(t, [2]string{"5", "2"}, t.progress(s, "g"))
		// d's counter is unknown and its last delivered ID is neither
		// the first entry nor the last: its lag cannot be estimated.
		require.Equal(t, [2]string{"?", "?"}, t.progress(s, "d"))
		t.readNew(s, "d", "c", 1)
		require.Equal(t, [2]string{"?", "?"}, t.progress(s, "d"))
		t.readNew(s, "d", "c", 1)
		require.Equal(t, [2]string{"7", "0"}, t.progress(s, "d"), "reading the last entry makes the counter known")
		_, err := t.e.Ack(t.ctx, s, "g", "1-1", "2-1")
		require.NoError(t, err)
		require.Equal(t, [2]string{"5", "2"}, t.progress(s, "g"), "acknowledging is not reading")
	}},
	{"NoAck", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1", "2-1", "3-1")
		t.group(s, "g", "0")
		t.readGroup("g", "c", xstream.ReadGroupArgs{NoAck: true, Count: 2}, s, ">")
		require.Equal(t, [2]string{"2", "1"}, t.progress(s, "g"))
	}},
	{"Deleted", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1", "2-1", "3-1", "4-1", "5-1")
		t.group(s, "g", "0")
		t.readNew(s, "g", "c", 2)
		_, err := t.e.Delete(t.ctx, s, "4-1")
		require.NoError(t, err)
		require.Equal(t, [2]string{"2", "?"}, t.progress(s, "g"), "a deletion after the last delivered ID makes the lag unknown")
		t.readNew(s, "g", "c", 0)
		require.Equal(t, [2]string{"5", "0"}, t.progress(s, "g"), "reading past it makes it known again")
		t.add(s, "6-1")
		require.Equal(t, [2]string{"5", "1"}, t.progress(s, "g"))

		// A deletion before the last delivered ID leaves the lag known.
		b := t.key("b")
		t.fill(b, "1-1", "2-1", "3-1", "4-1")
		t.group(b, "g", "0")
		t.readNew(b, "g", "c", 3)
		_, err = t.e.Delete(t.ctx, b, "2-1")
		require.NoError(t, err)
		require.Equal(t, [2]string{"3", "1"}, t.progress(b, "g"))
	}},
	{"Trimmed", func(t *T) {
		// A group made after a trim: its reads are estimated from the
		// entries added and the length.
		s := t.key("s")
		t.fill(s, "1-1", "2-1", "3-1", "4-1", "5-1")
		_, err := t.e.Trim(t.ctx, s, xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 3})
		require.NoError(t, err)
		t.group(s, "g", "0")
		require.Equal(t, [2]string{"?", "3"}, t.progress(s, "g"))
		t.readNew(s, "g", "c", 1)
		require.Equal(t, [2]string{"3", "2"}, t.progress(s, "g"))
	}},
	{"EntriesRead", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1", "2-1", "3-1", "4-1")
		require.NoError(t, t.e.CreateGroup(t.ctx, s, "g", "2-1", xstream.GroupOptions{EntriesRead: ptr(int64(2))}))
		require.Equal(t, [2]string{"2", "2"}, t.progress(s, "g"))
		t.readNew(s, "g", "c", 1)
		require.Equal(t, [2]string{"3", "1"}, t.progress(s, "g"))
		require.NoError(t, t.e.SetGroupID(t.ctx, s, "g", "1-1", xstream.GroupOptions{EntriesRead: ptr(int64(1))}))
		require.Equal(t, [2]string{"1", "3"}, t.progress(s, "g"))
		require.NoError(t, t.e.SetGroupID(t.ctx, s, "g", "$", xstream.GroupOptions{}))
		require.Equal(t, [2]string{"?", "0"}, t.progress(s, "g"), "SetGroupID without EntriesRead makes it unknown")
	}},
	{"Empty", func(t *T) {
		s := t.key("s")
		require.NoError(t, t.e.CreateGroup(t.ctx, s, "g", "0", xstream.GroupOptions{MkStream: true}))
		require.Equal(t, [2]string{"?", "0"}, t.progress(s, "g"), "the lag of an empty stream is 0")
		t.add(s, "1-1")
		require.Equal(t, [2]string{"?", "1"}, t.progress(s, "g"))
	}},
}
