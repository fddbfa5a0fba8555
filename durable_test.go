package xstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// dumpDB describes everything observable in a DB, for comparing a DB with
// itself after a reopen: every stream with its entries, counters, groups,
// consumers and pending entries, and every sharded stream with its shards
// and records. Times come from the DB's clock, which tests fix.
// streamHeader is the first line of a stream in dumpDB and probeDB.
func streamHeader(name string, s *Stream, info StreamInfo) string {
	var expires int64
	if at, ok := s.ExpiresAt(); ok {
		expires = at.UnixMilli()
	}
	return fmt.Sprintf("stream %q len=%d blocks=%d last=%s maxdel=%s added=%d first=%s expires=%d\n", name,
		info.Length, info.RadixTreeKeys, info.LastGeneratedID, info.MaxDeletedEntryID, info.EntriesAdded, info.RecordedFirstEntryID, expires)
}

func dumpDB(t testing.TB, db *DB) string {
	t.Helper()
	var b strings.Builder
	for _, name := range db.Names("") {
		s, _ := db.Lookup(name)
		info, err := s.InfoFull(0)
		require.NoError(t, err)
		b.WriteString(streamHeader(name, s, info))
		for _, e := range info.Entries {
			fmt.Fprintf(&b, "  %s %q\n", e.ID, e.Fields)
		}
		b.WriteString(idmpDump(s))
		for _, g := range info.GroupDetails {
			fmt.Fprintf(&b, "  group %+v\n", g.GroupInfo)
			for _, p := range g.PEL {
				fmt.Fprintf(&b, "    pending %+v\n", p)
			}
			for _, c := range g.Consumers {
				fmt.Fprintf(&b, "    consumer %+v seen=%d active=%d\n", c.ConsumerInfo, c.SeenTime.UnixMilli(), c.ActiveTime.UnixMilli())
			}
		}
	}
	for _, name := range db.ShardedNames() {
		ss, _ := db.ShardedStream(name)
		fmt.Fprintf(&b, "sharded %q retention=%s\n%s", name, ss.Retention(), ss.Lineage())
		shards, err := ss.ListShards(ShardFilter{})
		require.NoError(t, err)
		for _, sh := range shards {
			fmt.Fprintf(&b, "  shard %+v\n", sh)
			for r, err := range ss.ScanShard(sh.ShardID, IteratorArgs{Type: TrimHorizon}) {
				require.NoError(t, err)
				fmt.Fprintf(&b, "    %s %s %q\n", r.SequenceNumber, r.PartitionKey, r.Fields)
			}
		}
		for _, g := range ss.groupNames() {
			p, err := ss.Pending(g)
			require.NoError(t, err)
			fmt.Fprintf(&b, "  group %q %+v\n", g, p)
		}
	}
	return b.String()
}

// openT opens a durable DB in dir with a fixed clock and fails the test on
// error; the DB is closed when the test ends.
func openT(t testing.TB, dir string, clk *testClock, opts ...Option) *DB {
	t.Helper()
	db, err := Open(dir, append([]Option{WithClock(clk.now)}, opts...)...)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

// fillDB makes a bit of everything in db.
func fillDB(t testing.TB, db *DB, clk *testClock) {
	t.Helper()
	ctx := context.Background()
	for i := range 250 {
		_, err := db.Add("temps", AddArgs{}, Fields("sensor-id", fmt.Sprint(1000+i%7), "temperature", fmt.Sprintf("%d.5", i%30))...)
		require.NoError(t, err)
		if i%50 == 0 {
			_, err = db.Add("temps", AddArgs{}, Fields("other", "shape", "x", "y")...)
			require.NoError(t, err)
			clk.advance(time.Millisecond)
		}
	}
	_, err := db.Add("alerts", AddArgs{ID: "5-1"}, Fields("level", "high")...)
	require.NoError(t, err)
	require.NoError(t, db.CreateGroup("temps", "workers", "0", GroupOptions{}))
	require.NoError(t, db.CreateGroup("temps", "audit", "$", GroupOptions{}))
	res, err := db.ReadGroup(ctx, "workers", "alice", ReadGroupArgs{Count: 40}, "temps", ">")
	require.NoError(t, err)
	clk.advance(time.Second)
	_, err = db.ReadGroup(ctx, "workers", "bob", ReadGroupArgs{Count: 10, NoAck: true}, "temps", ">")
	require.NoError(t, err)
	s, _ := db.Lookup("temps")
	_, err = s.AckIDs("workers", res[0].Entries[0].ID, res[0].Entries[3].ID)
	require.NoError(t, err)
	_, err = s.Claim("workers", "carol", 0, []string{res[0].Entries[5].ID.String()}, ClaimArgs{})
	require.NoError(t, err)
	_, err = s.Nack("workers", NackFail, []string{res[0].Entries[6].ID.String()}, NackArgs{})
	require.NoError(t, err)
	_, err = s.ReadGroup(ctx, "workers", "alice", "0", ReadGroupArgs{Count: 2})
	require.NoError(t, err)
	_, err = s.Delete(res[0].Entries[10].ID.String(), res[0].Entries[11].ID.String())
	require.NoError(t, err)
	_, err = s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 200})
	require.NoError(t, err)
	_, err = s.CreateConsumer("workers", "dave")
	require.NoError(t, err)
	require.NoError(t, s.SetID(SetIDArgs{LastID: "9999999999999-5", EntriesAdded: -1}))
	db.Stream("empty")
	_, err = db.Add("gone", AddArgs{}, Fields("a", "b")...)
	require.NoError(t, err)
	require.Equal(t, 1, must(db.Remove("gone")))

	ss, err := db.CreateShardedStream("orders", ShardedArgs{Shards: 2})
	require.NoError(t, err)
	require.NoError(t, ss.CreateGroup("billing", ShardGroupOptions{StrictOrder: true}))
	for i := range 30 {
		_, err := ss.Put(fmt.Sprintf("customer-%d", i%5), PutArgs{}, Fields("n", fmt.Sprint(i))...)
		require.NoError(t, err)
	}
	shards, err := ss.ListShards(ShardFilter{})
	require.NoError(t, err)
	require.NoError(t, ss.SplitShard(shards[0].ShardID, shards[0].HashKeyRange.StartingHashKey.add(HashKey{1, 0}).String()))
	for i := range 10 {
		_, err := ss.Put(fmt.Sprintf("customer-%d", i%5), PutArgs{}, Fields("n", fmt.Sprint(100+i))...)
		require.NoError(t, err)
	}
	recs, err := ss.ReadGroup(ctx, "billing", "eve", ReadGroupArgs{Count: 7})
	require.NoError(t, err)
	_, err = ss.Ack("billing", RecordRef{recs[0].ShardID, recs[0].SequenceNumber})
	require.NoError(t, err)
}

