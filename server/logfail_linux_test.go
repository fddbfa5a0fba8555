package server

import (
	"strconv"
	"strings"
	"testing"

	"github.com/xstreamgo/xstream"
)

// misconfFileTooLarge is Redis's reply to a write once its AOF write
// failed with EFBIG.
const misconfFileTooLarge = "MISCONF Errors writing to the AOF file: File too large"

// When writing the log fails for real (here a file size limit on the
// server process, which makes its writes fail as a full disk would):
// the XADD whose change could not be written (under always, synced) gets
// MISCONF, the connection staying open, and under always no read shows
// its entry. Then writes get MISCONF and
// reads go on (under always, reads of the entry in doubt get MISCONF);
// and a server started again on the directory (without the limit) has
// every change that was acknowledged.
func TestLogFailure(t *testing.T) {
	if isHelper() {
		t.Skip("in a server process")
	}
	for _, policy := range []xstream.SyncPolicy{xstream.SyncEverySecond, xstream.SyncAlways} {
		t.Run(policy.String(), func(t *testing.T) {
			dir := t.TempDir()
			ch := startChild(t, dir, policy, helperFsizeEnv+"="+strconv.Itoa(64<<10))
			rc := dialRaw(t, ch.addr)
			acked := addUntilRefused(t, rc, policy, misconfFileTooLarge)
			if len(acked) == 0 {
				t.Fatal("no XADD was acknowledged")
			}
			r := rc.do(t, "XADD", "s", "*", "n", "late")
			if r.kind != '-' || r.s != misconfFileTooLarge {
				t.Fatalf("XADD after the failure: %v", r)
			}
			if r := rc.do(t, "PING"); !strings.HasPrefix(r.s, "MISCONF ") {
				t.Fatalf("PING after the failure: %v", r)
			}
			if r := rc.do(t, "XLEN", "s"); r.kind != ':' || r.n < int64(len(acked)) {
				t.Fatalf("XLEN after the failure: %v, %d acknowledged", r, len(acked))
			}
			for _, cmd := range [][]string{{"XRANGE", "s", "-", "+"}, {"XREVRANGE", "s", "+", "-", "COUNT", "1"}, {"XREAD", "STREAMS", "s", "0"}, {"XINFO", "STREAM", "s"}} {
				r := rc.do(t, cmd...)
				if policy == xstream.SyncAlways && (r.kind != '-' || r.s != misconfFileTooLarge) {
					t.Fatalf("%s after the failure: %v; under always the entry in doubt is not shown", cmd[0], r)
				}
				if policy == xstream.SyncEverySecond && r.kind == '-' {
					t.Fatalf("%s after the failure: %v; reads go on", cmd[0], r)
				}
			}
			if r := rc.do(t, "INFO", "persistence"); !strings.Contains(r.s, "aof_last_write_status:err\r\n") {
				t.Fatalf("INFO after the failure: %q", r.s)
			}
			ch.kill(t)

			ch = startChild(t, dir, policy)
			rc = dialRaw(t, ch.addr)
			kept := requireKeptIDs(t, rc, acked)
			if r := rc.do(t, "XADD", "s", "*", "n", "after"); r.kind != '$' {
				t.Fatalf("XADD after the restart: %v", r)
			}
			t.Logf("%d entries acknowledged before the log failed, %d recovered", len(acked), kept)
			ch.stop(t)
		})
	}
}
