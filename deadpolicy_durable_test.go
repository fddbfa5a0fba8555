package xstream

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream/internal/wal"
)

// The policy, the moves and the count of a durable DB survive a reopen,
// from the log and from a snapshot.
func TestDeadLetterPolicyDurable(t *testing.T) {
	dir := t.TempDir()
	clk := newTestClock(1_700_000_000_000)
	db := openT(t, dir, clk, WithSync(SyncAlways))
	s := policyDB(t, db, 4, 1)
	readNew(t, s, "alice", 0)
	require.Empty(t, claimIDs(t, s, "bob", ClaimArgs{}, "1-1"))
	_, err := s.AutoClaim("g", "bob", 0, "0", AutoClaimArgs{Count: 1})
	require.NoError(t, err)
	require.NoError(t, s.CreateGroup("other", "0", GroupOptions{}))
	require.NoError(t, s.SetDeadLetterPolicy("other", DeadLetterPolicy{MaxDeliveries: 3, Stream: "elsewhere"}))
	want := dumpDB(t, db)
	require.Contains(t, want, "DeadLettered:2")
	require.Contains(t, want, "elsewhere")
	require.NoError(t, db.Close())

	db = openT(t, dir, clk, WithSync(SyncAlways))
	require.Equal(t, want, dumpDB(t, db), "from the log")
	checkDB(t, db)
	require.NoError(t, db.Snapshot())
	require.NoError(t, db.Close())
	db = openT(t, dir, clk, WithSync(SyncAlways))
	require.Equal(t, want, dumpDB(t, db), "from the snapshot")

	// The policy still acts, and what it does after the snapshot is in
	// the log.
	s, _ = db.Lookup("jobs")
	require.Empty(t, claimIDs(t, s, "carol", ClaimArgs{}, "3-1"))
	require.NoError(t, s.SetDeadLetterPolicy("other", DeadLetterPolicy{}))
	want = dumpDB(t, db)
	require.Contains(t, want, "DeadLettered:3")
	require.NoError(t, db.Close())
	db = openT(t, dir, clk, WithSync(SyncAlways))
	require.Equal(t, want, dumpDB(t, db), "snapshot and log")
	s, _ = db.Lookup("jobs")
	assert.Equal(t, 1, s.deadPolicies, "the policy count is rebuilt")
}

// A crash: the files as a kill -9 leaves them under SyncAlways. After the
// last call, the DB opens as it was; between the record of the dead
// letter and the record that takes it out of the PEL, the entry is both
// dead-lettered and still pending (at least once), never lost.
func TestDeadLetterPolicyCrash(t *testing.T) {
	dir := t.TempDir()
	clk := newTestClock(1_700_000_000_000)
	db := openT(t, dir, clk, WithSync(SyncAlways))
	s := policyDB(t, db, 2, 1)
	readNew(t, s, "alice", 0)
	before := dumpDB(t, db)
	require.Empty(t, claimIDs(t, s, "bob", ClaimArgs{}, "1-1"))
	after := dumpDB(t, db)

	files := readDirFiles(t, dir)
	var seg string
	for name := range files {
		if _, ok := wal.ParseSegmentName(name); ok {
			seg = name
		}
	}
	require.NotEmpty(t, seg)
	image := func(cut int) *DB {
		d := filepath.Join(t.TempDir(), "db")
		require.NoError(t, os.MkdirAll(d, 0o755))
		for name, b := range files {
			if name == seg {
				ends := wholeFrames(b) // then the zeros preallocated
				b = b[:ends[len(ends)-1-cut]]
			}
			require.NoError(t, os.WriteFile(filepath.Join(d, name), b, 0o600))
		}
		return openT(t, d, clk)
	}

	require.Equal(t, after, dumpDB(t, image(0)), "crash after the claim")

	mid := image(1)
	got, _ := mid.Lookup("jobs")
	require.Equal(t, []string{"1-1:alice:1", "2-1:alice:1"}, pendingOf(t, got), "still pending")
	require.Len(t, deadLetters(t, mid), 1, "and dead-lettered")
	assert.Zero(t, groupInfo(t, got, "g").DeadLettered)
	// The next claim moves it again: a second dead letter, then done.
	require.Empty(t, claimIDs(t, got, "bob", ClaimArgs{}, "1-1"))
	require.Len(t, deadLetters(t, mid), 2)
	require.Equal(t, []string{"2-1:alice:1"}, pendingOf(t, got))

	require.Equal(t, before, dumpDB(t, image(2)), "crash before the claim")
}

// wholeFrames returns the offsets just past each valid frame of a log
// segment, up to the first that is not.
func wholeFrames(seg []byte) []int {
	var ends []int
	for off := wal.HeaderSize; off < len(seg); {
		_, n, err := wal.DecodeFrame(seg[off:])
		if err != nil {
			break
		}
		off += n
		ends = append(ends, off)
	}
	return ends
}

// Claims that dead-letter, policy changes, removals of the dead-letter
// stream and snapshots, all at once on a durable DB: the locks' retries
// hold (no deadlock, race-free), every entry ends acknowledged once
// somewhere, and the reopened DB is the one closed.
func TestDeadLetterPolicyConcurrentDurable(t *testing.T) {
	dir := t.TempDir()
	clk := newTestClock(1_700_000_000_000)
	db, err := Open(dir, WithSync(SyncNo), WithClock(clk.now))
	require.NoError(t, err)
	const n = 300
	for i := 1; i <= n; i++ {
		_, err := db.Add("jobs", AddArgs{ID: fmt.Sprintf("%d-1", i)}, Field{"job", fmt.Sprint(i)})
		require.NoError(t, err)
	}
	s := db.Stream("jobs")
	require.NoError(t, s.CreateGroup("g", "0", GroupOptions{DeadLetter: DeadLetterPolicy{MaxDeliveries: 1, Stream: "d0"}}))
	_, err = s.ReadGroup(context.Background(), "g", "c", ">", ReadGroupArgs{})
	require.NoError(t, err)

	var wg sync.WaitGroup
	done := make(chan struct{})
	for w := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 1 + w; i <= n; i += 3 {
				_, err := s.Claim("g", "k", 0, []string{fmt.Sprintf("%d-1", i)}, ClaimArgs{})
				assert.NoError(t, err)
			}
		}()
	}
	wg.Add(1)
	go func() { // switch the dead-letter stream, and remove one now and then
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-done:
				return
			default:
			}
			assert.NoError(t, s.SetDeadLetterPolicy("g", DeadLetterPolicy{MaxDeliveries: 1, Stream: fmt.Sprintf("d%d", i%3)}))
			if i%7 == 0 {
				db.Remove(fmt.Sprintf("d%d", (i+1)%3))
			}
			if i%11 == 0 {
				assert.NoError(t, db.Snapshot())
			}
		}
	}()
	for {
		if groupInfo(t, s, "g").Pending == 0 {
			break
		}
		runtime.Gosched()
	}
	close(done)
	wg.Wait()
	assert.Equal(t, int64(n), groupInfo(t, s, "g").DeadLettered)
	checkDB(t, db)
	want := dumpDB(t, db)
	require.NoError(t, db.Close())
	db = openT(t, dir, clk)
	require.Equal(t, want, dumpDB(t, db))
}
