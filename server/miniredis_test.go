package server

import (
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
)

// The stream commands miniredis (v2.40.0, the version of go.mod) answers
// otherwise than Redis, and xstream as Redis: docs/server.md's "Switching
// from miniredis" lists these cases, and only these. Each case runs on the
// xstream server and on miniredis, and on the real Redis too when one
// runs (see TestMain): xstream's reply and Redis's must be want, and
// miniredis's must not. When a newer miniredis gets one right, its case
// fails here: take it out of this test and out of docs/server.md.
func TestMiniredisDifferences(t *testing.T) {
	cases := []struct {
		name  string
		setup [][]string
		probe []string
		// advance is a time to move both fakes' clocks by (FastForward)
		// after setup; a case with one cannot run on a real Redis.
		advance time.Duration
		want    string
	}{{
		name:  "XSETID",
		setup: [][]string{{"XADD", "s", "1-1", "f", "v"}},
		probe: []string{"XSETID", "s", "5-0"},
		want:  `+"OK"`,
	}, {
		name:  "XINFO STREAM fields",
		setup: [][]string{{"XADD", "s", "1-1", "f", "v"}, {"XADD", "s", "1-2", "f", "v"}},
		probe: []string{"XINFO", "STREAM", "s"},
		want:  `[$"length" :2 $"radix-tree-keys" :1 $"radix-tree-nodes" :2 $"last-generated-id" $"1-2" $"max-deleted-entry-id" $"0-0" $"entries-added" :2 $"recorded-first-entry-id" $"1-1" $"groups" :0 $"first-entry" [$"1-1" [$"f" $"v"]] $"last-entry" [$"1-2" [$"f" $"v"]]]`,
	}, {
		// Redis trims whole nodes of the radix tree (100 entries by
		// default) under ~: a stream of 3 loses none.
		name:  "XTRIM MAXLEN ~",
		setup: [][]string{{"XADD", "s", "1-1", "f", "v"}, {"XADD", "s", "1-2", "f", "v"}, {"XADD", "s", "1-3", "f", "v"}},
		probe: []string{"XTRIM", "s", "MAXLEN", "~", "1"},
		want:  `:0`,
	}, {
		name: "XADD MAXLEN ~",
		setup: [][]string{
			{"XADD", "s", "1-1", "f", "v"}, {"XADD", "s", "1-2", "f", "v"},
			{"XADD", "s", "MAXLEN", "~", "1", "1-3", "f", "v"},
		},
		probe: []string{"XLEN", "s"},
		want:  `:3`,
	}, {
		// Redis 7 lists the pending entries deleted from the stream
		// (XDEL) as XAUTOCLAIM's third element, and drops them from the
		// PEL.
		name: "XAUTOCLAIM deleted IDs",
		setup: [][]string{
			{"XADD", "s", "1-1", "f", "v"}, {"XADD", "s", "1-2", "f", "v"},
			{"XGROUP", "CREATE", "s", "g", "0"},
			{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"},
			{"XDEL", "s", "1-1"},
		},
		probe: []string{"XAUTOCLAIM", "s", "g", "c2", "0", "0"},
		want:  `[$"0-0" [[$"1-2" [$"f" $"v"]]] [$"1-1"]]`,
	}, {
		// miniredis's FastForward ages key TTLs only.
		name: "XPENDING idle after FastForward",
		setup: [][]string{
			{"XADD", "s", "1-1", "f", "v"},
			{"XGROUP", "CREATE", "s", "g", "0"},
			{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"},
		},
		advance: time.Hour,
		probe:   []string{"XPENDING", "s", "g", "-", "+", "10"},
		want:    `[[$"1-1" $"c" :3600000 :1]]`,
	}, {
		name: "XINFO CONSUMERS idle after FastForward",
		setup: [][]string{
			{"XADD", "s", "1-1", "f", "v"},
			{"XGROUP", "CREATE", "s", "g", "0"},
			{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"},
		},
		advance: time.Hour,
		probe:   []string{"XINFO", "CONSUMERS", "s", "g"},
		want:    `[[$"name" $"c" $"pending" :1 $"idle" :3600000 $"inactive" :3600000]]`,
	}, {
		name: "XAUTOCLAIM min-idle-time after FastForward",
		setup: [][]string{
			{"XADD", "s", "1-1", "f", "v"},
			{"XGROUP", "CREATE", "s", "g", "0"},
			{"XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">"},
		},
		advance: time.Hour,
		probe:   []string{"XAUTOCLAIM", "s", "g", "c2", "3600000", "0", "JUSTID"},
		want:    `[$"0-0" [$"1-1"] []]`,
	}}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			run := func(addr string, advance func(time.Duration)) string {
				c := newClient(t, addr)
				c.do(t, "DEL", "s")
				for _, cmd := range tc.setup {
					if r := c.do(t, cmd...); r.kind == '-' {
						t.Fatalf("%s: setup %q: %s", addr, cmd, r)
					}
				}
				if tc.advance != 0 {
					advance(tc.advance)
				}
				r := c.do(t, tc.probe...)
				if tc.probe[0] == "XINFO" {
					mapFields(r, newerStreamFields, nil) // Redis 8's, which Redis 7.0 lacks
				}
				return r.String()
			}
			now := time.UnixMilli(1_700_000_000_000)
			srv := RunT(t)
			srv.SetTime(now)
			if got := run(srv.Addr(), srv.FastForward); got != tc.want {
				t.Errorf("xstream %q:\n  got  %s\n  want %s", tc.probe, got, tc.want)
			}
			mr := miniredis.RunT(t)
			mr.SetTime(now)
			if got := run(mr.Addr(), mr.FastForward); got == tc.want {
				t.Errorf("miniredis now answers %q as Redis (%s): take the case out of this test and of docs/server.md's list", tc.probe, got)
			} else {
				t.Logf("miniredis %q: %s", tc.probe, got)
			}
			if realAddr != "" && tc.advance == 0 {
				if got := run(realAddr, nil); got != tc.want {
					t.Errorf("Redis %q:\n  got  %s\n  want %s", tc.probe, got, tc.want)
				}
			}
		})
	}
}
