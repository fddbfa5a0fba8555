package xstream

import (
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream/internal/store"
)

// blocksOf returns the storage blocks of s, for tests that look at them.
func blocksOf(s *Stream) []*store.Block {
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := make([]*store.Block, s.st.NumBlocks())
	for i := range out {
		out[i] = s.st.Block(i)
	}
	return out
}

// testClock is a settable clock for WithClock.
type testClock struct {
	mu sync.Mutex
	ms int64
}

func newTestClock(ms int64) *testClock { return &testClock{ms: ms} }

func (c *testClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return time.UnixMilli(c.ms)
}

func (c *testClock) set(ms int64) {
	c.mu.Lock()
	c.ms = ms
	c.mu.Unlock()
}

func (c *testClock) advance(d time.Duration) {
	c.mu.Lock()
	c.ms += d.Milliseconds()
	c.mu.Unlock()
}

// reading is the entry of the benchmark workload.
func reading(sensor, temp string) []Field {
	return Fields("sensor-id", sensor, "temperature", temp)
}

// mustAdd adds an entry with the given ID (or auto ID for "") and fails the
// test on error.
func mustAdd(t testing.TB, s *Stream, id string, fields ...Field) ID {
	t.Helper()
	if len(fields) == 0 {
		fields = Fields("f", id)
	}
	got, err := s.Add(AddArgs{ID: id}, fields...)
	require.NoError(t, err)
	return got
}

// streamWith returns a stream holding one entry ("f", id) for each ID.
func streamWith(t testing.TB, ids ...string) *Stream {
	t.Helper()
	s := NewStream()
	checkStream(t, s)
	for _, id := range ids {
		mustAdd(t, s, id)
	}
	return s
}

// ids returns the IDs of entries as strings.
func ids(es []Entry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID.String()
	}
	return out
}

// snapshot is everything observable about a stream.
type snapshot struct {
	info   StreamInfo
	lastID ID
	len    int64
}

func snap(t testing.TB, s *Stream) snapshot {
	t.Helper()
	info, err := s.InfoFull(0)
	require.NoError(t, err)
	return snapshot{info: info, lastID: s.LastID(), len: s.Len()}
}

// requireUnchanged fails when s differs in any observable way from before.
func requireUnchanged(t testing.TB, s *Stream, before snapshot) {
	t.Helper()
	require.Equal(t, before, snap(t, s), "a failed call changed the stream")
}

// requireErr checks that err wraps sentinel and that its message names each
// of the given values.
func requireErr(t testing.TB, err, sentinel error, names ...string) {
	t.Helper()
	require.Error(t, err)
	require.Truef(t, errors.Is(err, sentinel), "error %q does not wrap %q", err, sentinel)
	for _, n := range names {
		require.Truef(t, strings.Contains(err.Error(), n), "error %q does not name %q", err, n)
	}
}

// must returns v, panicking on err: for calls whose error a test does not
// expect.
func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}
