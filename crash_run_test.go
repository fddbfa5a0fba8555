package xstream

import (
	"bufio"
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/xstreamgo/xstream/internal/wal"
)

func TestCrashAlways(t *testing.T) { testCrash(t, SyncAlways) }

func TestCrashEverySecond(t *testing.T) { testCrash(t, SyncEverySecond) }

// crashStats counts what the rounds checked.
type crashStats struct {
	rounds, kills, killsAtOpen, snapRounds int
	killsByTime                            int
	lines, ops, entries, pending           int
	lost, inflight                         int
	strays                                 []string
	childTime, checkTime                   time.Duration
	snaps, flushes, snapFails              int
	notes                                  []string
}

func testCrash(t *testing.T, policy SyncPolicy) {
	if os.Getenv(crashDirEnv) != "" {
		t.Skip("in the child")
	}
	rounds, maxLines := 12, 2500
	if policy == SyncEverySecond {
		rounds, maxLines = 16, 4000
	}
	// A child lives at most maxRun after READY, for slow disks
	// (SyncAlways waits for each fdatasync) and slow machines.
	maxRun := 400 * time.Millisecond
	if crashRace {
		rounds, maxRun = rounds*2/3, 800*time.Millisecond
	}
	if testing.Short() {
		rounds = 4
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(crashSeedEnv); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("%s=%q: %v", crashSeedEnv, s, err)
		}
	}
	dir := t.TempDir()
	if os.Getenv(crashKeepEnv) != "" {
		var err error
		if dir, err = os.MkdirTemp("", "xstream-crash-"); err != nil {
			t.Fatal(err)
		}
		t.Logf("the DB is kept in %s", dir)
	}
	rng := rand.New(rand.NewPCG(seed, uint64(policy)))
	m := newCrashModel(seed)
	var st crashStats
	start := time.Now()
	for round := range rounds {
		snaps := round%3 == 2
		killAfter := 1 + rng.IntN(maxLines) // lines after READY
		if snaps && policy == SyncEverySecond {
			killAfter *= 3 // so that snapshots finish, not only start
		}
		if round > 0 && rng.IntN(6) == 0 {
			killAfter = -1 // as soon as it prints OPEN: during Open
		}
		where := fmt.Sprintf("round %d of %d (%s, seed %d, kill after %d lines, snapshots %v, dir %s; "+
			"%s=%d replays the plan and the entries, %s=1 keeps the directory)",
			round, rounds, policy, seed, killAfter, snaps, dir, crashSeedEnv, seed, crashKeepEnv)
		t0 := time.Now()
		lines, byTime, err := runCrashChild(dir, policy, seed, round, killAfter, maxRun, snaps)
		st.childTime += time.Since(t0)
		if byTime {
			st.killsByTime++
		}
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		rd, err := parseCrashLines(lines, policy)
		if err != nil {
			t.Fatalf("%s: %v", where, err)
		}
		t0 = time.Now()
		res := crashVerify(t, dir, policy, m, rd, round, snaps)
		st.checkTime += time.Since(t0)
		next, probs, notes := res.next, res.probs, res.notes
		st.lost += res.lost
		st.inflight += res.inflight
		for _, e := range rd.snapErrs {
			// A known failure (TestSnapshotTwiceWithoutChanges) is
			// noted; any other fails the test.
			if !strings.Contains(e, ".log: file exists") {
				probs = append(probs, "a snapshot failed: "+e)
			}
			notes = append(notes, "a snapshot failed: "+e)
		}
		if len(probs) > 0 {
			if len(probs) > 12 {
				probs = append(probs[:12], fmt.Sprintf("... and %d more", len(probs)-12))
			}
			t.Fatalf("%s: %d calls reported, %d in flight at the kill, %d problems:\n%s",
				where, rd.ops, len(rd.inflight), len(probs), strings.Join(probs, "\n"))
		}
		for _, f := range res.strays {
			if !slices.Contains(st.strays, f) {
				st.strays = append(st.strays, f)
				notes = append(notes, "a file the manifest does not name: "+f)
			}
		}
		for _, n := range notes {
			st.notes = append(st.notes, fmt.Sprintf("round %d: %s", round, n))
		}
		m = next
		st.rounds++
		st.kills++
		if killAfter < 0 {
			st.killsAtOpen++
		}
		if snaps {
			st.snapRounds++
		}
		st.lines += rd.lines
		st.ops += rd.ops
		st.snaps += rd.snaps
		st.flushes += rd.flushes
		st.snapFails += len(rd.snapErrs)
	}
	for _, s := range m.streams {
		st.entries += len(s.entries)
		st.pending += len(s.pending)
	}
	t.Logf("%s, seed %d: %d rounds in %v (children %v, checks %v), %d kills (%d during Open, %d after %v rather than a count of lines, %d in rounds with snapshots), %d lines, %d calls acknowledged and checked (%d of their effects lost as allowed, %d effects of calls in flight kept), %d snapshots, %d flushes, %d failed snapshots; the DB ends with %d entries, %d pending",
		policy, seed, st.rounds, time.Since(start).Round(time.Millisecond), st.childTime.Round(time.Millisecond), st.checkTime.Round(time.Millisecond), st.kills, st.killsAtOpen, st.killsByTime, maxRun, st.snapRounds,
		st.lines, st.ops, st.lost, st.inflight, st.snaps, st.flushes, st.snapFails, st.entries, st.pending)
	for i, n := range st.notes {
		if i == 10 {
			t.Logf("... and %d more notes", len(st.notes)-10)
			break
		}
		t.Logf("note: %s", n)
	}
}

