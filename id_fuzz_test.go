package xstream

import (
	"cmp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// refParse is a plain reference for the ID text "ms-seq" or "ms": each
// part 1 to 20 decimal digits that fit in a uint64, at most 127 bytes in
// all. hasSeq is false for a bare ms.
func refParse(s string) (ms, seq uint64, hasSeq, ok bool) {
	if len(s) == 0 || len(s) > 127 {
		return 0, 0, false, false
	}
	part := func(p string) (uint64, bool) {
		if len(p) == 0 || len(p) > 20 || strings.TrimLeft(p, "0123456789") != "" {
			return 0, false
		}
		v, err := strconv.ParseUint(p, 10, 64)
		return v, err == nil
	}
	i := strings.IndexByte(s, '-')
	if i < 0 {
		ms, ok = part(s)
		return ms, 0, false, ok
	}
	ms, ok1 := part(s[:i])
	seq, ok2 := part(s[i+1:])
	return ms, seq, true, ok1 && ok2
}

// refBound is a reference for one Range bound; ok is false for an error.
func refBound(s string, isEnd bool) (ID, bool) {
	switch s {
	case "-":
		return ID{}, true
	case "+":
		return MaxID(), true
	}
	excl := strings.HasPrefix(s, "(")
	if excl {
		s = s[1:]
	}
	ms, seq, hasSeq, ok := refParse(s)
	if !ok {
		return ID{}, false
	}
	if !hasSeq && isEnd {
		seq = maxU
	}
	id := ID{ms, seq}
	if !excl {
		return id, true
	}
	if isEnd {
		return id.Prev()
	}
	return id.Next()
}

func FuzzParseID(f *testing.F) {
	for _, s := range []string{
		"0-0", "0-1", "1-0", "5", "0", "1700000000000-42", "007-01", "1-2-3", "-", "+", "$", "*",
		"5-*", "(5-0", "", " 1", "1-", "-1", "+1", "18446744073709551615-18446744073709551615",
		"18446744073709551616", "18446744073709551615", "99999999999999999999", "000000000000000000001",
		strings.Repeat("9", 127), strings.Repeat("0", 60) + "-" + strings.Repeat("0", 66), "1\x00-2", "١-٢",
	} {
		f.Add(s, "1-1")
	}
	f.Add("5-5", "5-6")
	f.Add("6", "5-18446744073709551615")
	f.Fuzz(func(t *testing.T, s, o string) {
		id, err := ParseID(s)
		ms, seq, hasSeq, ok := refParse(s)
		if !ok {
			requireErr(t, err, ErrInvalidID, strconv.Quote(s))
			return
		}
		require.NoError(t, err, "ParseID(%q)", s)
		require.Equal(t, ID{ms, seq}, id, "ParseID(%q)", s)

		// Text round trips; the canonical form is what String writes.
		back, err := ParseID(id.String())
		require.NoError(t, err)
		require.Equal(t, id, back)
		full := strconv.FormatUint(ms, 10) + "-" + strconv.FormatUint(seq, 10)
		if s == full || (!hasSeq && s == strconv.FormatUint(ms, 10)) {
			require.Equal(t, full, id.String())
		}
		var u ID
		b, err := id.MarshalText()
		require.NoError(t, err)
		require.NoError(t, u.UnmarshalText(b))
		require.Equal(t, id, u)

		// Order.
		require.Zero(t, id.Compare(id))
		require.False(t, id.Less(id))
		if n, ok := id.Next(); ok {
			require.Equal(t, -1, id.Compare(n))
			require.Equal(t, 1, n.Compare(id))
			require.True(t, id.Less(n))
			p, ok := n.Prev()
			require.True(t, ok)
			require.Equal(t, id, p)
		} else {
			require.Equal(t, MaxID(), id)
		}
		other, err := ParseID(o)
		if err != nil {
			return
		}
		want := cmp.Or(cmp.Compare(id.Ms, other.Ms), cmp.Compare(id.Seq, other.Seq))
		require.Equal(t, want, id.Compare(other), "Compare(%v, %v)", id, other)
		require.Equal(t, -want, other.Compare(id))
		require.Equal(t, want < 0, id.Less(other))
		require.Equal(t, want == 0, id == other)
	})
}

// fuzzStream is the fixed stream FuzzRangeBounds queries.
var fuzzStream = func() *Stream {
	s := NewStream()
	for _, id := range []string{"0-1", "0-5", "1-0", "1-1", "1-18446744073709551615", "2-0", "5-3", "5-4", "7-0",
		"18446744073709551615-0", "18446744073709551615-18446744073709551614", "18446744073709551615-18446744073709551615"} {
		if _, err := s.Add(AddArgs{ID: id}, Fields("id", id)...); err != nil {
			panic(err)
		}
	}
	if _, err := s.Delete("1-1"); err != nil {
		panic(err)
	}
	return s
}()

func FuzzRangeBounds(f *testing.F) {
	for _, b := range [][2]string{
		{"-", "+"}, {"+", "-"}, {"1", "1"}, {"(1", "(5"}, {"(1-0", "5-3"}, {"(0-0", "+"}, {"-", "(0-0"},
		{"(18446744073709551615-18446744073709551615", "+"}, {"-", "(18446744073709551615-18446744073709551615"},
		{"18446744073709551615", "18446744073709551615"}, {"((1", "2"}, {"(-", "+"}, {"*", "+"}, {"1-*", "2"},
		{"5-4", "5-3"}, {"(5-3", "5-4"}, {"", ""}, {"(", ")"},
	} {
		f.Add(b[0], b[1], uint8(0))
		f.Add(b[0], b[1], uint8(2))
	}
	f.Fuzz(func(t *testing.T, start, end string, count uint8) {
		lo, hi, empty, err := parseRange(start, end)
		rlo, ok1 := refBound(start, false)
		rhi, ok2 := refBound(end, true)
		if !ok1 || !ok2 {
			require.ErrorIs(t, err, ErrInvalidID, "parseRange(%q, %q)", start, end)
			_, err = fuzzStream.Range(start, end, int(count))
			require.ErrorIs(t, err, ErrInvalidID)
			return
		}
		require.NoError(t, err, "parseRange(%q, %q)", start, end)
		require.Equal(t, rlo, lo)
		require.Equal(t, rhi, hi)
		require.Equal(t, rhi.Less(rlo), empty)

		all, err := fuzzStream.Range("-", "+", 0)
		require.NoError(t, err)
		var want []ID
		for _, e := range all {
			if rlo.Compare(e.ID) <= 0 && e.ID.Compare(rhi) <= 0 {
				want = append(want, e.ID)
			}
		}
		n := int(count % 4)
		got, err := fuzzStream.Range(start, end, n)
		require.NoError(t, err)
		checkIDs(t, got, want, n)
		rev, err := fuzzStream.RevRange(end, start, n)
		require.NoError(t, err)
		slices.Reverse(want)
		checkIDs(t, rev, want, n)
	})
}

// checkIDs checks that got holds the first count (0: all) of want, each
// with its own fields.
func checkIDs(t *testing.T, got []Entry, want []ID, count int) {
	t.Helper()
	if count > 0 && len(want) > count {
		want = want[:count]
	}
	require.Len(t, got, len(want))
	for i, e := range got {
		require.Equal(t, Entry{want[i], Fields("id", want[i].String())}, e)
	}
}
