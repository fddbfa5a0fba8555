package store

import (
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// runIDs returns a sorted run of IDs for TestBtreeRuns: mostly after the
// tree's largest ID (new deliveries), sometimes anywhere, with
// duplicates, IDs already there and, when unsorted, out of order.
func runIDs(rng *rand.Rand, tr *BTree[int], unsorted bool) []ID {
	n := rng.IntN(300)
	var ids []ID
	next := uint64(0)
	if hi, ok := tr.Max(); ok {
		next = hi.Ms + 1
	}
	switch rng.IntN(4) {
	case 0: // anywhere in the tree's range
		for range n {
			ids = append(ids, ID{uint64(rng.IntN(int(next) + 10)), 0})
		}
		slices.SortFunc(ids, ID.Compare)
	case 1: // the tree's tail (IDs there or not) and what follows it
		for ms := next - min(next, uint64(rng.IntN(100))); ms < next; ms++ {
			ids = append(ids, ID{ms, 0})
		}
		fallthrough
	default: // after the largest, with gaps and a duplicate now and then
		for range n {
			if rng.IntN(20) != 0 {
				next += 1 + uint64(rng.IntN(3))
			}
			ids = append(ids, ID{next, 0})
		}
	}
	if unsorted && len(ids) > 1 {
		i, j := rng.IntN(len(ids)), rng.IntN(len(ids))
		ids[i], ids[j] = ids[j], ids[i]
	}
	return ids
}

// TestBtreeRuns checks InsertRun and DeleteRun against a model: runs at
// the right edge (the fast paths), in the middle, with IDs already there
// or missing, duplicates and IDs out of order; the tree's
// size after each run and its shape and contents after every 20th, and the indexes and values DeleteRun reports.
func TestBtreeRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 12))
	var tr BTree[int]
	model := map[ID]int{}
	for step := range 1500 {
		ids := runIDs(rng, &tr, step%7 == 3)
		// Up to about 20,000 items: three levels.
		if rng.IntN(5) < 3 && len(model) < 20_000 {
			want := 0
			for _, id := range ids {
				if _, ok := model[id]; !ok {
					model[id] = step
					want++
				}
			}
			require.Equal(t, want, tr.InsertRun(ids, step), "step %d", step)
		} else {
			if step%7 != 3 {
				slices.SortFunc(ids, ID.Compare)
			}
			var got []int // indexes reported, largest first
			gone := map[ID]bool{}
			bad := 0                      // IDs reported twice or with a wrong value
			rm := []Removed[int]{{I: -1}} // appended to
			n := tr.DeleteRun(ids, &rm)
			require.Equal(t, Removed[int]{I: -1}, rm[0])
			for _, r := range rm[1:] {
				if gone[ids[r.I]] || model[ids[r.I]] != r.V {
					bad++
				}
				gone[ids[r.I]] = true
				got = append(got, r.I)
			}
			require.Zero(t, bad, "step %d", step)
			want := 0
			for _, id := range ids {
				if _, ok := model[id]; ok {
					delete(model, id)
					want++
				}
			}
			require.Equal(t, want, n)
			require.Len(t, got, want)
			require.True(t, slices.IsSortedFunc(got, func(a, b int) int { return b - a }), "largest first")
		}
		require.Equal(t, len(model), tr.Len())
		if step%20 == 0 || step == 1499 {
			got := checkBtree(t, &tr)
			require.Equal(t, slices.SortedFunc(maps.Keys(model), ID.Compare), got, "step %d", step)
			for id, v := range model {
				require.Equal(t, v, *tr.Get(id))
			}
		}
	}
}

// TestBtreeRunsEdges covers the empty tree and the empty run, a run that
// fills several leaves at once, and DeleteRun without a callback emptying
// a three-level tree.
func TestBtreeRunsEdges(t *testing.T) {
	var tr BTree[struct{}]
	require.Zero(t, tr.InsertRun(nil, struct{}{}))
	require.Zero(t, tr.DeleteRun([]ID{{1, 0}}, nil))
	const n = 200_000
	ids := make([]ID, n)
	for i := range ids {
		ids[i] = ID{uint64(i + 1), 0}
	}
	require.Equal(t, n, tr.InsertRun(ids, struct{}{}))
	require.Equal(t, ids, checkBtree(t, &tr))
	require.Zero(t, tr.InsertRun(ids[:1000], struct{}{}), "already there")
	require.Equal(t, n/2, tr.DeleteRun(ids[n/2:], nil))
	require.Equal(t, ids[:n/2], checkBtree(t, &tr))
	require.Equal(t, n/2, tr.DeleteRun(ids, nil))
	require.Empty(t, checkBtree(t, &tr))
	require.Zero(t, tr.Len())
	require.Equal(t, 3, tr.InsertRun(ids[:3], struct{}{}), "usable again")
	require.Equal(t, ids[:3], checkBtree(t, &tr))
}