// runCrashChild runs the child of a round on dir and kills it with
// SIGKILL once it printed killAfter lines after READY (-1: at OPEN), or
// maxRun after READY, whichever comes first (byTime reports the latter).
// It returns every line the child printed, without their "XS ".
func runCrashChild(dir string, policy SyncPolicy, seed uint64, round, killAfter int, maxRun time.Duration, snaps bool) (lines []string, byTime bool, err error) {
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
	cmd.Env = append(os.Environ(),
		crashDirEnv+"="+dir,
		crashSyncEnv+"="+policy.String(),
		crashRoundEnv+"="+strconv.Itoa(round),
		crashSeedEnv+"="+strconv.FormatUint(seed, 10),
	)
	if snaps {
		cmd.Env = append(cmd.Env, crashSnapEnv+"=1")
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, false, err
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, false, err
	}
	if err := cmd.Start(); err != nil {
		return nil, false, err
	}
	var mu sync.Mutex
	killed, timedOut := false, false
	kill := func() {
		mu.Lock()
		defer mu.Unlock()
		if !killed {
			killed = true
			cmd.Process.Kill()
		}
	}
	timer := time.AfterFunc(30*time.Second, func() {
		mu.Lock()
		timedOut = true
		mu.Unlock()
		kill()
	})
	defer timer.Stop()

	after := -1 // lines after READY
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "XS ")
		if !ok {
			continue
		}
		lines = append(lines, line)
		switch {
		case line == "OPEN" && killAfter < 0:
			kill()
		case line == "READY":
			after = 0
			capTimer := time.AfterFunc(maxRun, func() {
				mu.Lock()
				byTime = !killed
				mu.Unlock()
				kill()
			})
			defer capTimer.Stop()
		case after >= 0:
			after++
		}
		if after >= killAfter && killAfter >= 0 {
			kill()
		}
	}
	scanErr := sc.Err()
	waitErr := cmd.Wait()
	mu.Lock()
	defer mu.Unlock()
	msg := stderr.String()
	switch {
	case scanErr != nil:
		return nil, false, fmt.Errorf("reading the child: %v", scanErr)
	case timedOut:
		return nil, false, fmt.Errorf("the child printed %d lines in 30s, and was killed\n%s", len(lines), msg)
	case !killed:
		return nil, false, fmt.Errorf("the child stopped by itself (%v) after %d lines, the last %q\n%s", waitErr, len(lines), lines[max(0, len(lines)-3):], msg)
	case strings.Contains(msg, "DATA RACE") || strings.Contains(msg, "panic") || strings.Contains(msg, "fatal error"):
		return nil, false, fmt.Errorf("the child's stderr:\n%s", msg)
	}
	return lines, byTime, nil
}

// syncBuffer is a bytes.Buffer safe for the goroutine exec copies stderr in
// and a reader.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// crashVerify opens the DB in dir, checks it against the model and the
// round's report, checks the invariants of its streams, closes it and
// checks that a second open gives the same DB. It returns the model for
// the next round, the problems and notes (things worth knowing that the
// library does not promise otherwise).
func crashVerify(t *testing.T, dir string, policy SyncPolicy, m *crashModel, rd *crashRound, round int, snaps bool) crashResult {
	t.Helper()
	var res crashResult
	res.next, res.probs, res.notes = crashVerifyDB(t, dir, policy, m, rd, round, snaps, &res)
	return res
}

