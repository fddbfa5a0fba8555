package xstream

import (
	"context"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Stats counts what the stream did: adds, reads, deliveries, acks,
// claims, trims and deletions, with its length, pending entries, bytes
// and blocked readers; a durable DB's replay does not count.
func TestStreamStats(t *testing.T) {
	dir := t.TempDir()
	clk := newTestClock(1_700_000_000_000)
	db, err := Open(dir, WithClock(clk.now))
	require.NoError(t, err)
	s := db.Stream("s")
	for range 10 {
		_, err := s.Add(AddArgs{}, Fields("f", "v")...)
		require.NoError(t, err)
	}
	es, err := s.Range("-", "+", 4)
	require.NoError(t, err)
	require.Len(t, es, 4)
	_, err = s.Read(context.Background(), "0", ReadArgs{Count: 3})
	require.NoError(t, err)
	require.NoError(t, s.CreateGroup("g", "0", GroupOptions{}))
	got, err := s.ReadGroup(context.Background(), "g", "c", ">", ReadGroupArgs{Count: 5})
	require.NoError(t, err)
	require.Len(t, got, 5)
	_, err = s.ReadGroup(context.Background(), "g", "c", "0", ReadGroupArgs{Count: 2}) // history: 2 redeliveries
	require.NoError(t, err)
	n, err := s.Ack("g", got[0].ID.String(), got[1].ID.String())
	require.NoError(t, err)
	require.Equal(t, int64(2), n)
	clk.advance(time.Second)
	cl, err := s.Claim("g", "c2", 0, []string{got[2].ID.String()}, ClaimArgs{})
	require.NoError(t, err)
	require.Len(t, cl, 1)
	d, err := s.Delete(got[4].ID.String())
	require.NoError(t, err)
	require.Equal(t, int64(1), d)
	tr, err := s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 6})
	require.NoError(t, err)
	require.Equal(t, int64(3), tr)

	st := s.Stats()
	assert.Equal(t, StreamStats{Added: 10, Read: 7, Delivered: 7, Acked: 2, Claimed: 1, Trimmed: 3, Deleted: 1,
		Length: 6, Pending: 3, Bytes: st.Bytes}, st) // deletions and trims keep references
	assert.Positive(t, st.Bytes)
	assert.Equal(t, st, db.Stats())

	// A blocked reader shows.
	done := make(chan error)
	go func() {
		_, err := s.Read(context.Background(), "$", ReadArgs{Block: BlockForever})
		done <- err
	}()
	for s.Stats().Blocked != 1 {
		runtime.Gosched()
	}
	_, err = s.Add(AddArgs{}, Fields("f", "v")...)
	require.NoError(t, err)
	require.NoError(t, <-done)

	// Reopened: the counters start again, the sizes are the stream's.
	require.NoError(t, db.Close())
	db, err = Open(dir, WithClock(clk.now))
	require.NoError(t, err)
	defer db.Close()
	s2, ok := db.Lookup("s")
	require.True(t, ok)
	st2 := s2.Stats()
	assert.Equal(t, StreamStats{Length: 7, Pending: st.Pending, Bytes: st2.Bytes}, st2)
}
