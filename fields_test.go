package xstream

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestEntryValue(t *testing.T) {
	e := Entry{Fields: Fields("tag", "a", "n", "1", "tag", "b", "empty", "")}
	v, ok := e.Value("tag")
	require.True(t, ok)
	require.Equal(t, "a", v, "the first value of a repeated name")
	require.Equal(t, []string{"a", "b"}, e.Values("tag"))
	v, ok = e.Value("empty")
	require.True(t, ok, "an empty value is still there")
	require.Equal(t, "", v)
	v, ok = e.Value("missing")
	require.False(t, ok)
	require.Equal(t, "", v)
	require.Nil(t, e.Values("missing"))
	require.Nil(t, Entry{}.Values("tag"))
	_, ok = Entry{}.Value("tag")
	require.False(t, ok)
	// Names are compared exactly.
	_, ok = e.Value("TAG")
	require.False(t, ok)
}

func TestRecordValue(t *testing.T) {
	r := Record{Fields: Fields("k", "1", "k", "2")}
	v, ok := r.Value("k")
	require.True(t, ok)
	require.Equal(t, "1", v)
	require.Equal(t, []string{"1", "2"}, r.Values("k"))
	_, ok = r.Value("x")
	require.False(t, ok)
	require.Nil(t, r.Values("x"))
}

// The entries a stream returns answer Value as their fields say.
func TestEntryValueFromRange(t *testing.T) {
	s := NewStream()
	mustAdd(t, s, "1-1", Fields("sensor", "s1", "temp", "19.8")...)
	es, err := s.Range("-", "+", 0)
	require.NoError(t, err)
	v, ok := es[0].Value("temp")
	require.True(t, ok)
	require.Equal(t, "19.8", v)
}
