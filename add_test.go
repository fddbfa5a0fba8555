package xstream

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAddAutoIDFromClock(t *testing.T) {
	clk := newTestClock(1000)
	s := NewStream(WithClock(clk.now))
	add := func() ID { return mustAdd(t, s, "") }

	assert.Equal(t, ID{1000, 0}, add())
	assert.Equal(t, ID{1000, 1}, mustAdd(t, s, "*"), `"*" is an auto ID too`)
	assert.Equal(t, ID{1000, 2}, add(), "same millisecond: next sequence")
	clk.set(1005)
	assert.Equal(t, ID{1005, 0}, add(), "later millisecond: sequence 0")
	clk.set(900)
	assert.Equal(t, ID{1005, 1}, add(), "clock went backwards: keeps the last ms")
	assert.Equal(t, ID{1005, 2}, add())
	clk.set(1006)
	assert.Equal(t, ID{1006, 0}, add())
	assert.Equal(t, ID{1006, 0}, s.LastID())
	assert.EqualValues(t, 7, s.Len())
}

func TestAddAutoIDSequenceExhausted(t *testing.T) {
	clk := newTestClock(50)
	s := NewStream(WithClock(clk.now))
	mustAdd(t, s, "50-"+strconv.FormatUint(maxU, 10))
	assert.Equal(t, ID{51, 0}, mustAdd(t, s, ""), "sequence exhausted: the ms moves on")
	clk.set(10)
	assert.Equal(t, ID{51, 1}, mustAdd(t, s, ""))

	// The same with the clock behind the last ID.
	s = NewStream(WithClock(clk.now))
	mustAdd(t, s, "70-"+strconv.FormatUint(maxU, 10))
	assert.Equal(t, ID{71, 0}, mustAdd(t, s, ""))
}

func TestAddAutoIDOnEmptyStreamAtEpoch(t *testing.T) {
	s := NewStream(WithClock(newTestClock(0).now))
	assert.Equal(t, ID{0, 1}, mustAdd(t, s, ""), "an auto ID is never 0-0")
	assert.Equal(t, ID{0, 2}, mustAdd(t, s, ""))
}

func TestAddAutoIDClockBeforeEpoch(t *testing.T) {
	// A zero time.Time (year 1) or any time before 1970 counts as ms 0; it
	// must not wrap around to a huge ms that would exhaust the stream.
	for _, at := range []time.Time{{}, time.UnixMilli(-1), time.Unix(-86400, 0)} {
		s := NewStream(WithClock(func() time.Time { return at }))
		assert.Equal(t, ID{0, 1}, mustAdd(t, s, ""), "clock at %v", at)
		assert.Equal(t, ID{0, 2}, mustAdd(t, s, ""), "clock at %v", at)
	}
}

func TestAddExplicitIDs(t *testing.T) {
	s := NewStream()
	assert.Equal(t, ID{0, 1}, mustAdd(t, s, "0-1"))
	assert.Equal(t, ID{5, 3}, mustAdd(t, s, "5-3"))
	assert.Equal(t, ID{7, 0}, mustAdd(t, s, "7"), "a bare ms means ms-0")
	assert.Equal(t, ID{7, 1}, mustAdd(t, s, "7-1"))
	assert.Equal(t, ID{maxU, 0}, mustAdd(t, s, strconv.FormatUint(maxU, 10)))
	es, err := s.Range("-", "+", 0)
	require.NoError(t, err)
	assert.Equal(t, []string{"0-1", "5-3", "7-0", "7-1", "18446744073709551615-0"}, ids(es))
}

