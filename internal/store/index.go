package store

import "errors"

// idxFan is the number of first IDs in a group of the index: 16 IDs of 16
// bytes are 256 bytes, four cache lines.
const idxFan = 16

// firstIndex is the index of the blocks' first IDs, in two levels, both
// flat and pointer-free.
//
// firsts holds the first ID of every block, in order. It is cut into
// groups of idxFan IDs, counted from a position skip places before
// firsts[0] (the head of the stream is dropped without moving the
// groups); top[j] is the first ID of group j, that of firsts[0] for group
// 0. In a stream of 10M entries (100k blocks) firsts takes 1.6 MB and top
// 100 KB, which stays in the processor's cache: a seek searches top there,
// then loads one group, whose four lines are fetched together instead of
// one after the other as the last steps of a binary search over firsts
// would.
type firstIndex struct {
	firsts []ID
	top    []ID
	skip   int // 0 <= skip < idxFan; 0 when firsts is empty
}

// len returns the number of first IDs. O(1).
func (x *firstIndex) len() int { return len(x.firsts) }

// at returns the first ID of block i. O(1).
func (x *firstIndex) at(i int) ID { return x.firsts[i] }

// push adds the first ID of a new last block, greater than every other.
// O(1) amortized.
func (x *firstIndex) push(id ID) {
	if (len(x.firsts)+x.skip)%idxFan == 0 {
		x.top = append(x.top, id)
	}
	x.firsts = append(x.firsts, id)
}

// dropHead removes the first n IDs, 0 <= n <= len. O(1).
func (x *firstIndex) dropHead(n int) {
	if n == 0 {
		return
	}
	x.firsts = x.firsts[n:]
	if len(x.firsts) == 0 {
		*x = firstIndex{}
		return
	}
	x.skip += n
	x.top = x.top[x.skip/idxFan:]
	x.skip %= idxFan
	x.top[0] = x.firsts[0]
}

// removeAt removes the ID of block i, 0 < i < len (the head goes with
// dropHead): the IDs after it move down one place, and so do the group
// boundaries after it. O(len).
func (x *firstIndex) removeAt(i int) {
	x.firsts = append(x.firsts[:i], x.firsts[i+1:]...)
	x.refreshTop((i + x.skip) / idxFan)
}

// refreshTop recomputes top from group g on. O(groups after g).
func (x *firstIndex) refreshTop(g int) {
	groups := (len(x.firsts) + x.skip + idxFan - 1) / idxFan
	x.top = x.top[:groups]
	for j := max(g, 1); j < groups; j++ {
		x.top[j] = x.firsts[j*idxFan-x.skip]
	}
	if g == 0 && groups > 0 {
		x.top[0] = x.firsts[0]
	}
}

// reset makes the index that of blocks, in order. O(len(blocks)).
func (x *firstIndex) reset(blocks []*Block) {
	*x = firstIndex{}
	if len(blocks) == 0 {
		return
	}
	x.firsts = make([]ID, len(blocks))
	for i, b := range blocks {
		x.firsts[i] = b.FirstID()
	}
	x.top = make([]ID, (len(blocks)+idxFan-1)/idxFan)
	x.refreshTop(0)
}

// group returns the group that holds the last first ID <= id, as the
// range [lo, hi) of firsts, given firsts[0] <= id. O(log groups).
//
// The binary search over top loads, while it compares at one level, the
// two places the next level may look at: those loads do not depend on the
// comparison, so when top is not in the cache their misses overlap. s
// gathers what they load; it feeds the result through a term that is
// always 0 (len(top) < 1<<48) so that they stay.
func (x *firstIndex) group(id ID) (lo, hi int) {
	t := x.top
	var s uint64
	base, n := 0, len(t) // the group is in [base, base+n)
	for n > 1 {
		half := n >> 1
		next := (n - half) >> 1
		s += t[base+next].Ms + t[base+half+next].Ms
		if !id.Less(t[base+half]) {
			base += half
		}
		n -= half
	}
	base += int(s >> 63 & uint64(len(t)>>48))
	lo = max(base*idxFan-x.skip, 0)
	hi = min((base+1)*idxFan-x.skip, len(x.firsts))
	return lo, hi
}

// last returns the index of the last first ID <= id in the group [lo, hi)
// that group returned. O(idxFan): it counts the IDs <= id without
// branches on their values, so the loads of the group's lines do not wait
// on each other.
func (x *firstIndex) last(id ID, lo, hi int) int {
	g := x.firsts[lo:hi]
	n := 0
	for i := range g {
		n += le(g[i], id)
	}
	return lo + n - 1
}

// le returns 1 when a <= b, 0 otherwise.
func le(a, b ID) int {
	lt := b2i(a.Ms < b.Ms)
	eq := b2i(a.Ms == b.Ms)
	return lt | eq&b2i(a.Seq <= b.Seq)
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// find returns the index of the last first ID <= id, or -1 if there is
// none. O(log len).
func (x *firstIndex) find(id ID) int {
	if len(x.firsts) == 0 || id.Less(x.firsts[0]) {
		return -1
	}
	lo, hi := x.group(id)
	return x.last(id, lo, hi)
}

// check verifies the index's own invariants: top and skip agree with
// firsts. O(len).
func (x *firstIndex) check() error {
	if len(x.firsts) == 0 {
		if len(x.top) != 0 || x.skip != 0 {
			return errIndex
		}
		return nil
	}
	if x.skip < 0 || x.skip >= idxFan || len(x.top) != (len(x.firsts)+x.skip+idxFan-1)/idxFan {
		return errIndex
	}
	for j, id := range x.top {
		if id != x.firsts[max(j*idxFan-x.skip, 0)] {
			return errIndex
		}
	}
	return nil
}

var errIndex = errors.New("the top level of the block index disagrees with the first IDs")
