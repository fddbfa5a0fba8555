package store

// BTree is an ordered map from ID to V: a B-tree whose nodes hold up to
// btMaxItems items each, so insert, delete and seek are O(log n). The
// pending entries lists of consumer groups use it.
//
// Nodes split early when an item is appended after the last item of a
// full node (the common case: IDs arrive in increasing order), leaving the
// left node nearly full instead of half full, so a list built in order
// takes about one item slot per item.
type BTree[V any] struct {
	root *btNode[V]
	n    int
	free [2][]*btNode[V] // spare leaf and inner nodes, for reuse
	// last is the rightmost leaf, when known: IDs arriving in order are
	// appended to it, and the largest ID removed from it, without a
	// descent. Splits, merges and single borrows forget it; the borrows of
	// a run of removals keep it (they move no leaf).
	last *btNode[V]
	// run is set by DeleteRun while it removes an ID with Delete: how
	// many IDs of its run come after (below) that one, which a borrow into
	// the rightmost leaf takes into account (0 otherwise).
	run int
}

// btSpare bounds the spare nodes a tree keeps of each kind.
const btSpare = 4

const (
	btMinItems = 31               // items in a node other than the root, at least (before early splits)
	btMaxItems = 2*btMinItems + 1 // items in a node, at most
)

type btItem[V any] struct {
	v  V
	id ID
}

type btNode[V any] struct {
	items []btItem[V]
	kids  []*btNode[V] // nil in a leaf
}

// newNode returns an empty node, a spare one if there is one.
func (t *BTree[V]) newNode(leaf bool) *btNode[V] {
	k := 0
	if !leaf {
		k = 1
	}
	if f := t.free[k]; len(f) > 0 {
		n := f[len(f)-1]
		f[len(f)-1] = nil
		t.free[k] = f[:len(f)-1]
		return n
	}
	n := &btNode[V]{items: make([]btItem[V], 0, btMaxItems)}
	if !leaf {
		n.kids = make([]*btNode[V], 0, btMaxItems+1)
	}
	return n
}

// freeNode keeps an emptied node for reuse, up to btSpare of each kind.
func (t *BTree[V]) freeNode(n *btNode[V]) {
	k := 0
	if !n.leaf() {
		k = 1
		clear(n.kids[:cap(n.kids)])
		n.kids = n.kids[:0]
	}
	clear(n.items[:cap(n.items)])
	n.items = n.items[:0]
	if len(t.free[k]) < btSpare {
		t.free[k] = append(t.free[k], n)
	}
}

func (n *btNode[V]) leaf() bool { return n.kids == nil }

// find returns the index of the first item >= id and whether it equals id.
func (n *btNode[V]) find(id ID) (int, bool) {
	lo, hi := 0, len(n.items)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if n.items[m].id.Less(id) {
			lo = m + 1
		} else {
			hi = m
		}
	}
	return lo, lo < len(n.items) && n.items[lo].id == id
}

// Len returns the number of items. O(1).
func (t *BTree[V]) Len() int { return t.n }

// Get returns a pointer to the value of id, valid until the next change of
// the tree, or nil. O(log n).
func (t *BTree[V]) Get(id ID) *V {
	n := t.root
	for n != nil {
		i, ok := n.find(id)
		if ok {
			return &n.items[i].v
		}
		if n.leaf() {
			return nil
		}
		n = n.kids[i]
	}
	return nil
}

// Insert stores v under id unless id is there already. It returns a
// pointer to the value stored under id (valid until the next change of the
// tree) and whether id was new. O(log n).
func (t *BTree[V]) Insert(id ID, v V) (*V, bool) {
	if l := t.last; l != nil && len(l.items) > 0 && len(l.items) < btMaxItems && l.items[len(l.items)-1].id.Less(id) {
		l.items = append(l.items, btItem[V]{v: v, id: id})
		t.n++
		return &l.items[len(l.items)-1].v, true
	}
	if t.root == nil {
		t.root = t.newNode(true)
	}
	if len(t.root.items) == btMaxItems {
		old := t.root
		t.root = t.newNode(false)
		t.root.kids = append(t.root.kids, old)
		t.splitKid(t.root, 0, id)
	}
	p, added := t.insertAt(t.root, id, v)
	if added {
		t.n++
	}
	return p, added
}

// splitKid splits the full kid i. id is the ID about to be inserted: when
// it goes after every item of the kid, the split keeps the left part
// nearly full.
func (t *BTree[V]) splitKid(n *btNode[V], i int, id ID) {
	t.last = nil
	kid := n.kids[i]
	at := btMinItems
	if last := kid.items[len(kid.items)-1].id; last.Less(id) {
		at = len(kid.items) - 2
	}
	right := t.newNode(kid.leaf())
	right.items = append(right.items, kid.items[at+1:]...)
	mid := kid.items[at]
	clear(kid.items[at:])
	kid.items = kid.items[:at]
	if !kid.leaf() {
		right.kids = append(right.kids, kid.kids[at+1:]...)
		clear(kid.kids[at+1:])
		kid.kids = kid.kids[:at+1]
	}
	n.items = append(n.items, btItem[V]{})
	copy(n.items[i+1:], n.items[i:])
	n.items[i] = mid
	n.kids = append(n.kids, nil)
	copy(n.kids[i+2:], n.kids[i+1:])
	n.kids[i+1] = right
}