func TestAddPartialStarSeq(t *testing.T) {
	s := NewStream()
	assert.Equal(t, ID{0, 1}, mustAdd(t, s, "0-*"), `"0-*" on an empty stream is 0-1`)
	assert.Equal(t, ID{0, 2}, mustAdd(t, s, "0-*"))
	assert.Equal(t, ID{5, 0}, mustAdd(t, s, "5-*"), "a new ms starts at sequence 0")
	assert.Equal(t, ID{5, 1}, mustAdd(t, s, "5-*"), "same ms as the last ID: next sequence")
	mustAdd(t, s, "5-9")
	assert.Equal(t, ID{5, 10}, mustAdd(t, s, "5-*"))

	t2 := NewStream()
	assert.Equal(t, ID{9, 0}, mustAdd(t, t2, "9-*"), `"ms-*" on an empty stream is ms-0`)
}

func TestAddRejectsBadIDs(t *testing.T) {
	s := streamWith(t, "5-3", "5-4")
	for _, c := range []struct {
		id       string
		sentinel error
		names    []string
	}{
		{"0-0", ErrZeroID, []string{`"0-0"`}},
		{"0", ErrZeroID, []string{`"0"`}},
		{"5-4", ErrIDTooSmall, []string{`"5-4"`, "5-4"}},
		{"5-3", ErrIDTooSmall, []string{`"5-3"`}},
		{"5", ErrIDTooSmall, []string{`"5"`, "5-0", "5-4"}},
		{"1-100", ErrIDTooSmall, []string{`"1-100"`, "5-4"}},
		{"4-*", ErrIDTooSmall, []string{`"4-*"`, "5-4"}},
		{"0-*", ErrIDTooSmall, []string{`"0-*"`}},
		{"-", ErrInvalidID, []string{`"-"`}},
		{"+", ErrInvalidID, []string{`"+"`}},
		{"$", ErrInvalidID, []string{`"$"`}},
		{">", ErrInvalidID, []string{`">"`}},
		{"(6-0", ErrInvalidID, []string{`"(6-0"`}},
		{"*-1", ErrInvalidID, []string{`"*-1"`}},
		{"6-**", ErrInvalidID, []string{`"6-**"`}},
		{"6-*-1", ErrInvalidID, []string{`"6-*-1"`}},
		{"**", ErrInvalidID, []string{`"**"`}},
		{"abc", ErrInvalidID, []string{`"abc"`}},
		{"6-", ErrInvalidID, []string{`"6-"`}},
		{"18446744073709551616-0", ErrInvalidID, []string{`"18446744073709551616-0"`}},
	} {
		before := snap(t, s)
		_, err := s.Add(AddArgs{ID: c.id}, Fields("f", "v")...)
		requireErr(t, err, c.sentinel, c.names...)
		requireUnchanged(t, s, before)
	}
	// Nothing was consumed: the next auto-sequence ID follows 5-4.
	assert.Equal(t, ID{5, 5}, mustAdd(t, s, "5-*"))
}

func TestAddZeroIDOnEmptyStream(t *testing.T) {
	s := NewStream()
	before := snap(t, s)
	_, err := s.Add(AddArgs{ID: "0-0"}, Fields("f", "v")...)
	requireErr(t, err, ErrZeroID, `"0-0"`)
	requireUnchanged(t, s, before)
}

func TestAddStarSeqExhausted(t *testing.T) {
	s := streamWith(t, "7-"+strconv.FormatUint(maxU, 10))
	before := snap(t, s)
	_, err := s.Add(AddArgs{ID: "7-*"}, Fields("f", "v")...)
	requireErr(t, err, ErrIDTooSmall, `"7-*"`)
	requireUnchanged(t, s, before)
	assert.Equal(t, ID{8, 0}, mustAdd(t, s, "8-*"))
}

