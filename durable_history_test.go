package xstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream/internal/wal"
)

// Helpers of the corruption tests: a DB built through a known sequence of
// calls, with the dump after each, and ways to copy, damage and compare
// its directory.

// history is a durable DB built call by call and closed: its directory,
// and what dumpState gave after each call, keyed by the number of records
// in the log then, so that dumps[n] is the state Open must give for a log
// cut after its first n whole records (when n falls between two calls).
type history struct {
	dir   string
	clk   *testClock
	dumps map[uint64]string // records committed → dumpState
	times map[uint64]int64  // records committed → the clock of the dump
	marks []uint64          // marks[i]: records committed after call i
	// kinds[n] names the call that wrote record n (n from 1).
	kinds map[uint64]string
	// beforeSnap is the directory just before the snapshot, the log
	// synced, if one was taken.
	beforeSnap map[string][]byte
	// files is the directory once closed.
	files map[string][]byte
	m     wal.Manifest
}

// histCall is one call of a history: it must leave at most one record
// when single is set.
type histCall struct {
	name   string
	single bool
	do     func(t testing.TB, db *DB, clk *testClock)
}

// buildHistory opens a DB in a new directory with a fixed clock and makes
// the calls, recording the dump after each; snapAt, when >= 0, takes a
// snapshot after that many calls. It closes the DB.
func buildHistory(t testing.TB, calls []histCall, snapAt int) *history {
	t.Helper()
	h := &history{dir: t.TempDir(), clk: newTestClock(1_700_000_000_000), dumps: map[uint64]string{}, times: map[uint64]int64{}, kinds: map[uint64]string{}}
	db, err := Open(h.dir, WithClock(h.clk.now), WithSync(SyncNo), WithAutoSnapshot(-1))
	require.NoError(t, err)
	h.dumps[0], h.times[0] = dumpState(t, db), h.clk.now().UnixMilli()
	prev := uint64(0)
	for i, c := range calls {
		if i == snapAt {
			require.NoError(t, db.Sync())
			h.beforeSnap = readDirFiles(t, h.dir)
			require.NoError(t, db.Snapshot())
		}
		c.do(t, db, h.clk)
		n := db.dur.j.last()
		if c.single {
			require.LessOrEqualf(t, n, prev+1, "call %d (%s) left %d records", i, c.name, n-prev)
		}
		for k := prev + 1; k <= n; k++ {
			h.kinds[k] = c.name
		}
		if old, ok := h.dumps[n]; ok && n == prev {
			now := h.clk.now().UnixMilli()
			h.clk.set(h.times[n])
			require.Equalf(t, old, dumpState(t, db), "call %d (%s) changed the DB without a record", i, c.name)
			h.clk.set(now)
		}
		d := dumpState(t, db)
		if n > prev+1 {
			// A call of several records: the states in between are
			// not known; only its end is.
			for k := prev + 1; k < n; k++ {
				delete(h.dumps, k)
				delete(h.times, k)
			}
		}
		h.dumps[n], h.times[n] = d, h.clk.now().UnixMilli()
		h.marks = append(h.marks, n)
		prev = n
	}
	checkAllStreams(t, db)
	require.NoError(t, db.Close())
	h.files = readDirFiles(t, h.dir) // LOCK too, as the last Open left it
	h.m, err = wal.ReadManifest(h.dir)
	require.NoError(t, err)
	return h
}

// openAt opens dir with a clock at the time of the dump of the given
// number of records, so that the dump's idle times match.
func (h *history) openAt(t testing.TB, dir string, records uint64, opts ...Option) (*DB, error) {
	t.Helper()
	ms, ok := h.times[records]
	require.Truef(t, ok, "no state known after %d records", records)
	return openSafe(t, dir, dir, append([]Option{WithClock(newTestClock(ms).now), WithAutoSnapshot(-1)}, opts...)...)
}

// dumpState is dumpDB with the groups of sharded streams in order (dumpDB
// lists them in the order of a map).
func dumpState(t testing.TB, db *DB) string {
	t.Helper()
	d := dumpDB(t, db)
	lines := strings.Split(d, "\n")
	// The group lines of a sharded stream are the last lines of its
	// section: sort each run of them.
	for i := 0; i < len(lines); {
		j := i
		for j < len(lines) && strings.HasPrefix(lines[j], "  group \"") {
			j++
		}
		if j > i+1 {
			slices.Sort(lines[i:j])
		}
		i = max(j, i+1)
	}
	return strings.Join(lines, "\n")
}