func TestDurableReopen(t *testing.T) {
	for _, policy := range []SyncPolicy{SyncAlways, SyncEverySecond, SyncNo} {
		t.Run(policy.String(), func(t *testing.T) {
			dir := t.TempDir()
			clk := newTestClock(1_700_000_000_000)
			db, err := Open(dir, WithClock(clk.now), WithSync(policy))
			require.NoError(t, err)
			fillDB(t, db, clk)
			want := dumpDB(t, db)
			require.NoError(t, db.Close())

			db = openT(t, dir, clk, WithSync(policy))
			require.Equal(t, want, dumpDB(t, db), "after a reopen")
			checkDB(t, db)

			// A snapshot (twice: the second has an empty log behind
			// it), then more changes, then a reopen.
			require.NoError(t, db.Snapshot())
			require.NoError(t, db.Snapshot())
			_, err = db.Add("temps", AddArgs{}, Fields("sensor-id", "1", "temperature", "2")...)
			require.NoError(t, err)
			want = dumpDB(t, db)
			require.NoError(t, db.Close())
			db = openT(t, dir, clk, WithSync(policy))
			require.Equal(t, want, dumpDB(t, db), "after a snapshot and a reopen")
		})
	}
}

// checkDB checks the invariants of every stream of db.
func checkDB(t testing.TB, db *DB) {
	t.Helper()
	for _, name := range db.Names("") {
		s, _ := db.Lookup(name)
		require.NoError(t, checkNow(s))
	}
}

func TestDurableBackupRestore(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	db := openT(t, t.TempDir(), clk)
	fillDB(t, db, clk)
	var buf bytes.Buffer
	require.NoError(t, db.Backup(&buf))
	want := dumpDB(t, db)

	dir := t.TempDir()
	restored, err := Restore(dir, bytes.NewReader(buf.Bytes()), WithClock(clk.now))
	require.NoError(t, err)
	require.Equal(t, want, dumpDB(t, restored))
	_, err = restored.Add("temps", AddArgs{}, Fields("after", "restore")...)
	require.NoError(t, err)
	want = dumpDB(t, restored)
	require.NoError(t, restored.Close())
	db2 := openT(t, dir, clk)
	require.Equal(t, want, dumpDB(t, db2))

	// A damaged backup restores nothing.
	bad := bytes.Clone(buf.Bytes())
	bad[len(bad)/2] ^= 0x40
	dir3 := t.TempDir()
	_, err = Restore(dir3, bytes.NewReader(bad), WithClock(clk.now))
	requireErr(t, err, ErrCorrupt)
	ents, _ := os.ReadDir(dir3)
	for _, e := range ents {
		require.Equal(t, "LOCK", e.Name(), "a failed restore left %s", e.Name())
	}
}

func TestDurableOpenErrors(t *testing.T) {
	clk := newTestClock(1_700_000_000_000)
	missing := filepath.Join(t.TempDir(), "nothing")
	_, err := Open(missing, WithMustExist())
	requireErr(t, err, ErrDBNotFound, missing)
	_, statErr := os.Stat(missing)
	require.True(t, errors.Is(statErr, os.ErrNotExist), "Open created the directory")

	dir := t.TempDir()
	db := openT(t, dir, clk)
	_, err = Open(dir)
	requireErr(t, err, ErrLocked, dir)
	require.NoError(t, db.Close())

	foreign := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(foreign, "MANIFEST"), []byte("hello\n"), 0o600))
	_, err = Open(foreign)
	requireErr(t, err, ErrNotDB)
	got, _ := os.ReadFile(filepath.Join(foreign, "MANIFEST"))
	require.Equal(t, "hello\n", string(got))
}

func (ss *ShardedStream) groupNames() []string {
	ss.mu.RLock()
	defer ss.mu.RUnlock()
	var out []string
	for n := range ss.groups {
		out = append(out, n)
	}
	slices.Sort(out)
	return out
}