func TestAddStreamExhausted(t *testing.T) {
	clk := newTestClock(1)
	s := NewStream(WithClock(clk.now))
	mustAdd(t, s, strconv.FormatUint(maxU, 10)+"-"+strconv.FormatUint(maxU-1, 10))
	assert.Equal(t, MaxID(), mustAdd(t, s, ""), "the auto ID may be MaxID() itself")
	for _, id := range []string{"", "*", strconv.FormatUint(maxU, 10) + "-*", "1-1", MaxID().String()} {
		before := snap(t, s)
		_, err := s.Add(AddArgs{ID: id}, Fields("f", "v")...)
		requireErr(t, err, ErrStreamExhausted, MaxID().String())
		requireUnchanged(t, s, before)
	}
	// Emptying the stream does not make room.
	_, err := s.Trim(TrimArgs{Strategy: TrimMaxLen})
	require.NoError(t, err)
	_, err = s.Add(AddArgs{}, Fields("f", "v")...)
	requireErr(t, err, ErrStreamExhausted)
}

func TestAddExplicitMaxID(t *testing.T) {
	s := NewStream()
	assert.Equal(t, MaxID(), mustAdd(t, s, MaxID().String()))
	_, err := s.Add(AddArgs{ID: "*"}, Fields("f", "v")...)
	requireErr(t, err, ErrStreamExhausted)
}

func TestAddNoFields(t *testing.T) {
	s := streamWith(t, "1-1")
	for _, id := range []string{"", "*", "2-0", "2-*", "0-0", "bad"} {
		before := snap(t, s)
		_, err := s.Add(AddArgs{ID: id})
		requireErr(t, err, ErrNoFields)
		requireUnchanged(t, s, before)
		_, err = s.Add(AddArgs{ID: id}, []Field{}...)
		requireErr(t, err, ErrNoFields)
		requireUnchanged(t, s, before)
	}
}

func TestAddFieldsKeptInOrder(t *testing.T) {
	big := strings.Repeat("x", 70000) // larger than a block, and than 64 KiB
	entries := [][]Field{
		Fields("a", "1", "b", "2"),
		Fields("a", "3", "b", "4"), // same names as the first
		Fields("b", "5", "a", "6"), // same names, other order
		Fields("a", "1", "a", "2", "a", "3"),
		Fields("", "", "\x00", "\x00\xff", "k\r\n", "v\r\n"),
		Fields("a", "x"),
		Fields("big", big, "after", "big"),
		Fields("a", "7", "b", "8"),
		{{Name: "ünïcode", Value: "\xff\xfe"}},
	}
	s := NewStream()
	for i, fs := range entries {
		mustAdd(t, s, strconv.Itoa(i+1), fs...)
	}
	got, err := s.Range("-", "+", 0)
	require.NoError(t, err)
	require.Len(t, got, len(entries))
	for i, e := range got {
		assert.Equal(t, ID{uint64(i + 1), 0}, e.ID)
		assert.Equal(t, entries[i], e.Fields, "entry %d", i+1)
	}
	// The caller's slice is not kept: changing it changes no entry.
	fs := Fields("k", "v")
	id := mustAdd(t, s, "", fs...)
	fs[0].Value = "changed"
	got, err = s.Range(id.String(), id.String(), 0)
	require.NoError(t, err)
	assert.Equal(t, Fields("k", "v"), got[0].Fields)
}

func TestFieldsPairs(t *testing.T) {
	assert.Equal(t, []Field{{"a", "1"}, {"b", "2"}}, Fields("a", "1", "b", "2"))
	assert.Empty(t, Fields())
	//lint:ignore SA5012 an odd number of arguments is what this checks
	assert.Panics(t, func() { Fields("a") })
}

