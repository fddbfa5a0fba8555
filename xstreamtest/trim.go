package xstreamtest

import (
	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream"
)

var deleteCases = []tcase{
	{"Delete", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1", "1-2", "2-0", "3-1")
		n, err := t.e.Delete(t.ctx, s, "1-2", "9-9", "1-2")
		require.NoError(t, err)
		require.Equal(t, int64(1), n, "a missing ID, or one given twice, counts once")
		n, err = t.e.Delete(t.ctx, s, "2")
		require.NoError(t, err)
		require.Equal(t, int64(1), n, "a bare ms is ms-0")
		require.Equal(t, []string{"1-1", "3-1"}, t.all(s))
		n, err = t.e.Delete(t.ctx, s, "1-2")
		require.NoError(t, err)
		require.Zero(t, n, "deleted already")
	}},
	{"Counters", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1", "1-2", "2-0", "3-1")
		_, err := t.e.Delete(t.ctx, s, "1-1")
		require.NoError(t, err)
		in := t.info(s)
		require.Equal(t, int64(3), in.Length)
		require.Equal(t, id("1-1"), in.MaxDeletedEntryID)
		require.Equal(t, id("1-2"), in.RecordedFirstEntryID, "the first entry moves on")
		require.Equal(t, id("3-1"), in.LastGeneratedID)
		require.Equal(t, int64(4), in.EntriesAdded)

		_, err = t.e.Delete(t.ctx, s, "3-1")
		require.NoError(t, err)
		in = t.info(s)
		require.Equal(t, id("3-1"), in.MaxDeletedEntryID)
		require.Equal(t, id("3-1"), in.LastGeneratedID, "deleting the last entry keeps the last ID")
		require.Equal(t, &xstream.Entry{ID: id("2-0"), Fields: f("2-0")}, in.LastEntry)
		_, err = t.e.Delete(t.ctx, s, "1-2")
		require.NoError(t, err)
		require.Equal(t, id("3-1"), t.info(s).MaxDeletedEntryID, "the max deleted ID only grows")

		_, err = t.e.Delete(t.ctx, s, "2-0")
		require.NoError(t, err)
		in = t.info(s)
		require.Zero(t, in.Length)
		require.Equal(t, xstream.ID{}, in.RecordedFirstEntryID, "0-0 when empty")
		require.Nil(t, in.FirstEntry)
		require.Nil(t, in.LastEntry)
		require.Equal(t, int64(4), in.EntriesAdded)
	}},
	{"MissingStream", func(t *T) {
		n, err := t.e.Delete(t.ctx, t.key("missing"), "1-1")
		require.NoError(t, err)
		require.Zero(t, n)
		n, err = t.e.Delete(t.ctx, t.key("missing"), "not-an-id")
		require.NoError(t, err, "XDEL of a missing key is 0 before the IDs are looked at")
		require.Zero(t, n)
		_, err = t.e.Info(t.ctx, t.key("missing"))
		isErr(t, err, xstream.ErrNoStream, "Delete creates nothing")
	}},
	{"ErrInvalidID", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1", "1-2")
		for _, bad := range []string{"x", "-", "+", "*", "$", "(1-1", "1-*", ""} {
			_, err := t.e.Delete(t.ctx, s, "1-1", bad)
			isErr(t, err, xstream.ErrInvalidID, "Delete %q", bad)
		}
		require.Equal(t, []string{"1-1", "1-2"}, t.all(s), "one bad ID fails the whole call")
	}},
}

