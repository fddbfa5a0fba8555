package server

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// Commands and options of Redis 7.4 and 8, which the Redis 7.0 of the
// differential tests cannot answer: XREAD "+", XDELEX, XACKDEL, XNACK and
// the KEEPREF, DELREF and ACKED policies of XADD and XTRIM. Each test
// gives the exact bytes that Redis's src/t_stream.c (redis/redis, the
// version with XNACK, "since 8.8.0") writes, from reading its code and its
// tests in tests/unit/type/stream-cgroups.tcl.

// raw sends one command and returns the reply's bytes as read.
func raw(t *testing.T, c *client, args ...string) string {
	t.Helper()
	return string(c.exchange(args...))
}

// expectRaw checks the bytes of the reply to a command. want is written
// with "|" for CRLF.
func expectRaw(t *testing.T, c *client, want string, args ...string) {
	t.Helper()
	want = strings.ReplaceAll(want, "|", "\r\n")
	if got := raw(t, c, args...); got != want {
		t.Fatalf("%q:\n  got  %q\n  want %q", args, got, want)
	}
}

// newerClient is a client of a new server whose clock stands still, so
// that idle times are 0.
func newerClient(t *testing.T, proto int) (*client, *Server) {
	now := time.UnixMilli(1_700_000_000_000)
	srv := RunTWith(t, Options{Clock: func() time.Time { return now }})
	return newClientProto(t, srv.Addr(), proto), srv
}

func fields(t *testing.T, c *client, key string, ids ...string) {
	t.Helper()
	for _, id := range ids {
		expectRaw(t, c, "$"+itoa(len(id))+"|"+id+"|", "XADD", key, id, "f", id[:1])
	}
}

const (
	errSyntaxRaw   = "-ERR syntax error|"
	errInvalidRaw  = "-ERR Invalid stream ID specified as stream command argument|"
	errNumIDsRaw   = "-ERR Number of IDs must be a positive integer|"
	errMismatchRaw = "-ERR The `numids` parameter must match the number of arguments|"
)

// xreadCommand's "+" branch: streamLastValidID, then streamDecrID, so the
// reply is the last entry alone, whatever COUNT; 0-0 for an empty or
// missing stream, which then has nothing to serve.
func TestXReadPlus(t *testing.T) {
	c, _ := newerClient(t, 2)
	fields(t, c, "s", "1-0", "2-0", "3-0")
	fields(t, c, "t", "1-0")
	last := "*1|*2|$1|s|*1|*2|$3|3-0|*2|$1|f|$1|3|"
	expectRaw(t, c, last, "XREAD", "STREAMS", "s", "+")
	expectRaw(t, c, last, "XREAD", "COUNT", "5", "STREAMS", "s", "+")
	expectRaw(t, c, "*2|*2|$1|s|*1|*2|$3|3-0|*2|$1|f|$1|3|*2|$1|t|*1|*2|$3|1-0|*2|$1|f|$1|1|",
		"XREAD", "STREAMS", "s", "t", "+", "+")
	expectRaw(t, c, ":1|", "XDEL", "s", "3-0")
	expectRaw(t, c, "*1|*2|$1|s|*1|*2|$3|2-0|*2|$1|f|$1|2|", "XREAD", "STREAMS", "s", "+")
	expectRaw(t, c, "*-1|", "XREAD", "STREAMS", "missing", "+")
	expectRaw(t, c, ":2|", "XTRIM", "s", "MAXLEN", "0")
	expectRaw(t, c, "*-1|", "XREAD", "STREAMS", "s", "+")

	c3, _ := newerClient(t, 3)
	fields(t, c3, "s", "5-0")
	expectRaw(t, c3, "%1|$1|s|*1|*2|$3|5-0|*2|$1|f|$1|5|", "XREAD", "STREAMS", "s", "+")
}

