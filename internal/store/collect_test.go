package store

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// collectEntry is an entry as a Collect gives it back.
type collectEntry struct {
	id     ID
	fields []Field
}

// collected returns the entries of c from its first on; base is the
// collect's offset of c.Buf[0] (c.SealedLen, as the test seals no chunk).
func collected(c *Collect[ID], base int) []collectEntry {
	var out []collectEntry
	sp := c.Spans
	str := func(s Span) string { return string(c.Buf[s.Off-base : s.Off-base+s.Len]) }
	for i, id := range c.IDs {
		e := collectEntry{id: id}
		for range c.NF[i] {
			e.fields = append(e.fields, Field{str(sp[0]), str(sp[1])})
			sp = sp[2:]
		}
		out = append(out, e)
	}
	return out
}

// TestCollectWalkAsWalkAdd: on random storages (random limits, IDs of
// every form, values of every form, names of the block's master or not,
// deleted entries and trimmed heads), Collect.Walk from random bounds with
// random limits collects what Blocks.Walk and Add collect, appended after
// what the collect held, at offsets past SealedLen, and says whether an
// entry was left for the limit and which; the model's entries are what
// both give back.
func TestCollectWalkAsWalkAdd(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for round := range 50 {
		var s Blocks
		if r.IntN(2) == 0 {
			s.SetLimits(Limits{MaxEntries: int32(1 + r.IntN(20)), MaxBytes: int32(r.IntN(600)) - 1})
		}
		var ids []ID
		byID := map[ID][]Field{}
		id := ID{1 + r.Uint64N(1000), r.Uint64N(5)}
		for range r.IntN(400) {
			id = nextRandomID(r, id)
			fs := randomEntry(r, false)
			if r.IntN(3) > 0 && len(ids) > 0 { // the last entry's names: the block's master ones, often
				prev := byID[ids[len(ids)-1]]
				fs = make([]Field, len(prev))
				for k, f := range prev {
					fs[k] = Field{f.Name, randomValue(r, false)}
				}
			}
			s.Append(id, fs)
			ids = append(ids, id)
			byID[id] = fs
		}
		var live []ID
		for _, id := range ids {
			if r.IntN(8) == 0 {
				require.True(t, s.Delete(id))
			} else {
				live = append(live, id)
			}
		}
		if len(live) > 0 && r.IntN(4) == 0 {
			k := r.IntN(len(live))
			s.TrimTo(live[k])
			live = live[k+1:]
		}
		for range 10 {
			lo, hi := randomProbe(r, ids), randomProbe(r, ids)
			if r.IntN(4) == 0 {
				hi = MaxID
			}
			limit := 1 + r.IntN(50)
			var got, want Collect[ID]
			for _, c := range []*Collect[ID]{&got, &want} { // an earlier entry, at an offset
				c.SealedLen = 1000
				c.AddDeleted(ID{0, 1})
			}
			more, next := got.Walk(&s, lo, hi, limit)
			var wantMore bool
			var wantNext ID
			n := 0
			s.Walk(lo, hi, false, func(b *Block, id ID, flags byte, body int) bool {
				if n == limit {
					wantMore, wantNext = true, id
					return false
				}
				want.Add(b, id, flags, body)
				n++
				return true
			})
			require.Equal(t, wantMore, more, "round %d: more", round)
			require.Equal(t, wantNext, next, "round %d: next", round)
			require.Equal(t, want.IDs, got.IDs, "round %d", round)
			require.Equal(t, want.NF, got.NF, "round %d", round)
			es := collected(&got, 1000)
			require.Equal(t, collected(&want, 1000), es, "round %d", round)
			var model []ID
			for _, id := range live {
				if !id.Less(lo) && !hi.Less(id) {
					model = append(model, id)
				}
			}
			model = model[:min(limit, len(model))]
			require.Len(t, es, 1+len(model))
			for k, id := range model {
				require.Equal(t, id, es[1+k].id)
				require.Equal(t, byID[id], es[1+k].fields, "round %d: %v", round, id)
			}
		}
	}
}