var trimCases = []tcase{
	{"MaxLen", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1", "2-1", "3-1", "4-1", "5-1")
		n, err := t.e.Trim(t.ctx, s, xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 3})
		require.NoError(t, err)
		require.Equal(t, int64(2), n)
		require.Equal(t, []string{"3-1", "4-1", "5-1"}, t.all(s))
		n, err = t.e.Trim(t.ctx, s, xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 3})
		require.NoError(t, err)
		require.Zero(t, n)
		n, err = t.e.Trim(t.ctx, s, xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 10})
		require.NoError(t, err)
		require.Zero(t, n)
		in := t.info(s)
		require.Equal(t, id("3-1"), in.RecordedFirstEntryID)
		require.Equal(t, xstream.ID{}, in.MaxDeletedEntryID, "trimming is not deleting")
		require.Equal(t, int64(5), in.EntriesAdded)

		n, err = t.e.Trim(t.ctx, s, xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 0})
		require.NoError(t, err)
		require.Equal(t, int64(3), n)
		in = t.info(s)
		require.Zero(t, in.Length, "the stream stays, empty")
		require.Equal(t, id("5-1"), in.LastGeneratedID)
		require.Equal(t, xstream.ID{}, in.RecordedFirstEntryID)
		_, err = t.e.Add(t.ctx, s, xstream.AddArgs{ID: "5-1"}, f("5-1")...)
		isErr(t, err, xstream.ErrIDTooSmall, "the last ID stays")
	}},
	{"MaxLenDeleted", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1", "2-1", "3-1", "4-1", "5-1")
		_, err := t.e.Delete(t.ctx, s, "2-1")
		require.NoError(t, err)
		n, err := t.e.Trim(t.ctx, s, xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 2})
		require.NoError(t, err)
		require.Equal(t, int64(2), n, "deleted entries are not counted")
		require.Equal(t, []string{"4-1", "5-1"}, t.all(s))
	}},
	{"MinID", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1", "2-0", "2-1", "3-1", "4-1")
		n, err := t.e.Trim(t.ctx, s, xstream.TrimArgs{Strategy: xstream.TrimMinID, MinID: "2-1"})
		require.NoError(t, err)
		require.Equal(t, int64(2), n, "entries below 2-1 go")
		require.Equal(t, []string{"2-1", "3-1", "4-1"}, t.all(s))
		n, err = t.e.Trim(t.ctx, s, xstream.TrimArgs{Strategy: xstream.TrimMinID, MinID: "3"})
		require.NoError(t, err)
		require.Equal(t, int64(1), n, "a bare ms is ms-0")
		require.Equal(t, []string{"3-1", "4-1"}, t.all(s))
		n, err = t.e.Trim(t.ctx, s, xstream.TrimArgs{Strategy: xstream.TrimMinID, MinID: "1-0"})
		require.NoError(t, err)
		require.Zero(t, n)
		n, err = t.e.Trim(t.ctx, s, xstream.TrimArgs{Strategy: xstream.TrimMinID, MinID: "9-9"})
		require.NoError(t, err)
		require.Equal(t, int64(2), n)
		require.Zero(t, t.length(s))
		require.Equal(t, id("4-1"), t.info(s).LastGeneratedID)
	}},
	{"Approx", func(t *T) {
		s := t.key("s")
		const total = 550
		for i := 1; i <= total; i++ {
			t.add(s, "1-"+itoa(i))
		}
		n, err := t.e.Trim(t.ctx, s, xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 120, Approx: true})
		require.NoError(t, err)
		left := t.length(s)
		require.GreaterOrEqual(t, left, int64(120), "an approximate trim keeps at least what was asked")
		require.Equal(t, int64(total)-left, n, "Trim returns what it removed")
		ids := t.all(s)
		require.Equal(t, "1-"+itoa(total), ids[len(ids)-1])
		require.Equal(t, "1-"+itoa(total-len(ids)+1), ids[0], "it removes a prefix")

		// With a limit: at most that many go.
		n, err = t.e.Trim(t.ctx, s, xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 0, Approx: true, Limit: 5})
		require.NoError(t, err)
		require.LessOrEqual(t, n, int64(5))
		require.Equal(t, left-n, t.length(s))

		// MinID: every entry from MinID on stays.
		m := t.key("minid")
		for i := 1; i <= total; i++ {
			t.add(m, itoa(i)+"-1")
		}
		n, err = t.e.Trim(t.ctx, m, xstream.TrimArgs{Strategy: xstream.TrimMinID, MinID: "400", Approx: true})
		require.NoError(t, err)
		ids = t.all(m)
		require.Equal(t, int64(total-len(ids)), n)
		require.LessOrEqual(t, len(ids), total)
		require.GreaterOrEqual(t, len(ids), total-399)
		require.Equal(t, t.rangeIDs(m, "400", "+", 0), ids[len(ids)-(total-399):], "the entries from MinID on stay")
	}},
	{"None", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1", "2-1")
		n, err := t.e.Trim(t.ctx, s, xstream.TrimArgs{})
		require.NoError(t, err)
		require.Zero(t, n, "TrimNone trims nothing")
		require.Equal(t, int64(2), t.length(s))
	}},
	{"MissingStream", func(t *T) {
		s := t.key("missing")
		n, err := t.e.Trim(t.ctx, s, xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 1})
		require.NoError(t, err)
		require.Zero(t, n)
		n, err = t.e.Trim(t.ctx, s, xstream.TrimArgs{Strategy: xstream.TrimMinID, MinID: "5"})
		require.NoError(t, err)
		require.Zero(t, n)
		_, err = t.e.Info(t.ctx, s)
		isErr(t, err, xstream.ErrNoStream, "Trim creates nothing")
		// The arguments are checked all the same.
		_, err = t.e.Trim(t.ctx, s, xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: -1})
		isErr(t, err, xstream.ErrInvalidArgument)
	}},
	{"Errors", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1", "2-1")
		for _, b := range []struct {
			trim xstream.TrimArgs
			want error
		}{
			{xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 1, MinID: "1"}, xstream.ErrTrimConflict},
			{xstream.TrimArgs{Strategy: xstream.TrimMinID, MinID: "1", MaxLen: 1}, xstream.ErrTrimConflict},
			{xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 1, Limit: 10}, xstream.ErrTrimConflict},
			{xstream.TrimArgs{Strategy: xstream.TrimMinID, MinID: "1", Limit: 10}, xstream.ErrTrimConflict},
			{xstream.TrimArgs{MaxLen: 1}, xstream.ErrTrimConflict},
			{xstream.TrimArgs{MinID: "1"}, xstream.ErrTrimConflict},
			{xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: -1}, xstream.ErrInvalidArgument},
			{xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: -1, Approx: true}, xstream.ErrInvalidArgument},
			{xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 1, Approx: true, Limit: -1}, xstream.ErrInvalidArgument},
			{xstream.TrimArgs{Strategy: 99, MaxLen: 1}, xstream.ErrInvalidArgument},
			{xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 1, Policy: 99}, xstream.ErrInvalidArgument},
			{xstream.TrimArgs{Strategy: xstream.TrimMinID, MinID: "x"}, xstream.ErrInvalidID},
			{xstream.TrimArgs{Strategy: xstream.TrimMinID, MinID: "-"}, xstream.ErrInvalidID},
			{xstream.TrimArgs{Strategy: xstream.TrimMinID, MinID: "(1"}, xstream.ErrInvalidID},
			{xstream.TrimArgs{Strategy: xstream.TrimMinID}, xstream.ErrInvalidID},
		} {
			_, err := t.e.Trim(t.ctx, s, b.trim)
			isErr(t, err, b.want, "Trim %+v", b.trim)
		}
		require.Equal(t, []string{"1-1", "2-1"}, t.all(s), "a failed Trim changes nothing")
	}},
	{"DelRef", func(t *T) {
		if !t.caps.DeleteEx {
			t.Skip("Caps.DeleteEx is not set")
		}
		s := t.key("s")
		t.fill(s, "1-1", "2-1", "3-1")
		t.group(s, "g", "0")
		t.group(s, "h", "0")
		require.Len(t, t.readNew(s, "g", "c", 0), 3)
		require.Len(t, t.readNew(s, "h", "c", 0), 3)
		n, err := t.e.Trim(t.ctx, s, xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 1, Policy: xstream.KeepRef})
		require.NoError(t, err)
		require.Equal(t, int64(2), n)
		require.Len(t, t.pending(s, "g"), 3, "KeepRef leaves the references")
		t.add(s, "4-1")
		n, err = t.e.Trim(t.ctx, s, xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 1, Policy: xstream.DelRef})
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		require.Equal(t, []string{"4-1"}, t.all(s))
		require.Equal(t, []string{"1-1:c:1", "2-1:c:1"}, t.pendingOwners(s, "g"), "DelRef drops the references to what it trims")
		require.Equal(t, []string{"1-1:c:1", "2-1:c:1"}, t.pendingOwners(s, "h"))
	}},
	{"Acked", func(t *T) {
		if !t.caps.DeleteEx {
			t.Skip("Caps.DeleteEx is not set")
		}
		s := t.key("s")
		t.fill(s, "1-1", "2-1", "3-1", "4-1")
		t.group(s, "g", "0")
		require.Len(t, t.readNew(s, "g", "c", 2), 2)
		ack, err := t.e.Ack(t.ctx, s, "g", "1-1")
		require.NoError(t, err)
		require.Equal(t, int64(1), ack)
		// 1-1 is acknowledged; 2-1 is pending; 3-1 and 4-1 are not read yet.
		n, err := t.e.Trim(t.ctx, s, xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 0, Policy: xstream.Acked})
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		require.Equal(t, []string{"2-1", "3-1", "4-1"}, t.all(s), "Acked trims only what no group refers to")
		_, err = t.e.Add(t.ctx, s, xstream.AddArgs{ID: "5-1", Trim: xstream.TrimArgs{Strategy: xstream.TrimMinID, MinID: "9", Policy: xstream.Acked}}, f("5-1")...)
		require.NoError(t, err)
		require.Equal(t, []string{"2-1", "3-1", "4-1", "5-1"}, t.all(s))
	}},
}

