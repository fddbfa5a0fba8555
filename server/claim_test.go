package server

import (
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// XREADGROUP … CLAIM min-idle-time (Redis 8.4), which the Redis 7.0 of the
// differential tests refuses. The replies are pinned as bytes from Redis's
// documentation of the option and its src/t_stream.c: with CLAIM each
// entry of a ">" stream has four elements, its ID, its fields, its idle
// time in milliseconds and its delivery count before the read (0 and 0
// for a new entry); claimed entries come first, longest idle first, and
// COUNT caps claimed and new entries together.

// claimClient is a client of a new server whose clock moves only when the
// test advances it.
func claimClient(t *testing.T, proto int) (*client, func(time.Duration), string) {
	var ms atomic.Int64
	ms.Store(1_700_000_000_000)
	srv := RunTWith(t, Options{Clock: func() time.Time { return time.UnixMilli(ms.Load()) }})
	return newClientProto(t, srv.Addr(), proto), func(d time.Duration) { ms.Add(d.Milliseconds()) }, srv.Addr()
}

func TestXReadGroupClaim(t *testing.T) {
	for _, proto := range []int{2, 3} {
		c, advance, _ := claimClient(t, proto)
		fields(t, c, "s", "1-0", "2-0", "3-0")
		expectRaw(t, c, "+OK|", "XGROUP", "CREATE", "s", "g", "0")
		head := "*1|*2|$1|s|" // RESP3: a map keyed by stream
		if proto == 3 {
			head = "%1|$1|s|"
		}
		expectRaw(t, c, head+"*1|*2|$3|1-0|*2|$1|f|$1|1|", "XREADGROUP", "GROUP", "g", "alice", "COUNT", "1", "STREAMS", "s", ">")
		advance(1500 * time.Millisecond)

		// Not idle enough: the new entries only, each with 0 and 0.
		expectRaw(t, c, head+"*1|*4|$3|2-0|*2|$1|f|$1|2|:0|:0|",
			"XREADGROUP", "GROUP", "g", "bob", "COUNT", "1", "CLAIM", "2000", "STREAMS", "s", ">")
		advance(time.Second)

		// 1-0 (idle 2500 ms) and 2-0 (1000 ms, bob's own), each delivered
		// once, are claimed first, longest idle first, then 3-0 is read.
		expectRaw(t, c, head+"*3|*4|$3|1-0|*2|$1|f|$1|1|:2500|:1|*4|$3|2-0|*2|$1|f|$1|2|:1000|:1|*4|$3|3-0|*2|$1|f|$1|3|:0|:0|",
			"XREADGROUP", "GROUP", "g", "bob", "CLAIM", "1000", "STREAMS", "s", ">")
		expectRaw(t, c, "*3|*4|$3|1-0|$3|bob|:0|:2|*4|$3|2-0|$3|bob|:0|:2|*4|$3|3-0|$3|bob|:0|:1|",
			"XPENDING", "s", "g", "-", "+", "10")

		// CLAIM 0 takes every pending entry, longest idle first (then by
		// ID); COUNT caps them.
		advance(time.Second)
		expectRaw(t, c, head+"*2|*4|$3|1-0|*2|$1|f|$1|1|:1000|:2|*4|$3|2-0|*2|$1|f|$1|2|:1000|:2|",
			"XREADGROUP", "GROUP", "g", "carol", "COUNT", "2", "CLAIM", "0", "STREAMS", "s", ">")

		// A history read ignores CLAIM: the usual entries.
		expectRaw(t, c, head+"*2|*2|$3|1-0|*2|$1|f|$1|1|*2|$3|2-0|*2|$1|f|$1|2|",
			"XREADGROUP", "GROUP", "g", "carol", "CLAIM", "0", "STREAMS", "s", "0")

		// Nothing to claim or read: a null reply.
		expectRaw(t, c, ":3|", "XACK", "s", "g", "1-0", "2-0", "3-0")
		null := "*-1|"
		if proto == 3 {
			null = "_|"
		}
		expectRaw(t, c, null, "XREADGROUP", "GROUP", "g", "carol", "CLAIM", "0", "STREAMS", "s", ">")
	}
}

func TestXReadGroupClaimErrors(t *testing.T) {
	c, advance, _ := claimClient(t, 2)
	fields(t, c, "s", "1-0")
	expectRaw(t, c, "+OK|", "XGROUP", "CREATE", "s", "g", "0")
	expectRaw(t, c, "*1|*2|$1|s|*1|*2|$3|1-0|*2|$1|f|$1|1|", "XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")
	advance(time.Second)
	for _, tc := range []struct {
		want string
		args []string
	}{
		{"-ERR min-idle-time must be a positive integer|", []string{"XREADGROUP", "GROUP", "g", "bob", "CLAIM", "-1", "STREAMS", "s", ">"}},
		{"-ERR min-idle-time is not an integer or out of range|", []string{"XREADGROUP", "GROUP", "g", "bob", "CLAIM", "x", "STREAMS", "s", ">"}},
		{"-ERR The CLAIM option is only supported by XREADGROUP. You called XREAD instead.|", []string{"XREAD", "CLAIM", "0", "STREAMS", "s", "0"}},
		{"-ERR min-idle-time is not an integer or out of range|", []string{"XREADGROUP", "GROUP", "g", "bob", "CLAIM", "1.5", "STREAMS", "s", ">"}},
	} {
		expectRaw(t, c, tc.want, tc.args...)
	}
	// Nothing changed: 1-0 is alice's, idle 1 s, delivered once, and bob
	// does not exist.
	expectRaw(t, c, "*1|*4|$3|1-0|$5|alice|:1000|:1|", "XPENDING", "s", "g", "-", "+", "10")
	expectRaw(t, c, "*0|", "XPENDING", "s", "g", "-", "+", "10", "bob")
}

// blockClaimRead gives stream s of c's server an entry 1-0 that group g
// delivered to alice, then starts bob's XREADGROUP BLOCK 0 CLAIM 60000 on
// a client of its own and returns its reply's channel once bob blocks.
func blockClaimRead(t *testing.T, c *client, addr string) <-chan []byte {
	t.Helper()
	fields(t, c, "s", "1-0")
	expectRaw(t, c, "+OK|", "XGROUP", "CREATE", "s", "g", "0")
	expectRaw(t, c, "*1|*2|$1|s|*1|*2|$3|1-0|*2|$1|f|$1|1|", "XREADGROUP", "GROUP", "g", "alice", "STREAMS", "s", ">")
	blocker := newClientProto(t, addr, 2)
	done := make(chan []byte, 1)
	go func() {
		done <- blocker.exchange("XREADGROUP", "GROUP", "g", "bob", "BLOCK", "0", "CLAIM", "60000", "STREAMS", "s", ">")
	}()
	for statLines(t, c, "clients")["blocked_clients"] != "1" {
		select {
		case r := <-done:
			t.Fatalf("XREADGROUP ended before an add: %q", r)
		default:
		}
	}
	return done
}

// Entries that age once the read found nothing to claim, but before it
// waits, are not claimed by the wait: it is served new entries only, as
// it would be once waiting. Before, the wait claimed them, and
// TestXReadGroupClaimBlocked failed now and then.
func TestXReadGroupClaimAgesAsItBlocks(t *testing.T) {
	var ms atomic.Int64
	ms.Store(1_700_000_000_000)
	srv := RunTWith(t, Options{Clock: func() time.Time { return time.UnixMilli(ms.Load()) }})
	c := newClientProto(t, srv.Addr(), 2)
	hook := func(*conn) {
		srv.blockedHook.Store(nil) // once
		ms.Add(time.Hour.Milliseconds())
	}
	srv.blockedHook.Store(&hook)
	done := blockClaimRead(t, c, srv.Addr())
	fields(t, c, "s", "2-0")
	want := "*1|*2|$1|s|*1|*4|$3|2-0|*2|$1|f|$1|2|:0|:0|"
	if got := string(<-done); got != strings.ReplaceAll(want, "|", "\r\n") {
		t.Fatalf("got %q, want %q", got, want)
	}
	expectRaw(t, c, "*2|*4|$3|1-0|$5|alice|:3600000|:1|*4|$3|2-0|$3|bob|:0|:1|", "XPENDING", "s", "g", "-", "+", "10")
}

// A blocked XREADGROUP with CLAIM is served by a new entry, which it
// replies with 0 and 0; it is not woken by pending entries that age.
func TestXReadGroupClaimBlocked(t *testing.T) {
	c, advance, addr := claimClient(t, 2)
	done := blockClaimRead(t, c, addr)
	advance(time.Hour) // 1-0 is now idle enough, but nothing wakes the reader for it
	fields(t, c, "s", "2-0")
	want := "*1|*2|$1|s|*1|*4|$3|2-0|*2|$1|f|$1|2|:0|:0|"
	if got := string(<-done); got != strings.ReplaceAll(want, "|", "\r\n") {
		t.Fatalf("got %q, want %q", got, want)
	}
}