// A blocked XREAD "+" on an empty stream is served the entry that comes.
// (Redis runs it again then, and resolves "+" again: the core's
// TestReadPlusResolvedWhenWoken checks that several entries added at once
// give the last; EXEC here is not atomic for blocked readers.)
func TestXReadPlusBlocked(t *testing.T) {
	c, srv := newerClient(t, 2)
	fields(t, c, "e", "1-0")
	expectRaw(t, c, ":1|", "XDEL", "e", "1-0")
	s, _ := srv.DB(0).Lookup("e")
	blocked := newClientProto(t, srv.Addr(), 2)
	got := make(chan string, 1)
	go func() {
		got <- string(blocked.exchange("XREAD", "COUNT", "10", "BLOCK", "0", "STREAMS", "e", "+"))
	}()
	for s.Blocked() != 1 {
		runtime.Gosched()
	}
	fields(t, c, "e", "3-0")
	if want := "*1\r\n*2\r\n$1\r\ne\r\n*1\r\n*2\r\n$3\r\n3-0\r\n*2\r\n$1\r\nf\r\n$1\r\n3\r\n"; <-got != want {
		t.Fatalf("blocked XREAD +: want %q", want)
	}
}

// xdelexCommand and streamParseAckDelArgsOrReply.
func TestXDelEx(t *testing.T) {
	c, _ := newerClient(t, 2)
	fields(t, c, "s", "1-0", "2-0", "3-0", "4-0", "5-0")
	expectRaw(t, c, "+OK|", "XGROUP", "CREATE", "s", "g", "0")
	expectRaw(t, c, "+OK|", "XGROUP", "CREATE", "s", "h", "2-0")
	raw(t, c, "XREADGROUP", "GROUP", "g", "c", "COUNT", "3", "STREAMS", "s", ">")

	// ACKED: 1-0 is pending in g; 9-0, though not in the stream, is
	// beyond h's last ID; 0-5 is neither: not found.
	expectRaw(t, c, "*3|:2|:2|:-1|", "XDELEX", "s", "ACKED", "IDS", "3", "1-0", "9-0", "0-5")
	expectRaw(t, c, "*1|:1|", "XDELEX", "s", "IDS", "1", "1-0")
	// The policy may follow the IDS block.
	expectRaw(t, c, "*2|:-1|:1|", "XDELEX", "s", "IDS", "2", "1-0", "5-0", "keepref")
	// DELREF drops the ID from every PEL; KEEPREF left 1-0 in g's.
	expectRaw(t, c, "*1|:1|", "XDELEX", "s", "DELREF", "IDS", "1", "2-0")
	expectRaw(t, c, "*4|:2|$3|1-0|$3|3-0|*1|*2|$1|c|$1|2|", "XPENDING", "s", "g")
	// A second IDS block replaces the first.
	expectRaw(t, c, "*1|:1|", "XDELEX", "s", "IDS", "1", "3-0", "IDS", "1", "4-0")
	expectRaw(t, c, ":1|", "XLEN", "s")

	// A missing key answers -1 for each ID, unparsed.
	expectRaw(t, c, "*2|:-1|:-1|", "XDELEX", "missing", "IDS", "2", "1-0", "bad")

	for _, tc := range []struct {
		want string
		args []string
	}{
		{errSyntaxRaw, []string{"FOO", "IDS", "1", "1-0"}},
		{errSyntaxRaw, []string{"KEEPREF", "DELREF", "IDS", "1", "1-0"}},
		{errSyntaxRaw, []string{"ACKED", "IDS", "1", "1-0", "ACKED"}},
		{errSyntaxRaw, []string{"IDS", "1", "1-0", "2-0"}}, // 2-0 is read as an option
		{errSyntaxRaw, []string{"IDS", "1", "1-0", "IDS"}},
		{errNumIDsRaw, []string{"IDS", "0", "1-0"}},
		{errNumIDsRaw, []string{"IDS", "-5", "1-0"}},
		{errNumIDsRaw, []string{"IDS", "abc", "1-0"}},
		{errNumIDsRaw, []string{"IDS", "99999999999999999999", "1-0"}},
		{errMismatchRaw, []string{"IDS", "2", "1-0"}},
		{errInvalidRaw, []string{"IDS", "1", "bad"}},
		{errInvalidRaw, []string{"IDS", "2", "1-0", "+"}},
		{"-ERR wrong number of arguments for 'xdelex' command|", []string{"IDS", "1"}},
	} {
		expectRaw(t, c, tc.want, append([]string{"XDELEX", "s"}, tc.args...)...)
	}
	expectRaw(t, c, ":1|", "XLEN", "s")
}

