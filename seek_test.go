package xstream

import (
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// Seeks must be exact whatever the gaps between IDs: small, beyond the
// 15-bit search keys of a block (32,767 ms or sequence numbers), or huge.
func TestSeekWideGaps(t *testing.T) {
	for seed := uint64(1); seed <= 4; seed++ {
		rng := rand.New(rand.NewPCG(seed, 99))
		gaps := []uint64{0, 1, 2, 0x7ffe, 0x7fff, 0x8000, 0x8001, 1 << 20, 1 << 40}
		s := NewStream()
		var ids []ID
		cur := ID{1, 0}
		for range 3000 {
			if rng.IntN(2) == 0 {
				cur = ID{cur.Ms + 1 + gaps[rng.IntN(len(gaps))], gaps[rng.IntN(len(gaps))]}
			} else {
				cur = ID{cur.Ms, cur.Seq + 1 + gaps[rng.IntN(len(gaps))]}
			}
			_, err := s.Add(AddArgs{ID: cur.String()}, Fields("f", "v")...)
			require.NoError(t, err)
			ids = append(ids, cur)
		}
		probe := func() ID {
			id := ids[rng.IntN(len(ids))]
			switch rng.IntN(3) {
			case 0:
				id, _ = id.Next()
			case 1:
				id, _ = id.Prev()
			}
			return id
		}
		for range 2000 {
			lo, hi := probe(), probe()
			count := rng.IntN(5)
			got, err := s.Range(lo.String(), hi.String(), count)
			require.NoError(t, err)
			i := sort.Search(len(ids), func(i int) bool { return !ids[i].Less(lo) })
			var want []ID
			for ; i < len(ids) && !hi.Less(ids[i]) && (count == 0 || len(want) < count); i++ {
				want = append(want, ids[i])
			}
			gotIDs := make([]ID, len(got))
			for k, e := range got {
				gotIDs[k] = e.ID
			}
			require.Equal(t, len(want), len(gotIDs), "seed %d range %s..%s count %d", seed, lo, hi, count)
			if len(want) > 0 {
				require.Equal(t, want, gotIDs, "seed %d range %s..%s", seed, lo, hi)
			}
			rev, err := s.RevRange(hi.String(), lo.String(), 1)
			require.NoError(t, err)
			j := sort.Search(len(ids), func(i int) bool { return hi.Less(ids[i]) }) - 1
			if j >= 0 && !ids[j].Less(lo) {
				require.Len(t, rev, 1)
				require.Equal(t, ids[j], rev[0].ID, "RevRange %s..%s", hi, lo)
			} else {
				require.Empty(t, rev)
			}
		}
	}
}
