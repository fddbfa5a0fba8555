package xstreamtest

import (
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream"
)

// Per-key order across every generation of shards: a reshard that leaves
// a CLOSED shard with no records between a parent and a grandchild (a
// split of a shard still empty, or UpdateShardCount's splits and merges)
// must not let the grandchild's records out before the grandparent's.

// emptyIntermediate is the smallest case: three records of key K in the
// only shard, a split, a split of K's child while it is still empty, two
// more records of K (in the grandchild). A StrictOrder group gets the
// grandchild's records only once the grandparent's are acknowledged, a
// group without it only once they were delivered, and the reader reads
// them in put order.
func emptyIntermediate(t *ST) {
	const k = "K"
	e := t.stream(1)
	for i := range 3 {
		t.put(e, k, "n", strconv.Itoa(i))
	}
	require.NoError(t, e.CreateGroup(t.ctx, "strict", xstream.ShardGroupOptions{StrictOrder: true}))
	require.NoError(t, e.CreateGroup(t.ctx, "loose", xstream.ShardGroupOptions{}))
	half := new(big.Int).Rsh(two128, 1)
	require.NoError(t, e.SplitShard(t.ctx, shardName(0), half.String()))
	child := t.owner(e, md5Key(k))
	c := t.shard(e, child)
	mid := new(big.Int).Add(bigKey(c.HashKeyRange.StartingHashKey), bigKey(c.HashKeyRange.EndingHashKey))
	require.NoError(t, e.SplitShard(t.ctx, child, mid.Rsh(mid, 1).String()))
	grandchild := t.owner(e, md5Key(k))
	for i := 3; i < 5; i++ {
		require.Equal(t, grandchild, t.put(e, k, "n", strconv.Itoa(i)).ShardID)
	}

	read := func(group string, count int) []xstream.Record {
		t.Helper()
		recs, err := e.ReadGroup(t.ctx, group, "c", xstream.ReadGroupArgs{Count: count})
		require.NoError(t, err)
		return recs
	}
	var first []xstream.RecordRef
	for i := range 3 {
		recs := read("strict", 1)
		require.Len(t, recs, 1, "read %d", i)
		require.Equal(t, shardName(0), recs[0].ShardID, "read %d: the grandparent's records first", i)
		require.Equal(t, xstream.Fields("n", strconv.Itoa(i)), recs[0].Fields)
		first = append(first, xstream.RecordRef{ShardID: recs[0].ShardID, SequenceNumber: recs[0].SequenceNumber})
	}
	require.Empty(t, read("strict", 1), "the grandchild waits for the grandparent's acks")
	_, err := e.Ack(t.ctx, "strict", first[1:]...)
	require.NoError(t, err)
	require.Empty(t, read("strict", 0), "one record of the grandparent is still pending")
	_, err = e.Ack(t.ctx, "strict", first[0])
	require.NoError(t, err)
	rest := read("strict", 0)
	require.Len(t, rest, 2)
	for i, r := range rest {
		require.Equal(t, grandchild, r.ShardID)
		require.Equal(t, xstream.Fields("n", strconv.Itoa(3+i)), r.Fields)
	}

	var loose []xstream.Record
	for range 10 {
		loose = append(loose, read("loose", 2)...)
	}
	require.Len(t, loose, 5)
	for i, r := range loose {
		require.Equal(t, xstream.Fields("n", strconv.Itoa(i)), r.Fields, "delivery %d of the group without StrictOrder", i)
	}

	r, err := e.NewReader(t.ctx)
	require.NoError(t, err)
	var got []xstream.Record
	for range 10 {
		recs, err := r.Read(t.ctx, xstream.ReadArgs{Count: 2})
		require.NoError(t, err)
		got = append(got, recs...)
	}
	require.Len(t, got, 5)
	for i, r := range got {
		require.Equal(t, xstream.Fields("n", strconv.Itoa(i)), r.Fields, "read %d", i)
	}
}

