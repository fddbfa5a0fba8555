package store

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// linearSearch returns the index of the first of ids (a block's, in
// order) >= id, len(ids) if none. O(len(ids)).
func linearSearch(ids []ID, id ID) int {
	for i, x := range ids {
		if !x.Less(id) {
			return i
		}
	}
	return len(ids)
}

// fenceIDs returns the next ID of a random stream: mostly a few entries a
// millisecond, sometimes a jump of the sequence or the millisecond past
// what a key or an entry's first byte holds (0x7fff, 63), so that fence
// keys tie, and IDs of every form of the layout in block.go appear.
func fenceIDs(r *rand.Rand, prev ID) ID {
	switch r.IntN(20) {
	case 0:
		return ID{prev.Ms, prev.Seq + keyMax + r.Uint64N(3)}
	case 1:
		return ID{prev.Ms + keyMax + r.Uint64N(3), r.Uint64N(3)}
	case 2:
		return ID{prev.Ms + 1, vFollows + r.Uint64N(1000)}
	case 3, 4, 5, 6, 7, 8:
		return ID{prev.Ms + 1 + r.Uint64N(3), r.Uint64N(4)}
	}
	return ID{prev.Ms, prev.Seq + 1}
}

// checkFencedSearch compares the fenced search of 16 blocks of s at random,
// and of its last, in both directions, with a linear scan, for IDs at,
// around and between the block's entries.
func checkFencedSearch(t *testing.T, r *rand.Rand, s *Blocks, step int) {
	t.Helper()
	if s.NumBlocks() == 0 {
		return
	}
	for k := range 17 {
		bi := s.NumBlocks() - 1
		if k > 0 {
			bi = r.IntN(s.NumBlocks())
		}
		b := s.Block(bi)
		ids := make([]ID, b.Len())
		for i := range ids {
			ids[i] = b.IDAt(i)
		}
		probes := []ID{MaxID, b.FirstID(), b.Last()}
		for range 6 {
			id := ids[r.IntN(len(ids))]
			probes = append(probes, id)
			if next, ok := id.Next(); ok {
				probes = append(probes, next)
			}
			if id.Seq > 0 {
				probes = append(probes, ID{id.Ms, id.Seq - 1})
			} else if id.Ms > 0 {
				probes = append(probes, ID{id.Ms - 1, r.Uint64()})
			}
			probes = append(probes, ID{id.Ms, r.Uint64N(id.Seq + 2)})
		}
		for _, id := range probes {
			// search's callers ask only for IDs from the block's first.
			if id.Less(ids[0]) {
				continue
			}
			want := linearSearch(ids, id)
			for _, rev := range []bool{false, true} {
				if got := s.search(bi, id, rev); got != want {
					t.Fatalf("step %d, block %d of %d entries (fence %#x), id %v, rev %v: search says %d, a scan %d",
						step, bi, b.Len(), s.fenceOf(bi)[0], id, rev, got, want)
				}
			}
		}
	}
}

