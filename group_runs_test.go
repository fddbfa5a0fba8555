package xstream

import (
	"context"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// The batches of ReadGroup and AckIDs, which go into and out of the PELs
// in runs (deliverRunLocked, ackRunLocked), against the same calls made
// one entry at a time.

// runsStream returns a stream of n entries (IDs 1-0 … n-0) with group
// "g" at 0, in which consumers a, b and c have read 37 entries each in
// turn (a first), and the entries 5-0 and 200-0 were given back by Nack;
// its clock stands still. n is at least 200.
func runsStream(t *testing.T, n int) *Stream {
	t.Helper()
	s := NewStream(WithClock(newTestClock(1_700_000_000_000).now))
	for i := 1; i <= n; i++ {
		_, err := s.Add(AddArgs{ID: strconv.Itoa(i)}, Field{"v", strconv.Itoa(i)})
		require.NoError(t, err)
	}
	require.NoError(t, s.CreateGroup("g", "0", GroupOptions{}))
	for i := 0; ; i++ {
		es, err := s.ReadGroup(context.Background(), "g", string(rune('a'+i%3)), ">", ReadGroupArgs{Count: 37})
		require.NoError(t, err)
		if es == nil {
			break
		}
	}
	k, err := s.NackIDs("g", NackFail, []ID{{5, 0}, {200, 0}}, NackArgs{})
	require.NoError(t, err)
	require.EqualValues(t, 2, k)
	return s
}

// pelOf returns the PendingRange rows of group g, of consumer c ("" for
// the whole group).
func pelOf(t *testing.T, s *Stream, c string) []PendingEntry {
	t.Helper()
	rows, err := s.PendingRange("g", PendingArgs{Consumer: c})
	require.NoError(t, err)
	return rows
}

// TestAckRunOwners acknowledges batches, sorted and not, spanning several
// owners, entries given back by Nack, IDs not pending and duplicates: each
// consumer's PEL loses its own entries only, as with one Ack per ID.
func TestAckRunOwners(t *testing.T) {
	batches := [][]ID{
		{{1, 0}, {2, 0}, {5, 0}, {40, 0}, {41, 0}, {41, 0}, {80, 0}, {200, 0}, {300, 0}, {301, 0}},
		{{3, 0}, {6, 0}, {7, 0}, {75, 0}, {76, 0}, {111, 0}, {112, 0}, {199, 0}},
		{{9999, 0}},
		{},
	}
	all := make([]ID, 0, 300)
	for i := 1; i <= 300; i++ {
		all = append(all, ID{uint64(i), 0})
	}
	batches = append(batches, []ID{{150, 0}, {3, 0}, {299, 0}, {150, 0}, {120, 0}, {4, 0}, {5, 0}}, all)
	batch, single := runsStream(t, 300), runsStream(t, 300)
	for bi, ids := range batches {
		n, err := batch.AckIDs("g", ids...)
		require.NoError(t, err)
		var want int64
		for _, id := range ids {
			k, err := single.AckIDs("g", id) // one at a time: not a run
			require.NoError(t, err)
			want += k
		}
		require.Equal(t, want, n, "batch %d", bi)
		for _, c := range []string{"", "a", "b", "c"} {
			require.Equal(t, pelOf(t, single, c), pelOf(t, batch, c), "batch %d consumer %q", bi, c)
		}
		sb, err := batch.Pending("g")
		require.NoError(t, err)
		ss, err := single.Pending("g")
		require.NoError(t, err)
		require.Equal(t, ss, sb, "batch %d", bi)
	}
	require.Empty(t, pelOf(t, batch, ""))
	require.Equal(t, single.Stats().Acked, batch.Stats().Acked)
	require.EqualValues(t, 300, batch.Stats().Acked)
}

// TestAckRunNackedOnly acknowledges entries given back by Nack in a group
// none of whose consumers owns anything (they own no entry: owner 0).
func TestAckRunNackedOnly(t *testing.T) {
	s := NewStream()
	for i := 1; i <= 3; i++ {
		_, err := s.Add(AddArgs{ID: strconv.Itoa(i)}, Field{"v", "x"})
		require.NoError(t, err)
	}
	require.NoError(t, s.CreateGroup("g", "0", GroupOptions{}))
	k, err := s.NackIDs("g", NackFail, []ID{{1, 0}, {2, 0}}, NackArgs{Force: true})
	require.NoError(t, err)
	require.EqualValues(t, 2, k)
	n, err := s.AckIDs("g", ID{1, 0}, ID{2, 0}, ID{3, 0})
	require.NoError(t, err)
	require.EqualValues(t, 2, n)
	require.Empty(t, pelOf(t, s, ""))
}

// TestReadRunRedelivers reads again, as another consumer, entries still
// pending after SetGroupID moved the group back: a batch whose IDs do not
// follow the PEL moves each entry to the reader and starts it over, as a
// read of one entry at a time does.
func TestReadRunRedelivers(t *testing.T) {
	batch, single := runsStream(t, 300), runsStream(t, 300)
	for _, s := range []*Stream{batch, single} {
		require.NoError(t, s.SetGroupID("g", "30", GroupOptions{}))
	}
	es, err := batch.ReadGroup(context.Background(), "g", "d", ">", ReadGroupArgs{Count: 100})
	require.NoError(t, err)
	require.Len(t, es, 100)
	for range 100 {
		es, err := single.ReadGroup(context.Background(), "g", "d", ">", ReadGroupArgs{Count: 1})
		require.NoError(t, err)
		require.Len(t, es, 1)
	}
	for _, c := range []string{"", "a", "b", "c", "d"} {
		require.Equal(t, pelOf(t, single, c), pelOf(t, batch, c), "consumer %q", c)
	}
	d := pelOf(t, batch, "d")
	require.Len(t, d, 100)
	require.Equal(t, ID{31, 0}, d[0].ID)
	require.Equal(t, ID{130, 0}, d[99].ID)
	for _, r := range d {
		require.EqualValues(t, 1, r.Deliveries, "%v starts over", r.ID)
	}
	require.Equal(t, single.Groups(), batch.Groups())
}

// TestReadRunEntriesRead checks the group's entries-read counter and lag
// after batches of reads over a stream with deletions, a trim and a group
// set before the first entry, against reads of one entry at a time.
func TestReadRunEntriesRead(t *testing.T) {
	// known and read are the counter after the first read (7 entries),
	// by Redis's rules (streamEstimateDistanceFromFirstEverEntry).
	cases := []struct {
		name  string
		setup func(t *testing.T, s *Stream)
		known bool
		read  int64
	}{
		{"plain", func(*testing.T, *Stream) {}, true, 7},
		{"deleted inside", func(t *testing.T, s *Stream) {
			_, err := s.Delete("50", "51", "120")
			require.NoError(t, err)
		}, false, 0},
		{"deleted after a read", func(t *testing.T, s *Stream) {
			_, err := s.ReadGroup(context.Background(), "g", "a", ">", ReadGroupArgs{Count: 3})
			require.NoError(t, err)
			gi := s.Groups()[0]
			require.True(t, gi.EntriesReadKnown)
			require.EqualValues(t, 3, gi.EntriesRead)
			_, err = s.Delete("120")
			require.NoError(t, err)
		}, false, 0},
		{"trimmed past the group", func(t *testing.T, s *Stream) {
			_, err := s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 150})
			require.NoError(t, err)
		}, true, 57}, // 51-0, the first entry, is the 51st added
		{"counter unknown", func(t *testing.T, s *Stream) {
			require.NoError(t, s.SetGroupID("g", "10", GroupOptions{})) // no EntriesRead: unknown
		}, false, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var streams [2]*Stream
			for i := range streams {
				s := NewStream(WithClock(newTestClock(1_700_000_000_000).now))
				for j := 1; j <= 200; j++ {
					_, err := s.Add(AddArgs{ID: strconv.Itoa(j)}, Field{"v", "x"})
					require.NoError(t, err)
				}
				require.NoError(t, s.CreateGroup("g", "0", GroupOptions{}))
				tc.setup(t, s)
				streams[i] = s
			}
			batch, single := streams[0], streams[1]
			for _, count := range []int{7, 60, 0} {
				es, err := batch.ReadGroup(context.Background(), "g", "a", ">", ReadGroupArgs{Count: count})
				require.NoError(t, err)
				for range es {
					_, err := single.ReadGroup(context.Background(), "g", "a", ">", ReadGroupArgs{Count: 1})
					require.NoError(t, err)
				}
				require.Equal(t, single.Groups(), batch.Groups(), "after a read of %d", count)
				if gi := batch.Groups()[0]; count == 7 {
					require.Equal(t, tc.known, gi.EntriesReadKnown)
					if tc.known {
						require.Equal(t, tc.read, gi.EntriesRead)
					}
				} else if count == 0 { // the last entry read: the counter is known again
					require.True(t, gi.EntriesReadKnown)
					require.EqualValues(t, 200, gi.EntriesRead)
				}
				require.Equal(t, single.Stats().Delivered, batch.Stats().Delivered)
				require.Equal(t, pelOf(t, single, "a"), pelOf(t, batch, "a"))
			}
		})
	}
}

// TestReadRunNoAck delivers a batch with NoAck: the group moves on, no
// entry becomes pending, and the reader is not counted active.
func TestReadRunNoAck(t *testing.T) {
	s := runsStream(t, 300)
	_, err := s.Add(AddArgs{ID: "301"}, Field{"v", "301"})
	require.NoError(t, err)
	before := pelOf(t, s, "")
	es, err := s.ReadGroup(context.Background(), "g", "z", ">", ReadGroupArgs{NoAck: true})
	require.NoError(t, err)
	require.Equal(t, []ID{{301, 0}}, gtIDs(es))
	require.Equal(t, before, pelOf(t, s, ""))
	require.Empty(t, pelOf(t, s, "z"))
	gs := s.Groups()
	require.Equal(t, ID{301, 0}, gs[0].LastDeliveredID)
	cs, err := s.Consumers("g")
	require.NoError(t, err)
	i := slices.IndexFunc(cs, func(c ConsumerInfo) bool { return c.Name == "z" })
	require.GreaterOrEqual(t, i, 0)
	require.False(t, cs[i].InactiveKnown, "z never had a read that made entries pending")
}
