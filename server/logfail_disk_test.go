package server

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/internal/fulldisk"
)

// misconfNoSpace is Redis's reply to a write once its AOF write failed
// with ENOSPC.
const misconfNoSpace = "MISCONF Errors writing to the AOF file: No space left on device"

// A server whose disk fills up for real (a small tmpfs; skipped where it
// cannot be mounted) refuses writes with MISCONF, logs the failure, and,
// once space is freed, takes writes again by itself and logs that, as
// redis-server does; a restart finds every acknowledged entry. The XADD
// that hit the full disk gets MISCONF, never a closed connection.
func TestLogFailDiskFullRecovers(t *testing.T) {
	if isHelper() {
		t.Skip("in a server process")
	}
	for _, policy := range []xstream.SyncPolicy{xstream.SyncAlways, xstream.SyncEverySecond} {
		t.Run(policy.String(), func(t *testing.T) {
			mnt := fulldisk.Mount(t, 8<<20)
			dir := mnt + "/data"
			release := fulldisk.Fill(t, mnt, 1<<20)
			var logs syncBuffer
			srv := New(Options{Dir: dir, AppendFsync: policy, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err := srv.Start(); err != nil {
				t.Fatal(err)
			}
			defer srv.Close()

			rc := dialRaw(t, srv.Addr())
			acked := addUntilRefused(t, rc, policy, misconfNoSpace)
			if r := rc.do(t, "XADD", "s", "*", "n", "refused"); r.kind != '-' || r.s != misconfNoSpace {
				t.Fatalf("XADD while the disk is full: %v", r)
			}
			waitFor(t, "the log line of the failure", func() bool {
				return strings.Contains(logs.String(), "xstream server: writing the log failed")
			})
			if r := rc.do(t, "INFO", "persistence"); !strings.Contains(r.s, "aof_last_write_status:err\r\n") {
				t.Fatalf("INFO while the disk is full: %q", r.s)
			}

			release()
			waitFor(t, "an XADD accepted once space is back", func() bool {
				r := rc.do(t, "XADD", "s", "*", "n", "after")
				if r.kind == '$' {
					acked = append(acked, r.s)
				}
				return r.kind == '$'
			})
			waitFor(t, "the log line of the recovery", func() bool {
				return strings.Contains(logs.String(), "xstream server: the log write error looks solved")
			})
			if r := rc.do(t, "INFO", "persistence"); !strings.Contains(r.s, "aof_last_write_status:ok\r\n") {
				t.Fatalf("INFO once space is back: %q", r.s)
			}
			if err := srv.Close(); err != nil {
				t.Fatal(err)
			}

			srv = RunTWith(t, Options{Dir: dir, AppendFsync: policy})
			rc = dialRaw(t, srv.Addr())
			kept := requireKeptIDs(t, rc, acked)
			t.Logf("%s: %d acknowledged, %d kept", policy, len(acked), kept)
		})
	}
}

// requireKeptIDs checks that the stream s read on rc has every entry of
// acked, and returns how many entries it has.
func requireKeptIDs(t *testing.T, rc *rawConn, acked []string) int {
	t.Helper()
	got := map[string]bool{}
	for _, e := range rc.do(t, "XRANGE", "s", "-", "+").kids {
		got[e.kids[0].s] = true
	}
	for _, id := range acked {
		if !got[id] {
			t.Fatalf("acknowledged entry %s lost (%d of %d acknowledged found)", id, len(got), len(acked))
		}
	}
	return len(got)
}

// addUntilRefused sends XADDs of 1 KiB entries to the stream s on rc
// until one is not acknowledged, and returns the IDs of those that were.
// The one that hits the failure must get the reply misconf, under every
// policy: the connection stays open.
func addUntilRefused(t *testing.T, rc *rawConn, policy xstream.SyncPolicy, misconf string) []string {
	t.Helper()
	value := strings.Repeat("v", 1<<10)
	var acked []string
	for i := 0; ; i++ {
		if i > 5000 {
			t.Fatal("the log never failed")
		}
		if err := rc.send([][]string{{"XADD", "s", "*", "n", itoa(i), "v", value}}); err != nil {
			t.Fatalf("XADD %d: %v", i, err)
		}
		r, err := rc.read()
		if err != nil {
			t.Fatalf("XADD %d under %s: the connection closed (%v); it answers MISCONF", i, policy, err)
		}
		if r.kind == '-' {
			if r.s != misconf {
				t.Fatalf("XADD %d: %v", i, r)
			}
			return acked
		}
		if r.kind != '$' {
			t.Fatalf("XADD %d: %v", i, r)
		}
		acked = append(acked, r.s)
	}
}

// waitFor polls cond until it holds, for what the server does on its own
// each second (its cron, the DB's retry of its log), failing the test
// after 10 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 10 s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