// xackdelCommand: only IDs pending in the group are acknowledged and
// deleted; -1 for the others, which are left alone.
func TestXAckDel(t *testing.T) {
	c, _ := newerClient(t, 2)
	fields(t, c, "s", "1-0", "2-0", "3-0", "4-0", "5-0")
	expectRaw(t, c, "+OK|", "XGROUP", "CREATE", "s", "g", "0")
	expectRaw(t, c, "+OK|", "XGROUP", "CREATE", "s", "h", "0")
	raw(t, c, "XREADGROUP", "GROUP", "g", "c", "COUNT", "3", "STREAMS", "s", ">")
	raw(t, c, "XREADGROUP", "GROUP", "h", "d", "COUNT", "2", "STREAMS", "s", ">")

	// A missing key or group answers -1 for each ID, unparsed.
	expectRaw(t, c, "*2|:-1|:-1|", "XACKDEL", "missing", "g", "IDS", "2", "1-0", "bad")
	expectRaw(t, c, "*1|:-1|", "XACKDEL", "s", "nogroup", "IDS", "1", "bad")

	// 5-0 is in the stream but not pending in g: left alone.
	expectRaw(t, c, "*2|:-1|:-1|", "XACKDEL", "s", "g", "IDS", "2", "5-0", "9-0")
	expectRaw(t, c, ":5|", "XLEN", "s")
	// ACKED: acknowledged in g, kept for h (1-0 pending, 3-0 unread).
	expectRaw(t, c, "*2|:2|:2|", "XACKDEL", "s", "g", "ACKED", "IDS", "2", "1-0", "3-0")
	expectRaw(t, c, ":5|", "XLEN", "s")
	expectRaw(t, c, "*4|:1|$3|2-0|$3|2-0|*1|*2|$1|c|$1|1|", "XPENDING", "s", "g")
	expectRaw(t, c, "*1|:1|", "XACKDEL", "s", "h", "IDS", "1", "1-0", "KEEPREF")
	// A pending ID whose entry is gone is acknowledged: 1.
	expectRaw(t, c, ":1|", "XDEL", "s", "2-0")
	expectRaw(t, c, "*2|:1|:-1|", "XACKDEL", "s", "g", "IDS", "2", "2-0", "2-0")
	expectRaw(t, c, "*1|:-1|", "XACKDEL", "s", "h", "DELREF", "IDS", "1", "3-0") // not pending in h
	// DELREF: h's reference to 4-0 goes too.
	raw(t, c, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">") // g: 4-0, 5-0
	raw(t, c, "XREADGROUP", "GROUP", "h", "d", "STREAMS", "s", ">") // h: 2-0 (gone), 3-0..5-0
	expectRaw(t, c, "*1|:1|", "XACKDEL", "s", "g", "DELREF", "IDS", "1", "4-0")
	expectRaw(t, c, "*4|:3|$3|2-0|$3|5-0|*1|*2|$1|d|$1|3|", "XPENDING", "s", "h")

	for _, tc := range []struct {
		want string
		args []string
	}{
		{errSyntaxRaw, []string{"FOO", "IDS", "1", "1-0"}},
		{errSyntaxRaw, []string{"KEEPREF", "DELREF", "IDS", "1", "1-0"}},
		{errSyntaxRaw, []string{"IDS", "1", "1-0", "2-0"}},
		{errNumIDsRaw, []string{"IDS", "0", "1-0"}},
		{errNumIDsRaw, []string{"IDS", "abc", "1-0"}},
		{errMismatchRaw, []string{"IDS", "3", "1-0", "2-0"}},
		{errInvalidRaw, []string{"IDS", "1", "bad"}},
		{"-ERR wrong number of arguments for 'xackdel' command|", []string{"IDS", "1"}},
	} {
		expectRaw(t, c, tc.want, append([]string{"XACKDEL", "s", "g"}, tc.args...)...)
	}
	expectRaw(t, c, "*4|:1|$3|5-0|$3|5-0|*1|*2|$1|c|$1|1|", "XPENDING", "s", "g")
}