// lastSegment returns the name of the last log segment and its base.
func (h *history) lastSegment() (string, uint64) {
	name := h.m.Logs[len(h.m.Logs)-1]
	base, _ := wal.ParseSegmentName(name)
	return name, base
}

// copyTo writes the history's files, with the given ones replaced (a nil
// value removes the file), into a new directory and returns it.
func (h *history) copyTo(t testing.TB, dir string, replace map[string][]byte) string {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o755))
	for name, b := range h.files {
		if r, ok := replace[name]; ok {
			b = r
		}
		if b == nil {
			continue
		}
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o600))
	}
	for name, b := range replace {
		if _, ok := h.files[name]; !ok && b != nil {
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), b, 0o600))
		}
	}
	return dir
}

// frameEnds returns the offsets just past each whole valid frame of a log
// segment's bytes, in order: ends[i] is the end of record base+i. The
// segment may end with a sync mark, as Close leaves one.
func frameEnds(t testing.TB, seg []byte) []int {
	t.Helper()
	h, err := wal.ParseHeader(seg, wal.KindLog)
	require.NoError(t, err)
	var ends []int
	off := wal.HeaderSize
	for off < len(seg) {
		if len(seg)-off == wal.MarkSize && wal.IsMark(seg[off:], int64(off), h.Base) {
			break
		}
		_, n, err := wal.DecodeFrame(seg[off:])
		require.NoError(t, err, "frame at %d", off)
		off += n
		ends = append(ends, off)
	}
	return ends
}

// readDirFiles returns every file of dir with its bytes.
func readDirFiles(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	out := map[string][]byte{}
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		out[e.Name()] = b
	}
	return out
}

// requireSameFiles fails unless dir holds exactly the files of want, byte
// for byte.
func requireSameFiles(t testing.TB, want map[string][]byte, dir, msg string) {
	t.Helper()
	got := readDirFiles(t, dir)
	var gotNames, wantNames []string
	for n := range got {
		gotNames = append(gotNames, n)
	}
	for n := range want {
		wantNames = append(wantNames, n)
	}
	slices.Sort(gotNames)
	slices.Sort(wantNames)
	require.Equal(t, wantNames, gotNames, "%s: the files of the directory changed", msg)
	for n, b := range want {
		if !bytes.Equal(b, got[n]) {
			require.Failf(t, "file changed", "%s: %s changed (%d bytes, was %d)", msg, n, len(got[n]), len(b))
		}
	}
}

// openSafe opens dir, turning a panic into a test failure that says what
// was opened.
func openSafe(t testing.TB, dir, what string, opts ...Option) (db *DB, err error) {
	t.Helper()
	defer func() {
		if p := recover(); p != nil {
			t.Fatalf("%s: Open panicked: %v", what, p)
		}
	}()
	return Open(dir, opts...)
}

// checkAllStreams checks the invariants of every stream of db, the
// streams of the shards of its sharded streams included.
func checkAllStreams(t testing.TB, db *DB) {
	t.Helper()
	checkDB(t, db)
	for _, name := range db.ShardedNames() {
		ss, _ := db.ShardedStream(name)
		ss.mu.RLock()
		var streams []*Stream
		for _, sh := range ss.shards {
			streams = append(streams, sh.s)
		}
		ss.mu.RUnlock()
		for _, s := range streams {
			require.NoError(t, checkNow(s), "sharded stream %q", name)
		}
	}
}

