package server

import (
	"strings"
	"testing"
)

// blockedClientID returns the ID of the newest client that CLIENT LIST on
// c shows with cmd (xread or xreadgroup) as its last command: the one
// blocked now (clients that ran it before stay connected).
func blockedClientID(t *testing.T, c *client, cmd string) string {
	t.Helper()
	id := ""
	for line := range strings.SplitSeq(c.do(t, "CLIENT", "LIST").s, "\n") {
		if strings.Contains(line, " cmd="+cmd+" ") {
			id, _, _ = strings.Cut(strings.TrimPrefix(line, "id="), " ")
		}
	}
	if id == "" {
		t.Fatalf("no client ran %s", cmd)
	}
	return id
}

// CLIENT UNBLOCK ends another client's blocked XREADGROUP or XREAD, as
// timed out (a null array) or with the UNBLOCKED error; the group read so
// ended delivered nothing, so the next entry goes to the next reader.
// Replies as Redis 7.0's; bad input answered as Redis does.
func TestDiffClientUnblock(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		p.do("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
		for _, tc := range []struct{ cmd, reason string }{{"xreadgroup", ""}, {"xreadgroup", "TIMEOUT"}, {"xreadgroup", "ERROR"}, {"xread", "ERROR"}} {
			args := []string{"XREADGROUP", "GROUP", "g", "c", "BLOCK", "0", "STREAMS", "s", ">"}
			if tc.cmd == "xread" {
				args = []string{"XREAD", "BLOCK", "0", "STREAMS", "s", "$"}
			}
			b := p.block(args...)
			p.waitBlocked("s", 1)
			cmd := func(id string) []string {
				a := []string{"CLIENT", "UNBLOCK", id}
				if tc.reason != "" {
					a = append(a, tc.reason)
				}
				return a
			}
			want := p.real.do(t, cmd(blockedClientID(t, p.real, tc.cmd))...)
			got := p.xs.do(t, cmd(blockedClientID(t, p.xs, tc.cmd))...)
			p.check(cmd("ID"), want, got)
			p.wait(b)
		}
		p.do("XADD", "s", "1-1", "f", "v")
		p.do("XPENDING", "s", "g")
		p.do("XREADGROUP", "GROUP", "g", "c2", "STREAMS", "s", ">")
		p.do("CLIENT", "UNBLOCK", "999999")
		p.do("CLIENT", "UNBLOCK", "x")
		p.do("CLIENT", "UNBLOCK", "1", "FOO")
		p.do("CLIENT", "UNBLOCK", "1", "TIMEOUT", "x")
	})
}
