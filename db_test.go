package xstream

import (
	"context"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestDBStreamGetOrCreate(t *testing.T) {
	db := NewDB()
	_, ok := db.Lookup("a")
	assert.False(t, ok)
	s := db.Stream("a")
	require.NotNil(t, s)
	assert.Equal(t, "a", s.Name())
	assert.Same(t, s, db.Stream("a"))
	got, ok := db.Lookup("a")
	require.True(t, ok)
	assert.Same(t, s, got)
	assert.Zero(t, s.Len(), "Stream creates an empty stream")
	assert.Equal(t, 1, db.Len())
	assert.Equal(t, "", NewStream().Name())
}

func TestDBAddCreatesOnFirstAdd(t *testing.T) {
	clk := newTestClock(42)
	db := NewDB(WithClock(clk.now))
	id, err := db.Add("s", AddArgs{}, Fields("f", "v")...)
	require.NoError(t, err)
	assert.Equal(t, ID{42, 0}, id, "streams of a DB use its clock")
	s, ok := db.Lookup("s")
	require.True(t, ok)
	id, err = db.Add("s", AddArgs{NoMkStream: true}, Fields("f", "w")...)
	require.NoError(t, err, "NoMkStream adds to an existing stream")
	assert.Equal(t, ID{42, 1}, id)
	assert.EqualValues(t, 2, s.Len())
	got, err := s.Range("-", "+", 0)
	require.NoError(t, err)
	assert.Equal(t, []Entry{{ID{42, 0}, Fields("f", "v")}, {ID{42, 1}, Fields("f", "w")}}, got)
}

func TestDBFailedAddCreatesNothing(t *testing.T) {
	db := NewDB()
	_, err := db.Add("missing", AddArgs{NoMkStream: true}, Fields("f", "v")...)
	requireErr(t, err, ErrNoStream, `"missing"`)
	_, err = db.Add("bad-id", AddArgs{ID: "0-0"}, Fields("f", "v")...)
	requireErr(t, err, ErrZeroID, `"0-0"`)
	_, err = db.Add("bad-id", AddArgs{ID: "zz"}, Fields("f", "v")...)
	requireErr(t, err, ErrInvalidID, `"zz"`)
	_, err = db.Add("no-fields", AddArgs{})
	requireErr(t, err, ErrNoFields)
	_, err = db.Add("bad-trim", AddArgs{Trim: TrimArgs{Strategy: TrimMaxLen, MaxLen: -1}}, Fields("f", "v")...)
	requireErr(t, err, ErrInvalidArgument, "-1")
	assert.Zero(t, db.Len())
	assert.Empty(t, db.Names(""))

	// On an existing stream a failed Add changes nothing either.
	_, err = db.Add("s", AddArgs{ID: "5"}, Fields("f", "v")...)
	require.NoError(t, err)
	s := db.Stream("s")
	before := snap(t, s)
	_, err = db.Add("s", AddArgs{ID: "4"}, Fields("f", "v")...)
	requireErr(t, err, ErrIDTooSmall, `"4"`)
	requireUnchanged(t, s, before)
}

func TestDBRemove(t *testing.T) {
	db := NewDB()
	for _, n := range []string{"a", "b", "c"} {
		_, err := db.Add(n, AddArgs{ID: "1"}, Fields("f", n)...)
		require.NoError(t, err)
	}
	old := db.Stream("a")
	assert.Equal(t, 2, must(db.Remove("a", "x", "b", "a")))
	assert.Equal(t, []string{"c"}, db.Names(""))
	assert.Equal(t, 1, db.Len())
	_, ok := db.Lookup("a")
	assert.False(t, ok)
	assert.Zero(t, must(db.Remove()))

	// A new stream of the same name starts afresh.
	id, err := db.Add("a", AddArgs{ID: "1"}, Fields("f", "new")...)
	require.NoError(t, err)
	assert.Equal(t, ID{1, 0}, id)
	assert.NotSame(t, old, db.Stream("a"))
	assert.EqualValues(t, 1, old.Len(), "a removed stream keeps working for who holds it")
}

func TestDBNames(t *testing.T) {
	db := NewDB()
	for _, n := range []string{"sensor:2", "sensor:10", "sensor:1", "orders", "", "Sensor", "sensor", "\xffz", "s\x00"} {
		db.Stream(n)
	}
	assert.Equal(t, []string{"", "Sensor", "orders", "s\x00", "sensor", "sensor:1", "sensor:10", "sensor:2", "\xffz"}, db.Names(""))
	assert.Equal(t, []string{"sensor:1", "sensor:10", "sensor:2"}, db.Names("sensor:"))
	assert.Equal(t, []string{"sensor:1", "sensor:10"}, db.Names("sensor:1"))
	assert.Empty(t, db.Names("x"))
	assert.Equal(t, 9, db.Len())
}

func TestDBReadNoBlock(t *testing.T) {
	db := NewDB()
	for _, id := range []string{"1", "2", "3"} {
		_, err := db.Add("a", AddArgs{ID: id}, Fields("f", "a"+id)...)
		require.NoError(t, err)
	}
	_, err := db.Add("b", AddArgs{ID: "5"}, Fields("f", "b5")...)
	require.NoError(t, err)
	ctx := context.Background()

	got, err := db.Read(ctx, ReadArgs{}, "a", "1", "missing", "0", "b", "0")
	require.NoError(t, err)
	require.Len(t, got, 2, "streams with nothing to return are left out")
	assert.Equal(t, "a", got[0].Stream)
	assert.Equal(t, []string{"2-0", "3-0"}, ids(got[0].Entries))
	assert.Equal(t, Fields("f", "a2"), got[0].Entries[0].Fields)
	assert.Equal(t, "b", got[1].Stream)
	assert.Equal(t, []string{"5-0"}, ids(got[1].Entries))

	got, err = db.Read(ctx, ReadArgs{Count: 1}, "b", "0", "a", "0")
	require.NoError(t, err)
	require.Len(t, got, 2)
	assert.Equal(t, "b", got[0].Stream, "results follow the order of the arguments")
	assert.Equal(t, []string{"1-0"}, ids(got[1].Entries), "Count caps each stream")

	got, err = db.Read(ctx, ReadArgs{}, "a", "$", "b", "+")
	require.NoError(t, err)
	require.Len(t, got, 1)
	assert.Equal(t, "b", got[0].Stream)
	assert.Equal(t, []string{"5-0"}, ids(got[0].Entries), `"+" is the last entry`)

	got, err = db.Read(ctx, ReadArgs{}, "missing", "$")
	require.NoError(t, err)
	assert.Empty(t, got)
}

func TestDBReadRejects(t *testing.T) {
	db := NewDB()
	_, err := db.Add("a", AddArgs{ID: "1"}, Fields("f", "v")...)
	require.NoError(t, err)
	ctx := context.Background()
	for _, c := range []struct {
		args     ReadArgs
		pairs    []string
		sentinel error
		name     string
	}{
		{ReadArgs{}, nil, ErrInvalidArgument, "0"},
		{ReadArgs{}, []string{"a"}, ErrInvalidArgument, "1"},
		{ReadArgs{}, []string{"a", "0", "b"}, ErrInvalidArgument, "3"},
		{ReadArgs{Count: -2}, []string{"a", "0"}, ErrInvalidArgument, "-2"},
		{ReadArgs{}, []string{"a", "-"}, ErrInvalidID, `"-"`},
		{ReadArgs{}, []string{"a", "0", "b", "x"}, ErrInvalidID, `"x"`},
		{ReadArgs{Block: BlockForever}, []string{"a", "1-*"}, ErrInvalidID, `"1-*"`},
		{ReadArgs{}, []string{"a", ">"}, ErrInvalidID, `">"`},
	} {
		got, err := db.Read(ctx, c.args, c.pairs...)
		requireErr(t, err, c.sentinel, c.name)
		assert.Nil(t, got)
	}
	assert.Equal(t, []string{"a"}, db.Names(""), "a failed Read creates nothing")
}
