package xstream

import (
	"crypto/md5"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func newSharded(t testing.TB, n int, clk *testClock) *ShardedStream {
	t.Helper()
	ss, err := NewShardedStream(ShardedArgs{Shards: n}, WithClock(clk.now))
	require.NoError(t, err)
	return ss
}

func mustList(t testing.TB, ss *ShardedStream, f ShardFilter) []ShardInfo {
	t.Helper()
	out, err := ss.ListShards(f)
	require.NoError(t, err)
	return out
}

func shardIDs(in []ShardInfo) []string {
	ids := make([]string, len(in))
	for i, s := range in {
		ids[i] = s.ShardID
	}
	return ids
}

func mustHashKey(t testing.TB, s string) HashKey {
	t.Helper()
	h, err := ParseHashKey(s)
	require.NoError(t, err)
	return h
}

func bigOf(h HashKey) *big.Int {
	b := new(big.Int).SetUint64(h.Hi)
	b.Lsh(b, 64)
	return b.Or(b, new(big.Int).SetUint64(h.Lo))
}

// requirePartition checks that the OPEN shards cover 0..2^128-1 exactly,
// in order, with no gap and no overlap.
func requirePartition(t testing.TB, ss *ShardedStream) {
	t.Helper()
	open := mustList(t, ss, ShardFilter{Type: FilterAtLatest})
	require.NotEmpty(t, open)
	sortByStart(open)
	next := new(big.Int)
	for _, s := range open {
		require.Equal(t, ShardOpen, s.State)
		require.Zero(t, bigOf(s.HashKeyRange.StartingHashKey).Cmp(next), "gap or overlap before %s", s.ShardID)
		require.False(t, s.HashKeyRange.EndingHashKey.Less(s.HashKeyRange.StartingHashKey), "empty range %s", s.ShardID)
		next = bigOf(s.HashKeyRange.EndingHashKey)
		next.Add(next, big.NewInt(1))
	}
	require.Zero(t, next.Cmp(new(big.Int).Lsh(big.NewInt(1), 128)), "open shards do not reach 2^128-1")
}

func sortByStart(in []ShardInfo) {
	for i := 1; i < len(in); i++ {
		for j := i; j > 0 && in[j].HashKeyRange.StartingHashKey.Less(in[j-1].HashKeyRange.StartingHashKey); j-- {
			in[j], in[j-1] = in[j-1], in[j]
		}
	}
}

func TestNewShardedStreamDividesEvenly(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	for _, n := range []int{1, 2, 3, 7, 10} {
		ss := newSharded(t, n, clk)
		shards := mustList(t, ss, ShardFilter{})
		require.Len(t, shards, n)
		two128 := new(big.Int).Lsh(big.NewInt(1), 128)
		q := new(big.Int).Div(two128, big.NewInt(int64(n)))
		for i, s := range shards {
			assert.Equal(t, shardID(i), s.ShardID)
			assert.Equal(t, ShardOpen, s.State)
			assert.Empty(t, s.ParentShardID)
			wantStart := new(big.Int).Mul(q, big.NewInt(int64(i)))
			assert.Zero(t, wantStart.Cmp(bigOf(s.HashKeyRange.StartingHashKey)), "shard %d start", i)
			wantEnd := new(big.Int).Sub(new(big.Int).Add(wantStart, q), big.NewInt(1))
			if i == n-1 {
				wantEnd.Sub(two128, big.NewInt(1))
			}
			assert.Zero(t, wantEnd.Cmp(bigOf(s.HashKeyRange.EndingHashKey)), "shard %d end", i)
			assert.True(t, s.SequenceNumberRange.EndingSequenceNumber.IsZero())
		}
		requirePartition(t, ss)
	}
	assert.Equal(t, "shardId-000000000042", shardID(42))
}

func TestNewShardedStreamBadArgs(t *testing.T) {
	_, err := NewShardedStream(ShardedArgs{Shards: 0})
	require.ErrorIs(t, err, ErrInvalidArgument)
	assert.Contains(t, err.Error(), "0")
	_, err = NewShardedStream(ShardedArgs{Shards: 1, Retention: -time.Second})
	require.ErrorIs(t, err, ErrInvalidArgument)
	assert.Contains(t, err.Error(), "-1s")
	ss, err := NewShardedStream(ShardedArgs{Shards: 1})
	require.NoError(t, err)
	assert.Equal(t, DefaultRetention, ss.Retention())
	assert.Equal(t, 24*time.Hour, ss.Retention())
}

func TestPutRoutesByMD5(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 4, clk)
	shards := mustList(t, ss, ShardFilter{})
	for i := range 200 {
		pk := strings.Repeat("k", i%5+1) + string(rune('a'+i%26))
		res, err := ss.Put(pk, PutArgs{}, Fields("n", "1")...)
		require.NoError(t, err)
		sum := md5.Sum([]byte(pk))
		want := new(big.Int).SetBytes(sum[:])
		var owner string
		for _, s := range shards {
			if bigOf(s.HashKeyRange.StartingHashKey).Cmp(want) <= 0 && want.Cmp(bigOf(s.HashKeyRange.EndingHashKey)) <= 0 {
				owner = s.ShardID
			}
		}
		require.Equal(t, owner, res.ShardID, "key %q", pk)
		require.Zero(t, bigOf(PartitionHashKey(pk)).Cmp(want))
	}
}

