package xstream

import (
	"strconv"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestConcurrentProducersAndReaders runs producers and blocked readers
// (DB.Read over two streams, Stream.Read on one) together and checks that
// every reader receives every entry exactly once, in order. It runs in a
// synctest bubble: a lost wake-up shows as a deadlock there, not as a hang,
// and a goroutine left behind fails the test.
func TestConcurrentProducersAndReaders(t *testing.T) {
	const (
		producers = 4
		perProd   = 300
		dbReaders = 3
		sReaders  = 2
	)
	names := []string{"s0", "s1"}
	perStream := producers * perProd / len(names)

	synctest.Test(t, func(t *testing.T) {
		db := NewDB()
		s0 := db.Stream("s0") // s1 is created by its first Add

		var wg sync.WaitGroup
		added := make([][]ID, producers)
		for p := range producers {
			wg.Go(func() {
				for i := range perProd {
					id, err := db.Add(names[i%2], AddArgs{}, Fields("p", strconv.Itoa(p), "i", strconv.Itoa(i))...)
					if !assert.NoError(t, err) {
						return
					}
					added[p] = append(added[p], id)
				}
			})
		}

		dbGot := make([][2][]Entry, dbReaders)
		for r := range dbReaders {
			wg.Go(func() {
				after := []string{"0", "0"}
				for len(dbGot[r][0]) < perStream || len(dbGot[r][1]) < perStream {
					res, err := db.Read(t.Context(), ReadArgs{Block: BlockForever, Count: 17},
						names[0], after[0], names[1], after[1])
					if !assert.NoError(t, err) {
						return
					}
					for _, se := range res {
						k := 0
						if se.Stream == names[1] {
							k = 1
						}
						assert.LessOrEqual(t, len(se.Entries), 17)
						dbGot[r][k] = append(dbGot[r][k], se.Entries...)
						after[k] = se.Entries[len(se.Entries)-1].ID.String()
					}
				}
			})
		}
		sGot := make([][]Entry, sReaders)
		for r := range sReaders {
			wg.Go(func() {
				after := "0"
				for len(sGot[r]) < perStream {
					es, err := s0.Read(t.Context(), after, ReadArgs{Block: BlockForever, Count: 5 + r})
					if !assert.NoError(t, err) {
						return
					}
					sGot[r] = append(sGot[r], es...)
					after = es[len(es)-1].ID.String()
				}
			})
		}
		wg.Wait()

		// The streams hold what the producers added.
		var content [2][]Entry
		for k, n := range names {
			s, ok := db.Lookup(n)
			require.True(t, ok)
			es, err := s.Range("-", "+", 0)
			require.NoError(t, err)
			require.Len(t, es, perStream)
			content[k] = es
		}
		for p, got := range added {
			require.Len(t, got, perProd)
			for i, id := range got {
				k := i % 2
				e, err := db.Stream(names[k]).Range(id.String(), id.String(), 0)
				require.NoError(t, err)
				require.Equal(t, Fields("p", strconv.Itoa(p), "i", strconv.Itoa(i)), e[0].Fields)
			}
		}
		// Every reader got exactly the stream's content, in order.
		for r := range dbReaders {
			for k := range names {
				require.Equal(t, content[k], dbGot[r][k], "DB reader %d, stream %s", r, names[k])
			}
		}
		for r := range sReaders {
			require.Equal(t, content[0], sGot[r], "Stream reader %d", r)
		}
		for k := range content {
			for i := 1; i < len(content[k]); i++ {
				require.True(t, content[k][i-1].ID.Less(content[k][i].ID))
			}
		}
		assert.Empty(t, waitersOf(s0))
	})
}
