package xstreamtest

import (
	"slices"

	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream"
)

// rangeIDsFixture are the entries of the range tests.
var rangeIDsFixture = []string{"1-1", "1-2", "2-0", "3-5", "5-0", "5-1", "7-18446744073709551615"}

// rangeStream makes the stream of the range tests.
func (t *T) rangeStream() string {
	t.Helper()
	s := t.key("s")
	t.fill(s, rangeIDsFixture...)
	return s
}

// revRangeIDs returns the IDs of RevRange(end, start, count).
func (t *T) revRangeIDs(stream, end, start string, count int) []string {
	t.Helper()
	es, err := t.e.RevRange(t.ctx, stream, end, start, count)
	require.NoError(t, err, "RevRange %s %s %d", end, start, count)
	return idsOf(es)
}

// rangeBounds lists bounds and the IDs of the fixture in [start, end].
var rangeBounds = []struct {
	start, end string
	want       []string
}{
	{"-", "+", rangeIDsFixture},
	{"1-2", "3-5", []string{"1-2", "2-0", "3-5"}},
	{"1-3", "3-4", []string{"2-0"}},
	{"1", "1", []string{"1-1", "1-2"}}, // a bare ms: ms-0 as start, the whole ms as end
	{"2", "3", []string{"2-0", "3-5"}},
	{"5", "+", []string{"5-0", "5-1", "7-18446744073709551615"}},
	{"-", "1", []string{"1-1", "1-2"}},
	{"7", "7", []string{"7-18446744073709551615"}},
	{"(1-1", "+", rangeIDsFixture[1:]}, // exclusive bounds
	{"-", "(5-1", rangeIDsFixture[:5]},
	{"(1-1", "(5-1", []string{"1-2", "2-0", "3-5", "5-0"}},
	{"(1", "2", []string{"1-1", "1-2", "2-0"}}, // "(1" excludes 1-0 only
	{"(1-2", "(2-0", nil},
	{"-", "(5", []string{"1-1", "1-2", "2-0", "3-5", "5-0", "5-1"}}, // "(5" excludes 5-max only
	{"(0-0", "(7-18446744073709551615", rangeIDsFixture[:6]},
	{"(7-18446744073709551614", "+", []string{"7-18446744073709551615"}},
	{"(3-5", "3-5", nil}, // empty intervals
	{"3-6", "3-5", nil},
	{"4", "4", nil},
	{"+", "-", nil},
	{"6-0", "6-18446744073709551615", nil},
	{"8", "+", nil},
	{"0-0", "0-0", nil},
	{"18446744073709551615-18446744073709551615", "+", nil},
}