// TestFencedSearchRandom builds random streams with blocks of random
// sizes, then appends, deletes, trims and restores them at random, and
// after each step compares the fenced search of every block with a linear
// scan, and walks and Has with a model. Every block but the last must
// have a fence (after a Restore, the last too), so that the fenced path
// is what is compared.
func TestFencedSearchRandom(t *testing.T) {
	for seed := range uint64(8) {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) {
			r := rand.New(rand.NewPCG(seed, 29))
			var s Blocks
			limits := Limits{MaxEntries: int32(2 + r.IntN(300))}
			if seed%4 == 3 {
				limits = Limits{MaxEntries: -1, MaxBytes: int32(1000 + r.IntN(20000))}
			}
			s.SetLimits(limits)
			var m trimModel
			id := ID{1 + r.Uint64N(1000), r.Uint64N(3)}
			add := func(n int) {
				for range n {
					if top, ok := s.TopID(); ok && !top.Less(id) {
						id, _ = top.Next()
					}
					s.Append(id, []Field{{"f", strconv.Itoa(r.IntN(1000))}})
					m.ids = append(m.ids, id)
					id = fenceIDs(r, id)
				}
			}
			add(1500)
			restored := false
			for step := range 30 {
				restored = false
				switch op := r.IntN(10); {
				case op < 3:
					add(1 + r.IntN(200))
				case op < 6 && len(m.ids) > 0:
					deleteRandom(t, r, &s, &m, 30)
				case op < 8 && len(m.ids) > 0:
					trimRandom(r, &s, &m, 300)
				default:
					blocks := make([]*Block, s.NumBlocks())
					for i := range blocks {
						b, err := FromRaw(s.Block(i).Raw())
						require.NoError(t, err)
						blocks[i] = b
					}
					var c Blocks
					c.SetLimits(limits)
					require.NoError(t, c.Restore(blocks, s.State()))
					s, restored = c, true
				}
				require.NoError(t, s.Check(), "step %d", step)
				for bi := range s.NumBlocks() {
					if s.Block(bi).Len() < 2 || (bi == s.NumBlocks()-1 && !restored) {
						continue
					}
					require.NotZero(t, s.fenceOf(bi)[0]&0xffff, "step %d: block %d of %d entries has no fence", step, bi, s.Block(bi).Len())
				}
				checkFencedSearch(t, r, &s, step)
				for range 10 {
					lo, hi := randomProbe(r, m.ids), randomProbe(r, m.ids)
					if hi.Less(lo) {
						lo, hi = hi, lo
					}
					want := idsIn(m.ids, lo, hi)
					if got := walkIDs(&s, lo, hi, false); !slices.Equal(want, got) {
						t.Fatalf("step %d, [%v, %v]: walk %v, model %v", step, lo, hi, got, want)
					}
					got := walkIDs(&s, lo, hi, true)
					slices.Reverse(got)
					if !slices.Equal(want, got) {
						t.Fatalf("step %d, [%v, %v] reversed: walk %v, model %v", step, lo, hi, got, want)
					}
					if len(m.ids) > 0 {
						x := m.ids[r.IntN(len(m.ids))]
						require.True(t, s.Has(x), "step %d: Has(%v)", step, x)
					}
				}
			}
		})
	}
}

// TestFenceFromSeal checks the fence a block gets when it is sealed: slot
// j is the offset table slot of entry j*stride, with strides that use at
// most fenceSlots-1 slots, for blocks of 1 to 300 entries.
func TestFenceFromSeal(t *testing.T) {
	for n := 1; n <= 300; n++ {
		var s Blocks
		s.SetLimits(Limits{MaxEntries: int32(n)})
		for i := range n + 1 {
			s.Append(ID{uint64(1 + i/3), uint64(i % 3)}, []Field{{"f", "v"}})
		}
		require.Equal(t, 2, s.NumBlocks())
		b, f := s.Block(0), s.fenceOf(0)
		stride, count := int(f[0]>>16), int(f[0]&0xffff)
		if n == 1 {
			require.Zero(t, f[0], "a block of one entry needs no fence")
			continue
		}
		require.Equal(t, (n+fenceSlots-1)/fenceSlots, stride, "n %d", n)
		require.Equal(t, (n-1)/stride, count, "n %d", n)
		require.Less(t, count, fenceSlots)
		for j := 1; j <= count; j++ {
			require.Equal(t, b.offs[j*stride], f[j], "n %d, slot %d", n, j)
		}
		for j := count + 1; j < fenceSlots; j++ {
			require.Zero(t, f[j], "n %d, slot %d", n, j)
		}
		require.Zero(t, s.fenceOf(1)[0], "the open block has no fence")
	}
}

// TestCheckFence: Check reports a fence that does not match its block,
// naming the block and the slot, and one with more slots than entries.
func TestCheckFence(t *testing.T) {
	var s Blocks
	s.SetLimits(Limits{MaxEntries: 50})
	for i := range 120 {
		s.Append(ID{uint64(1 + i), 0}, []Field{{"f", "v"}})
	}
	require.NoError(t, s.Check())
	good := s.fences[1]
	s.fences[1][2]++
	err := s.Check()
	require.ErrorContains(t, err, "block 1: fence slot 2")
	s.fences[1] = good
	s.fences[1][0] = 4<<16 | 13 // 13 fences of stride 4 reach entry 52
	require.ErrorContains(t, s.Check(), "block 1: fence of 13 slots of stride 4 for 50 entries")
	s.fences[1] = good
	s.fences = append(s.fences, fence{}, fence{})
	require.ErrorContains(t, s.Check(), "3 blocks but 4 fences")
}
