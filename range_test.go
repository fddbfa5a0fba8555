package xstream

import (
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRangeBoundForms(t *testing.T) {
	s := streamWith(t, "1-0", "1-1", "1-2", "2-0", "3-5", "3-6")
	n, err := s.Delete("1-1")
	require.NoError(t, err)
	require.EqualValues(t, 1, n)

	for _, c := range []struct {
		start, end string
		want       []string
	}{
		{"-", "+", []string{"1-0", "1-2", "2-0", "3-5", "3-6"}},
		{"1", "1", []string{"1-0", "1-2"}},
		{"1", "2", []string{"1-0", "1-2", "2-0"}},
		{"1-1", "1-1", nil},
		{"1-1", "2-0", []string{"1-2", "2-0"}},
		{"(1-0", "3", []string{"1-2", "2-0", "3-5", "3-6"}},
		{"(1", "(3", []string{"1-2", "2-0", "3-5", "3-6"}},
		{"(1-2", "(3-6", []string{"2-0", "3-5"}},
		{"(2-0", "(3-5", nil},
		{"2-0", "2-0", []string{"2-0"}},
		{"(2-0", "2-0", nil},
		{"2", "(3-0", []string{"2-0"}},
		{"3-6", "1", nil},
		{"4", "+", nil},
		{"-", "0", nil},
		{"-", "(1-0", nil},
		{"-", "1-0", []string{"1-0"}},
		{"3-6", "+", []string{"3-6"}},
		{"(3-6", "+", nil},
		{"0", "18446744073709551615", []string{"1-0", "1-2", "2-0", "3-5", "3-6"}},
	} {
		got, err := s.Range(c.start, c.end, 0)
		require.NoError(t, err)
		assert.Equal(t, c.want, idsOrNil(got), "Range(%q, %q)", c.start, c.end)

		rev, err := s.RevRange(c.end, c.start, 0)
		require.NoError(t, err)
		want := slices.Clone(c.want)
		slices.Reverse(want)
		assert.Equal(t, want, idsOrNil(rev), "RevRange(%q, %q)", c.end, c.start)
	}
}

func idsOrNil(es []Entry) []string {
	if len(es) == 0 {
		return nil
	}
	return ids(es)
}

func TestRangeCount(t *testing.T) {
	s := streamWith(t, "1", "2", "3", "4", "5")
	for count, want := range map[int][]string{
		0: {"1-0", "2-0", "3-0", "4-0", "5-0"},
		1: {"1-0"},
		2: {"1-0", "2-0"},
		5: {"1-0", "2-0", "3-0", "4-0", "5-0"},
		9: {"1-0", "2-0", "3-0", "4-0", "5-0"},
	} {
		got, err := s.Range("-", "+", count)
		require.NoError(t, err)
		assert.Equal(t, want, ids(got), "count %d", count)
	}
	got, err := s.RevRange("+", "-", 2)
	require.NoError(t, err)
	assert.Equal(t, []string{"5-0", "4-0"}, ids(got))
	got, err = s.RevRange("(5-0", "2", 2)
	require.NoError(t, err)
	assert.Equal(t, []string{"4-0", "3-0"}, ids(got))
	got, err = s.Range("(1", "+", 2)
	require.NoError(t, err)
	assert.Equal(t, []string{"2-0", "3-0"}, ids(got))
}

func TestRangeRejects(t *testing.T) {
	s := streamWith(t, "1", "2")
	before := snap(t, s)
	for _, c := range []int{-1, -100} {
		_, err := s.Range("-", "+", c)
		requireErr(t, err, ErrInvalidArgument, strconv.Itoa(c))
		_, err = s.RevRange("+", "-", c)
		requireErr(t, err, ErrInvalidArgument, strconv.Itoa(c))
	}
	for _, c := range []struct{ start, end, bad string }{
		{"*", "+", `"*"`},
		{"-", "2-*", `"2-*"`},
		{"$", "+", `"$"`},
		{"x", "+", `"x"`},
		{"(" + MaxID().String(), "+", MaxID().String()},
		{"-", "(0-0", "(0-0"},
		{"-", "(-", "-"},
	} {
		_, err := s.Range(c.start, c.end, 0)
		requireErr(t, err, ErrInvalidID, c.bad)
		_, err = s.RevRange(c.end, c.start, 0)
		requireErr(t, err, ErrInvalidID, c.bad)
	}
	requireUnchanged(t, s, before)
}

// TestRangeManyBlocks checks every pair of bounds from a set against a
// plain filter, on a stream of several blocks with deleted entries and a
// freed block.
func TestRangeManyBlocks(t *testing.T) {
	s := NewStream()
	var all []ID
	for ms := uint64(1); ms <= 120; ms++ {
		for seq := range uint64(3) {
			id := ID{ms, seq}
			mustAdd(t, s, id.String(), reading(strconv.FormatUint(ms, 10), strconv.FormatUint(seq, 10))...)
			all = append(all, id)
		}
	}
	require.Greater(t, len(blocksOf(s)), 3, "the test needs several blocks")
	// Delete every 7th entry and one whole block.
	var del []string
	for i, id := range all {
		if i%7 == 3 {
			del = append(del, id.String())
		}
	}
	b := blocksOf(s)[1]
	for i := range b.Len() {
		del = append(del, ID(b.IDAt(i)).String())
	}
	blocks := len(blocksOf(s))
	_, err := s.Delete(del...)
	require.NoError(t, err)
	assert.Len(t, blocksOf(s), blocks-1, "a block with no entry left is freed")
	live := slices.DeleteFunc(slices.Clone(all), func(id ID) bool { return slices.Contains(del, id.String()) })
	require.EqualValues(t, len(live), s.Len())

	bounds := []string{"-", "+", "0", "1", "1-1", "(1-1", "40", "(40", "40-2", "(40-2",
		"77-1", "(77-1", "120", "(120", "121", "(0-5", "60-9", "(60-9"}
	for _, start := range bounds {
		for _, end := range bounds {
			lo, hi, _, err := parseRange(start, end)
			require.NoError(t, err)
			var want []string
			for _, id := range live {
				if !id.Less(lo) && !hi.Less(id) {
					want = append(want, id.String())
				}
			}
			for _, count := range []int{0, 1, 5} {
				got, err := s.Range(start, end, count)
				require.NoError(t, err)
				w := want
				if count > 0 && len(w) > count {
					w = w[:count]
				}
				assert.Equal(t, w, idsOrNil(got), "Range(%q, %q, %d)", start, end, count)

				rev, err := s.RevRange(end, start, count)
				require.NoError(t, err)
				w = slices.Clone(want)
				slices.Reverse(w)
				if count > 0 && len(w) > count {
					w = w[:count]
				}
				assert.Equal(t, w, idsOrNil(rev), "RevRange(%q, %q, %d)", end, start, count)
			}
		}
	}
	// Fields come back with their entries.
	got, err := s.Range("10-2", "10-2", 0)
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, reading("10", "2"), got[0].Fields)
}

