package xstream

import (
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const maxU = math.MaxUint64

func TestParseIDAccepts(t *testing.T) {
	for in, want := range map[string]ID{
		"0-0":                  {0, 0},
		"1-2":                  {1, 2},
		"5":                    {5, 0},
		"0":                    {0, 0},
		"007-01":               {7, 1},
		"18446744073709551615": {maxU, 0},
		"18446744073709551615-18446744073709551615": MaxID(),
		"1700000000000-42":                          {1700000000000, 42},
	} {
		got, err := ParseID(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
}

func TestParseIDRejects(t *testing.T) {
	for _, in := range []string{
		"", "-", "+", "$", ">", "*", "5-*", "*-5", "(5-0", "(5",
		"1-2-3", "-1", "1-", "-1-1", "a", "1-a", " 1", "1 ", "+1", "1-+2",
		"0x10", "1.5", "1e3",
		"18446744073709551616", "1-18446744073709551616", "99999999999999999999999",
		strings.Repeat("1", 128),
	} {
		_, err := ParseID(in)
		requireErr(t, err, ErrInvalidID, strconv.Quote(in))
	}
}

func TestIDText(t *testing.T) {
	id := ID{1700000000000, 7}
	assert.Equal(t, "1700000000000-7", id.String())
	assert.Equal(t, "18446744073709551615-18446744073709551615", MaxID().String())
	assert.Equal(t, "0-0", ID{}.String())
	assert.Equal(t, []byte("x:3-4"), ID{3, 4}.AppendText([]byte("x:")))

	b, err := id.MarshalText()
	require.NoError(t, err)
	var back ID
	require.NoError(t, back.UnmarshalText(b))
	assert.Equal(t, id, back)

	// JSON uses the text form.
	j, err := json.Marshal(map[string]ID{"id": id})
	require.NoError(t, err)
	assert.JSONEq(t, `{"id":"1700000000000-7"}`, string(j))

	back = ID{9, 9}
	err = back.UnmarshalText([]byte("nope"))
	requireErr(t, err, ErrInvalidID, `"nope"`)
	assert.Equal(t, ID{9, 9}, back, "a failed UnmarshalText changed the ID")
}

func TestIDOrder(t *testing.T) {
	ordered := []ID{{0, 0}, {0, 1}, {0, maxU}, {1, 0}, {1, 1}, {2, 0}, {maxU, 0}, MaxID()}
	for i, a := range ordered {
		for j, b := range ordered {
			want := 0
			if i < j {
				want = -1
			} else if i > j {
				want = 1
			}
			assert.Equal(t, want, a.Compare(b), "%s vs %s", a, b)
			assert.Equal(t, i < j, a.Less(b), "%s < %s", a, b)
		}
	}
	assert.True(t, ID{}.IsZero())
	assert.False(t, ID{0, 1}.IsZero())
	assert.False(t, ID{1, 0}.IsZero())
}

func TestIDNextPrev(t *testing.T) {
	for _, c := range []struct{ id, next ID }{
		{ID{0, 0}, ID{0, 1}},
		{ID{5, 7}, ID{5, 8}},
		{ID{5, maxU}, ID{6, 0}},
		{ID{maxU, maxU - 1}, MaxID()},
	} {
		n, ok := c.id.Next()
		require.True(t, ok)
		assert.Equal(t, c.next, n)
		p, ok := c.next.Prev()
		require.True(t, ok)
		assert.Equal(t, c.id, p)
	}
	_, ok := MaxID().Next()
	assert.False(t, ok)
	_, ok = ID{}.Prev()
	assert.False(t, ok)
}

func TestParseRangeBounds(t *testing.T) {
	for _, c := range []struct {
		start, end string
		lo, hi     ID
		empty      bool
	}{
		{"-", "+", ID{}, MaxID(), false},
		{"1-2", "3-4", ID{1, 2}, ID{3, 4}, false},
		{"5", "5", ID{5, 0}, ID{5, maxU}, false},
		{"5", "7", ID{5, 0}, ID{7, maxU}, false},
		{"(5-3", "(5-9", ID{5, 4}, ID{5, 8}, false},
		{"(5", "(7", ID{5, 1}, ID{7, maxU - 1}, false},
		{"(5-" + strconv.FormatUint(maxU, 10), "+", ID{6, 0}, MaxID(), false},
		{"-", "(6-0", ID{}, ID{5, maxU}, false},
		{"(0-0", "+", ID{0, 1}, MaxID(), false},
		{"-", "(" + MaxID().String(), ID{}, ID{maxU, maxU - 1}, false},
		{"5-5", "5-4", ID{5, 5}, ID{5, 4}, true},
		{"(5-5", "5-5", ID{5, 6}, ID{5, 5}, true},
		{"+", "-", MaxID(), ID{}, true},
	} {
		lo, hi, empty, err := parseRange(c.start, c.end)
		require.NoError(t, err, "%s %s", c.start, c.end)
		assert.Equal(t, c.lo, lo, "lo of %s %s", c.start, c.end)
		assert.Equal(t, c.hi, hi, "hi of %s %s", c.start, c.end)
		assert.Equal(t, c.empty, empty, "empty of %s %s", c.start, c.end)
	}
}

func TestParseRangeRejects(t *testing.T) {
	for _, c := range []struct{ start, end, bad string }{
		{"(" + MaxID().String(), "+", "(" + MaxID().String()},
		{"-", "(0-0", "(0-0"},
		{"*", "+", "*"},
		{"5-*", "+", "5-*"},
		{"$", "+", "$"},
		{"-", ">", ">"},
		{"(-", "+", "-"},
		{"-", "(+", "+"},
		{"((5", "+", "(5"},
		{"", "+", `""`},
		{"-", "x", "x"},
	} {
		_, _, _, err := parseRange(c.start, c.end)
		requireErr(t, err, ErrInvalidID, c.bad)
	}
}
