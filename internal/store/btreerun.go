package store

// Runs of IDs: the batches a consumer group adds to its pending entries
// lists (the entries one read delivers, in ID order) and removes from
// them (a sorted batch of acknowledgements), done a leaf at a time at the
// right edge of the tree instead of one call and one set of checks per
// item.

// InsertRun stores v under each of ids, which should ascend, unless the
// ID is there already, and returns how many IDs were new. The IDs greater
// than every item of the tree (the usual case: new deliveries) are copied
// into the rightmost leaf as many at a time as it has room for; any other
// ID, and one not greater than the ID before it, is inserted as Insert
// does. O(len(ids) + log n) for a run after the tree's largest ID,
// O(len(ids) × log n) at worst.
func (t *BTree[V]) InsertRun(ids []ID, v V) int {
	added := 0
	for i := 0; i < len(ids); {
		l := t.last
		if l == nil || len(l.items) == 0 || len(l.items) >= btMaxItems || !l.items[len(l.items)-1].id.Less(ids[i]) {
			if _, ok := t.Insert(ids[i], v); ok {
				added++
			}
			i++
			continue
		}
		n := len(l.items)
		k := min(cap(l.items), btMaxItems) - n
		k = min(k, len(ids)-i)
		dst := l.items[n : n+k]
		src := ids[i : i+k]
		src = src[:len(dst)]
		prev := l.items[n-1].id
		j := 0
		for ; j < len(dst); j++ {
			id := src[j]
			if !prev.Less(id) {
				break // out of order: Insert places it
			}
			dst[j] = btItem[V]{v: v, id: id}
			prev = id
		}
		l.items = l.items[:n+j]
		t.n += j
		added += j
		i += j
	}
	return added
}

// Removed is an item DeleteRun took out: the index of its ID in the IDs
// given, and its value.
type Removed[V any] struct {
	I int
	V V
}

// DeleteRun removes each of ids, from the last, and returns how many were
// there. When out is not nil, the index in ids and the value of each ID
// removed are appended to *out, in the order of removal (decreasing
// index). The IDs may come in any order, and twice; those that ascend to
// the end of the tree are the fast case: a run of IDs that ends the tree
// comes off the rightmost leaf as many at a time as the leaf can lose
// without falling short (the removal that then rebalances it is
// Delete's, which borrows enough items for the rest of the run, as far as
// the leaf's left sibling can spare them); any other ID is removed as
// Delete does. O(len(ids) + log n) amortized for a run at the end of the
// tree, O(len(ids) × log n) at worst.
func (t *BTree[V]) DeleteRun(ids []ID, out *[]Removed[V]) int {
	var rm []Removed[V]
	if out != nil {
		rm = *out
	}
	removed := 0
	for i := len(ids) - 1; i >= 0; {
		if l := t.last; l != nil {
			n := len(l.items)
			k := n - btMinItems
			if l == t.root {
				k = n
			}
			if k = min(k, i+1); k > 0 {
				// The leaf's last k items against the run's last k IDs.
				its := l.items[n-k : n]
				run := ids[i+1-k : i+1]
				run = run[:len(its)]
				j := len(its)
				if out == nil {
					for j > 0 && its[j-1].id == run[j-1] {
						j--
					}
				} else {
					for j > 0 && its[j-1].id == run[j-1] {
						j--
						rm = append(rm, Removed[V]{I: i + 1 - k + j, V: its[j].v})
					}
				}
				if m := len(its) - j; m > 0 {
					clear(its[j:])
					l.items = l.items[:n-m]
					t.n -= m
					removed += m
					i -= m
					continue
				}
			}
		}
		t.run = i
		v, ok := t.Delete(ids[i])
		t.run = 0
		if ok {
			removed++
			if out != nil {
				rm = append(rm, Removed[V]{I: i, V: v})
			}
		}
		i--
	}
	if out != nil {
		*out = rm
	}
	return removed
}
