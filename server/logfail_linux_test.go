package server

import (
	"strconv"
	"strings"
	"testing"

	"github.com/xstreamgo/xstream"
)

// When writing the log fails for real (here a file size limit on the
// server process, which makes its writes fail as a full disk would), the
// connection whose replies would acknowledge changes the log lost closes
// without them; then writes get MISCONF and reads go on; and a server
// started again on the directory (without the limit) has every change
// that was acknowledged.
func TestLogFailure(t *testing.T) {
	if isHelper() {
		t.Skip("in a server process")
	}
	for _, policy := range []xstream.SyncPolicy{xstream.SyncEverySecond, xstream.SyncAlways} {
		t.Run(policy.String(), func(t *testing.T) {
			dir := t.TempDir()
			ch := startChild(t, dir, policy, helperFsizeEnv+"="+strconv.Itoa(64<<10))
			rc := dialRaw(t, ch.addr)
			value := strings.Repeat("v", 1<<10)
			var acked []string
			for i := 0; ; i++ {
				if i > 1000 {
					t.Fatal("the log never failed")
				}
				if err := rc.send([][]string{{"XADD", "s", "*", "n", itoa(i), "v", value}}); err != nil {
					break
				}
				r, err := rc.read()
				if err != nil {
					break // closed without the reply
				}
				if r.kind != '$' {
					t.Fatalf("XADD %d: %v", i, r)
				}
				acked = append(acked, r.s)
			}
			if len(acked) == 0 {
				t.Fatal("no XADD was acknowledged")
			}
			rc = dialRaw(t, ch.addr)
			r := rc.do(t, "XADD", "s", "*", "n", "late")
			if r.kind != '-' || !strings.HasPrefix(r.s, "MISCONF Errors writing to the AOF file: ") || !strings.Contains(r.s, "file too large") {
				t.Fatalf("XADD after the failure: %v", r)
			}
			if r := rc.do(t, "PING"); !strings.HasPrefix(r.s, "MISCONF ") {
				t.Fatalf("PING after the failure: %v", r)
			}
			if r := rc.do(t, "XLEN", "s"); r.kind != ':' || r.n < int64(len(acked)) {
				t.Fatalf("XLEN after the failure: %v, %d acknowledged", r, len(acked))
			}
			if r := rc.do(t, "INFO", "persistence"); !strings.Contains(r.s, "aof_last_write_status:err\r\n") {
				t.Fatalf("INFO after the failure: %q", r.s)
			}
			ch.kill(t)

			ch = startChild(t, dir, policy)
			rc = dialRaw(t, ch.addr)
			got := map[string]bool{}
			for _, e := range rc.do(t, "XRANGE", "s", "-", "+").kids {
				got[e.kids[0].s] = true
			}
			for _, id := range acked {
				if !got[id] {
					t.Fatalf("acknowledged entry %s lost (%d of %d acknowledged found)", id, len(got), len(acked))
				}
			}
			if r := rc.do(t, "XADD", "s", "*", "n", "after"); r.kind != '$' {
				t.Fatalf("XADD after the restart: %v", r)
			}
			t.Logf("%d entries acknowledged before the log failed, %d recovered", len(acked), len(got))
			ch.stop(t)
		})
	}
}
