package xstream

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// Under SyncEverySecond, what a crash of the process leaves must be the
// state of some moment. A snapshot copies each stream at its own moment
// (writeSnapshot: copyStream, one stream after the other) and so includes
// changes the log may not have written yet; Snapshot therefore syncs the
// log up to the end of the copy before it switches to the snapshot.
// Here an add to "a" returns after a's copy and before an add to "b",
// which the copy of b includes: after the crash, b having its entry
// means a has its own.
func TestSnapshotCrashKeepsALaterChangeAndLosesAnEarlierOne(t *testing.T) {
	for range 3 {
		lostA, keptB := crashDuringFuzzySnapshot(t)
		require.True(t, keptB, "b's entry is in the snapshot")
		require.False(t, lostA, "after the crash, b has the entry added after a's, which is lost")
	}
}

// crashDuringFuzzySnapshot adds to "a" after the snapshot copied it and
// then to "b" before the snapshot copies it, copies the directory as a
// killed process would leave it, and reports whether the copy lost a's
// entry and kept b's.
func crashDuringFuzzySnapshot(t *testing.T) (lostA, keptB bool) {
	dir := t.TempDir()
	clk := newTestClock(1_700_000_000_000)
	db, err := Open(dir, WithClock(clk.now), WithSync(SyncEverySecond), WithAutoSnapshot(-1))
	require.NoError(t, err)
	defer db.Close()
	for _, name := range []string{"a", "b"} {
		_, err := db.Add(name, AddArgs{ID: "1-1"}, Fields("n", "1")...)
		require.NoError(t, err)
	}
	require.NoError(t, db.Flush())

	// Hold b, so that the snapshot copies a (streams are copied in name
	// order) and then waits for b.
	b, _ := db.Lookup("b")
	b.mu.Lock()
	done := make(chan error, 1)
	go func() { done <- db.Snapshot() }()
	waitForStack(t, "xstream.copyStream", "RLock")

	_, err = db.Add("a", AddArgs{ID: "2-1"}, Fields("n", "2")...) // after a's copy
	require.NoError(t, err)
	// b's add, made while the test holds b's lock as Add would hold it.
	b.appendLocked(ID{3, 1}, Fields("n", "3"))
	b.unlock()
	require.NoError(t, <-done)

	// The process dies now: the files are what the OS has.
	crashed := t.TempDir()
	ents, err := os.ReadDir(dir)
	require.NoError(t, err)
	for _, e := range ents {
		if e.Name() == "LOCK" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(filepath.Join(crashed, e.Name()), data, 0o600))
	}
	after, err := Open(crashed, WithClock(clk.now))
	require.NoError(t, err)
	defer after.Close()
	defer crashUntrack(after)
	a2, _ := after.Lookup("a")
	b2, _ := after.Lookup("b")
	return a2.LastID() != (ID{2, 1}), b2.LastID() == ID{3, 1}
}

// waitForStack waits until a goroutine's stack holds every one of parts.
func waitForStack(t *testing.T, parts ...string) {
	t.Helper()
	buf := make([]byte, 1<<20)
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
			all := true
			for _, p := range parts {
				all = all && strings.Contains(g, p)
			}
			if all {
				return
			}
		}
	}
	t.Fatalf("no goroutine came to %q", parts)
}