// xnackCommand: the key and group are looked up first, then the mode, then
// the options in order. Most of its error texts begin with "ERR ", and
// Redis's addReplyError adds "-ERR " before them.
func TestXNackErrors(t *testing.T) {
	c, _ := newerClient(t, 2)
	expectRaw(t, c, "-ERR wrong number of arguments for 'xnack' command|", "XNACK", "key", "group", "SILENT", "IDS", "1")
	expectRaw(t, c, "-NOGROUP No such key 'nosuchkey' or consumer group 'grp'|", "XNACK", "nosuchkey", "grp", "BADMODE", "IDS", "1", "1-0")
	fields(t, c, "s", "1-0", "2-0")
	expectRaw(t, c, "-NOGROUP No such key 's' or consumer group 'grp'|", "XNACK", "s", "grp", "SILENT", "IDS", "1", "1-0")
	expectRaw(t, c, "+OK|", "XGROUP", "CREATE", "s", "grp", "0")
	raw(t, c, "XREADGROUP", "GROUP", "grp", "c1", "STREAMS", "s", ">")
	before := raw(t, c, "XPENDING", "s", "grp", "-", "+", "10")

	for _, tc := range []struct {
		want string
		args []string
	}{
		{"-ERR ERR mode must be SILENT, FAIL, or FATAL|", []string{"BADMODE", "IDS", "1", "1-0"}},
		{"-ERR ERR Unrecognized XNACK option 'BADOPT'|", []string{"FAIL", "BADOPT", "IDS", "1", "1-0"}},
		{"-ERR ERR Unrecognized XNACK option 'BADOPT'|", []string{"FAIL", "IDS", "1", "1-0", "RETRYCOUNT", "5", "BADOPT"}},
		{"-ERR ERR Unrecognized XNACK option 'FATAL'|", []string{"FAIL", "FATAL", "IDS", "1", "1-0"}},
		{"-ERR ERR Unrecognized XNACK option 'NOTIDS'|", []string{"SILENT", "NOTIDS", "1", "1-0"}},
		{"-ERR ERR Unrecognized XNACK option '2-0'|", []string{"FAIL", "IDS", "1", "1-0", "2-0"}},
		{"-ERR ERR Unrecognized XNACK option 'RETRYCOUNT'|", []string{"FAIL", "IDS", "1", "1-0", "RETRYCOUNT"}},
		{"-ERR ERR syntax error, expected IDS keyword|", []string{"SILENT", "FORCE", "RETRYCOUNT", "5"}},
		{"-ERR numids must be a positive integer|", []string{"SILENT", "IDS", "abc", "1-0"}},
		{"-ERR numids must be a positive integer|", []string{"SILENT", "IDS", "0", "1-0"}},
		{"-ERR numids must be a positive integer|", []string{"SILENT", "IDS", "-1", "1-0"}},
		{"-ERR numids must be a positive integer|", []string{"SILENT", "IDS", "2147483648", "1-0"}},
		{"-ERR ERR number of IDs doesn't match numids|", []string{"SILENT", "IDS", "2", "1-0"}},
		{errInvalidRaw, []string{"FAIL", "IDS", "1", "not-a-valid-id"}},
		{"-ERR value is not an integer or out of range|", []string{"FAIL", "IDS", "1", "1-0", "RETRYCOUNT", "abc"}},
		{"-ERR ERR Invalid RETRYCOUNT value, must be >= 0|", []string{"FAIL", "IDS", "1", "1-0", "RETRYCOUNT", "-1"}},
		{"-ERR wrong number of arguments for 'xnack' command|", []string{"FAIL", "RETRYCOUNT"}},
	} {
		expectRaw(t, c, tc.want, append([]string{"XNACK", "s", "grp"}, tc.args...)...)
	}
	if after := raw(t, c, "XPENDING", "s", "grp", "-", "+", "10"); after != before {
		t.Fatalf("a refused XNACK changed the PEL:\n%q\n%q", before, after)
	}
}