// historyCalls is a sequence of calls that leaves a bit of every kind of
// record. The calls after the first pre (the tail) each leave at most one
// record, so every prefix of whole records in the tail is the state after
// a call.
func historyCalls() (calls []histCall, pre int) {
	ctx := context.Background()
	one := func(name string, do func(t testing.TB, db *DB, clk *testClock)) histCall {
		return histCall{name: name, single: true, do: do}
	}
	many := func(name string, do func(t testing.TB, db *DB, clk *testClock)) histCall {
		return histCall{name: name, do: do}
	}
	str := func(db *DB, name string) *Stream {
		s, ok := db.Lookup(name)
		if !ok {
			panic("no stream " + name)
		}
		return s
	}
	shards := func(t testing.TB, ss *ShardedStream) []ShardInfo {
		infos, err := ss.ListShards(ShardFilter{})
		require.NoError(t, err)
		return infos
	}
	calls = []histCall{
		many("adds", func(t testing.TB, db *DB, clk *testClock) {
			for i := range 40 {
				_, err := db.Add("s", AddArgs{}, Fields("sensor", fmt.Sprint(i%3), "temp", fmt.Sprint(20+i))...)
				require.NoError(t, err)
				if i%7 == 0 {
					clk.advance(time.Millisecond)
				}
			}
		}),
		many("groups", func(t testing.TB, db *DB, clk *testClock) {
			require.NoError(t, db.CreateGroup("s", "g", "0", GroupOptions{}))
			_, err := db.ReadGroup(ctx, "g", "alice", ReadGroupArgs{Count: 6}, "s", ">")
			require.NoError(t, err)
			clk.advance(2 * time.Second)
			_, err = db.ReadGroup(ctx, "g", "bob", ReadGroupArgs{Count: 3}, "s", ">")
			require.NoError(t, err)
		}),
		many("idempotent adds", func(t testing.TB, db *DB, clk *testClock) {
			require.NoError(t, db.SetIdempotence("s", IdempotenceConfig{Duration: 60 * time.Second, MaxSize: 3}))
			for i := range 5 {
				_, err := db.Add("s", AddArgs{Idempotency: Idempotency{Producer: "p1", ID: fmt.Sprint("i", i%4)}}, Fields("n", fmt.Sprint(i))...)
				require.NoError(t, err)
			}
			_, err := db.Add("s", AddArgs{Idempotency: Idempotency{Producer: "p2", Auto: true}}, Fields("sensor", "9", "temp", "1")...)
			require.NoError(t, err)
			clk.advance(time.Minute)
		}),
		many("empty and gone", func(t testing.TB, db *DB, clk *testClock) {
			db.Stream("empty")
			_, err := db.Add("gone", AddArgs{}, Fields("a", "b")...)
			require.NoError(t, err)
			require.Equal(t, 1, must(db.Remove("gone")))
		}),
		many("sharded", func(t testing.TB, db *DB, clk *testClock) {
			ss, err := db.CreateShardedStream("orders", ShardedArgs{Shards: 2})
			require.NoError(t, err)
			require.NoError(t, ss.CreateGroup("billing", ShardGroupOptions{}))
			for i := range 8 {
				_, err := ss.Put(fmt.Sprintf("customer-%d", i%4), PutArgs{}, Fields("n", fmt.Sprint(i))...)
				require.NoError(t, err)
			}
			_, err = ss.ReadGroup(ctx, "billing", "eve", ReadGroupArgs{Count: 4})
			require.NoError(t, err)
			require.NoError(t, ss.CreateGroup("audit", ShardGroupOptions{StrictOrder: true}))
			_, err = db.CreateShardedStream("tmp", ShardedArgs{Shards: 1})
			require.NoError(t, err)
		}),
		many("deletes and trims", func(t testing.TB, db *DB, clk *testClock) {
			s := str(db, "s")
			es, err := s.Range("-", "+", 0)
			require.NoError(t, err)
			_, err = s.Delete(es[1].ID.String(), es[20].ID.String())
			require.NoError(t, err)
			_, err = s.Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 35})
			require.NoError(t, err)
		}),
	}
	pre = len(calls)
	calls = append(calls,
		one("add same names", func(t testing.TB, db *DB, clk *testClock) {
			clk.advance(time.Millisecond)
			_, err := db.Add("s", AddArgs{}, Fields("sensor", "1", "temp", "99")...)
			require.NoError(t, err)
		}),
		one("add other names", func(t testing.TB, db *DB, clk *testClock) {
			_, err := db.Add("s", AddArgs{}, Fields("x", "y")...)
			require.NoError(t, err)
		}),
		one("add to a new stream", func(t testing.TB, db *DB, clk *testClock) {
			_, err := db.Add("t", AddArgs{ID: "5-1"}, Fields("k", "v", "k2", strings.Repeat("w", 40))...)
			require.NoError(t, err)
		}),
		one("create group $", func(t testing.TB, db *DB, clk *testClock) {
			require.NoError(t, db.CreateGroup("s", "h", "$", GroupOptions{}))
		}),
		one("read group", func(t testing.TB, db *DB, clk *testClock) {
			clk.advance(time.Second)
			_, err := db.ReadGroup(ctx, "g", "bob", ReadGroupArgs{Count: 2}, "s", ">")
			require.NoError(t, err)
		}),
		one("read group noack", func(t testing.TB, db *DB, clk *testClock) {
			_, err := db.ReadGroup(ctx, "g", "carol", ReadGroupArgs{Count: 1, NoAck: true}, "s", ">")
			require.NoError(t, err)
		}),
		one("ack", func(t testing.TB, db *DB, clk *testClock) {
			s := str(db, "s")
			p, err := s.PendingRange("g", PendingArgs{Count: 1})
			require.NoError(t, err)
			n, err := s.AckIDs("g", p[0].ID)
			require.NoError(t, err)
			require.EqualValues(t, 1, n)
		}),
		one("claim", func(t testing.TB, db *DB, clk *testClock) {
			clk.advance(3 * time.Second)
			s := str(db, "s")
			p, err := s.PendingRange("g", PendingArgs{Count: 2})
			require.NoError(t, err)
			_, err = s.Claim("g", "dave", time.Second, []string{p[0].ID.String(), p[1].ID.String()}, ClaimArgs{})
			require.NoError(t, err)
		}),
		one("nack", func(t testing.TB, db *DB, clk *testClock) {
			s := str(db, "s")
			p, err := s.PendingRange("g", PendingArgs{Count: 1})
			require.NoError(t, err)
			n, err := s.Nack("g", NackFail, []string{p[0].ID.String()}, NackArgs{})
			require.NoError(t, err)
			require.EqualValues(t, 1, n)
		}),
		one("read history", func(t testing.TB, db *DB, clk *testClock) {
			clk.advance(time.Second)
			_, err := str(db, "s").ReadGroup(ctx, "g", "alice", "0", ReadGroupArgs{Count: 2})
			require.NoError(t, err)
		}),
		one("autoclaim", func(t testing.TB, db *DB, clk *testClock) {
			clk.advance(5 * time.Second)
			_, err := str(db, "s").AutoClaim("g", "erin", time.Second, "0", AutoClaimArgs{Count: 2})
			require.NoError(t, err)
		}),
		one("create consumer", func(t testing.TB, db *DB, clk *testClock) {
			_, err := str(db, "s").CreateConsumer("g", "frank")
			require.NoError(t, err)
		}),
		one("delete consumer", func(t testing.TB, db *DB, clk *testClock) {
			_, err := str(db, "s").DeleteConsumer("g", "bob")
			require.NoError(t, err)
		}),
		one("set group id", func(t testing.TB, db *DB, clk *testClock) {
			require.NoError(t, str(db, "s").SetGroupID("h", "0", GroupOptions{EntriesRead: ptr(int64(3))}))
		}),
		one("delete", func(t testing.TB, db *DB, clk *testClock) {
			s := str(db, "s")
			es, err := s.Range("-", "+", 4)
			require.NoError(t, err)
			_, err = s.Delete(es[3].ID.String())
			require.NoError(t, err)
		}),
		one("trim maxlen", func(t testing.TB, db *DB, clk *testClock) {
			_, err := str(db, "s").Trim(TrimArgs{Strategy: TrimMaxLen, MaxLen: 30})
			require.NoError(t, err)
		}),
		one("trim minid delref", func(t testing.TB, db *DB, clk *testClock) {
			s := str(db, "s")
			es, err := s.Range("-", "+", 3)
			require.NoError(t, err)
			_, err = s.Trim(TrimArgs{Strategy: TrimMinID, MinID: es[2].ID.String(), Policy: DelRef})
			require.NoError(t, err)
		}),
		one("ackdel", func(t testing.TB, db *DB, clk *testClock) {
			s := str(db, "s")
			p, err := s.PendingRange("g", PendingArgs{Count: 1})
			require.NoError(t, err)
			res, err := s.AckDel("g", DelRef, p[0].ID.String())
			require.NoError(t, err)
			require.Equal(t, []DeleteResult{Deleted}, res)
		}),
		one("set id", func(t testing.TB, db *DB, clk *testClock) {
			require.NoError(t, str(db, "t").SetID(SetIDArgs{LastID: "9-9", EntriesAdded: 7, MaxDeletedID: "3-0"}))
		}),
		one("destroy group", func(t testing.TB, db *DB, clk *testClock) {
			require.True(t, must(str(db, "s").DestroyGroup("h")))
		}),
		one("remove stream", func(t testing.TB, db *DB, clk *testClock) {
			require.Equal(t, 1, must(db.Remove("t")))
		}),
		one("put", func(t testing.TB, db *DB, clk *testClock) {
			ss, _ := db.ShardedStream("orders")
			_, err := ss.Put("customer-1", PutArgs{}, Fields("n", "late")...)
			require.NoError(t, err)
		}),
		one("split", func(t testing.TB, db *DB, clk *testClock) {
			ss, _ := db.ShardedStream("orders")
			sh := shards(t, ss)[0]
			require.NoError(t, ss.SplitShard(sh.ShardID, sh.HashKeyRange.StartingHashKey.add(HashKey{1, 0}).String()))
		}),
		one("retention", func(t testing.TB, db *DB, clk *testClock) {
			ss, _ := db.ShardedStream("orders")
			require.NoError(t, ss.SetRetention(48*time.Hour))
		}),
		one("remove sharded", func(t testing.TB, db *DB, clk *testClock) {
			require.True(t, must(db.RemoveShardedStream("tmp")))
		}),
		one("add last", func(t testing.TB, db *DB, clk *testClock) {
			_, err := db.Add("s", AddArgs{}, Fields("sensor", "2", "temp", "1")...)
			require.NoError(t, err)
		}),
	)
	return calls, pre
}

