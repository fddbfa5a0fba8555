package store

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// lpShortSize is lpStrSize for every value put takes: integers of every
// width and sign up to shortMax characters, the forms Redis keeps as
// strings (a leading zero, "-0", a lone "-", a digit then other bytes)
// and strings of the alphabet or not.
func TestLPShortSize(t *testing.T) {
	values := []string{"", "-", "0", "-0", "00", "007", "-07", "1", "-1", "9", "12a", "1-", "--1", "+1", " 1", "1 ", ":", "/"}
	for d := 1; d <= shortMax; d++ {
		n := strings.Repeat("9", d)
		values = append(values, n, "-"+n, "1"+strings.Repeat("0", d-1), "-1"+strings.Repeat("0", d-1))
	}
	for _, v := range []int64{127, 128, -128, 4095, 4096, -4096, -4097, 32767, 32768, -32768, -32769, 1<<23 - 1, 1 << 23, -1 << 23, -1<<23 - 1, 1<<31 - 1, 1 << 31, -1 << 31, -1<<31 - 1} {
		values = append(values, strconv.FormatInt(v, 10))
	}
	r := rand.New(rand.NewPCG(9, 10))
	for range 2000 {
		values = append(values, randomValue(r, true), strconv.FormatInt(r.Int64N(1<<50)-1<<49, 10))
	}
	for _, v := range values {
		if len(v) > shortMax {
			continue
		}
		if got, want := lpShortSize(v), lpStrSize(v); got != want {
			t.Fatalf("lpShortSize(%q) = %d, lpStrSize %d", v, got, want)
		}
	}
}

// nearBoundValue returns a value of at most shortMax bytes: of random
// length, of the alphabet or not, or, half of the time, an integer,
// which Redis's listpack keeps in fewer bytes than its characters: the
// bound of a block's listpack size (openBound) counts it as a string, so
// the block's entries near the limit on bytes need the exact size.
func nearBoundValue(r *rand.Rand) string {
	switch r.IntN(4) {
	case 0, 1:
		return strconv.FormatInt(r.Int64N(1<<40)-1<<39>>uint(r.IntN(40)), 10)
	case 2:
		return []string{"0", "-0", "007", "-", "9223372036854775"}[r.IntN(5)]
	}
	return randomValue(r, true)
}

// TestAppendNearBoundSameAsAny fills storages under limits on bytes near
// Redis's default 4096 and others, whose blocks end by their bytes rather
// than their entries, with entries of short values of random lengths
// (put's kind, among a few of other names or longer values): one by
// Append's paths (put, else appendAny), one by AppendBatch in batches of
// random sizes, one by appendAny only. They must be equal in every field
// and every byte of every block (so their blocks end at the same entries,
// with the same listpack sizes kept), the kept exact listpack size must
// be the block's, and put must have taken a good part of the entries
// while the size was exact.
func TestAppendNearBoundSameAsAny(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	exactPut, all := 0, 0
	for round := range 60 {
		limits := Limits{MaxEntries: 1000, MaxBytes: int32(4096 - 50 + r.IntN(100))}
		switch r.IntN(4) {
		case 0:
			limits = Limits{MaxEntries: 1000} // Redis's default bytes
		case 1:
			limits.MaxBytes = int32(200 + r.IntN(8000))
		}
		var got, batched, want Blocks
		got.SetLimits(limits)
		batched.SetLimits(limits)
		want.SetLimits(limits)
		names := [][]string{{"key", "a", "b", "c"}, {"sensor-id", "temperature"}, {"k"}}[r.IntN(3)]
		id := ID{1 + r.Uint64N(1<<40), r.Uint64N(100)}
		var ids []ID
		var batch [][]Field
		check := func(at string) {
			batched.AppendBatch(ids[len(ids)-len(batch):], batch)
			batch = batch[:0]
			require.Equal(t, want, got, "round %d, %s", round, at)
			require.Equal(t, want, batched, "round %d, %s", round, at)
			if got.openLPExact {
				require.Equal(t, blockLP(got.open, got.openNames), got.openLP, "round %d, %s", round, at)
			}
		}
		for i := range 300 + r.IntN(600) {
			fields := make([]Field, len(names))
			for j, n := range names {
				fields[j] = Field{n, nearBoundValue(r)}
			}
			switch r.IntN(40) {
			case 0:
				fields[0].Value = strings.Repeat("v", 17+r.IntN(100))
			case 1:
				fields = randomEntry(r, r.IntN(2) == 0)
			}
			all++
			if got.open != nil && got.put(id, fields, false) {
				if got.openLPExact {
					exactPut++
				}
			} else {
				got.appendAny(id, fields)
			}
			want.appendAny(id, fields)
			ids = append(ids, id)
			batch = append(batch, fields)
			if r.IntN(40) == 0 {
				check("entry " + strconv.Itoa(i))
			}
			if r.IntN(20) == 0 {
				id = ID{id.Ms + 1 + r.Uint64N(3), r.Uint64N(200)}
			} else {
				id.Seq++
			}
		}
		check("end")
		require.Greater(t, want.NumBlocks(), 1, "round %d: no block ended", round)
		require.NoError(t, got.Check())
	}
	require.Greater(t, exactPut, all/10, "entries put took with the exact size, of %d", all)
}