// XNACK's effects: the entries stay pending with no owner (XPENDING shows
// consumer "" and idle -1), the modes and RETRYCOUNT set their delivery
// count, FORCE creates them, and they are claimed, not read again.
func TestXNack(t *testing.T) {
	c, _ := newerClient(t, 2)
	fields(t, c, "s", "1-0", "2-0", "3-0")
	expectRaw(t, c, "+OK|", "XGROUP", "CREATE", "s", "grp", "0")
	raw(t, c, "XREADGROUP", "GROUP", "grp", "c1", "COUNT", "2", "STREAMS", "s", ">")

	expectRaw(t, c, ":1|", "XNACK", "s", "grp", "SILENT", "IDS", "1", "1-0")
	expectRaw(t, c, "*2|*4|$3|1-0|$0||:-1|:0|*4|$3|2-0|$2|c1|:0|:1|", "XPENDING", "s", "grp", "-", "+", "10")
	// An ID given back already counts again; one not pending does not.
	expectRaw(t, c, ":2|", "XNACK", "s", "grp", "FATAL", "IDS", "3", "1-0", "1-0", "9-9")
	expectRaw(t, c, "*1|*4|$3|1-0|$0||:-1|:9223372036854775807|", "XPENDING", "s", "grp", "-", "1-0", "10")
	// Options before and after the IDS block; RETRYCOUNT wins over the mode.
	expectRaw(t, c, ":2|", "XNACK", "s", "grp", "FAIL", "RETRYCOUNT", "7", "IDS", "2", "1-0", "2-0", "FORCE")
	// FORCE creates the pending entry of 3-0 with a count of 0; not of a
	// missing entry.
	expectRaw(t, c, ":0|", "XNACK", "s", "grp", "FAIL", "IDS", "1", "8-0", "FORCE")
	expectRaw(t, c, ":1|", "XNACK", "s", "grp", "silent", "FORCE", "IDS", "1", "3-0")
	given := "*3|*4|$3|1-0|$0||:-1|:7|*4|$3|2-0|$0||:-1|:7|*4|$3|3-0|$0||:-1|:0|"
	expectRaw(t, c, given, "XPENDING", "s", "grp", "-", "+", "10")
	expectRaw(t, c, given, "XPENDING", "s", "grp", "IDLE", "3600000", "-", "+", "10")
	expectRaw(t, c, "*4|:3|$3|1-0|$3|3-0|*0|", "XPENDING", "s", "grp") // no consumer owns one: an empty list
	expectRaw(t, c, "*0|", "XPENDING", "s", "grp", "-", "+", "10", "c1")
	expectRaw(t, c, "*0|", "XPENDING", "s", "grp", "-", "+", "10", "")

	// ">" delivers 3-0 as new (it is past the group's last ID), not the
	// entries given back; XCLAIM takes those whatever the min idle time.
	expectRaw(t, c, "*1|*2|$1|s|*1|*2|$3|3-0|*2|$1|f|$1|3|", "XREADGROUP", "GROUP", "grp", "c2", "STREAMS", "s", ">")
	expectRaw(t, c, "*-1|", "XREADGROUP", "GROUP", "grp", "c2", "STREAMS", "s", ">")
	expectRaw(t, c, "*1|*2|$1|s|*0|", "XREADGROUP", "GROUP", "grp", "c1", "STREAMS", "s", "0")
	expectRaw(t, c, "*1|$3|1-0|", "XCLAIM", "s", "grp", "c3", "3600000", "1-0", "JUSTID")
	expectRaw(t, c, "*3|$3|0-0|*1|*2|$3|2-0|*2|$1|f|$1|2|*0|", "XAUTOCLAIM", "s", "grp", "c3", "3600000", "2-0")

	// XINFO STREAM FULL shows a given-back entry's delivery time as 0.
	expectRaw(t, c, ":1|", "XNACK", "s", "grp", "FAIL", "IDS", "1", "2-0")
	full := c.do(t, "XINFO", "STREAM", "s", "FULL")
	var pel *reply
	for i := 0; i+1 < len(full.kids); i += 2 {
		if full.kids[i].s == "groups" {
			g := full.kids[i+1].kids[0]
			for j := 0; j+1 < len(g.kids); j += 2 {
				if g.kids[j].s == "pending" {
					pel = g.kids[j+1]
				}
			}
		}
	}
	if pel == nil || len(pel.kids) != 3 || pel.kids[1].String() != `[$"2-0" $"" :0 :8]` {
		t.Fatalf("XINFO STREAM FULL pending: %v", pel)
	}
}

