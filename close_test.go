package xstream

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
)

// DB.Close: every later call fails with ErrClosed and changes nothing,
// blocked calls return ErrClosed at once, Close twice is harmless, and
// Close racing with calls is safe and loses nothing acknowledged.

// closeKinds runs f on an in-memory DB and on a durable one.
func closeKinds(t *testing.T, f func(t *testing.T, open func() *DB)) {
	t.Run("memory", func(t *testing.T) { f(t, func() *DB { return NewDB() }) })
	t.Run("durable", func(t *testing.T) {
		dir := t.TempDir()
		f(t, func() *DB {
			db, err := Open(dir, WithSync(SyncAlways))
			require.NoError(t, err)
			return db
		})
	})
}

func TestCloseRefusesEveryCall(t *testing.T) {
	closeKinds(t, testCloseRefusesEveryCall)
}

func testCloseRefusesEveryCall(t *testing.T, open func() *DB) {
	db := open()
	ctx := context.Background()
	ids := must(db.AddBatch("s", AddArgs{}, Fields("a", "1"), Fields("a", "2"), Fields("a", "3")))
	require.NoError(t, db.CreateGroup("s", "g", "0", GroupOptions{}))
	_, err := db.ReadGroup(ctx, "g", "c", ReadGroupArgs{Count: 1}, "s", ">")
	require.NoError(t, err)
	s, _ := db.Lookup("s")
	ss := must(db.CreateShardedStream("k", ShardedArgs{Shards: 2}))
	put := must(ss.Put("p", PutArgs{}, Fields("a", "1")...))
	require.NoError(t, ss.CreateGroup("g", ShardGroupOptions{}))
	it := must(ss.GetShardIterator(put.ShardID, IteratorArgs{Type: TrimHorizon}))
	reader := must(ss.NewReader())
	img := StreamImage{Entries: []Entry{{ID: ID{1, 0}, Fields: Fields("a", "1")}}, LastID: ID{1, 0}, EntriesAdded: 1}
	other := NewDB()

	require.NoError(t, db.Close())
	require.NoError(t, db.Close(), "Close twice")

	calls := map[string]func() error{
		"DB.Add":              func() error { _, err := db.Add("s", AddArgs{}, Fields("a", "x")...); return err },
		"DB.Add new":          func() error { _, err := db.Add("new", AddArgs{}, Fields("a", "x")...); return err },
		"DB.AddBatch":         func() error { _, err := db.AddBatch("s", AddArgs{}, Fields("a", "x")); return err },
		"DB.Read":             func() error { _, err := db.Read(ctx, ReadArgs{}, "s", "0"); return err },
		"DB.ReadGroup":        func() error { _, err := db.ReadGroup(ctx, "g", "c", ReadGroupArgs{}, "s", ">"); return err },
		"DB.CreateGroup":      func() error { return db.CreateGroup("new", "g", "0", GroupOptions{MkStream: true}) },
		"DB.Remove":           func() error { _, err := db.Remove("s"); return err },
		"DB.Rename":           func() error { _, err := db.Rename("s", "t", true); return err },
		"DB.Copy":             func() error { _, err := db.Copy("s", db, "t", true); return err },
		"DB.Copy from":        func() error { _, err := db.Copy("s", other, "t", true); return err },
		"DB.Copy to":          func() error { _, err := other.Copy("x", db, "t", true); return err },
		"DB.Restore":          func() error { _, err := db.Restore("t", img, true); return err },
		"DB.SetExpiry":        func() error { return db.SetExpiry("s", time.Now().Add(time.Hour)) },
		"DB.RemoveIfExpiry":   func() error { _, err := db.RemoveIfExpiry("s", time.Now(), 0); return err },
		"DB.SetIdempotence":   func() error { return db.SetIdempotence("s", IdempotenceConfig{MaxSize: 10}) },
		"DB.SetNodeSize":      func() error { return db.SetNodeSize(10, 0) },
		"DB.Flush":            db.Flush,
		"DB.Sync":             db.Sync,
		"DB.CreateSharded":    func() error { _, err := db.CreateShardedStream("k2", ShardedArgs{Shards: 1}); return err },
		"DB.RemoveSharded":    func() error { _, err := db.RemoveShardedStream("k"); return err },
		"Stream.Add":          func() error { _, err := s.Add(AddArgs{}, Fields("a", "x")...); return err },
		"Stream.Add explicit": func() error { _, err := s.Add(AddArgs{ID: "999999999999-0"}, Fields("a", "x")...); return err },
		"Stream.AddBatch":     func() error { _, err := s.AddBatch(AddArgs{}, Fields("a", "x")); return err },
		"Stream.Range":        func() error { _, err := s.Range("-", "+", 0); return err },
		"Stream.RevRange":     func() error { _, err := s.RevRange("+", "-", 0); return err },
		"Stream.Scan":         func() error { _, err := s.Scan("-", "+"); return err },
		"Stream.ScanNoCopy":   func() error { _, err := s.ScanNoCopy("-", "+", 0, false); return err },
		"Stream.Read":         func() error { _, err := s.Read(ctx, "0", ReadArgs{}); return err },
		"Stream.Info":         func() error { _, err := s.Info(); return err },
		"Stream.InfoFull":     func() error { _, err := s.InfoFull(0); return err },
		"Stream.Delete":       func() error { _, err := s.Delete(ids[0].String()); return err },
		"Stream.DeleteEx":     func() error { _, err := s.DeleteEx(KeepRef, ids[0].String()); return err },
		"Stream.Trim":         func() error { _, err := s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 0}); return err },
		"Stream.SetID":        func() error { return s.SetID(SetIDArgs{LastID: "999999999999-0", EntriesAdded: -1}) },
		"Stream.CreateGroup":  func() error { return s.CreateGroup("g2", "0", GroupOptions{}) },
		"Stream.SetGroupID":   func() error { return s.SetGroupID("g", "0", GroupOptions{}) },
		"Stream.DestroyGroup": func() error { _, err := s.DestroyGroup("g"); return err },
		"Stream.CreateConsumer": func() error {
			_, err := s.CreateConsumer("g", "c2")
			return err
		},
		"Stream.DeleteConsumer": func() error { _, err := s.DeleteConsumer("g", "c"); return err },
		"Stream.ReadGroup":      func() error { _, err := s.ReadGroup(ctx, "g", "c", ">", ReadGroupArgs{}); return err },
		"Stream.ReadGroup history": func() error {
			_, err := s.ReadGroup(ctx, "g", "c", "0", ReadGroupArgs{})
			return err
		},
		"Stream.Ack":     func() error { _, err := s.Ack("g", ids[0].String()); return err },
		"Stream.AckDel":  func() error { _, err := s.AckDel("g", KeepRef, ids[0].String()); return err },
		"Stream.Nack":    func() error { _, err := s.Nack("g", NackFail, []string{ids[0].String()}, NackArgs{}); return err },
		"Stream.Pending": func() error { _, err := s.Pending("g"); return err },
		"Stream.PendingRange": func() error {
			_, err := s.PendingRange("g", PendingArgs{Start: "-", End: "+", Count: 10})
			return err
		},
		"Stream.Claim": func() error {
			_, err := s.Claim("g", "c2", 0, []string{ids[0].String()}, ClaimArgs{})
			return err
		},
		"Stream.AutoClaim": func() error {
			_, err := s.AutoClaim("g", "c2", 0, "0", AutoClaimArgs{})
			return err
		},
		"Stream.Consumers": func() error { _, err := s.Consumers("g"); return err },
		"Stream.MoveDeadLetters": func() error {
			_, err := s.MoveDeadLetters("g", DeadLetterArgs{MaxDeliveries: 1, To: NewStream()})
			return err
		},
		"Stream.SetIdempotence": func() error { return s.SetIdempotence(IdempotenceConfig{MaxSize: 10}) },
		"Stream.SetNodeSize":    func() error { return s.SetNodeSize(10, 0) },
		"Sharded.Put":           func() error { _, err := ss.Put("p", PutArgs{}, Fields("a", "x")...); return err },
		"Sharded.PutRecords": func() error {
			_, _, err := ss.PutRecords([]PutRecordsEntry{{PartitionKey: "p", Fields: Fields("a", "x")}})
			return err
		},
		"Sharded.GetShardIterator": func() error {
			_, err := ss.GetShardIterator(put.ShardID, IteratorArgs{Type: TrimHorizon})
			return err
		},
		"Sharded.GetRecords":       func() error { _, err := ss.GetRecords(it, 10); return err },
		"Sharded.ListShards":       func() error { _, err := ss.ListShards(ShardFilter{}); return err },
		"Sharded.SplitShard":       func() error { return ss.SplitShard(put.ShardID, "1000") },
		"Sharded.MergeShards":      func() error { return ss.MergeShards("shardId-000000000000", "shardId-000000000001") },
		"Sharded.UpdateShardCount": func() error { return ss.UpdateShardCount(4) },
		"Sharded.SetRetention":     func() error { return ss.SetRetention(time.Hour) },
		"Sharded.CreateGroup":      func() error { return ss.CreateGroup("g2", ShardGroupOptions{}) },
		"Sharded.ReadGroup":        func() error { _, err := ss.ReadGroup(ctx, "g", "c", ReadGroupArgs{}); return err },
		"Sharded.Ack": func() error {
			_, err := ss.Ack("g", RecordRef(put))
			return err
		},
		"Sharded.Pending": func() error { _, err := ss.Pending("g"); return err },
		"Sharded.Claim": func() error {
			_, err := ss.Claim("g", "c", 0, []RecordRef{{ShardID: put.ShardID, SequenceNumber: put.SequenceNumber}}, ClaimArgs{})
			return err
		},
		"Sharded.AutoClaim": func() error {
			_, err := ss.AutoClaim("g", "c", 0, RecordRef{}, AutoClaimArgs{})
			return err
		},
		"Sharded.NewReader": func() error { _, err := ss.NewReader(); return err },
		"ShardReader.Read":  func() error { _, err := reader.Read(ctx, ReadArgs{}); return err },
		"Sharded.ScanShard": func() error {
			for _, err := range ss.ScanShard(put.ShardID, IteratorArgs{Type: TrimHorizon}) {
				return err
			}
			return nil
		},
	}
	if db.Durable() {
		calls["DB.Snapshot"] = db.Snapshot
		calls["DB.Backup"] = func() error { return db.Backup(new(discard)) }
	}
	for name, call := range calls {
		require.ErrorIs(t, call(), ErrClosed, name)
	}
	require.Equal(t, int64(3), s.Len(), "nothing changed")
	require.Equal(t, []string{"s"}, db.Names(""))
	require.Equal(t, []string{"k"}, db.ShardedNames())
	require.Empty(t, db.RemoveExpired(time.Now().Add(time.Hour), "s"))

	if db.Durable() {
		db := open()
		defer db.Close()
		s, _ := db.Lookup("s")
		require.Equal(t, ids, idsOf(must(s.Range("-", "+", 0))), "reopened")
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// Calls blocked when Close is called return ErrClosed at once, whatever
// they wait on, and leave no goroutine behind.
func TestCloseWakesBlockedCalls(t *testing.T) {
	closeKinds(t, func(t *testing.T, open func() *DB) {
		synctest.Test(t, func(t *testing.T) {
			db := open()
			ctx := context.Background()
			must(db.Add("s", AddArgs{}, Fields("a", "1")...))
			require.NoError(t, db.CreateGroup("s", "g", "$", GroupOptions{}))
			s, _ := db.Lookup("s")
			ss := must(db.CreateShardedStream("k", ShardedArgs{Shards: 1}))
			require.NoError(t, ss.CreateGroup("g", ShardGroupOptions{}))
			reader := must(ss.NewReader())
			block := ReadArgs{Block: -1}
			waits := map[string]func() error{
				"Stream.Read":    func() error { _, err := s.Read(ctx, "$", block); return err },
				"DB.Read":        func() error { _, err := db.Read(ctx, block, "s", "$"); return err },
				"DB.Read absent": func() error { _, err := db.Read(ctx, block, "absent", "$"); return err },
				"Stream.ReadGroup": func() error {
					_, err := s.ReadGroup(ctx, "g", "c", ">", ReadGroupArgs{Block: -1})
					return err
				},
				"DB.ReadGroup": func() error {
					_, err := db.ReadGroup(ctx, "g", "c", ReadGroupArgs{Block: -1}, "s", ">")
					return err
				},
				"Sharded.ReadGroup": func() error {
					_, err := ss.ReadGroup(ctx, "g", "c", ReadGroupArgs{Block: -1})
					return err
				},
				"ShardReader.Read": func() error { _, err := reader.Read(ctx, block); return err },
			}
			errs := make(map[string]chan error)
			for name, wait := range waits {
				ch := make(chan error, 1)
				errs[name] = ch
				go func() { ch <- wait() }()
			}
			synctest.Wait()
			for name, ch := range errs {
				select {
				case err := <-ch:
					t.Fatalf("%s returned before Close: %v", name, err)
				default:
				}
			}
			require.NoError(t, db.Close())
			synctest.Wait() // every waiter has returned: no timer or sleep ends them
			for name, ch := range errs {
				select {
				case err := <-ch:
					require.ErrorIs(t, err, ErrClosed, name)
				default:
					t.Fatalf("%s still blocked after Close", name)
				}
			}
		})
	})
}

// Close racing with writers and readers: each call either succeeds, and
// then its change is kept, or fails with ErrClosed; no data race (run
// under -race); a reopen finds every acknowledged entry.
func TestCloseRacesWithCalls(t *testing.T) {
	for _, policy := range []SyncPolicy{SyncEverySecond, SyncAlways} {
		t.Run(policy.String(), func(t *testing.T) {
			dir := t.TempDir()
			db, err := Open(dir, WithSync(policy))
			require.NoError(t, err)
			require.NoError(t, db.CreateGroup("s", "g", "0", GroupOptions{MkStream: true}))
			var mu sync.Mutex
			var acked []ID
			var wg sync.WaitGroup
			started := make(chan struct{}, 8)
			for w := range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for i := range 20000 { // Close comes long before, unless the machine is very busy
						id, err := db.Add("s", AddArgs{}, Fields("w", fmt.Sprint(w), "i", fmt.Sprint(i))...)
						if err != nil {
							require.ErrorIs(t, err, ErrClosed)
							return
						}
						mu.Lock()
						acked = append(acked, id)
						mu.Unlock()
						if i == 20 {
							started <- struct{}{}
						}
					}
				}()
			}
			for range 2 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for {
						_, err := db.ReadGroup(context.Background(), "g", "c", ReadGroupArgs{Count: 5, Block: -1}, "s", ">")
						if err != nil {
							require.ErrorIs(t, err, ErrClosed)
							return
						}
					}
				}()
			}
			for range 4 {
				<-started
			}
			require.NoError(t, db.Close())
			wg.Wait()

			requireKept(t, reopenIDs(t, dir), acked)
		})
	}
}