func TestRangeResultsStayValid(t *testing.T) {
	s := streamWith(t)
	for i := 1; i <= 300; i++ {
		mustAdd(t, s, strconv.Itoa(i), Fields("n", strconv.Itoa(i), "pad", "p")...)
	}
	first, err := s.Range("-", "+", 0)
	require.NoError(t, err)
	// Reuse internal buffers, then change the stream.
	for range 5 {
		_, err = s.RevRange("+", "-", 0)
		require.NoError(t, err)
	}
	_, err = s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 10})
	require.NoError(t, err)
	mustAdd(t, s, "1000", Fields("n", "overwritten?")...)
	require.Len(t, first, 300)
	for i, e := range first {
		assert.Equal(t, Fields("n", strconv.Itoa(i+1), "pad", "p"), e.Fields)
	}
}

func TestLen(t *testing.T) {
	s := NewStream()
	assert.Zero(t, s.Len())
	for i := 1; i <= 250; i++ {
		mustAdd(t, s, strconv.Itoa(i))
		require.EqualValues(t, i, s.Len())
	}
	_, err := s.Delete("1", "2", "2", "999")
	require.NoError(t, err)
	assert.EqualValues(t, 248, s.Len())
	_, err = s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 100})
	require.NoError(t, err)
	assert.EqualValues(t, 100, s.Len())
}