// streamParseAddOrTrimArgsOrReply: one policy, anywhere among the
// options; a second one is XADD's ID (invalid) or an XTRIM syntax error.
func TestTrimPolicyParsing(t *testing.T) {
	c, _ := newerClient(t, 2)
	expectRaw(t, c, errInvalidRaw, "XADD", "s", "KEEPREF", "DELREF", "*", "f", "v")
	expectRaw(t, c, errInvalidRaw, "XADD", "s", "ACKED", "MAXLEN", "1", "ACKED", "1-0", "f", "v")
	expectRaw(t, c, "$3|1-0|", "XADD", "s", "acked", "1-0", "f", "1")
	expectRaw(t, c, "$3|2-0|", "XADD", "s", "NOMKSTREAM", "DELREF", "MAXLEN", "~", "5", "LIMIT", "3", "2-0", "f", "2")
	expectRaw(t, c, "-ERR syntax error|", "XTRIM", "s", "MAXLEN", "0", "ACKED", "DELREF")
	expectRaw(t, c, "-ERR syntax error|", "XTRIM", "s", "KEEPREF", "KEEPREF", "MAXLEN", "0")
	expectRaw(t, c, "-ERR syntax error, XTRIM must be called with a trimming strategy|", "XTRIM", "s", "ACKED", "LIMIT", "0")
	expectRaw(t, c, ":2|", "XLEN", "s")
	expectRaw(t, c, ":0|", "XTRIM", "missing", "DELREF", "MAXLEN", "0")
	expectRaw(t, c, ":1|", "XTRIM", "s", "delref", "MINID", "2")
}

// streamTrim: ACKED skips the entries a group still refers to and goes on
// past them; DELREF drops the trimmed IDs from every PEL; under a policy
// other than KEEPREF, "~" trims entry by entry too.
func TestTrimPolicies(t *testing.T) {
	c, _ := newerClient(t, 2)
	fields(t, c, "s", "1-0", "2-0", "3-0", "4-0", "5-0")
	expectRaw(t, c, "+OK|", "XGROUP", "CREATE", "s", "g", "4-0")
	raw(t, c, "XCLAIM", "s", "g", "c", "0", "2-0", "FORCE", "JUSTID")
	expectRaw(t, c, ":3|", "XTRIM", "s", "MAXLEN", "0", "ACKED") // 1, 3, 4 go; 2 pending, 5 unread
	expectRaw(t, c, "*2|*2|$3|2-0|*2|$1|f|$1|2|*2|$3|5-0|*2|$1|f|$1|5|", "XRANGE", "s", "-", "+")
	expectRaw(t, c, "$3|6-0|", "XADD", "s", "DELREF", "MAXLEN", "1", "6-0", "f", "6")
	expectRaw(t, c, "*4|:0|$-1|$-1|*-1|", "XPENDING", "s", "g")

	for i := 1; i <= 150; i++ {
		raw(t, c, "XADD", "big", "*", "f", "v")
	}
	expectRaw(t, c, ":0|", "XTRIM", "big", "MAXLEN", "~", "120")
	expectRaw(t, c, ":30|", "XTRIM", "big", "MAXLEN", "~", "120", "DELREF")
	expectRaw(t, c, ":120|", "XLEN", "big")
}