// RunShardOrder checks per-key order across deep reshard trees on a
// fresh stream from newStream: steps random operations (seeded with
// seed, so that a failure reproduces) of puts of a few keys, splits of
// the shard owning a key (often still empty), merges and UpdateShardCount,
// reads of a StrictOrder group and of a group without it with small
// counts (one in four with Claim and a ClaimMinIdle of 0, which takes
// over every pending record), acknowledgements in random order, and
// reads of a
// parent-before-child reader; then it acknowledges and reads everything
// left. It checks that
//
//   - each group delivers a key's records in put order, each once, and,
//     with StrictOrder, a record only after every earlier record of its
//     key in another shard was acknowledged;
//   - the reader reads a key's records in put order, each once;
//   - a read with Claim first takes over the group's pending records, in
//     shard and sequence number order, up to its count, each reporting
//     how many times it was delivered before, and new records after;
//   - none of them stalls: a group with records left delivers one when
//     nothing it delivered is pending (with StrictOrder) or at once
//     (without), and the reader reads one;
//   - in the end each delivered and read every record.
//
// RunSharded runs it once, with 300 steps.
func RunShardOrder(t *testing.T, newStream ShardedFactory, seed uint64, steps int) {
	t.Helper()
	shardOrder(&ST{T: t, ctx: t.Context(), newStream: newStream}, seed, steps)
}

func shardOrder(t *ST, seed uint64, steps int) {
	m := newOrderModel(t, seed)
	for range steps {
		m.step()
	}
	m.drain()
}

// orderModel is the state of RunShardOrder: what was put, and what each
// consumer got.
type orderModel struct {
	t      *ST
	e      xstream.ShardedEngine
	rng    *rand.Rand
	keys   []string
	shards map[string][]string // by key: the shard of each record put
	groups []*groupModel
	reader xstream.RecordReader
	read   map[string]int // by key: records read
	total  int            // records put
	claims *rand.Rand     // whether a group read claims, apart from rng so that the reshards are the same
}

// groupModel is what a group delivered and what was acknowledged.
type groupModel struct {
	name      string
	strict    bool
	next      map[string]int                      // by key: records delivered
	acked     map[string]map[int]bool             // by key: records acknowledged
	pending   []xstream.Record                    // delivered, not acknowledged
	delivered int                                 // records delivered
	where     map[xstream.RecordRef]orderedRecord // pending records' key and number
}

// orderedRecord is a record's key and number among the key's records,
// and how many times it was delivered.
type orderedRecord struct {
	key   string
	n     int
	times int64
}

// maxOpen bounds the OPEN shards, so that the tree grows deep rather
// than wide.
const maxOpen = 6

func newOrderModel(t *ST, seed uint64) *orderModel {
	m := &orderModel{
		t: t, e: t.stream(1), rng: rand.New(rand.NewPCG(seed, 0x5eed)),
		keys: []string{"k0", "k1", "k2", "k3", "k4", "k5"}, shards: map[string][]string{}, read: map[string]int{},
		claims: rand.New(rand.NewPCG(seed, 0xc1a1)),
	}
	t.Logf("seed %d", seed)
	for _, strict := range []bool{true, false} {
		g := &groupModel{name: "loose", strict: strict, next: map[string]int{}, acked: map[string]map[int]bool{}, where: map[xstream.RecordRef]orderedRecord{}}
		if strict {
			g.name = "strict"
		}
		require.NoError(t, m.e.CreateGroup(t.ctx, g.name, xstream.ShardGroupOptions{StrictOrder: strict}))
		m.groups = append(m.groups, g)
	}
	var err error
	m.reader, err = m.e.NewReader(t.ctx)
	require.NoError(t, err)
	return m
}

func (m *orderModel) step() {
	t := m.t
	switch op := m.rng.IntN(100); {
	case op < 35:
		for range 1 + m.rng.IntN(3) {
			m.put(m.keys[m.rng.IntN(len(m.keys))])
		}
	case op < 45:
		m.splitOwner(m.keys[m.rng.IntN(len(m.keys))])
	case op < 52:
		open := m.openByStart()
		if len(open) > 1 {
			i := m.rng.IntN(len(open) - 1)
			require.NoError(t, m.e.MergeShards(t.ctx, open[i].ShardID, open[i+1].ShardID))
		}
	case op < 58:
		n := len(m.openByStart())
		lo, hi := (n+1)/2, min(2*n, maxOpen)
		require.NoError(t, m.e.UpdateShardCount(t.ctx, lo+m.rng.IntN(hi-lo+1)))
	case op < 80:
		m.readGroup(m.groups[m.rng.IntN(len(m.groups))], 1+m.rng.IntN(3))
	case op < 90:
		m.ack(m.groups[m.rng.IntN(len(m.groups))], false)
	case op < 98:
		m.readReader(1 + m.rng.IntN(3))
	default:
		// A new reader from the checkpoints goes on where this one stands.
		r, err := m.e.NewReader(t.ctx, m.reader.Checkpoints()...)
		require.NoError(t, err)
		m.reader = r
	}
}

