package xstream

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream/internal/wal"
)

// Snapshots of the first block format.
//
// testdata/snapshot-v1 is a DB directory whose snapshot holds its blocks
// in the first block format (record snapBlock: entry IDs as two uvarints,
// values as uvarint length and bytes). It was written by the code of main
// at commit 890c957, before the block format changed, with
//
//	XSTREAM_WRITE_FIXTURE=$PWD/testdata/snapshot-v1 go test -run TestWriteSnapshotV1Fixture .
//
// run from a checkout of that commit with this file copied into it. Run
// today, the same command writes the current format, so the fixture must
// not be regenerated from a later commit.

// fixtureOps makes the content of the fixture in db: entries with the
// same and with other field names than their block's first, values of the
// forms that the block format packs and of those it does not, IDs whose
// millisecond and sequence differences pass the offset table's 15-bit
// keys, deleted entries (the first of a block among them), a trimmed
// first block and a consumer group with pending entries.
func fixtureOps(t testing.TB, db *DB) {
	t.Helper()
	odd := []string{"0", "-0", "007", "9223372036854775807", "9223372036854775808",
		"-9223372036854775808", "+1", "1e3", " 1", "", "x", strings.Repeat("7", 100),
		strings.Repeat("ab", 40), "12:30:05", "-12.50", "2026-12-01"}
	ms, seq := uint64(1000), uint64(0)
	for i := range 320 {
		switch {
		case i == 150: // a millisecond difference past 0x7fff
			ms += 70000
			seq = 0
		case i == 201 || i == 230: // sequence differences past 0x7fff
			seq += 40000
		case i%7 == 0:
			ms++
			seq = 0
		default:
			seq++
		}
		id := fmt.Sprintf("%d-%d", ms, seq)
		var fs []Field
		if i%13 == 5 {
			fs = Fields("sensor-id", odd[i%len(odd)], "note", odd[(i+3)%len(odd)])
		} else {
			fs = Fields("sensor-id", fmt.Sprintf("%04d", (i*7919)%10000), "temperature", fmt.Sprintf("%d.%d", 10+i%30, i%10))
		}
		_, err := db.Add("sensors", AddArgs{ID: id}, fs...)
		require.NoError(t, err)
	}
	s := db.Stream("sensors")
	es, err := s.Range("-", "+", 0)
	require.NoError(t, err)
	for _, i := range []int{0, 1, 2, 100, 101, 157, 199, 200, 319} {
		_, err := s.DeleteIDs(es[i].ID)
		require.NoError(t, err)
	}
	_, err = s.Trim(TrimArgs{Strategy: TrimMinID, MinID: es[40].ID.String()})
	require.NoError(t, err)
	require.NoError(t, db.CreateGroup("sensors", "g", "0", GroupOptions{}))
	_, err = s.ReadGroup(context.Background(), "g", "alice", ">", ReadGroupArgs{Count: 5})
	require.NoError(t, err)
	_, err = db.Add("other", AddArgs{ID: "5-1"}, Fields("a", "1", "b", "-2.5")...)
	require.NoError(t, err)
}

// TestWriteSnapshotV1Fixture writes the fixture when XSTREAM_WRITE_FIXTURE
// names a directory (see above); otherwise it is skipped.
func TestWriteSnapshotV1Fixture(t *testing.T) {
	dir := os.Getenv("XSTREAM_WRITE_FIXTURE")
	if dir == "" {
		t.Skip("XSTREAM_WRITE_FIXTURE not set")
	}
	require.NoError(t, os.MkdirAll(filepath.Dir(dir), 0o755))
	db, err := Open(dir, WithSync(SyncAlways))
	require.NoError(t, err)
	fixtureOps(t, db)
	require.NoError(t, db.Snapshot())
	require.NoError(t, db.Close())
}

