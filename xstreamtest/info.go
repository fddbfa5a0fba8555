package xstreamtest

import (
	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream"
)

// infoFields is the engine-independent part of a StreamInfo (everything
// but RadixTreeKeys, Entries and GroupDetails).
type infoFields struct {
	Length               int64
	LastGeneratedID      xstream.ID
	MaxDeletedEntryID    xstream.ID
	EntriesAdded         int64
	RecordedFirstEntryID xstream.ID
	Groups               int
	FirstEntry           *xstream.Entry
	LastEntry            *xstream.Entry
}

func fieldsOf(in xstream.StreamInfo) infoFields {
	return infoFields{
		Length: in.Length, LastGeneratedID: in.LastGeneratedID, MaxDeletedEntryID: in.MaxDeletedEntryID,
		EntriesAdded: in.EntriesAdded, RecordedFirstEntryID: in.RecordedFirstEntryID, Groups: in.Groups,
		FirstEntry: in.FirstEntry, LastEntry: in.LastEntry,
	}
}

func entryPtr(s string) *xstream.Entry { e := entry(s); return &e }

var infoCases = []tcase{
	{"Info", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1", "2-1", "3-1")
		require.Equal(t, infoFields{
			Length: 3, LastGeneratedID: id("3-1"), EntriesAdded: 3, RecordedFirstEntryID: id("1-1"),
			FirstEntry: entryPtr("1-1"), LastEntry: entryPtr("3-1"),
		}, fieldsOf(t.info(s)))
		t.group(s, "g", "0")
		t.group(s, "h", "$")
		_, err := t.e.Delete(t.ctx, s, "2-1")
		require.NoError(t, err)
		require.Equal(t, infoFields{
			Length: 2, LastGeneratedID: id("3-1"), MaxDeletedEntryID: id("2-1"), EntriesAdded: 3,
			RecordedFirstEntryID: id("1-1"), Groups: 2, FirstEntry: entryPtr("1-1"), LastEntry: entryPtr("3-1"),
		}, fieldsOf(t.info(s)))
	}},
	{"Empty", func(t *T) {
		s := t.key("s")
		require.NoError(t, t.e.CreateGroup(t.ctx, s, "g", "$", xstream.GroupOptions{MkStream: true}))
		require.Equal(t, infoFields{Groups: 1}, fieldsOf(t.info(s)), "a stream made by MkStream")
	}},
	{"MissingStream", func(t *T) {
		_, err := t.e.Info(t.ctx, t.key("missing"))
		isErr(t, err, xstream.ErrNoStream)
		_, err = t.e.InfoFull(t.ctx, t.key("missing"), 0)
		isErr(t, err, xstream.ErrNoStream)
	}},
	{"Full", func(t *T) {
		s := t.key("s")
		var all []string
		for i := 1; i <= 12; i++ {
			all = append(all, itoa(i)+"-1")
		}
		t.fill(s, all...)
		t.group(s, "g", "0")
		t.group(s, "a", "$")
		require.Len(t, t.readNew(s, "g", "bob", 2), 2)     // 1-1, 2-1
		require.Len(t, t.readNew(s, "g", "alice", 11), 10) // 3-1 ... 12-1
		res, err := t.e.ReadGroup(t.ctx, "g", "bob", xstream.ReadGroupArgs{}, s, "0")
		require.NoError(t, err)
		require.Len(t, res, 1)
		require.Len(t, res[0].Entries, 2) // 1-1 and 2-1 now delivered twice
		_, err = t.e.Ack(t.ctx, s, "g", "3-1")
		require.NoError(t, err)

		in, err := t.e.InfoFull(t.ctx, s, 0)
		require.NoError(t, err)
		// XINFO STREAM FULL has no first and last entry: they are not
		// asserted here, nor is Groups, which is len(GroupDetails) there.
		require.Equal(t, int64(12), in.Length)
		require.Equal(t, id("12-1"), in.LastGeneratedID)
		require.Equal(t, xstream.ID{}, in.MaxDeletedEntryID)
		require.Equal(t, int64(12), in.EntriesAdded)
		require.Equal(t, id("1-1"), in.RecordedFirstEntryID)
		require.Equal(t, entries(all...), in.Entries, "count 0: every entry")
		require.Len(t, in.GroupDetails, 2)

		a := in.GroupDetails[0]
		require.Equal(t, "a", a.Name, "groups in name order")
		require.Equal(t, id("12-1"), a.LastDeliveredID)
		require.Zero(t, a.Pending)
		require.Empty(t, a.PEL)
		require.Empty(t, a.Consumers)
		require.True(t, a.LagKnown)
		require.Zero(t, a.Lag)

		g := in.GroupDetails[1]
		require.Equal(t, "g", g.Name)
		require.Equal(t, id("12-1"), g.LastDeliveredID)
		require.Equal(t, int64(11), g.Pending)
		require.Equal(t, 2, g.GroupInfo.Consumers)
		require.True(t, g.EntriesReadKnown)
		require.Equal(t, int64(12), g.EntriesRead)
		require.True(t, g.LagKnown)
		require.Zero(t, g.Lag)
		want := []string{"1-1:bob:2", "2-1:bob:2"}
		for i := 4; i <= 12; i++ {
			want = append(want, itoa(i)+"-1:alice:1")
		}
		require.Equal(t, want, owners(g.PEL))
		require.Len(t, g.Consumers, 2)
		require.Equal(t, "alice", g.Consumers[0].Name, "consumers in name order")
		require.Equal(t, int64(9), g.Consumers[0].Pending)
		require.Equal(t, want[2:], owners(g.Consumers[0].PEL))
		require.Equal(t, "bob", g.Consumers[1].Name)
		require.Equal(t, int64(2), g.Consumers[1].Pending)
		require.Equal(t, want[:2], owners(g.Consumers[1].PEL))

		// A count caps the entries and every PEL listed.
		in, err = t.e.InfoFull(t.ctx, s, 3)
		require.NoError(t, err)
		require.Equal(t, int64(12), in.Length)
		require.Equal(t, entries("1-1", "2-1", "3-1"), in.Entries)
		g = in.GroupDetails[1]
		require.Equal(t, int64(11), g.Pending, "the count is of the PEL, not capped")
		require.Equal(t, want[:3], owners(g.PEL))
		require.Equal(t, want[2:5], owners(g.Consumers[0].PEL))
		require.Equal(t, want[:2], owners(g.Consumers[1].PEL))

		_, err = t.e.InfoFull(t.ctx, s, -1)
		isErr(t, err, xstream.ErrInvalidArgument, "a negative count")
	}},
}