// insertAt puts (id, v) into the subtree of n, which is not full, unless
// id is there.
func (t *BTree[V]) insertAt(n *btNode[V], id ID, v V) (*V, bool) {
	rightmost := true
	for {
		i, ok := n.find(id)
		if ok {
			return &n.items[i].v, false
		}
		if n.leaf() {
			if rightmost {
				t.last = n
			}
			n.items = append(n.items, btItem[V]{})
			copy(n.items[i+1:], n.items[i:])
			n.items[i] = btItem[V]{v: v, id: id}
			return &n.items[i].v, true
		}
		if len(n.kids[i].items) == btMaxItems {
			t.splitKid(n, i, id)
			switch c := id.Compare(n.items[i].id); {
			case c == 0:
				return &n.items[i].v, false
			case c > 0:
				i++
			}
		}
		rightmost = rightmost && i == len(n.items)
		n = n.kids[i]
	}
}

// Delete removes id; it returns its value and whether it was there.
// O(log n).
func (t *BTree[V]) Delete(id ID) (V, bool) {
	var zero V
	if t.root == nil {
		return zero, false
	}
	if l := t.last; l != nil && len(l.items) > 0 && (len(l.items) > btMinItems || l == t.root) && l.items[len(l.items)-1].id == id {
		it := l.items[len(l.items)-1]
		l.items[len(l.items)-1] = btItem[V]{}
		l.items = l.items[:len(l.items)-1]
		t.n--
		return it.v, true
	}
	v, ok := t.remove(t.root, id, false)
	if len(t.root.items) == 0 && !t.root.leaf() {
		old := t.root
		t.root = old.kids[0]
		t.freeNode(old)
		t.last = nil
		if t.root.leaf() {
			t.last = t.root // the only leaf is the rightmost
		}
	}
	if ok {
		t.n--
	}
	return v, ok
}

// remove deletes id (or, with max, the largest item) from the subtree of
// n. Before going down into a kid it makes sure the kid has more than
// btMinItems items, so that a removal never leaves a node short.
func (t *BTree[V]) remove(n *btNode[V], id ID, max bool) (V, bool) {
	var zero V
	for {
		var i int
		var found bool
		if max {
			i = len(n.items)
			if n.leaf() {
				it := n.items[i-1]
				n.items[i-1] = btItem[V]{}
				n.items = n.items[:i-1]
				return it.v, true
			}
		} else {
			i, found = n.find(id)
			if n.leaf() {
				if !found {
					return zero, false
				}
				it := n.items[i]
				copy(n.items[i:], n.items[i+1:])
				n.items[len(n.items)-1] = btItem[V]{}
				n.items = n.items[:len(n.items)-1]
				return it.v, true
			}
		}
		if len(n.kids[i].items) <= btMinItems {
			t.grow(n, i, id, max)
			continue // the items of n moved: look again
		}
		if found {
			out := n.items[i].v
			// Replace the item by its predecessor, the largest of kid i.
			kid := n.kids[i]
			pred := kid.maxItem()
			t.remove(kid, ID{}, true)
			n.items[i] = pred
			return out, true
		}
		n = n.kids[i]
	}
}

func (n *btNode[V]) maxItem() btItem[V] {
	for !n.leaf() {
		n = n.kids[len(n.kids)-1]
	}
	return n.items[len(n.items)-1]
}

