package xstreamtest

import (
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream"
)

var addCases = []tcase{
	{"Explicit", func(t *T) {
		s := t.key("s")
		require.Equal(t, id("1-1"), t.add(s, "1-1"))
		require.Equal(t, id("1-2"), t.add(s, "1-2"))
		require.Equal(t, id("5-0"), t.add(s, "5"), "a bare ms is ms-0")
		require.Equal(t, id("18446744073709551614-18446744073709551615"), t.add(s, "18446744073709551614-18446744073709551615"))
		require.Equal(t, []string{"1-1", "1-2", "5-0", "18446744073709551614-18446744073709551615"}, t.all(s))
		require.Equal(t, int64(4), t.length(s))
	}},
	{"MsStar", func(t *T) {
		s := t.key("s")
		require.Equal(t, id("0-1"), t.add(s, "0-*"), "0-* on a new stream is 0-1")
		require.Equal(t, id("3-0"), t.add(s, "3-*"), "a new ms starts at seq 0")
		require.Equal(t, id("3-1"), t.add(s, "3-*"))
		t.add(s, "3-7")
		require.Equal(t, id("3-8"), t.add(s, "3-*"))
		_, err := t.e.Add(t.ctx, s, xstream.AddArgs{ID: "2-*"}, f("x")...)
		isErr(t, err, xstream.ErrIDTooSmall, "an ms below the last one")
		require.Equal(t, []string{"0-1", "3-0", "3-1", "3-7", "3-8"}, t.all(s))
	}},
	{"Auto", func(t *T) {
		s := t.key("s")
		a, err := t.e.Add(t.ctx, s, xstream.AddArgs{}, f("a")...)
		require.NoError(t, err)
		b, err := t.e.Add(t.ctx, s, xstream.AddArgs{ID: "*"}, f("b")...)
		require.NoError(t, err)
		require.True(t, a.Less(b), "auto IDs increase: %s then %s", a, b)
		require.NotZero(t, a.Ms, "an auto ID comes from the clock")
		require.Equal(t, []string{a.String(), b.String()}, t.all(s))

		// A last ID ahead of the clock: auto IDs go on from it.
		t.add(s, "99999999999999-5")
		c, err := t.e.Add(t.ctx, s, xstream.AddArgs{}, f("c")...)
		require.NoError(t, err)
		require.Equal(t, id("99999999999999-6"), c)
	}},
	{"AutoClock", func(t *T) {
		t.needClock()
		s := t.key("s")
		a, err := t.e.Add(t.ctx, s, xstream.AddArgs{}, f("a")...)
		require.NoError(t, err)
		t.advance(time.Second)
		b, err := t.e.Add(t.ctx, s, xstream.AddArgs{}, f("b")...)
		require.NoError(t, err)
		require.Zero(t, b.Seq)
		require.GreaterOrEqual(t, b.Ms, a.Ms+1000, "the clock moved a second: %s then %s", a, b)
	}},
	{"Fields", func(t *T) {
		s := t.key("s")
		fields := []xstream.Field{
			{Name: "b", Value: "2"},
			{Name: "a", Value: "1"},
			{Name: "b", Value: "3"}, // names may repeat
			{Name: "bin", Value: "\x00\r\n\xff"},
			{Name: "empty", Value: ""},
			{Name: "", Value: "no name"},
		}
		got := t.add(s, "1-1", fields...)
		t.add(s, "1-2", xstream.Fields("b", "2", "a", "1")...) // the same names as the first entry
		t.add(s, "1-3", xstream.Fields("other", "x")...)
		es, err := t.e.Range(t.ctx, s, "-", "+", 0)
		require.NoError(t, err)
		require.Equal(t, []xstream.Entry{
			{ID: got, Fields: fields},
			{ID: id("1-2"), Fields: xstream.Fields("b", "2", "a", "1")},
			{ID: id("1-3"), Fields: xstream.Fields("other", "x")},
		}, es)
	}},
	{"NoMkStream", func(t *T) {
		s := t.key("s")
		_, err := t.e.Add(t.ctx, s, xstream.AddArgs{ID: "1-1", NoMkStream: true}, f("1-1")...)
		isErr(t, err, xstream.ErrNoStream)
		_, err = t.e.Info(t.ctx, s)
		isErr(t, err, xstream.ErrNoStream, "a failed Add creates nothing")
		t.add(s, "1-1")
		got, err := t.e.Add(t.ctx, s, xstream.AddArgs{ID: "1-2", NoMkStream: true}, f("1-2")...)
		require.NoError(t, err, "NoMkStream adds to an existing stream")
		require.Equal(t, id("1-2"), got)
		require.Equal(t, []string{"1-1", "1-2"}, t.all(s))
	}},
	{"ErrInvalidID", func(t *T) {
		s := t.key("s")
		t.add(s, "5-5")
		for _, bad := range []string{
			"x", "-", "+", "$", ">", "(5-6", "6-x", "x-1", "6-", "-1", "6-1-1", "6-**", "*-1",
			"18446744073709551616-0", "6-18446744073709551616", "18446744073709551616",
		} {
			_, err := t.e.Add(t.ctx, s, xstream.AddArgs{ID: bad}, f("x")...)
			isErr(t, err, xstream.ErrInvalidID, "Add ID %q", bad)
		}
		_, err := t.e.Add(t.ctx, t.key("new"), xstream.AddArgs{ID: "x"}, f("x")...)
		isErr(t, err, xstream.ErrInvalidID)
		_, err = t.e.Info(t.ctx, t.key("new"))
		isErr(t, err, xstream.ErrNoStream, "a failed Add creates nothing")
		require.Equal(t, []string{"5-5"}, t.all(s))
	}},
	{"ErrZeroID", func(t *T) {
		s := t.key("s")
		for _, zero := range []string{"0-0", "0"} {
			_, err := t.e.Add(t.ctx, s, xstream.AddArgs{ID: zero}, f("x")...)
			isErr(t, err, xstream.ErrZeroID, "Add ID %q", zero)
		}
		_, err := t.e.Info(t.ctx, s)
		isErr(t, err, xstream.ErrNoStream, "a failed Add creates nothing")
		t.add(s, "1-1")
		_, err = t.e.Add(t.ctx, s, xstream.AddArgs{ID: "0-0"}, f("x")...)
		isErr(t, err, xstream.ErrZeroID)
	}},
	{"ErrIDTooSmall", func(t *T) {
		s := t.key("s")
		t.add(s, "5-5")
		for _, small := range []string{"5-5", "5-4", "5", "4-9", "4-*", "1"} {
			_, err := t.e.Add(t.ctx, s, xstream.AddArgs{ID: small}, f("x")...)
			isErr(t, err, xstream.ErrIDTooSmall, "Add ID %q after 5-5", small)
		}
		// The last ID stays when its entry is deleted.
		t.add(s, "6-0")
		n, err := t.e.Delete(t.ctx, s, "6-0")
		require.NoError(t, err)
		require.Equal(t, int64(1), n)
		_, err = t.e.Add(t.ctx, s, xstream.AddArgs{ID: "6-0"}, f("x")...)
		isErr(t, err, xstream.ErrIDTooSmall, "the ID of a deleted last entry")
		require.Equal(t, id("6-1"), t.add(s, "6-*"))
		require.Equal(t, []string{"5-5", "6-1"}, t.all(s))
	}},
	{"ErrStreamExhausted", func(t *T) {
		s := t.key("s")
		t.add(s, "18446744073709551615-18446744073709551615")
		for _, next := range []string{"", "*", "18446744073709551615-*"} {
			_, err := t.e.Add(t.ctx, s, xstream.AddArgs{ID: next}, f("x")...)
			isErr(t, err, xstream.ErrStreamExhausted, "Add ID %q after the largest ID", next)
		}
		require.Equal(t, int64(1), t.length(s))
	}},
	{"ErrNoFields", func(t *T) {
		s := t.key("s")
		_, err := t.e.Add(t.ctx, s, xstream.AddArgs{ID: "1-1"})
		isErr(t, err, xstream.ErrNoFields)
		_, err = t.e.Add(t.ctx, s, xstream.AddArgs{}, []xstream.Field{}...)
		isErr(t, err, xstream.ErrNoFields)
		_, err = t.e.Info(t.ctx, s)
		isErr(t, err, xstream.ErrNoStream, "a failed Add creates nothing")
	}},
	{"Trim", func(t *T) {
		s := t.key("s")
		t.fill(s, "1-1", "2-1", "3-1")
		got, err := t.e.Add(t.ctx, s, xstream.AddArgs{ID: "4-1", Trim: xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 2}}, f("4-1")...)
		require.NoError(t, err)
		require.Equal(t, id("4-1"), got)
		require.Equal(t, []string{"3-1", "4-1"}, t.all(s))
		t.add(s, "5-1")
		_, err = t.e.Add(t.ctx, s, xstream.AddArgs{ID: "6-1", Trim: xstream.TrimArgs{Strategy: xstream.TrimMinID, MinID: "5"}}, f("6-1")...)
		require.NoError(t, err)
		require.Equal(t, []string{"5-1", "6-1"}, t.all(s))
		_, err = t.e.Add(t.ctx, s, xstream.AddArgs{ID: "7-1", Trim: xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 0}}, f("7-1")...)
		require.NoError(t, err)
		require.Empty(t, t.all(s), "MaxLen 0 trims the new entry too")
		in := t.info(s)
		require.Equal(t, id("7-1"), in.LastGeneratedID)
		require.Equal(t, int64(7), in.EntriesAdded)
		require.Equal(t, xstream.ID{}, in.MaxDeletedEntryID, "trimming is not deleting")

		// Approximate: at least what was asked is kept.
		a := t.key("approx")
		for i := range 300 {
			_, err := t.e.Add(t.ctx, a, xstream.AddArgs{ID: "1-" + itoa(i+1), Trim: xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 50, Approx: true}}, f("x")...)
			require.NoError(t, err)
		}
		n := t.length(a)
		require.GreaterOrEqual(t, n, int64(50))
		require.LessOrEqual(t, n, int64(300))
		ids := t.all(a)
		require.Equal(t, "1-300", ids[len(ids)-1], "an approximate trim removes from the head")
	}},
	{"TrimErrors", func(t *T) {
		s := t.key("s")
		bad := []struct {
			trim xstream.TrimArgs
			want error
		}{
			{xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 1, MinID: "1"}, xstream.ErrTrimConflict},
			{xstream.TrimArgs{Strategy: xstream.TrimMinID, MinID: "1", MaxLen: 1}, xstream.ErrTrimConflict},
			{xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 1, Limit: 10}, xstream.ErrTrimConflict},
			{xstream.TrimArgs{MaxLen: 1}, xstream.ErrTrimConflict},
			{xstream.TrimArgs{Approx: true}, xstream.ErrTrimConflict},
			{xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: -1}, xstream.ErrInvalidArgument},
			{xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 1, Approx: true, Limit: -1}, xstream.ErrInvalidArgument},
			{xstream.TrimArgs{Strategy: 99, MaxLen: 1}, xstream.ErrInvalidArgument},
			{xstream.TrimArgs{Strategy: xstream.TrimMinID, MinID: "x"}, xstream.ErrInvalidID},
			{xstream.TrimArgs{Strategy: xstream.TrimMinID, MinID: ""}, xstream.ErrInvalidID},
		}
		for _, b := range bad {
			_, err := t.e.Add(t.ctx, s, xstream.AddArgs{ID: "1-1", Trim: b.trim}, f("1-1")...)
			isErr(t, err, b.want, "Add with %+v", b.trim)
		}
		_, err := t.e.Info(t.ctx, s)
		isErr(t, err, xstream.ErrNoStream, "a failed Add creates nothing")
		t.add(s, "1-1")
		for _, b := range bad {
			_, err := t.e.Add(t.ctx, s, xstream.AddArgs{ID: "2-1", Trim: b.trim}, f("2-1")...)
			isErr(t, err, b.want, "Add with %+v", b.trim)
		}
		require.Equal(t, []string{"1-1"}, t.all(s), "a failed Add adds nothing")
	}},
}
