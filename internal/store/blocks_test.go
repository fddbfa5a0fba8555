package store

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// modelFind returns the index of the last of ids (sorted) <= id, -1 if
// none. O(len(ids)).
func modelFind(ids []ID, id ID) int {
	i := -1
	for j, x := range ids {
		if !id.Less(x) {
			i = j
		}
	}
	return i
}

// idsIn returns the IDs of ids in [lo, hi]. O(len(ids)).
func idsIn(ids []ID, lo, hi ID) []ID {
	var in []ID
	for _, id := range ids {
		if !id.Less(lo) && !hi.Less(id) {
			in = append(in, id)
		}
	}
	return in
}

// randomProbe returns an ID near one of ids (equal, just below or just
// above), or any ID.
func randomProbe(r *rand.Rand, ids []ID) ID {
	if len(ids) == 0 || r.IntN(8) == 0 {
		return ID{r.Uint64N(4000), r.Uint64N(4)}
	}
	id := ids[r.IntN(len(ids))]
	switch r.IntN(3) {
	case 1:
		if id.Seq > 0 {
			id.Seq--
		} else if id.Ms > 0 {
			id = ID{id.Ms - 1, 3}
		}
	case 2:
		id, _ = id.Next()
	}
	return id
}

// TestBlocksSeekRandom builds a storage of many small blocks (so that a
// seek searches hundreds of first IDs), then deletes entries at random, which frees
// blocks in the middle, and trims its head, and seeks from random IDs
// after each step: Walk, forward and backward, and Has must agree with a
// model, and Restore of the same blocks must give the same answers.
func TestBlocksSeekRandom(t *testing.T) {
	for seed := range uint64(4) {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 13))
			var s Blocks
			s.SetLimits(Limits{MaxEntries: int32(1 + r.IntN(4))})
			var m trimModel
			id := ID{1, 0}
			for range 2000 {
				id = ID{id.Ms + 1 + r.Uint64N(2), r.Uint64N(2)}
				s.Append(id, []Field{{"f", "v"}})
				m.ids = append(m.ids, id)
			}
			for step := range 150 {
				switch op := r.IntN(10); {
				case op < 7 && len(m.ids) > 0:
					for range 1 + r.IntN(8) {
						if len(m.ids) == 0 {
							break
						}
						d := m.ids[r.IntN(len(m.ids))]
						require.True(t, s.Delete(d))
						m.remove(d)
					}
				case op < 9 && len(m.ids) > 0:
					up := m.ids[r.IntN(min(len(m.ids), 20))]
					s.TrimTo(up)
					for len(m.ids) > 0 && !up.Less(m.ids[0]) {
						m.ids = m.ids[1:]
					}
				default:
					blocks := make([]*Block, s.NumBlocks())
					for i := range blocks {
						blocks[i] = s.Block(i)
					}
					var c Blocks
					require.NoError(t, c.Restore(blocks, s.State()))
					s = c
				}
				require.NoError(t, s.Check(), "step %d", step)
				for range 20 {
					lo := randomProbe(r, m.ids)
					hi := randomProbe(r, m.ids)
					if hi.Less(lo) {
						lo, hi = hi, lo
					}
					want := idsIn(m.ids, lo, hi)
					require.Equal(t, want, walkIDs(&s, lo, hi, false), "step %d, [%v, %v]", step, lo, hi)
					for i, j := 0, len(want)-1; i < j; i, j = i+1, j-1 {
						want[i], want[j] = want[j], want[i]
					}
					require.Equal(t, want, walkIDs(&s, lo, hi, true), "step %d, [%v, %v] reversed", step, lo, hi)
					require.Equal(t, modelFind(m.ids, lo) >= 0 && m.ids[modelFind(m.ids, lo)] == lo, s.Has(lo))
				}
			}
		})
	}
}
