package xstream

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// bigEntries adds n entries with values of up to maxLen random bytes to s,
// every third with the field names of the one before (so that blocks have
// master names) and the others with names of their own, and returns them.
func bigEntries(t *testing.T, rng *rand.Rand, s *Stream, n, maxLen int) []Entry {
	var want []Entry
	for i := 1; i <= n; i++ {
		v := strings.Repeat(string(rune('a'+i%26)), rng.IntN(maxLen)+1)
		fs := Fields("temp", v, "id", fmt.Sprint(i))
		if i%3 != 0 {
			fs = Fields(fmt.Sprint("own-", i%11), v)
		}
		id, err := s.Add(AddArgs{}, fs...)
		require.NoError(t, err)
		want = append(want, Entry{id, fs})
	}
	return want
}

// A collect past store.ChunkMin goes on in chunks; the entries read are still
// those added, whole and in pieces, in both orders, with the master names
// of blocks that began in an earlier chunk.
func TestCollectChunks(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	clk := newTestClock(1_700_000_000_000)
	s := NewStream(WithClock(clk.now))
	want := bigEntries(t, rng, s, 3000, 2000) // about 3 MB
	got, err := s.Range("-", "+", 0)
	require.NoError(t, err)
	require.Equal(t, want, got)
	rev, err := s.RevRange("+", "-", 0)
	require.NoError(t, err)
	require.Len(t, rev, len(want))
	for i, e := range rev {
		require.Equal(t, want[len(want)-1-i], e)
	}
	for lo := 0; lo < len(want); {
		n := 1 + rng.IntN(900)
		part, err := s.Range(want[lo].ID.String(), "+", n)
		require.NoError(t, err)
		require.Equal(t, want[lo:min(lo+n, len(want))], part)
		lo += n
	}
}

// GetRecords of a shard past store.ChunkMin returns the records put, partition
// keys included.
func TestCollectChunksRecords(t *testing.T) {
	ss, err := NewShardedStream(ShardedArgs{Shards: 1})
	require.NoError(t, err)
	var want []Record
	for i := range 2000 {
		fs := Fields("v", strings.Repeat("x", 500+i%700))
		r, err := ss.Put(fmt.Sprint("key-", i%37), PutArgs{}, fs...)
		require.NoError(t, err)
		want = append(want, Record{ShardID: r.ShardID, SequenceNumber: r.SequenceNumber, PartitionKey: fmt.Sprint("key-", i%37), Fields: fs})
	}
	it, err := ss.GetShardIterator(want[0].ShardID, IteratorArgs{Type: TrimHorizon})
	require.NoError(t, err)
	got, err := ss.GetRecords(it, 0)
	require.NoError(t, err)
	require.Equal(t, want, got.Records)
}

// A read of a whole big stream allocates about its bytes once: no growing
// buffer copied at every step, no copy of it into one string.
func TestCollectBigReadAllocatesItsSizeOnce(t *testing.T) {
	s := NewStream()
	value := strings.Repeat("v", 1000)
	for range 20_000 {
		_, err := s.Add(AddArgs{}, Fields("f", value)...)
		require.NoError(t, err)
	}
	const bytes = 20_000 * 1001
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	es, err := s.Range("-", "+", 0)
	runtime.ReadMemStats(&after)
	require.NoError(t, err)
	require.Len(t, es, 20_000)
	got := after.TotalAlloc - before.TotalAlloc
	t.Logf("a read of %d entries (%d bytes of names and values): %d bytes allocated", len(es), bytes, got)
	require.Less(t, float64(got), 1.5*bytes, "allocated %.2fx the bytes read", float64(got)/bytes)
}

// A collect past 2 GiB locates its strings with offsets past the range of
// an int32 (they were int32, and wrapped): the spans of entries collected
// after 3 GiB of earlier chunks point 3 GiB on, and a chunk that starts
// there gives them back. The earlier chunks are only counted, so that the
// test needs no 3 GiB of memory.
func TestCollectOffsetsPast2GiB(t *testing.T) {
	s := NewStream()
	want := bigEntries(t, rand.New(rand.NewPCG(5, 6)), s, 50, 20)
	const before = 3 << 30
	c := getCollector()
	defer putCollector(c)
	c.SealedLen = before
	s.mu.RLock()
	s.collectRangeLocked(c, ID{}, MaxID(), 0, false)
	s.mu.RUnlock()
	require.Len(t, c.IDs, len(want))
	chunk := string(c.Buf)
	tx := text{chunks: []string{"", chunk}, starts: []int{0, before}}
	spans := c.Spans
	for i, e := range want {
		require.Equal(t, e.ID, c.IDs[i])
		require.Equal(t, len(e.Fields), int(c.NF[i]))
		for k, f := range e.Fields {
			name, value := spans[2*k], spans[2*k+1]
			require.GreaterOrEqual(t, name.Off, before)
			require.Equal(t, f.Name, tx.at(name))
			require.Equal(t, f.Value, tx.at(value))
		}
		spans = spans[2*len(e.Fields):]
	}
	c.SealedLen = 0 // the pretended chunks are not there to drop
}
