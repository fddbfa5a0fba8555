package store

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// checkBtree verifies the tree's shape: ordered items, leaves at one depth,
// node sizes within bounds, and the item count.
func checkBtree[V any](t *testing.T, tr *BTree[V]) []ID {
	t.Helper()
	var ids []ID
	depth := -1
	var walk func(n *btNode[V], d int, root bool)
	walk = func(n *btNode[V], d int, root bool) {
		require.LessOrEqual(t, len(n.items), btMaxItems)
		if !root {
			require.NotEmpty(t, n.items)
		}
		if n.leaf() {
			if depth < 0 {
				depth = d
			}
			require.Equal(t, depth, d, "leaves at one depth")
			for _, it := range n.items {
				ids = append(ids, it.id)
			}
			return
		}
		require.Len(t, n.kids, len(n.items)+1)
		for i, it := range n.items {
			walk(n.kids[i], d+1, false)
			ids = append(ids, it.id)
		}
		walk(n.kids[len(n.items)], d+1, false)
	}
	if tr.root != nil {
		walk(tr.root, 0, true)
		if tr.last != nil {
			right := tr.root
			for !right.leaf() {
				right = right.kids[len(right.kids)-1]
			}
			require.Same(t, right, tr.last, "last is the rightmost leaf")
		}
	}
	require.True(t, slices.IsSortedFunc(ids, ID.Compare))
	require.Len(t, ids, tr.Len())
	return ids
}

func TestBtreeAgainstMap(t *testing.T) {
	for _, keys := range []int{50, 500, 5000} {
		rng := rand.New(rand.NewPCG(uint64(keys), 7))
		var tr BTree[int]
		model := map[ID]int{}
		for step := range 30000 {
			id := ID{uint64(rng.IntN(keys)), uint64(rng.IntN(2))}
			if hi, ok := tr.Max(); ok && rng.IntN(3) == 0 {
				// In-order appends and removals of the largest ID take
				// the tree's fast paths.
				id = hi
				if rng.IntN(2) == 0 {
					id = ID{hi.Ms + 1, 0}
				}
			}
			switch op := rng.IntN(10); {
			case op < 5:
				p, added := tr.Insert(id, step)
				old, had := model[id]
				require.Equal(t, !had, added)
				if had {
					require.Equal(t, old, *p)
				} else {
					model[id] = step
				}
			case op < 9:
				v, ok := tr.Delete(id)
				old, had := model[id]
				require.Equal(t, had, ok)
				if had {
					require.Equal(t, old, v)
				}
				delete(model, id)
			default:
				got, p, ok := tr.Ceil(id)
				var want ID
				found := false
				for k := range model {
					if !k.Less(id) && (!found || k.Less(want)) {
						want, found = k, true
					}
				}
				require.Equal(t, found, ok)
				if found {
					require.Equal(t, want, got)
					require.Equal(t, model[want], *p)
				}
			}
			if step%997 == 0 {
				ids := checkBtree(t, &tr)
				require.Len(t, ids, len(model))
				for _, id := range ids {
					p := tr.Get(id)
					require.NotNil(t, p)
					require.Equal(t, model[id], *p)
				}
			}
		}
		ids := checkBtree(t, &tr)
		if len(ids) > 0 {
			lo, _ := tr.Min()
			hi, _ := tr.Max()
			require.Equal(t, ids[0], lo)
			require.Equal(t, ids[len(ids)-1], hi)
			// ascend over a middle range
			from, to := ids[len(ids)/4], ids[3*len(ids)/4]
			var got []ID
			tr.Ascend(from, to, func(id ID, _ *int) bool { got = append(got, id); return true })
			require.Equal(t, ids[len(ids)/4:3*len(ids)/4+1], got)
		}
		for _, id := range ids {
			_, ok := tr.Delete(id)
			require.True(t, ok)
		}
		require.Empty(t, tr.root.items)
		require.Zero(t, tr.Len())
	}
}

func TestBtreeSequentialFill(t *testing.T) {
	var tr BTree[struct{}]
	const n = 100000
	for i := range n {
		tr.Insert(ID{uint64(i + 1), 0}, struct{}{})
	}
	checkBtree(t, &tr)
	nodes := 0
	var count func(n *btNode[struct{}])
	count = func(nd *btNode[struct{}]) {
		nodes++
		for _, k := range nd.kids {
			count(k)
		}
	}
	count(tr.root)
	// In-order inserts leave nodes nearly full: at most 5% more nodes
	// than a perfectly packed tree.
	require.Less(t, nodes, n/btMaxItems*105/100+2)
	// Deleting from the head, as acknowledgements do, keeps the tree valid.
	for i := range n / 2 {
		_, ok := tr.Delete(ID{uint64(i + 1), 0})
		require.True(t, ok)
	}
	checkBtree(t, &tr)
	lo, _ := tr.Min()
	require.Equal(t, ID{n/2 + 1, 0}, lo)
}

// TestBtreeDeleteRuns removes runs of consecutive IDs, ascending and
// descending, from random places of trees up to three levels deep, filled
// in order and at random: the removals that borrow several items from a
// sibling at a time. The tree is checked against a model after each run.
func TestBtreeDeleteRuns(t *testing.T) {
	rng := rand.New(rand.NewPCG(12, 4))
	for round := range 40 {
		var tr BTree[int]
		model := map[ID]int{}
		n := 1 + rng.IntN(20000)
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		if round%2 == 1 {
			rng.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
		}
		for _, k := range order {
			id := ID{uint64(k), 0}
			tr.Insert(id, k)
			model[id] = k
		}
		checkBtree(t, &tr)
		for len(model) > 0 {
			ids := checkBtree(t, &tr)
			require.Len(t, ids, len(model))
			run := 1 + rng.IntN(200)
			var at int
			switch rng.IntN(3) {
			case 0: // the front, as in-order acknowledgements
				at = 0
			case 1: // the back
				at = max(0, len(ids)-run)
			default:
				at = rng.IntN(len(ids))
			}
			part := ids[at:min(len(ids), at+run)]
			if rng.IntN(2) == 0 {
				slices.Reverse(part)
			}
			for _, id := range part {
				v, ok := tr.Delete(id)
				require.True(t, ok)
				require.Equal(t, model[id], v)
				delete(model, id)
				_, ok = tr.Delete(id)
				require.False(t, ok)
			}
			if rng.IntN(4) == 0 { // appends after removals take the fast path
				hi, ok := tr.Max()
				for j := range rng.IntN(100) {
					id := ID{hi.Ms + uint64(j) + 1, 0}
					if !ok {
						id = ID{uint64(j), 0}
					}
					tr.Insert(id, -j)
					model[id] = -j
				}
			}
		}
		checkBtree(t, &tr)
		require.Zero(t, tr.Len())
	}
}