// TestPartitionHashKeyLengths: PartitionHashKey is the MD5 of the key's
// bytes for the empty key and keys around MD5's padding and block sizes
// (55, 56, 63, 64 and 65 bytes), of every byte value, and for keys that
// are parts of a larger string, which it leaves as it was.
func TestPartitionHashKeyLengths(t *testing.T) {
	var all strings.Builder
	for i := range 300 {
		all.WriteByte(byte(i * 7))
	}
	text := all.String()
	before := strings.Clone(text)
	for _, n := range []int{0, 1, 2, 9, 10, 16, 55, 56, 63, 64, 65, 119, 120, 128, 256, 299} {
		for _, from := range []int{0, 1} {
			k := text[from : from+n]
			sum := md5.Sum([]byte(k))
			want := new(big.Int).SetBytes(sum[:])
			require.Zero(t, bigOf(PartitionHashKey(k)).Cmp(want), "key of %d bytes from %d", n, from)
		}
	}
	require.Equal(t, before, text)
	empty := new(big.Int).SetBytes([]byte{0xd4, 0x1d, 0x8c, 0xd9, 0x8f, 0x00, 0xb2, 0x04, 0xe9, 0x80, 0x09, 0x98, 0xec, 0xf8, 0x42, 0x7e})
	require.Zero(t, bigOf(PartitionHashKey("")).Cmp(empty), "MD5 of the empty key")
}

func TestPutExplicitHashKeyAndOrder(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 2, clk)
	r1, err := ss.Put("a", PutArgs{ExplicitHashKey: "0"}, Fields("v", "1")...)
	require.NoError(t, err)
	r2, err := ss.Put("a", PutArgs{ExplicitHashKey: "340282366920938463463374607431768211455"}, Fields("v", "2")...)
	require.NoError(t, err)
	r3, err := ss.Put("b", PutArgs{ExplicitHashKey: "1"}, Fields("v", "3")...)
	require.NoError(t, err)
	assert.Equal(t, "shardId-000000000000", r1.ShardID)
	assert.Equal(t, "shardId-000000000001", r2.ShardID)
	assert.Equal(t, r1.ShardID, r3.ShardID)
	assert.True(t, r1.SequenceNumber.Less(r3.SequenceNumber))

	it, err := ss.GetShardIterator(r1.ShardID, IteratorArgs{Type: TrimHorizon})
	require.NoError(t, err)
	got, err := ss.GetRecords(it, 0)
	require.NoError(t, err)
	require.Len(t, got.Records, 2)
	assert.Equal(t, Record{ShardID: r1.ShardID, SequenceNumber: r1.SequenceNumber, PartitionKey: "a", Fields: Fields("v", "1")}, got.Records[0])
	assert.Equal(t, Record{ShardID: r1.ShardID, SequenceNumber: r3.SequenceNumber, PartitionKey: "b", Fields: Fields("v", "3")}, got.Records[1])
	assert.Equal(t, clk.now().UnixMilli(), got.Records[0].ArrivalTime().UnixMilli())
}

// TestPutFieldCounts stores records of 1 to 12 fields, through each of
// Put's buffers for the entry (up to 3 fields, up to 7, more), and reads
// back the partition key and the fields in order, unchanged in the
// caller's slice.
func TestPutFieldCounts(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 1, clk)
	for n := 1; n <= 12; n++ {
		fields := make([]Field, n)
		for i := range fields {
			fields[i] = Field{"f" + strconv.Itoa(i), strconv.Itoa(n*100 + i)}
		}
		want := slices.Clone(fields)
		pk := "key-" + strconv.Itoa(n)
		res, err := ss.Put(pk, PutArgs{}, fields...)
		require.NoError(t, err)
		assert.Equal(t, want, fields, "the caller's fields")
		it, err := ss.GetShardIterator(res.ShardID, IteratorArgs{Type: AtSequenceNumber, SequenceNumber: res.SequenceNumber.String()})
		require.NoError(t, err)
		got, err := ss.GetRecords(it, 1)
		require.NoError(t, err)
		require.Len(t, got.Records, 1)
		assert.Equal(t, pk, got.Records[0].PartitionKey)
		assert.Equal(t, want, got.Records[0].Fields, "%d fields", n)
	}
}