var rangeCases = []tcase{
	{"Bounds", func(t *T) {
		s := t.rangeStream()
		for _, b := range rangeBounds {
			require.Equal(t, b.want, nilIfEmpty(t.rangeIDs(s, b.start, b.end, 0)), "Range %s %s", b.start, b.end)
			want := slices.Clone(b.want)
			slices.Reverse(want)
			require.Equal(t, want, nilIfEmpty(t.revRangeIDs(s, b.end, b.start, 0)), "RevRange %s %s", b.end, b.start)
		}
	}},
	{"Entries", func(t *T) {
		s := t.rangeStream()
		es, err := t.e.Range(t.ctx, s, "2", "3", 0)
		require.NoError(t, err)
		require.Equal(t, entries("2-0", "3-5"), es)
		es, err = t.e.RevRange(t.ctx, s, "3", "2", 0)
		require.NoError(t, err)
		require.Equal(t, entries("3-5", "2-0"), es)
	}},
	{"Count", func(t *T) {
		s := t.rangeStream()
		require.Equal(t, []string{"1-1", "1-2"}, t.rangeIDs(s, "-", "+", 2))
		require.Equal(t, []string{"2-0", "3-5", "5-0"}, t.rangeIDs(s, "(1-2", "+", 3))
		require.Equal(t, rangeIDsFixture, t.rangeIDs(s, "-", "+", 0), "count 0: no limit")
		require.Equal(t, rangeIDsFixture, t.rangeIDs(s, "-", "+", 100))
		require.Equal(t, []string{"7-18446744073709551615", "5-1"}, t.revRangeIDs(s, "+", "-", 2), "RevRange counts from the end")
		require.Equal(t, []string{"5-0", "3-5"}, t.revRangeIDs(s, "(5-1", "-", 2))
		require.Len(t, t.revRangeIDs(s, "+", "-", 0), len(rangeIDsFixture))
		require.Equal(t, []string{"1-1"}, t.rangeIDs(s, "-", "+", 1))
	}},
	{"Deleted", func(t *T) {
		s := t.rangeStream()
		n, err := t.e.Delete(t.ctx, s, "1-2", "3-5")
		require.NoError(t, err)
		require.Equal(t, int64(2), n)
		require.Equal(t, []string{"1-1", "2-0", "5-0", "5-1", "7-18446744073709551615"}, t.all(s))
		require.Equal(t, []string{"2-0", "5-0"}, t.rangeIDs(s, "(1-1", "+", 2), "a count skips deleted entries")
		require.Equal(t, []string{"2-0", "1-1"}, t.revRangeIDs(s, "3-5", "-", 5))
	}},
	{"MissingStream", func(t *T) {
		s := t.key("missing")
		for _, b := range rangeBounds {
			require.Empty(t, t.rangeIDs(s, b.start, b.end, 0))
			require.Empty(t, t.revRangeIDs(s, b.end, b.start, 3))
		}
	}},
	{"ErrInvalidID", func(t *T) {
		s := t.rangeStream()
		for _, name := range []string{s, t.key("missing")} {
			for _, b := range [][2]string{
				{"x", "+"}, {"-", "x"}, {"", "+"}, {"-", ""}, {"1-x", "+"}, {"1-", "+"},
				{"*", "+"}, {"-", "$"}, {">", "+"}, {"(-", "+"}, {"-", "(+"}, {"((1", "+"},
				{"18446744073709551616", "+"}, {"-", "1-18446744073709551616"},
				// An exclusive bound that leaves no ID.
				{"(18446744073709551615-18446744073709551615", "+"},
				{"-", "(0-0"},
			} {
				_, err := t.e.Range(t.ctx, name, b[0], b[1], 0)
				isErr(t, err, xstream.ErrInvalidID, "Range %q %q", b[0], b[1])
				_, err = t.e.RevRange(t.ctx, name, b[1], b[0], 0)
				isErr(t, err, xstream.ErrInvalidID, "RevRange %q %q", b[1], b[0])
			}
		}
	}},
	{"ErrInvalidArgument", func(t *T) {
		s := t.rangeStream()
		for _, name := range []string{s, t.key("missing")} {
			_, err := t.e.Range(t.ctx, name, "-", "+", -1)
			isErr(t, err, xstream.ErrInvalidArgument, "a negative count")
			_, err = t.e.RevRange(t.ctx, name, "+", "-", -1)
			isErr(t, err, xstream.ErrInvalidArgument, "a negative count")
		}
	}},
}

var lenCases = []tcase{
	{"Len", func(t *T) {
		s := t.key("s")
		require.Zero(t, t.length(s), "a missing stream")
		t.fill(s, "1-1", "1-2", "2-1")
		require.Equal(t, int64(3), t.length(s))
		_, err := t.e.Delete(t.ctx, s, "1-2")
		require.NoError(t, err)
		require.Equal(t, int64(2), t.length(s))
		_, err = t.e.Trim(t.ctx, s, xstream.TrimArgs{Strategy: xstream.TrimMaxLen, MaxLen: 0})
		require.NoError(t, err)
		require.Zero(t, t.length(s))
		require.Zero(t, t.info(s).Length, "the emptied stream still exists")
	}},
}

// nilIfEmpty makes an empty slice nil, so that results compare to nil.
func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}