func (m *orderModel) put(k string) {
	r := m.t.put(m.e, k, "n", strconv.Itoa(len(m.shards[k])))
	m.shards[k] = append(m.shards[k], r.ShardID)
	m.total++
}

// splitOwner splits the OPEN shard owning key k at a random point.
func (m *orderModel) splitOwner(k string) {
	t := m.t
	if len(m.openByStart()) >= maxOpen {
		return
	}
	s := t.shard(m.e, t.owner(m.e, md5Key(k)))
	lo, hi := bigKey(s.HashKeyRange.StartingHashKey), bigKey(s.HashKeyRange.EndingHashKey)
	step := new(big.Int).Div(new(big.Int).Sub(hi, lo), big.NewInt(1000))
	if step.Sign() == 0 {
		return // too narrow to split anywhere
	}
	key := step.Mul(step, big.NewInt(int64(1+m.rng.IntN(999))))
	require.NoError(t, m.e.SplitShard(t.ctx, s.ShardID, key.Add(key, lo).String()))
}

func (m *orderModel) openByStart() []xstream.ShardInfo {
	open := m.t.list(m.e, xstream.ShardFilter{Type: xstream.FilterAtLatest})
	slices.SortFunc(open, func(a, b xstream.ShardInfo) int {
		return bigKey(a.HashKeyRange.StartingHashKey).Cmp(bigKey(b.HashKeyRange.StartingHashKey))
	})
	return open
}

// readGroup reads up to count records of group g and checks them; it
// returns how many new records it got. One read in four is with Claim
// and a ClaimMinIdle of 0: it must first take over the group's pending
// records, by shard and sequence number, each with the number of times
// it was delivered, so that it never returns nothing while a record is
// pending.
func (m *orderModel) readGroup(g *groupModel, count int) int {
	t := m.t
	claim := m.claims.IntN(4) == 0
	recs, err := m.e.ReadGroup(t.ctx, g.name, "c"+strconv.Itoa(m.rng.IntN(2)), xstream.ReadGroupArgs{Count: count, Claim: claim})
	require.NoError(t, err)
	require.LessOrEqual(t, len(recs), count)
	taken := 0
	if claim {
		pending := slices.Clone(g.pending)
		slices.SortFunc(pending, func(a, b xstream.Record) int {
			if c := strings.Compare(a.ShardID, b.ShardID); c != 0 {
				return c
			}
			return a.SequenceNumber.Compare(b.SequenceNumber)
		})
		taken = min(count, len(pending))
		require.GreaterOrEqual(t, len(recs), taken, "group %s: a read with Claim took %d of %d pending records", g.name, len(recs), len(pending))
		for i, r := range recs[:taken] {
			ref := xstream.RecordRef{ShardID: r.ShardID, SequenceNumber: r.SequenceNumber}
			require.Equal(t, xstream.RecordRef{ShardID: pending[i].ShardID, SequenceNumber: pending[i].SequenceNumber}, ref,
				"group %s: claimed record %d", g.name, i)
			or := g.where[ref]
			require.Equal(t, or.times, r.Deliveries, "group %s: deliveries of claimed record %s of %s", g.name, r.SequenceNumber, r.ShardID)
			or.times++
			g.where[ref] = or
		}
		recs = recs[taken:]
	}
	if len(recs) == 0 && taken < count && g.delivered < m.total && (!g.strict || len(g.pending) == 0) {
		t.Fatalf("group %s stalled: %d of %d records delivered, %d pending", g.name, g.delivered, m.total, len(g.pending))
	}
	for _, r := range recs {
		k, n := m.parse(r)
		require.Equal(t, g.next[k], n, "group %s: key %s out of order or duplicated (record %s of %s)", g.name, k, r.SequenceNumber, r.ShardID)
		require.Zero(t, r.Deliveries, "group %s: a new record", g.name)
		if g.strict {
			for i, sh := range m.shards[k][:n] {
				if sh != r.ShardID && !g.acked[k][i] {
					t.Fatalf("group %s delivered record %d of key %s (shard %s) while record %d (shard %s) is not acknowledged", g.name, n, k, r.ShardID, i, sh)
				}
			}
		}
		g.next[k] = n + 1
		g.delivered++
		g.pending = append(g.pending, r)
		g.where[xstream.RecordRef{ShardID: r.ShardID, SequenceNumber: r.SequenceNumber}] = orderedRecord{k, n, 1}
	}
	return len(recs)
}

