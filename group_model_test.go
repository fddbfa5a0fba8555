package xstream

import (
	"context"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A reference model of one stream with two consumer groups: plain maps and
// sorted slices, obviously correct and slow.

type gmPending struct {
	consumer   string
	deliveryMs int64
	count      int64
}

type gmGroup struct {
	lastID    ID
	pel       map[ID]*gmPending
	consumers map[string]bool
}

type gmModel struct {
	live   []ID // sorted
	lastID ID
	groups map[string]*gmGroup
	now    int64
}

func (m *gmModel) isLive(id ID) bool {
	_, ok := slices.BinarySearchFunc(m.live, id, ID.Compare)
	return ok
}

func (m *gmModel) sortedPEL(g *gmGroup, consumer string) []ID {
	var ids []ID
	for id, p := range g.pel {
		if consumer == "" || p.consumer == consumer {
			ids = append(ids, id)
		}
	}
	slices.SortFunc(ids, ID.Compare)
	return ids
}

func (m *gmModel) readNew(g *gmGroup, c string, count int) []ID {
	g.consumers[c] = true
	var out []ID
	for _, id := range m.live {
		if !g.lastID.Less(id) {
			continue
		}
		if count > 0 && len(out) == count {
			break
		}
		out = append(out, id)
		g.lastID = id
		g.pel[id] = &gmPending{c, m.now, 1}
	}
	return out
}

func (m *gmModel) readHistory(g *gmGroup, c string, after ID, count int) []ID {
	g.consumers[c] = true
	out := []ID{}
	for _, id := range m.sortedPEL(g, c) {
		if !after.Less(id) {
			continue
		}
		if count > 0 && len(out) == count {
			break
		}
		out = append(out, id)
		if m.isLive(id) {
			g.pel[id].count++
			g.pel[id].deliveryMs = m.now
		}
	}
	return out
}

func (m *gmModel) claim(g *gmGroup, c string, minIdle int64, ids []ID) []ID {
	g.consumers[c] = true
	var out []ID
	for _, id := range ids {
		p, pending := g.pel[id]
		if !m.isLive(id) {
			delete(g.pel, id)
			continue
		}
		if !pending || (minIdle > 0 && m.now-p.deliveryMs < minIdle) {
			continue
		}
		p.consumer, p.deliveryMs = c, m.now
		p.count++
		out = append(out, id)
	}
	return out
}

func (m *gmModel) autoClaim(g *gmGroup, c string, minIdle int64, start ID, count int) (next ID, claimed, deleted []ID) {
	g.consumers[c] = true
	ids := m.sortedPEL(g, "")
	i := sort.Search(len(ids), func(i int) bool { return !ids[i].Less(start) })
	attempts := count * 10
	for ; i < len(ids) && attempts > 0 && count > 0; i++ {
		attempts--
		id := ids[i]
		p := g.pel[id]
		if !m.isLive(id) {
			delete(g.pel, id)
			deleted = append(deleted, id)
			count--
			continue
		}
		if minIdle > 0 && m.now-p.deliveryMs < minIdle {
			continue
		}
		p.consumer, p.deliveryMs = c, m.now
		p.count++
		claimed = append(claimed, id)
		count--
	}
	if i < len(ids) {
		next = ids[i]
	}
	return next, claimed, deleted
}

func TestGroupsAgainstModel(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(strconv.FormatUint(seed, 10), func(t *testing.T) { gmRun(t, seed, 2500) })
	}
}

func gmRun(t *testing.T, seed uint64, steps int) {
	gmRunWith(t, seed, steps, func(clk *testClock) *Stream { return NewStream(WithClock(clk.now)) }, nil)
}

