package xstream

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream/internal/fulldisk"
)

// A durable DB on a disk that fills up for real (a small tmpfs; the test
// is skipped where it cannot be mounted): writers add until the log
// fails with ENOSPC; under SyncAlways no reader is handed an entry in
// doubt; once space is freed the DB takes writes again in the same
// process; and a reopen finds every acknowledged entry and every entry
// read.
func TestLogFailDiskFull(t *testing.T) {
	for _, policy := range []SyncPolicy{SyncAlways, SyncEverySecond} {
		t.Run(policy.String(), func(t *testing.T) {
			mnt := fulldisk.Mount(t, 4<<20)
			dir := mnt + "/db"
			release := fulldisk.Fill(t, mnt, 512<<10)
			db, err := Open(dir, WithSync(policy))
			require.NoError(t, err)

			value := strings.Repeat("v", 200)
			var mu sync.Mutex
			acked := map[ID]bool{}
			var wg sync.WaitGroup
			for w := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := 0; ; i++ {
						id, err := db.Add("s", AddArgs{}, Fields("w", fmt.Sprint(w), "i", fmt.Sprint(i), "v", value)...)
						if err == nil && policy != SyncAlways && i%64 == 0 {
							err = db.Flush() // as the server writes before it replies
						}
						if err != nil {
							require.ErrorIs(t, err, ErrLogFailed)
							require.ErrorIs(t, err, syscall.ENOSPC)
							return
						}
						mu.Lock()
						acked[id] = true
						mu.Unlock()
					}
				}()
			}
			wg.Wait()
			require.NotEmpty(t, acked)
			require.ErrorIs(t, db.Err(), syscall.ENOSPC)
			_, err = db.Add("s", AddArgs{}, Fields("late", "1")...)
			require.ErrorIs(t, err, ErrLogFailed, "refused while the disk is full")

			s, _ := db.Lookup("s")
			read := map[ID]bool{}
			if es, err := s.Range("-", "+", 0); policy == SyncAlways {
				require.ErrorIs(t, err, ErrLogFailed, "a read that would show entries in doubt fails")
			} else {
				require.NoError(t, err)
				for _, e := range es {
					read[e.ID] = true
				}
			}

			release()
			require.NoError(t, db.Sync(), "the log is written again once space is back")
			require.NoError(t, db.Err())
			for i := range 100 {
				id, err := db.Add("s", AddArgs{}, Fields("after", fmt.Sprint(i))...)
				require.NoError(t, err)
				acked[id] = true
			}
			es, err := s.Range("-", "+", 0)
			require.NoError(t, err)
			for _, e := range es {
				read[e.ID] = true
			}
			require.NoError(t, db.Close())

			got := reopenIDs(t, dir)
			requireKept(t, got, slices.Collect(maps.Keys(acked)))
			requireKept(t, got, slices.Collect(maps.Keys(read)))
			t.Logf("%s: %d entries acknowledged, %d read, %d kept", policy, len(acked), len(read), len(got))
		})
	}
}