// badTrims are invalid trim options with the sentinel and the text the
// error must contain.
var badTrims = []struct {
	args     TrimArgs
	sentinel error
	names    []string
}{
	{TrimArgs{Strategy: TrimMaxLen, MaxLen: 1, MinID: "5-0"}, ErrTrimConflict, []string{`"5-0"`}},
	{TrimArgs{Strategy: TrimMinID, MinID: "5-0", MaxLen: 3}, ErrTrimConflict, []string{"3"}},
	{TrimArgs{Strategy: TrimMaxLen, MaxLen: 1, Limit: 10}, ErrTrimConflict, []string{"10"}},
	{TrimArgs{Strategy: TrimMinID, MinID: "5", Limit: 4}, ErrTrimConflict, []string{"4"}},
	{TrimArgs{Strategy: TrimMaxLen, MaxLen: -1}, ErrInvalidArgument, []string{"-1"}},
	{TrimArgs{Strategy: TrimMaxLen, MaxLen: -7, Approx: true}, ErrInvalidArgument, []string{"-7"}},
	{TrimArgs{Strategy: TrimMaxLen, MaxLen: 1, Approx: true, Limit: -2}, ErrInvalidArgument, []string{"-2"}},
	{TrimArgs{Strategy: TrimMinID, MinID: "5", Approx: true, Limit: -3}, ErrInvalidArgument, []string{"-3"}},
	{TrimArgs{Strategy: TrimMinID, MinID: "x5"}, ErrInvalidID, []string{`"x5"`}},
	{TrimArgs{Strategy: TrimMinID}, ErrInvalidID, []string{`""`}},
	{TrimArgs{Strategy: TrimMinID, MinID: "5-*"}, ErrInvalidID, []string{`"5-*"`}},
	{TrimArgs{Strategy: TrimStrategy(9), MaxLen: 1}, ErrInvalidArgument, []string{"9"}},
	{TrimArgs{MaxLen: 1}, ErrTrimConflict, nil},
	{TrimArgs{Approx: true}, ErrTrimConflict, nil},
	{TrimArgs{MinID: "5"}, ErrTrimConflict, []string{"5"}},
	{TrimArgs{Limit: 5}, ErrTrimConflict, nil},
}

func TestAddRejectsBadTrim(t *testing.T) {
	clk := newTestClock(100)
	s := NewStream(WithClock(clk.now))
	for range 300 {
		mustAdd(t, s, "", reading("1234", "19.8")...)
	}
	for _, c := range badTrims {
		before := snap(t, s)
		_, err := s.Add(AddArgs{Trim: c.args}, reading("1234", "20.1")...)
		requireErr(t, err, c.sentinel, c.names...)
		requireUnchanged(t, s, before)
	}
	// No auto ID was consumed by the failed calls.
	assert.Equal(t, ID{100, 300}, mustAdd(t, s, ""))
}

func TestAddWithTrim(t *testing.T) {
	s := streamWith(t, "1", "2", "3", "4")
	id, err := s.Add(AddArgs{ID: "5", Trim: TrimArgs{Strategy: TrimMaxLen, MaxLen: 2}}, Fields("f", "5")...)
	require.NoError(t, err)
	assert.Equal(t, ID{5, 0}, id)
	es, err := s.Range("-", "+", 0)
	require.NoError(t, err)
	assert.Equal(t, []string{"4-0", "5-0"}, ids(es))

	_, err = s.Add(AddArgs{ID: "9", Trim: TrimArgs{Strategy: TrimMinID, MinID: "5-0"}}, Fields("f", "9")...)
	require.NoError(t, err)
	es, err = s.Range("-", "+", 0)
	require.NoError(t, err)
	assert.Equal(t, []string{"5-0", "9-0"}, ids(es))
	info := must(s.Info())
	assert.EqualValues(t, 6, info.EntriesAdded)
	assert.Equal(t, ID{5, 0}, info.RecordedFirstEntryID)
	assert.Equal(t, ID{}, info.MaxDeletedEntryID, "trimming is not deleting")
}

