package server

import (
	"strconv"
	"testing"
)

// An XCLAIM or XAUTOCLAIM that claims nothing refreshes its consumer's
// seen-time, by Redis 7.2's rule, which the server follows and Redis 7.0
// does not. The pair notes the claim (pair.after) and puts its time into
// Redis's XINFO replies (pair.seenByClaim), so the seen-times of the two
// servers are compared from the same event, not from events that drift
// apart the longer a run lasts (a run under the race detector once saw
// 2,495 ms against the tolerance of 2,000). Here Redis's own clock is let
// pass c2's last seen-time before each claim, and the seen-time of
// Redis's reply, as the pair reads it, must then be the claim's.
func TestDiffClaimNothingRefreshesSeenTime(t *testing.T) {
	p := newPair(t)
	p.script(`
XADD s 1-1 f v
XGROUP CREATE s g 0
XREADGROUP GROUP g c1 STREAMS s >
XGROUP CREATECONSUMER s g c2`)
	for _, claim := range [][]string{
		{"XCLAIM", "s", "g", "c2", "3600000", "1-1"}, // 1-1 is not idle long enough
		{"XAUTOCLAIM", "s", "g", "c2", "3600000", "0"},
	} {
		seen := redisSeenTime(t, p, "c2")
		before := redisNow(t, p)
		for before <= seen { // wait on Redis's clock, not a sleep
			before = redisNow(t, p)
		}
		p.do(claim...)
		if got := redisSeenTime(t, p, "c2"); got < before {
			t.Fatalf("%q claimed nothing at %d: Redis says c2 was seen at %d", claim, before, got)
		}
		p.do("XINFO", "STREAM", "s", "FULL")
		p.do("XINFO", "CONSUMERS", "s", "g")
	}
}

// redisNow is the real Redis's clock (TIME), in ms.
func redisNow(t *testing.T, p *pair) int64 {
	r := p.real.do(t, "TIME")
	s, _ := strconv.ParseInt(r.kids[0].s, 10, 64)
	us, _ := strconv.ParseInt(r.kids[1].s, 10, 64)
	return s*1000 + us/1000
}

// redisSeenTime is the seen-time of consumer c of group g of stream s on
// the real Redis, as the pair compares it (XINFO STREAM s FULL).
func redisSeenTime(t *testing.T, p *pair, c string) int64 {
	t.Helper()
	args := []string{"XINFO", "STREAM", "s", "FULL"}
	info := p.real.do(t, args...)
	p.seenByClaim(args, info)
	for _, g := range mapField(info, "groups").kids {
		for _, cons := range mapField(g, "consumers").kids {
			if mapField(cons, "name").s == c {
				return mapField(cons, "seen-time").n
			}
		}
	}
	t.Fatalf("no consumer %s in %v", c, info)
	return 0
}

// mapField is the value of name in a map reply (RESP2: a flat array).
func mapField(r *reply, name string) *reply {
	for i := 0; i+1 < len(r.kids); i += 2 {
		if r.kids[i].s == name {
			return r.kids[i+1]
		}
	}
	return &reply{}
}