var setIDCases = []tcase{
	{"SetID", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1", "2-1")
		require.NoError(t, t.e.SetID(t.ctx, s, xstream.SetIDArgs{LastID: "10-5", EntriesAdded: -1}))
		in := t.info(s)
		require.Equal(t, id("10-5"), in.LastGeneratedID)
		require.Equal(t, int64(2), in.EntriesAdded, "EntriesAdded -1 leaves it")
		_, err := t.e.Add(t.ctx, s, xstream.AddArgs{ID: "10-5"}, f("x")...)
		isErr(t, err, xstream.ErrIDTooSmall)
		require.Equal(t, id("10-6"), t.add(s, "10-*"))
		require.NoError(t, t.e.SetID(t.ctx, s, xstream.SetIDArgs{LastID: "10-6", EntriesAdded: -1}), "the last ID itself")
		require.NoError(t, t.e.SetID(t.ctx, s, xstream.SetIDArgs{LastID: "20", EntriesAdded: 100, MaxDeletedID: "15-3"}))
		in = t.info(s)
		require.Equal(t, id("20-0"), in.LastGeneratedID, "a bare ms is ms-0")
		require.Equal(t, int64(100), in.EntriesAdded)
		require.Equal(t, id("15-3"), in.MaxDeletedEntryID)
		require.Equal(t, int64(3), in.Length)
		require.NoError(t, t.e.SetID(t.ctx, s, xstream.SetIDArgs{LastID: "20-0", EntriesAdded: 3}), "EntriesAdded may equal the length")
		require.Equal(t, int64(3), t.info(s).EntriesAdded)
		auto, err := t.e.Add(t.ctx, s, xstream.AddArgs{}, f("auto")...)
		require.NoError(t, err)
		require.True(t, id("20-0").Less(auto))
	}},
	{"EmptyStream", func(t *T) {
		s := t.key("s")
		require.NoError(t, t.e.CreateGroup(t.ctx, s, "g", "$", xstream.GroupOptions{MkStream: true}))
		require.NoError(t, t.e.SetID(t.ctx, s, xstream.SetIDArgs{LastID: "7-7", EntriesAdded: 0}))
		in := t.info(s)
		require.Equal(t, id("7-7"), in.LastGeneratedID)
		require.Zero(t, in.EntriesAdded)
		require.Equal(t, id("7-8"), t.add(s, "7-*"))
	}},
	{"Errors", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1", "5-1")
		err := t.e.SetID(t.ctx, t.key("missing"), xstream.SetIDArgs{LastID: "10-0", EntriesAdded: -1})
		isErr(t, err, xstream.ErrNoStream)
		_, err = t.e.Info(t.ctx, t.key("missing"))
		isErr(t, err, xstream.ErrNoStream, "SetID creates nothing")
		for _, bad := range []string{"x", "", "-", "+", "$", "*", "5-*", "(5-1"} {
			err := t.e.SetID(t.ctx, s, xstream.SetIDArgs{LastID: bad, EntriesAdded: -1})
			isErr(t, err, xstream.ErrInvalidID, "SetID %q", bad)
		}
		err = t.e.SetID(t.ctx, s, xstream.SetIDArgs{LastID: "10-0", EntriesAdded: -1, MaxDeletedID: "x"})
		isErr(t, err, xstream.ErrInvalidID)
		err = t.e.SetID(t.ctx, s, xstream.SetIDArgs{LastID: "5-0", EntriesAdded: -1})
		isErr(t, err, xstream.ErrIDTooSmall, "below the top entry")
		err = t.e.SetID(t.ctx, s, xstream.SetIDArgs{LastID: "10-0", EntriesAdded: -1, MaxDeletedID: "10-1"})
		isErr(t, err, xstream.ErrIDTooSmall, "below the max deleted ID given")
		err = t.e.SetID(t.ctx, s, xstream.SetIDArgs{LastID: "10-0", EntriesAdded: 1})
		isErr(t, err, xstream.ErrInvalidArgument, "EntriesAdded below the length")
		err = t.e.SetID(t.ctx, s, xstream.SetIDArgs{LastID: "10-0", EntriesAdded: -2})
		isErr(t, err, xstream.ErrInvalidArgument)
		in := t.info(s)
		require.Equal(t, id("5-1"), in.LastGeneratedID, "a failed SetID changes nothing")
		require.Equal(t, int64(2), in.EntriesAdded)
		require.Equal(t, xstream.ID{}, in.MaxDeletedEntryID)
	}},
}