func TestAddTrimToEmptyKeepsState(t *testing.T) {
	s := streamWith(t, "1", "2")
	_, err := s.Delete("1-0")
	require.NoError(t, err)
	id, err := s.Add(AddArgs{ID: "3-5", Trim: TrimArgs{Strategy: TrimMaxLen, MaxLen: 0}}, Fields("f", "v")...)
	require.NoError(t, err)
	assert.Equal(t, ID{3, 5}, id)
	assert.Zero(t, s.Len())
	info := must(s.Info())
	assert.Equal(t, StreamInfo{
		LastGeneratedID:   ID{3, 5},
		MaxDeletedEntryID: ID{1, 0},
		EntriesAdded:      3,
	}, info)
	es, err := s.Range("-", "+", 0)
	require.NoError(t, err)
	assert.Empty(t, es)

	// The emptied stream still rejects IDs not above its last ID…
	before := snap(t, s)
	_, err = s.Add(AddArgs{ID: "3-5"}, Fields("f", "v")...)
	requireErr(t, err, ErrIDTooSmall, "3-5")
	requireUnchanged(t, s, before)
	// …and "ms-*" continues its sequence.
	assert.Equal(t, ID{3, 6}, mustAdd(t, s, "3-*"))
	info = must(s.Info())
	assert.Equal(t, ID{3, 6}, info.RecordedFirstEntryID)
	assert.EqualValues(t, 4, info.EntriesAdded)
	assert.EqualValues(t, 1, info.Length)
}

func TestAddRejectedDoesNotTrim(t *testing.T) {
	trims := []TrimArgs{
		{Strategy: TrimMaxLen},
		{Strategy: TrimMaxLen, MaxLen: 10, Approx: true},
		{Strategy: TrimMinID, MinID: "99999"},
		{Strategy: TrimMinID, MinID: "99999", Approx: true, Limit: 1000},
	}
	s := sizedStream(t, 250)
	for _, tr := range trims {
		for _, c := range []struct {
			id       string
			fields   []Field
			sentinel error
		}{
			{"250", Fields("f", "v"), ErrIDTooSmall},
			{"3-*", Fields("f", "v"), ErrIDTooSmall},
			{"0-0", Fields("f", "v"), ErrZeroID},
			{"x", Fields("f", "v"), ErrInvalidID},
			{"*", nil, ErrNoFields},
		} {
			before := snap(t, s)
			_, err := s.Add(AddArgs{ID: c.id, Trim: tr}, c.fields...)
			requireErr(t, err, c.sentinel)
			requireUnchanged(t, s, before)
		}
	}
	ex := streamWith(t, MaxID().String())
	before := snap(t, ex)
	_, err := ex.Add(AddArgs{Trim: trims[0]}, Fields("f", "v")...)
	requireErr(t, err, ErrStreamExhausted)
	requireUnchanged(t, ex, before)
}

func TestAddWithApproxTrimAndLimit(t *testing.T) {
	s := sizedStream(t, 250)
	lives := blockLives(s)
	require.Greater(t, len(lives), 2)
	// Limit below one block: nothing goes.
	_, err := s.Add(AddArgs{ID: "251", Trim: TrimArgs{Strategy: TrimMaxLen, MaxLen: 1, Approx: true, Limit: lives[0] - 1}}, reading("1", "1")...)
	require.NoError(t, err)
	assert.EqualValues(t, 251, s.Len())
	// Limit of one block: exactly the first block goes.
	_, err = s.Add(AddArgs{ID: "252", Trim: TrimArgs{Strategy: TrimMaxLen, MaxLen: 1, Approx: true, Limit: lives[0]}}, reading("1", "1")...)
	require.NoError(t, err)
	assert.EqualValues(t, 252-lives[0], s.Len())
	requireIDs(t, s, int(lives[0])+1, 252)
	// No limit: whole blocks down to the threshold, the new entry kept.
	id, err := s.Add(AddArgs{Trim: TrimArgs{Strategy: TrimMaxLen, MaxLen: 1, Approx: true}}, reading("1", "1")...)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, s.Len(), int64(1))
	got, err := s.RevRange("+", "-", 1)
	require.NoError(t, err)
	assert.Equal(t, id, got[0].ID)
	assert.Len(t, blocksOf(s), 1, "every block but the last went")
}
