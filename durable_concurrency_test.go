package xstream

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDurableSnapshotWhileWriting takes snapshots and backups while
// writers add, read, acknowledge, create and remove streams; the DB
// reopened afterwards must equal the DB before Close, and a backup taken
// once the writers stopped must restore to the same.
func TestDurableSnapshotWhileWriting(t *testing.T) {
	dir := t.TempDir()
	clk := newTestClock(1_700_000_000_000)
	db, err := Open(dir, WithClock(clk.now), WithSync(SyncNo), WithAutoSnapshot(-1))
	require.NoError(t, err)
	ctx := context.Background()
	for i := range 4 {
		require.NoError(t, db.CreateGroup(fmt.Sprint("s", i), "g", "0", GroupOptions{MkStream: true}))
	}
	ss, err := db.CreateShardedStream("sharded", ShardedArgs{Shards: 2})
	require.NoError(t, err)

	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			name := fmt.Sprint("s", w)
			for n := 0; n < 3000; n++ {
				select {
				case <-stop:
					return
				default:
				}
				switch rng.IntN(10) {
				case 0:
					es, _ := db.ReadGroup(ctx, "g", fmt.Sprint("c", rng.IntN(3)), ReadGroupArgs{Count: 5}, name, ">")
					if len(es) > 0 && rng.IntN(2) == 0 {
						s, _ := db.Lookup(name)
						s.AckIDs("g", es[0].Entries[0].ID)
					}
				case 1:
					tmp := fmt.Sprintf("tmp-%d-%d", w, n)
					db.Add(tmp, AddArgs{}, Fields("x", "y")...)
					if rng.IntN(2) == 0 {
						db.Remove(tmp)
					}
				case 2:
					ss.Put(fmt.Sprint("k", rng.IntN(50)), PutArgs{}, Fields("n", fmt.Sprint(n))...)
				case 3:
					s, _ := db.Lookup(name)
					s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 300, Approx: true})
				default:
					db.Add(name, AddArgs{}, Fields("n", fmt.Sprint(n), "w", name)...)
				}
			}
		}()
	}
	for range 5 {
		require.NoError(t, db.Snapshot())
		var buf bytes.Buffer
		require.NoError(t, db.Backup(&buf))
		restored, err := Restore(t.TempDir(), &buf, WithClock(clk.now))
		require.NoError(t, err, "a backup taken while writing restores")
		checkDB(t, restored)
		require.NoError(t, restored.Close())
	}
	close(stop)
	wg.Wait()
	shards, err := ss.ListShards(ShardFilter{})
	require.NoError(t, err)
	require.NoError(t, ss.SplitShard(shards[0].ShardID, shards[0].HashKeyRange.StartingHashKey.add(HashKey{1 << 40, 0}).String()))

	want := dumpDB(t, db)
	var buf bytes.Buffer
	require.NoError(t, db.Backup(&buf))
	require.NoError(t, db.Close())
	again := openT(t, dir, clk)
	require.Equal(t, want, dumpDB(t, again), "the reopened DB differs")
	checkDB(t, again)
	restored, err := Restore(t.TempDir(), &buf, WithClock(clk.now))
	require.NoError(t, err)
	defer restored.Close()
	require.Equal(t, want, dumpDB(t, restored), "the restored backup differs")
}

// TestDurableAutoSnapshot checks that a log past the size of
// WithAutoSnapshot makes a snapshot by itself, and that the DB reopens.
func TestDurableAutoSnapshot(t *testing.T) {
	dir := t.TempDir()
	clk := newTestClock(1_700_000_000_000)
	db, err := Open(dir, WithClock(clk.now), WithAutoSnapshot(4096))
	require.NoError(t, err)
	for i := range 500 {
		_, err := db.Add("s", AddArgs{}, Fields("i", fmt.Sprint(i))...)
		require.NoError(t, err)
	}
	require.NoError(t, db.Flush())
	info, _ := db.Persistence()
	require.Greater(t, info.LogBytes, int64(4096))
	db.autoSnapshot() // what the background writer runs each second
	db.dur.bg.Wait()
	info, _ = db.Persistence()
	require.Less(t, info.LogBytes, int64(4096), "the snapshot dropped the log")
	require.Greater(t, info.SnapshotBytes, int64(0))
	want := dumpDB(t, db)
	require.NoError(t, db.Close())
	require.Equal(t, want, dumpDB(t, openT(t, dir, clk)))
}