// grow gives kid i more than btMinItems items before the removal of id
// (or, with max, of the largest item) from it, borrowing from a sibling
// or merging with one. A borrow takes one item, but when id is the last
// of the kid and the kid the last of n (the first of a run of removals
// going down at the right end, as a sorted batch of acknowledgements is
// removed)
// it takes half the difference of the two sizes (the sibling keeping
// btMinItems), so that the run shifts the kid's items once per several
// removals instead of once per removal. (Short runs going up, as
// AutoClaim's, lost more to the larger borrows than they saved.)
// O(btMaxItems) per call, O(1) amortized per removal of such a run.
func (t *BTree[V]) grow(n *btNode[V], i int, id ID, max bool) {
	kid := n.kids[i]
	switch {
	case i > 0 && len(n.kids[i-1].items) > btMinItems:
		left := n.kids[i-1]
		if max || i < len(n.items) || len(kid.items) == 0 || id.Less(kid.items[len(kid.items)-1].id) {
			// One item, and the rightmost leaf forgotten: a scattered
			// removal would pay more for the fast path than it saves.
			t.last = nil
			kid.items = append(kid.items, btItem[V]{})
			copy(kid.items[1:], kid.items)
			kid.items[0] = n.items[i-1]
			n.items[i-1] = left.items[len(left.items)-1]
			left.items[len(left.items)-1] = btItem[V]{}
			left.items = left.items[:len(left.items)-1]
			if !kid.leaf() {
				kid.kids = append(kid.kids, nil)
				copy(kid.kids[1:], kid.kids)
				kid.kids[0] = left.kids[len(left.kids)-1]
				left.kids[len(left.kids)-1] = nil
				left.kids = left.kids[:len(left.kids)-1]
			}
			return
		}
		k := borrowCount(len(left.items), len(kid.items))
		if kid.leaf() && t.run > 0 {
			// Enough for the rest of DeleteRun's run to come off the
			// leaf without another borrow, as far as the sibling and
			// the leaf's room allow.
			k = min(runBorrow(k, t.run, len(kid.items)), len(left.items)-btMinItems, btMaxItems-len(kid.items))
		}
		l := len(left.items) - k // left keeps items[:l]; items[l] goes up
		kid.items = append(kid.items, make([]btItem[V], k)...)
		copy(kid.items[k:], kid.items)
		copy(kid.items, left.items[l+1:])
		kid.items[k-1] = n.items[i-1]
		n.items[i-1] = left.items[l]
		clear(left.items[l:])
		left.items = left.items[:l]
		if !kid.leaf() {
			kid.kids = append(kid.kids, make([]*btNode[V], k)...)
			copy(kid.kids[k:], kid.kids)
			copy(kid.kids, left.kids[l+1:])
			clear(left.kids[l+1:])
			left.kids = left.kids[:l+1]
		}
	case i < len(n.items) && len(n.kids[i+1].items) > btMinItems:
		t.last = nil
		right := n.kids[i+1]
		kid.items = append(kid.items, n.items[i])
		n.items[i] = right.items[0]
		copy(right.items, right.items[1:])
		right.items[len(right.items)-1] = btItem[V]{}
		right.items = right.items[:len(right.items)-1]
		if !kid.leaf() {
			kid.kids = append(kid.kids, right.kids[0])
			copy(right.kids, right.kids[1:])
			right.kids[len(right.kids)-1] = nil
			right.kids = right.kids[:len(right.kids)-1]
		}
	default:
		t.last = nil
		if i == len(n.items) {
			i--
			kid = n.kids[i]
		}
		right := n.kids[i+1]
		kid.items = append(kid.items, n.items[i])
		kid.items = append(kid.items, right.items...)
		if !kid.leaf() {
			kid.kids = append(kid.kids, right.kids...)
		}
		copy(n.items[i:], n.items[i+1:])
		n.items[len(n.items)-1] = btItem[V]{}
		n.items = n.items[:len(n.items)-1]
		copy(n.kids[i+1:], n.kids[i+2:])
		n.kids[len(n.kids)-1] = nil
		n.kids = n.kids[:len(n.kids)-1]
		t.freeNode(right)
	}
}

// borrowCount is how many items a kid of kidLen items takes from its left
// sibling of sibLen > btMinItems items for a run of removals (counting
// the separator that goes down): half the difference, at least 1, and no
// more than leaves the sibling btMinItems. O(1).
func borrowCount(sibLen, kidLen int) int {
	k := min((sibLen-kidLen)/2, sibLen-btMinItems)
	return max(k, 1)
}

// runBorrow is how many items a leaf of kidLen items borrows before the
// removal of an ID followed by run more of a run: k (borrowCount's) or
// enough for the whole run to come off the leaf after, if more. O(1).
func runBorrow(k, run, kidLen int) int {
	return max(k, run+1+btMinItems-kidLen)
}

// Ceil returns the smallest ID >= id with a pointer to its value, or
// ok false. O(log n).
func (t *BTree[V]) Ceil(id ID) (ID, *V, bool) {
	var best *btItem[V]
	n := t.root
	for n != nil {
		i, ok := n.find(id)
		if ok {
			return id, &n.items[i].v, true
		}
		if i < len(n.items) {
			best = &n.items[i]
		}
		if n.leaf() {
			break
		}
		n = n.kids[i]
	}
	if best == nil {
		return ID{}, nil, false
	}
	return best.id, &best.v, true
}

// Min and Max return the smallest and largest IDs; ok is false when the
// tree is empty. O(log n).
func (t *BTree[V]) Min() (ID, bool) {
	n := t.root
	if t.n == 0 {
		return ID{}, false
	}
	for !n.leaf() {
		n = n.kids[0]
	}
	return n.items[0].id, true
}

func (t *BTree[V]) Max() (ID, bool) {
	if t.n == 0 {
		return ID{}, false
	}
	return t.root.maxItem().id, true
}

// Ascend calls fn for each item with from <= ID <= to, in order, until fn
// returns false. fn must not change the tree. O(log n + items visited).
func (t *BTree[V]) Ascend(from, to ID, fn func(id ID, v *V) bool) {
	if t.root != nil {
		t.root.ascend(from, to, fn)
	}
}

func (n *btNode[V]) ascend(from, to ID, fn func(id ID, v *V) bool) bool {
	i, _ := n.find(from)
	for ; i < len(n.items); i++ {
		if !n.leaf() && !n.kids[i].ascend(from, to, fn) {
			return false
		}
		it := &n.items[i]
		if to.Less(it.id) || !fn(it.id, &it.v) {
			return false
		}
	}
	if !n.leaf() {
		return n.kids[i].ascend(from, to, fn)
	}
	return true
}