// gmRunWith runs the model test on the stream open makes. after, when not
// nil, runs after each step and returns the stream to go on with (the
// same stream, reopened) or nil to keep the one there is.
func gmRunWith(t *testing.T, seed uint64, steps int, open func(*testClock) *Stream, after func() *Stream) {
	rng := rand.New(rand.NewPCG(seed, 99))
	clk := newTestClock(1_700_000_000_000)
	s := open(clk)
	m := &gmModel{groups: map[string]*gmGroup{}, now: clk.now().UnixMilli()}
	ctx := context.Background()
	names := []string{"g", "h"}
	consumers := []string{"a", "b", "c"}
	for _, n := range names {
		require.NoError(t, s.CreateGroup(n, "0", GroupOptions{}))
		m.groups[n] = &gmGroup{pel: map[ID]*gmPending{}, consumers: map[string]bool{}}
	}
	// randomID picks an ID near the stream's IDs, live or not.
	randomID := func() ID {
		return ID{uint64(rng.IntN(int(m.lastID.Ms) + 3)), uint64(rng.IntN(2))}
	}
	randomIDs := func() ([]ID, []string) {
		n := 1 + rng.IntN(4)
		ids := make([]ID, n)
		strs := make([]string, n)
		for i := range ids {
			ids[i] = randomID()
			strs[i] = ids[i].String()
		}
		return ids, strs
	}

	for step := range steps {
		gname := names[rng.IntN(2)]
		g := m.groups[gname]
		c := consumers[rng.IntN(len(consumers))]
		count := rng.IntN(4)
		switch op := rng.IntN(100); {
		case op < 25: // Add
			id := ID{m.lastID.Ms + 1 + uint64(rng.IntN(2)), uint64(rng.IntN(3))}
			got, err := s.Add(AddArgs{ID: id.String()}, Field{"v", id.String()})
			require.NoError(t, err)
			require.Equal(t, id, got)
			m.live = append(m.live, id)
			m.lastID = id
		case op < 40: // ReadGroup ">"
			es, err := s.ReadGroup(ctx, gname, c, ">", ReadGroupArgs{Count: count})
			require.NoError(t, err)
			want := m.readNew(g, c, count)
			require.Equal(t, want, gmIDsOrNil(es), "step %d ReadGroup >", step)
			for _, e := range es {
				require.Equal(t, []Field{{"v", e.ID.String()}}, e.Fields)
			}
		case op < 48: // ReadGroup history
			after := ID{}
			if rng.IntN(2) == 0 {
				after = randomID()
			}
			es, err := s.ReadGroup(ctx, gname, c, after.String(), ReadGroupArgs{Count: count})
			require.NoError(t, err)
			require.Equal(t, m.readHistory(g, c, after, count), gtIDs(es), "step %d history", step)
			for _, e := range es {
				if m.isLive(e.ID) {
					require.NotEmpty(t, e.Fields)
				} else {
					require.Empty(t, e.Fields)
				}
			}
		case op < 60: // Ack
			ids, strs := randomIDs()
			if len(g.pel) > 0 && rng.IntN(2) == 0 {
				pel := m.sortedPEL(g, "")
				ids[0] = pel[rng.IntN(len(pel))]
				strs[0] = ids[0].String()
			}
			n, err := s.Ack(gname, strs...)
			require.NoError(t, err)
			var want int64
			for _, id := range ids {
				if _, ok := g.pel[id]; ok {
					delete(g.pel, id)
					want++
				}
			}
			require.Equal(t, want, n, "step %d Ack", step)
		case op < 68: // Claim
			ids, strs := randomIDs()
			if len(g.pel) > 0 {
				pel := m.sortedPEL(g, "")
				ids[0] = pel[rng.IntN(len(pel))]
				strs[0] = ids[0].String()
			}
			// Duplicate IDs in one call are claimed once each time listed.
			minIdle := time.Duration(rng.IntN(3)) * time.Second
			es, err := s.Claim(gname, c, minIdle, strs, ClaimArgs{})
			require.NoError(t, err)
			require.Equal(t, m.claim(g, c, minIdle.Milliseconds(), ids), gmIDsOrNil(es), "step %d Claim", step)
		case op < 76: // AutoClaim
			start := ID{}
			if rng.IntN(2) == 0 {
				start = randomID()
			}
			minIdle := time.Duration(rng.IntN(3)) * time.Second
			cnt := 1 + rng.IntN(3)
			res, err := s.AutoClaim(gname, c, minIdle, start.String(), AutoClaimArgs{Count: cnt})
			require.NoError(t, err)
			next, claimed, deleted := m.autoClaim(g, c, minIdle.Milliseconds(), start, cnt)
			require.Equal(t, next, res.Next, "step %d AutoClaim next", step)
			require.Equal(t, claimed, gmIDsOrNil(res.Entries), "step %d AutoClaim", step)
			require.Equal(t, deleted, res.Deleted, "step %d AutoClaim deleted", step)
		case op < 84: // Delete
			ids, strs := randomIDs()
			n, err := s.Delete(strs...)
			require.NoError(t, err)
			var want int64
			for _, id := range ids {
				if i, ok := slices.BinarySearchFunc(m.live, id, ID.Compare); ok {
					m.live = slices.Delete(m.live, i, i+1)
					want++
				}
			}
			require.Equal(t, want, n, "step %d Delete", step)
		case op < 88: // Trim
			keep := rng.IntN(len(m.live) + 2)
			_, err := s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: int64(keep)})
			require.NoError(t, err)
			if keep < len(m.live) {
				m.live = slices.Clone(m.live[len(m.live)-keep:])
			}
		case op < 92: // SetGroupID
			var to ID
			arg := "$"
			switch rng.IntN(3) {
			case 0:
				to = m.lastID
			case 1:
				arg = "0"
			default:
				to = randomID()
				arg = to.String()
			}
			require.NoError(t, s.SetGroupID(gname, arg, GroupOptions{}))
			g.lastID = to
		default: // time passes
			d := time.Duration(rng.IntN(2000)) * time.Millisecond
			clk.advance(d)
			m.now += d.Milliseconds()
		}
		gmCompare(t, s, m, step)
		if after != nil {
			if again := after(); again != nil {
				s = again
				gmCompare(t, s, m, step)
			}
		}
	}
}

