package xstream

import (
	"context"
	"fmt"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A blocked read whose context ends ends with the context's error, even
// when an Add comes right after the cancel, before the reading goroutine
// has woken: the Add's entry is not returned (Read, DB.Read) nor
// delivered (ReadGroup, DB.ReadGroup, DestroyGroup's failure), and it
// stays for the next reader. The server relies on it to move a blocked
// read to the DB that SWAPDB puts at its index. Each case runs many times,
// since the goroutine wakes at once on another CPU now and then.
func TestBlockedReadCancelThenAdd(t *testing.T) {
	const rounds = 50
	cases := []struct {
		name string
		// read blocks on stream "s" of db with ctx (as a consumer of group g).
		read func(ctx context.Context, db *DB, g string) (int, error)
		// after runs right after the cancel.
		after func(t *testing.T, db *DB, g, id string)
	}{
		{"Stream.Read", func(ctx context.Context, db *DB, g string) (int, error) {
			s, _ := db.Lookup("s")
			es, err := s.Read(ctx, "$", ReadArgs{Block: BlockForever})
			return len(es), err
		}, cancelWakeAdd},
		{"DB.Read", func(ctx context.Context, db *DB, g string) (int, error) {
			out, err := db.Read(ctx, ReadArgs{Block: BlockForever}, "s", "$")
			return len(out), err
		}, cancelWakeAdd},
		{"Stream.ReadGroup", streamReadGroup, cancelWakeAdd},
		{"DB.ReadGroup", func(ctx context.Context, db *DB, g string) (int, error) {
			out, err := db.ReadGroup(ctx, g, "c", ReadGroupArgs{Block: BlockForever}, "s", ">")
			return len(out), err
		}, cancelWakeAdd},
		{"DestroyGroup", streamReadGroup, func(t *testing.T, db *DB, g, _ string) {
			s, _ := db.Lookup("s")
			require.True(t, must(s.DestroyGroup(g)))
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				db := NewDB()
				require.NoError(t, db.CreateGroup("s", "all", "$", GroupOptions{MkStream: true}))
				s, _ := db.Lookup("s")
				for i := range rounds {
					// A group of its own, at the end, for each round.
					g := fmt.Sprint("g", i)
					require.NoError(t, s.CreateGroup(g, "$", GroupOptions{}))
					ctx, cancel := context.WithCancel(context.Background())
					type result struct {
						n   int
						err error
					}
					out := make(chan result, 1)
					go func() {
						n, err := tc.read(ctx, db, g)
						out <- result{n, err}
					}()
					synctest.Wait()
					require.Equal(t, 1, s.Blocked(), "round %d: the read is not blocked", i)
					cancel()
					tc.after(t, db, g, ID{Ms: uint64(i + 1)}.String())
					r := <-out
					require.ErrorIs(t, r.err, context.Canceled, "round %d", i)
					require.Zero(t, r.n, "round %d: the read returned what came after its cancel", i)
					if sum, err := s.Pending(g); err == nil {
						require.Zero(t, sum.Count, "round %d: the cancelled read was delivered an entry", i)
					}
					assert.Zero(t, s.Blocked())
				}
				// The entries the cancelled reads did not take are there
				// for the next reader of each group.
				for _, gi := range s.Groups() {
					es, err := s.ReadGroup(context.Background(), gi.Name, "c", ">", ReadGroupArgs{})
					require.NoError(t, err)
					assert.Equal(t, int(s.Len())-len(es), groupRound(t, gi.Name), gi.Name)
				}
			})
		})
	}
}

// streamReadGroup is a blocking Stream.ReadGroup ">" of stream "s" of db.
func streamReadGroup(ctx context.Context, db *DB, g string) (int, error) {
	s, _ := db.Lookup("s")
	es, err := s.ReadGroup(ctx, g, "c", ">", ReadGroupArgs{Block: BlockForever})
	return len(es), err
}

// cancelWakeAdd adds entry id to stream "s" of db.
func cancelWakeAdd(t *testing.T, db *DB, _, id string) {
	t.Helper()
	s, _ := db.Lookup("s")
	_, err := s.Add(AddArgs{ID: id}, Field{"f", id})
	require.NoError(t, err)
}

// groupRound returns the number of entries added before group g of
// TestBlockedReadCancelThenAdd was made: i for round i's "gi", 0 for
// "all".
func groupRound(t *testing.T, g string) int {
	t.Helper()
	if g == "all" {
		return 0
	}
	var i int
	_, err := fmt.Sscanf(g, "g%d", &i)
	require.NoError(t, err)
	return i
}
