package store

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// trimModel is the entries a Blocks should hold: live IDs in order.
type trimModel struct{ ids []ID }

func (m *trimModel) remove(id ID) bool {
	for i, x := range m.ids {
		if x == id {
			m.ids = append(m.ids[:i], m.ids[i+1:]...)
			return true
		}
	}
	return false
}

// walkIDs returns the IDs Walk gives for [lo, hi].
func walkIDs(s *Blocks, lo, hi ID, rev bool) []ID {
	var out []ID
	s.Walk(lo, hi, rev, func(_ *Block, id ID, flags byte, _ int) bool {
		if flags&FlagDeleted != 0 {
			panic("Walk gave a deleted entry")
		}
		out = append(out, id)
		return true
	})
	return out
}

// TestTrimRandom runs random appends, deletes and trims (exact and
// approximate, by MaxLen and by MinID, with and without Limit) on two
// storages: one trimmed with Trim, the other with TrimTo of the bound
// Trim returned, as a log replays it. After each step both must pass
// Check (which verifies every block's head) and hold the entries of the
// model, walked forward and backward from random bounds; an exact trim
// must remove exactly what Redis's does.
func TestTrimRandom(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 7))
			var a, b Blocks
			l := Limits{MaxEntries: int32(1 + r.IntN(12))}
			a.SetLimits(l)
			b.SetLimits(l)
			var m trimModel
			next := ID{1, 0}
			randID := func() ID {
				if len(m.ids) == 0 || r.IntN(8) == 0 {
					return ID{next.Ms + uint64(r.IntN(3)), uint64(r.IntN(3))}
				}
				return m.ids[r.IntN(len(m.ids))]
			}
			for step := range 3000 {
				switch op := r.IntN(10); {
				case op < 5:
					fields := []Field{{"a", strconv.Itoa(r.IntN(1000))}}
					if r.IntN(4) == 0 {
						fields = append(fields, Field{"b", "x"})
					}
					a.Append(next, fields)
					b.Append(next, fields)
					m.ids = append(m.ids, next)
					if r.IntN(3) == 0 {
						next = ID{next.Ms + 1 + uint64(r.IntN(3)), 0}
					} else {
						next.Seq++
					}
				case op < 7:
					id := randID()
					want := m.remove(id)
					require.Equal(t, want, a.Delete(id), "step %d: Delete %v", step, id)
					require.Equal(t, want, b.Delete(id), "step %d: Delete %v", step, id)
				default:
					spec := TrimSpec{Approx: r.IntN(2) == 0}
					if r.IntN(2) == 0 {
						spec.ByMinID, spec.MinID = true, randID()
					} else {
						spec.MaxLen = int64(r.IntN(len(m.ids) + 2))
					}
					if spec.Approx && r.IntN(3) == 0 {
						spec.Limit = int64(1 + r.IntN(20))
					}
					before := len(m.ids)
					upTo, n := a.Trim(&spec)
					if n > 0 {
						require.Equal(t, n, b.TrimTo(upTo), "step %d: TrimTo(%v) after Trim(%+v)", step, upTo, spec)
					}
					kept := m.ids[n:]
					if n > 0 { // the bound lies between the last removed and the first kept
						require.False(t, upTo.Less(m.ids[n-1]), "step %d: bound %v of Trim(%+v)", step, upTo, spec)
						require.True(t, len(kept) == 0 || upTo.Less(kept[0]), "step %d: bound %v of Trim(%+v)", step, upTo, spec)
					}
					if spec.ByMinID {
						for _, id := range m.ids[:n] {
							require.True(t, id.Less(spec.MinID), "step %d: Trim(%+v) removed %v", step, spec, id)
						}
					} else {
						require.GreaterOrEqual(t, int64(len(kept)), min(spec.MaxLen, int64(before)), "step %d: Trim(%+v)", step, spec)
					}
					if !spec.Approx {
						want := 0 // what Redis's exact trim removes
						for want < before && (spec.ByMinID && m.ids[want].Less(spec.MinID) || !spec.ByMinID && int64(before-want) > spec.MaxLen) {
							want++
						}
						require.Equal(t, int64(want), n, "step %d: exact Trim(%+v)", step, spec)
					}
					m.ids = append([]ID(nil), kept...)
				}
				for _, s := range []*Blocks{&a, &b} {
					require.NoError(t, s.Check(), "step %d", step)
					require.Equal(t, int64(len(m.ids)), s.Len(), "step %d", step)
					var first ID
					if len(m.ids) > 0 {
						first = m.ids[0]
					}
					require.Equal(t, first, s.FirstID(), "step %d", step)
					lo, hi := randID(), randID()
					if hi.Less(lo) {
						lo, hi = hi, lo
					}
					want := idsIn(m.ids, lo, hi)
					require.Equal(t, want, walkIDs(s, lo, hi, false), "step %d: Walk %v %v", step, lo, hi)
					for i, j := 0, len(want)-1; i < j; i, j = i+1, j-1 {
						want[i], want[j] = want[j], want[i]
					}
					require.Equal(t, want, walkIDs(s, lo, hi, true), "step %d: reverse Walk %v %v", step, lo, hi)
				}
				require.Equal(t, a.NumBlocks(), b.NumBlocks(), "step %d", step)
			}
		})
	}
}