func TestPutBadInput(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 2, clk)
	cases := []struct {
		pk, ehk string
		fields  []Field
		err     error
		msg     string
	}{
		{"", "", Fields("a", "b"), ErrInvalidPartitionKey, "empty"},
		{strings.Repeat("x", 257), "", Fields("a", "b"), ErrInvalidPartitionKey, "257"},
		{strings.Repeat("é", 257), "", Fields("a", "b"), ErrInvalidPartitionKey, "257"},
		{"k", "12a", Fields("a", "b"), ErrInvalidHashKey, `"12a"`},
		{"k", "-1", Fields("a", "b"), ErrInvalidHashKey, `"-1"`},
		{"k", "340282366920938463463374607431768211456", Fields("a", "b"), ErrInvalidHashKey, "340282366920938463463374607431768211456"},
		{"k", "9999999999999999999999999999999999999999", Fields("a", "b"), ErrInvalidHashKey, "9999999999999999999999999999999999999999"},
		{"k", "", nil, ErrNoFields, `"k"`},
	}
	for _, c := range cases {
		_, err := ss.Put(c.pk, PutArgs{ExplicitHashKey: c.ehk}, c.fields...)
		require.ErrorIs(t, err, c.err, "pk %q ehk %q", c.pk, c.ehk)
		assert.Contains(t, err.Error(), c.msg)
	}
	// 256 characters of one byte, or of two bytes each, are fine.
	for _, pk := range []string{strings.Repeat("x", 256), strings.Repeat("é", 256)} {
		_, err := ss.Put(pk, PutArgs{}, Fields("a", "b")...)
		require.NoError(t, err, "%d bytes", len(pk))
	}
	total := 0
	for _, s := range mustList(t, ss, ShardFilter{}) {
		it, err := ss.GetShardIterator(s.ShardID, IteratorArgs{Type: TrimHorizon})
		require.NoError(t, err)
		res, err := ss.GetRecords(it, 0)
		require.NoError(t, err)
		total += len(res.Records)
	}
	assert.Equal(t, 2, total, "only the valid puts stored a record")
}

func TestPutRecords(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	ss := newSharded(t, 3, clk)
	res, failed, err := ss.PutRecords([]PutRecordsEntry{
		{PartitionKey: "a", Fields: Fields("v", "1")},
		{PartitionKey: "", Fields: Fields("v", "2")},
		{PartitionKey: "c", ExplicitHashKey: "0", Fields: Fields("v", "3")},
		{PartitionKey: "a", Fields: Fields("v", "4")},
	})
	require.NoError(t, err)
	require.Equal(t, 1, failed)
	require.Len(t, res, 4)
	require.NoError(t, res[0].Err)
	require.ErrorIs(t, res[1].Err, ErrInvalidPartitionKey)
	assert.Empty(t, res[1].ShardID)
	assert.Equal(t, "shardId-000000000000", res[2].ShardID)
	assert.Equal(t, res[0].ShardID, res[3].ShardID)
	assert.True(t, res[0].SequenceNumber.Less(res[3].SequenceNumber))

	_, _, err = ss.PutRecords(nil)
	require.ErrorIs(t, err, ErrInvalidArgument)
	big := make([]PutRecordsEntry, 501)
	for i := range big {
		big[i] = PutRecordsEntry{PartitionKey: "z", Fields: Fields("v", "x")}
	}
	_, _, err = ss.PutRecords(big)
	require.ErrorIs(t, err, ErrInvalidArgument)
	assert.Contains(t, err.Error(), "501")
	it, err := ss.GetShardIterator(res[0].ShardID, IteratorArgs{Type: TrimHorizon})
	require.NoError(t, err)
	got, err := ss.GetRecords(it, 0)
	require.NoError(t, err)
	n := 0
	for _, r := range got.Records {
		if r.PartitionKey == "z" {
			n++
		}
	}
	assert.Zero(t, n, "a rejected batch stored nothing")
}