// TestLoadSnapshotV1 opens a copy of the fixture: its streams, entries,
// deleted entries and group are those fixtureOps makes in a DB in memory,
// and the loaded stream takes new entries and a new snapshot like any.
// Both DBs read one clock that stands still, so that the auto IDs of
// their new entries are the same (each reading the wall clock, they
// differed when a millisecond passed between the two Adds).
func TestLoadSnapshotV1(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "db")
	require.NoError(t, os.CopyFS(dir, os.DirFS("testdata/snapshot-v1")))
	now := time.Now()
	clock := WithClock(func() time.Time { return now })
	db, err := Open(dir, clock)
	require.NoError(t, err)
	defer func() { require.NoError(t, db.Close()) }()
	want := NewDB(clock)
	fixtureOps(t, want)
	requireSameDB(t, want, db)

	for _, x := range []*DB{want, db} {
		_, err := x.Add("sensors", AddArgs{}, Fields("sensor-id", "0042", "temperature", "21.5")...)
		require.NoError(t, err)
	}
	requireSameDB(t, want, db)
	require.NoError(t, db.Snapshot())
	require.NoError(t, db.Close())
	db, err = Open(dir, clock)
	require.NoError(t, err)
	requireSameDB(t, want, db)
}

// requireSameDB checks that the fixture's streams hold the same in both
// DBs: entries, lengths, first and last IDs, and the group's pending
// entries.
func requireSameDB(t *testing.T, want, got *DB) {
	t.Helper()
	for _, name := range []string{"sensors", "other"} {
		w, ok := want.Lookup(name)
		require.True(t, ok, name)
		g, ok := got.Lookup(name)
		require.True(t, ok, name)
		we, err := w.Range("-", "+", 0)
		require.NoError(t, err)
		ge, err := g.Range("-", "+", 0)
		require.NoError(t, err)
		require.Equal(t, we, ge, name)
		wi, gi := must(w.Info()), must(g.Info())
		require.Equal(t, wi.Length, gi.Length, name)
		require.Equal(t, wi.LastGeneratedID, gi.LastGeneratedID, name)
		require.Equal(t, wi.MaxDeletedEntryID, gi.MaxDeletedEntryID, name)
		require.Equal(t, wi.EntriesAdded, gi.EntriesAdded, name)
		require.Equal(t, wi.RecordedFirstEntryID, gi.RecordedFirstEntryID, name)
		require.Equal(t, wi.RadixTreeKeys, gi.RadixTreeKeys, name)
		require.NoError(t, checkNow(g), name)
	}
	wp, err := want.Stream("sensors").Pending("g")
	require.NoError(t, err)
	gp, err := got.Stream("sensors").Pending("g")
	require.NoError(t, err)
	require.Equal(t, wp, gp)
}

// TestSnapshotV1DecodeChecks damages the fixture's first-format block
// records behind their checksums (a bit of every fifth payload byte, of
// every seventeenth with -short, the checksums made right): Open refuses what does not hold together with
// ErrCorrupt, leaving the directory as it was, and whatever it lets
// through is a DB that can be read. Never a panic.
func TestSnapshotV1DecodeChecks(t *testing.T) {
	src := "testdata/snapshot-v1"
	files := map[string][]byte{}
	var name string
	ents, err := os.ReadDir(src)
	require.NoError(t, err)
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		require.NoError(t, err)
		files[e.Name()] = b
		if strings.HasSuffix(e.Name(), ".snap") {
			name = e.Name()
		}
	}
	snap := files[name]
	dir := filepath.Join(t.TempDir(), "db")
	require.NoError(t, os.CopyFS(dir, os.DirFS(src)))
	ends := frameEndsOf(snap)
	var refused, loaded int
	step := 5
	if testing.Short() {
		step = 17
	}
	for off := wal.HeaderSize; off < len(snap); off += step {
		rec, start := recordAt(ends, off)
		if off-start <= wal.FrameHeaderSize || snap[start+wal.FrameHeaderSize] != snapBlock {
			continue
		}
		msg := fmt.Sprintf("bit %d of snapshot byte %d (record %d), checksum fixed", off%8, off, rec)
		damaged := bytes.Clone(snap)
		damaged[off] ^= 1 << (off % 8)
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), reframe(damaged), 0o600))
		db, err := openSafe(t, dir, msg)
		if err != nil {
			requireErr(t, err, ErrCorrupt)
			want := maps.Clone(files)
			want[name] = reframe(damaged)
			requireSameFiles(t, want, dir, msg)
			refused++
			continue
		}
		_, perr := probeDB(db)
		require.NoError(t, perr, msg)
		require.NoError(t, db.Close())
		loaded++
		require.NoError(t, os.RemoveAll(dir))
		require.NoError(t, os.CopyFS(dir, os.DirFS(src)))
	}
	t.Logf("%d damaged snapshots refused, %d loaded (a changed value)", refused, loaded)
	require.Positive(t, refused)
}