func ptr[T any](v T) *T { return &v }

var (
	errProbePanic     = errors.New("panic")
	errProbeInvariant = errors.New("invariants broken")
)

// probeDB returns what dumpState does, and checks the invariants of
// every stream, the shards' included, returning the first failure as an
// error (a panic too) instead of failing the test: for DBs loaded from
// damaged data, whose every problem a test wants to collect.
//
// A panic is an error wrapping errProbePanic, a broken invariant one
// wrapping errProbeInvariant; other errors are those of the reading
// calls.
func probeDB(db *DB) (dump string, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%w: %v\n%s", errProbePanic, p, debug.Stack())
		}
	}()
	var b strings.Builder
	for _, name := range db.Names("") {
		s, _ := db.Lookup(name)
		if err := checkNow(s); err != nil {
			return "", fmt.Errorf("%w: %w", errProbeInvariant, err)
		}
		info, err := s.InfoFull(0)
		if err != nil {
			return "", fmt.Errorf("InfoFull of %q: %w", name, err)
		}
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
		ss.mu.RLock()
		var streams []*Stream
		for _, sh := range ss.shards {
			streams = append(streams, sh.s)
		}
		ss.mu.RUnlock()
		for _, s := range streams {
			if err := checkNow(s); err != nil {
				return "", fmt.Errorf("%w: sharded stream %q: %w", errProbeInvariant, name, err)
			}
		}
		fmt.Fprintf(&b, "sharded %q retention=%s\n%s", name, ss.Retention(), ss.Lineage())
		shards, err := ss.ListShards(ShardFilter{})
		if err != nil {
			return "", fmt.Errorf("ListShards of %q: %w", name, err)
		}
		for _, sh := range shards {
			fmt.Fprintf(&b, "  shard %+v\n", sh)
			for r, err := range ss.ScanShard(sh.ShardID, IteratorArgs{Type: TrimHorizon}) {
				if err != nil {
					return "", fmt.Errorf("ScanShard %s of %q: %w", sh.ShardID, name, err)
				}
				fmt.Fprintf(&b, "    %s %s %q\n", r.SequenceNumber, r.PartitionKey, r.Fields)
			}
		}
		groups := ss.groupNames()
		slices.Sort(groups)
		for _, g := range groups {
			p, err := ss.Pending(g)
			if err != nil {
				return "", fmt.Errorf("Pending %q of %q: %w", g, name, err)
			}
			fmt.Fprintf(&b, "  group %q %+v\n", g, p)
		}
	}
	return b.String(), nil
}