// crashResult is the outcome of the check of a round.
type crashResult struct {
	next         *crashModel
	probs, notes []string
	lost         int // calls that returned and whose effect is gone, as allowed
	inflight     int // calls in flight at the kill whose effect is there
	strays       []string
}

func crashVerifyDB(t *testing.T, dir string, policy SyncPolicy, m *crashModel, rd *crashRound, round int, snaps bool, res *crashResult) (*crashModel, []string, []string) {
	t.Helper()
	clk := newTestClock(time.Now().UnixMilli())
	opts := []Option{WithClock(clk.now), WithSync(policy), WithAutoSnapshot(-1)}
	db, err := Open(dir, opts...)
	if err != nil {
		return nil, []string{fmt.Sprintf("Open after the kill: %v", err)}, nil
	}
	var probs, notes []string
	next := &crashModel{seed: m.seed, streams: map[string]*crashStreamModel{}}
	var causal crashCausal
	for _, s := range crashStreams {
		o, err := observeCrashStream(db, s)
		if err != nil {
			probs = append(probs, fmt.Sprintf("%s: %v", s, err))
			continue
		}
		sm, p := m.crashCheckStream(s, o, rd, round, &causal)
		next.streams[s] = sm
		probs = append(probs, p...)
	}
	if names := db.Names(""); !slices.Equal(names, crashStreams) && (rd.ready || len(names) > 0) {
		probs = append(probs, fmt.Sprintf("streams %q, want %q", names, crashStreams))
	}
	// What survived is a prefix of the log, but a snapshot copies each
	// stream at its own moment, with changes not yet written: after a
	// crash of the process, one stream can keep a change made after one
	// that another lost (TestSnapshotCrashKeepsALaterChangeAndLosesAnEarlierOne).
	// In rounds with snapshots that is only a note.
	res.lost = len(causal.lost)
	for _, op := range causal.survived {
		if op.ok < 0 {
			res.inflight++
		}
	}
	if cp := causal.problems(); snaps {
		notes = append(notes, cp...)
	} else {
		probs = append(probs, cp...)
	}
	for _, s := range crashStreams {
		if st, ok := db.Lookup(s); ok {
			if err := checkNow(st); err != nil {
				probs = append(probs, err.Error())
			}
		}
	}
	if err := db.Err(); err != nil {
		probs = append(probs, fmt.Sprintf("the log's error: %v", err))
	}
	want := dumpDB(t, db)
	if err := db.Close(); err != nil {
		probs = append(probs, fmt.Sprintf("Close: %v", err))
	}
	crashUntrack(db)
	res.strays = crashStrays(dir)

	db, err = Open(dir, opts...)
	if err != nil {
		return nil, append(probs, fmt.Sprintf("the second Open: %v", err)), notes
	}
	if got := dumpDB(t, db); got != want {
		probs = append(probs, "the second open differs from the first: "+firstDiff(want, got))
	}
	if err := db.Close(); err != nil {
		probs = append(probs, fmt.Sprintf("the second Close: %v", err))
	}
	crashUntrack(db)
	return next, probs, notes
}

// crashUntrack removes the streams of db, checked and closed, from those
// TestMain checks at the end: the rounds open the DB dozens of times.
func crashUntrack(db *DB) {
	set := map[*Stream]bool{}
	for _, name := range db.Names("") {
		s, _ := db.Lookup(name)
		set[s] = true
	}
	madeMu.Lock()
	made = slices.DeleteFunc(made, func(s *Stream) bool { return set[s] })
	madeMu.Unlock()
}

// crashStrays returns the segments and snapshots of dir that its manifest
// does not name.
func crashStrays(dir string) []string {
	mf, err := wal.ReadManifest(dir)
	if err != nil {
		return nil
	}
	named := append([]string{mf.Snapshot}, mf.Logs...)
	ents, _ := os.ReadDir(dir)
	var out []string
	for _, e := range ents {
		name := e.Name()
		_, isLog := wal.ParseSegmentName(name)
		_, isSnap := wal.ParseSnapshotName(name)
		if (isLog || isSnap) && !slices.Contains(named, name) {
			out = append(out, filepath.Base(name))
		}
	}
	return out
}

// firstDiff describes the first line where two dumps differ.
func firstDiff(a, b string) string {
	al, bl := strings.Split(a, "\n"), strings.Split(b, "\n")
	for i := range max(len(al), len(bl)) {
		var x, y string
		if i < len(al) {
			x = al[i]
		}
		if i < len(bl) {
			y = bl[i]
		}
		if x != y {
			return fmt.Sprintf("line %d: %q, then %q", i+1, x, y)
		}
	}
	return "same lines"
}