func TestParseHashKey(t *testing.T) {
	for _, s := range []string{"0", "1", "18446744073709551615", "18446744073709551616", "170141183460469231731687303715884105728", "340282366920938463463374607431768211455"} {
		h, err := ParseHashKey(s)
		require.NoError(t, err, s)
		assert.Equal(t, s, h.String())
		want, _ := new(big.Int).SetString(s, 10)
		assert.Zero(t, want.Cmp(bigOf(h)), s)
		b, err := h.MarshalText()
		require.NoError(t, err)
		var back HashKey
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, h, back)
	}
	assert.Equal(t, MaxHashKey(), mustHashKey(t, "340282366920938463463374607431768211455"))
	for _, s := range []string{"", " 1", "1.5", "+1", "0x10", "00", "007", "340282366920938463463374607431768211456", "3402823669209384634633746074317682114550"} {
		_, err := ParseHashKey(s)
		require.ErrorIs(t, err, ErrInvalidHashKey, s)
		assert.Contains(t, err.Error(), s)
	}
	assert.Equal(t, -1, HashKey{0, 5}.Compare(HashKey{1, 0}))
	assert.Equal(t, 1, HashKey{1, 0}.Compare(HashKey{0, 5}))
	assert.Equal(t, 0, HashKey{1, 2}.Compare(HashKey{1, 2}))
}

// TestRoute checks route against a linear search for the first shard not
// ending below the key, for 1 to 70 shards of random widths, at every
// range's ends and beside them and at random keys.
func TestRoute(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := 1; n <= 70; n++ {
		ends := make([]HashKey, n)
		for i := range ends[:n-1] {
			ends[i] = HashKey{rng.Uint64N(4), rng.Uint64()}
		}
		ends[n-1] = MaxHashKey()
		slices.SortFunc(ends, HashKey.Compare)
		open := make([]*shard, n)
		for i, e := range ends {
			open[i] = &shard{num: i, keys: HashKeyRange{EndingHashKey: e}}
		}
		keys := []HashKey{{}, MaxHashKey()}
		for _, e := range ends {
			keys = append(keys, e, e.add(HashKey{0, 1}), e.sub(HashKey{0, 1}))
		}
		for range 100 {
			keys = append(keys, HashKey{rng.Uint64N(5), rng.Uint64()})
		}
		for _, h := range keys {
			want := 0
			for ends[want].Less(h) {
				want++
			}
			assert.Equal(t, want, route(open, h).num, "%d shards, key %s", n, h)
		}
	}
}

func TestUniformWidth(t *testing.T) {
	two128 := new(big.Int).Lsh(big.NewInt(1), 128)
	for _, n := range []uint64{1, 2, 3, 5, 16, 1000, 1 << 40} {
		want := new(big.Int).Div(two128, new(big.Int).SetUint64(n))
		if n == 1 {
			want.Sub(want, big.NewInt(1))
		}
		assert.Zero(t, want.Cmp(bigOf(uniformWidth(n))), "n=%d", n)
	}
}

func TestShardNamesAndRanges(t *testing.T) {
	assert.Equal(t, "OPEN", ShardOpen.String())
	assert.Equal(t, "CLOSED", ShardClosed.String())
	assert.Equal(t, "EXPIRED", ShardExpired.String())
	assert.Equal(t, "ShardState(9)", ShardState(9).String())
	assert.Equal(t, "ACTIVE", StreamActive.String())
	assert.Equal(t, "TRIM_HORIZON", TrimHorizon.String())
	assert.Equal(t, "ShardIteratorType(9)", ShardIteratorType(9).String())
	assert.Equal(t, "FROM_TRIM_HORIZON", ShardFilter{}.Type.String())
	assert.Equal(t, "ShardFilterType(9)", ShardFilterType(9).String())

	r := HashKeyRange{HashKey{0, 10}, HashKey{1, 0}}
	assert.Equal(t, "10-18446744073709551616", r.String())
	assert.True(t, r.Contains(HashKey{0, 10}))
	assert.True(t, r.Contains(HashKey{0, ^uint64(0)}))
	assert.True(t, r.Contains(HashKey{1, 0}))
	assert.False(t, r.Contains(HashKey{0, 9}))
	assert.False(t, r.Contains(HashKey{1, 1}))

	for _, bad := range []string{"shardId-00000000001", "shardId-0000000000010", "shardid-000000000001", "shardId-00000000000x", "shardId--00000000001"} {
		_, ok := parseShardID(bad)
		assert.False(t, ok, bad)
	}
	n, ok := parseShardID("shardId-000000001234")
	assert.True(t, ok)
	assert.Equal(t, 1234, n)
}

func TestPutClockBeforeEpoch(t *testing.T) {
	ss, err := NewShardedStream(ShardedArgs{Shards: 1}, WithClock(func() time.Time { return time.Unix(-10, 0) }))
	require.NoError(t, err)
	r1, err := ss.Put("k", PutArgs{}, Fields("v", "1")...)
	require.NoError(t, err)
	r2, err := ss.Put("k", PutArgs{}, Fields("v", "2")...)
	require.NoError(t, err)
	assert.Equal(t, ID{0, 1}, r1.SequenceNumber)
	assert.Equal(t, ID{0, 2}, r2.SequenceNumber)
}