// ack acknowledges a random part of group g's pending records (all of
// them with all), in random order, in calls of random sizes.
func (m *orderModel) ack(g *groupModel, all bool) {
	t := m.t
	m.rng.Shuffle(len(g.pending), func(i, j int) { g.pending[i], g.pending[j] = g.pending[j], g.pending[i] })
	n := m.rng.IntN(len(g.pending) + 1)
	if all {
		n = len(g.pending)
	}
	for len(g.pending) > 0 && n > 0 {
		k := 1 + m.rng.IntN(n)
		refs := make([]xstream.RecordRef, k)
		for i, r := range g.pending[:k] {
			refs[i] = xstream.RecordRef{ShardID: r.ShardID, SequenceNumber: r.SequenceNumber}
		}
		got, err := m.e.Ack(t.ctx, g.name, refs...)
		require.NoError(t, err)
		require.Equal(t, int64(k), got)
		for _, ref := range refs {
			or := g.where[ref]
			if g.acked[or.key] == nil {
				g.acked[or.key] = map[int]bool{}
			}
			g.acked[or.key][or.n] = true
			delete(g.where, ref)
		}
		g.pending = g.pending[k:]
		n -= k
	}
}

// readReader reads up to count records with the reader and checks them.
func (m *orderModel) readReader(count int) int {
	t := m.t
	recs, err := m.reader.Read(t.ctx, xstream.ReadArgs{Count: count})
	require.NoError(t, err)
	require.LessOrEqual(t, len(recs), count)
	done := 0
	for _, n := range m.read {
		done += n
	}
	if len(recs) == 0 && done < m.total {
		t.Fatalf("the reader stalled: %d of %d records read", done, m.total)
	}
	for _, r := range recs {
		k, n := m.parse(r)
		require.Equal(t, m.read[k], n, "reader: key %s out of order or duplicated (record %s of %s)", k, r.SequenceNumber, r.ShardID)
		m.read[k] = n + 1
	}
	return len(recs)
}

func (m *orderModel) parse(r xstream.Record) (string, int) {
	m.t.Helper()
	require.Len(m.t, r.Fields, 1, "record %s of %s", r.SequenceNumber, r.ShardID)
	n, err := strconv.Atoi(r.Fields[0].Value)
	require.NoError(m.t, err)
	require.Less(m.t, n, len(m.shards[r.PartitionKey]), "record %s of %s: key %q", r.SequenceNumber, r.ShardID, r.PartitionKey)
	return r.PartitionKey, n
}

// drain acknowledges and reads everything left, checking as it goes,
// and checks that every record was delivered and read, and that the run
// made what it is about: CLOSED shards without records between
// generations.
func (m *orderModel) drain() {
	for _, g := range m.groups {
		for g.delivered < m.total {
			m.ack(g, true)
			m.readGroup(g, 1+m.rng.IntN(3))
		}
		m.ack(g, true)
	}
	for m.readReader(1+m.rng.IntN(3)) > 0 {
	}
	for _, k := range m.keys {
		n := len(m.shards[k])
		for _, g := range m.groups {
			require.Equal(m.t, n, g.next[k], "group %s: records of key %s delivered", g.name, k)
		}
		require.Equal(m.t, n, m.read[k], "records of key %s read", k)
	}
	used := map[string]bool{}
	for _, shards := range m.shards {
		for _, id := range shards {
			used[id] = true
		}
	}
	all := m.t.list(m.e, xstream.ShardFilter{})
	gen := map[string]int{}
	empty, deepest := 0, 0
	for _, s := range all { // by number: parents first
		gen[s.ShardID] = max(gen[s.ParentShardID], gen[s.AdjacentParentShardID]) + 1
		deepest = max(deepest, gen[s.ShardID])
		if s.State == xstream.ShardClosed && s.ParentShardID != "" && !used[s.ShardID] {
			empty++
		}
	}
	m.t.Logf("%d records, %d shards in %d generations, %d of them CLOSED without records after a reshard", m.total, len(all), deepest, empty)
	require.NotZero(m.t, empty, "no empty shard between generations: the run tested nothing")
}