func gmIDsOrNil(es []Entry) []ID {
	if len(es) == 0 {
		return nil
	}
	return gtIDs(es)
}

// gmCompare checks every group's PEL, last ID and consumers against m.
func gmCompare(t *testing.T, s *Stream, m *gmModel, step int) {
	t.Helper()
	require.Equal(t, int64(len(m.live)), s.Len(), "step %d Len", step)
	infos := s.Groups()
	require.Len(t, infos, len(m.groups))
	for _, info := range infos {
		g := m.groups[info.Name]
		require.Equal(t, g.lastID, info.LastDeliveredID, "step %d group %s last ID", step, info.Name)
		rows, err := s.PendingRange(info.Name, PendingArgs{})
		require.NoError(t, err)
		var want []PendingEntry
		perConsumer := map[string]int64{}
		for _, id := range m.sortedPEL(g, "") {
			p := g.pel[id]
			want = append(want, PendingEntry{ID: id, Consumer: p.consumer, Idle: time.Duration(m.now-p.deliveryMs) * time.Millisecond, Deliveries: p.count})
			perConsumer[p.consumer]++
		}
		require.Equal(t, want, rows, "step %d group %s PEL", step, info.Name)
		cs, err := s.Consumers(info.Name)
		require.NoError(t, err)
		var gotNames []string
		for _, c := range cs {
			gotNames = append(gotNames, c.Name)
			require.Equal(t, perConsumer[c.Name], c.Pending, "step %d consumer %s", step, c.Name)
		}
		var wantNames []string
		for c := range g.consumers {
			wantNames = append(wantNames, c)
		}
		slices.Sort(wantNames)
		require.Equal(t, wantNames, gotNames, "step %d consumers", step)
	}
}
