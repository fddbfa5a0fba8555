package server

import (
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// Idempotent production (Redis 8.6), which the Redis 7.0 of the
// differential tests lacks: the exact bytes of the replies, as Redis's
// src/t_stream.c with IDMP and XNACK writes them (xaddCommand,
// streamParseAddOrTrimArgsOrReply, xcfgsetCommand,
// xinfoReplyWithStreamInfo) and its tests in tests/unit/type/stream.tcl
// expect them, and COMMAND's from src/commands/xcfgset.json.

func TestXCfgSet(t *testing.T) {
	for _, proto := range []int{2, 3} {
		c, srv := newerClient(t, proto)
		expectRaw(t, c, "-ERR no such key|", "XCFGSET", "s", "IDMP-DURATION", "5")
		fields(t, c, "s", "1-0")
		expectRaw(t, c, "+OK|", "XCFGSET", "s", "IDMP-DURATION", "5")
		expectRaw(t, c, "+OK|", "XCFGSET", "s", "idmp-maxsize", "5000", "IDMP-DURATION", "3")
		st, _ := srv.DB(0).Lookup("s")
		info := st.IdempotenceInfo()
		if info.Duration.Seconds() != 3 || info.MaxSize != 5000 {
			t.Fatalf("RESP%d: XCFGSET set %+v", proto, info.IdempotenceConfig)
		}
		// The limits.
		expectRaw(t, c, "+OK|", "XCFGSET", "s", "IDMP-DURATION", "86400", "IDMP-MAXSIZE", "1")
		expectRaw(t, c, "+OK|", "XCFGSET", "s", "IDMP-MAXSIZE", "10000", "IDMP-DURATION", "1")
		if info = st.IdempotenceInfo(); info.Duration.Seconds() != 1 || info.MaxSize != 10000 {
			t.Fatalf("RESP%d: XCFGSET set %+v", proto, info.IdempotenceConfig)
		}
	}
}

func TestXCfgSetErrors(t *testing.T) {
	c, srv := newerClient(t, 2)
	expectRaw(t, c, "-ERR wrong number of arguments for 'xcfgset' command|", "XCFGSET")
	fields(t, c, "s", "1-0")
	expectRaw(t, c, "+OK|", "XCFGSET", "s", "IDMP-DURATION", "60", "IDMP-MAXSIZE", "50")
	const (
		noParam  = "-ERR At least one parameter must be specified|"
		notInt   = "-ERR value is not an integer or out of range|"
		duration = "-ERR IDMP-DURATION must be between 1 and 86400 seconds|"
		maxSize  = "-ERR IDMP-MAXSIZE must be between 1 and 10000 entries|"
	)
	for _, tc := range []struct {
		want string
		args []string
	}{
		{noParam, nil},
		{errSyntaxRaw, []string{"IDMP-DURATION"}},
		{errSyntaxRaw, []string{"IDMP-MAXSIZE"}},
		{errSyntaxRaw, []string{"INVALID"}},
		{errSyntaxRaw, []string{"INVALID", "5"}},
		{errSyntaxRaw, []string{"IDMP-DURATION", "5", "IDMP-MAXSIZE"}},
		{notInt, []string{"IDMP-DURATION", "A"}},
		{notInt, []string{"IDMP-DURATION", "*"}},
		{notInt, []string{"IDMP-DURATION", "-"}},
		{notInt, []string{"IDMP-DURATION", "+"}},
		{notInt, []string{"IDMP-DURATION", "120-5"}},
		{notInt, []string{"IDMP-DURATION", "3.14"}},
		{notInt, []string{"IDMP-DURATION", "000000000"}},
		{notInt, []string{"IDMP-DURATION", "IDMP-DURATION", "IDMP-DURATION"}},
		{notInt, []string{"IDMP-DURATION", "INVALID", "IDMP-MAXSIZE"}},
		{notInt, []string{"IDMP-MAXSIZE", "INVALID", "IDMP-DURATION"}},
		{notInt, []string{"IDMP-MAXSIZE", "3.14"}},
		{notInt, []string{"IDMP-MAXSIZE", "IDMP-MAXSIZE"}},
		{duration, []string{"IDMP-DURATION", "0"}},
		{duration, []string{"IDMP-DURATION", "-100"}},
		{duration, []string{"IDMP-DURATION", "86401"}},
		{duration, []string{"IDMP-MAXSIZE", "5", "IDMP-DURATION", "86401"}},
		{maxSize, []string{"IDMP-MAXSIZE", "0"}},
		{maxSize, []string{"IDMP-MAXSIZE", "-50"}},
		{maxSize, []string{"IDMP-MAXSIZE", "10001"}},
		{maxSize, []string{"IDMP-DURATION", "5", "IDMP-MAXSIZE", "10001"}},
		{"-ERR IDMP-DURATION specified multiple times|", []string{"IDMP-DURATION", "5", "IDMP-DURATION", "6"}},
		{"-ERR IDMP-DURATION specified multiple times|", []string{"IDMP-DURATION", "5", "IDMP-MAXSIZE", "6", "IDMP-DURATION", "x"}},
		{"-ERR IDMP-MAXSIZE specified multiple times|", []string{"IDMP-MAXSIZE", "5", "IDMP-MAXSIZE", "6"}},
	} {
		expectRaw(t, c, tc.want, append([]string{"XCFGSET", "s"}, tc.args...)...)
	}
	st, _ := srv.DB(0).Lookup("s")
	if info := st.IdempotenceInfo(); info.Duration.Seconds() != 60 || info.MaxSize != 50 {
		t.Fatalf("a refused XCFGSET changed the setting: %+v", info.IdempotenceConfig)
	}
	// The key is looked up before the arguments are read.
	expectRaw(t, c, "-ERR no such key|", "XCFGSET", "missing", "IDMP-DURATION", "0")
	expectRaw(t, c, "-ERR no such key|", "XCFGSET", "missing")
}

// COMMAND INFO and COMMAND DOCS of XCFGSET: Redis 8's
// src/commands/xcfgset.json (arity -2, flags write fast, @write @stream
// @fast, one RW update key at 1; two optional blocks of a pure token and
// an integer) written as Redis 7.0 writes such a command.
func TestXCfgSetCommandDocs(t *testing.T) {
	c, _ := newerClient(t, 2)
	expectRaw(t, c, "*1|*10|$7|xcfgset|:-2|*2|+write|+fast|:1|:1|:1|*3|+@write|+@stream|+@fast|*0|"+
		"*1|*6|$5|flags|*2|+RW|+update|$12|begin_search|*4|$4|type|$5|index|$4|spec|*2|$5|index|:1|"+
		"$9|find_keys|*4|$4|type|$5|range|$4|spec|*6|$7|lastkey|:0|$7|keystep|:1|$5|limit|:0|*0|",
		"COMMAND", "INFO", "xcfgset")
	// One block of the arguments; m2 and m3 are the map headers of two
	// and three pairs, set the flags set's (RESP2: arrays, RESP3: %, ~).
	block := func(m2, m3, m4, set, name, token, value string) string {
		return m4 + "|$4|name|$" + itoa(len(name)) + "|" + name + "|$4|type|$5|block|$5|flags|" + set + "1|+optional|$9|arguments|*2|" +
			m3 + "|$4|name|$" + itoa(len(name)) + "|" + strings.TrimSuffix(name, "-block") + "-token|$4|type|$10|pure-token|$5|token|$" + itoa(len(token)) + "|" + token + "|" +
			m2 + "|$4|name|$" + itoa(len(value)) + "|" + value + "|$4|type|$7|integer|"
	}
	head := "$7|summary|$52|Sets the IDMP configuration parameters for a stream.|$5|since|$5|8.6.0|$5|group|$6|stream|$10|complexity|$4|O(1)|$9|arguments|*3|"
	expectRaw(t, c, "*2|$7|xcfgset|*10|"+head+"*6|$4|name|$3|key|$4|type|$3|key|$14|key_spec_index|:0|"+
		block("*4", "*6", "*8", "*", "idmp-duration-block", "IDMP-DURATION", "duration")+
		block("*4", "*6", "*8", "*", "idmp-maxsize-block", "IDMP-MAXSIZE", "maxsize"),
		"COMMAND", "DOCS", "xcfgset")
	c3, _ := newerClient(t, 3)
	expectRaw(t, c3, "%1|$7|xcfgset|%5|"+head+"%3|$4|name|$3|key|$4|type|$3|key|$14|key_spec_index|:0|"+
		block("%2", "%3", "%4", "~", "idmp-duration-block", "IDMP-DURATION", "duration")+
		block("%2", "%3", "%4", "~", "idmp-maxsize-block", "IDMP-MAXSIZE", "maxsize"),
		"COMMAND", "DOCS", "xcfgset")
}

// bulkRaw and intRaw write a bulk string and an integer as expectRaw
// takes them ("|" for CRLF).
func bulkRaw(s string) string { return "$" + itoa(len(s)) + "|" + s + "|" }
func intRaw(n int) string     { return ":" + itoa(n) + "|" }

const (
	id0 = "1700000000000-0" // the auto IDs of newerClient's still clock
	id1 = "1700000000000-1"
	id2 = "1700000000000-2"
)

// XADD's IDMP and IDMPAUTO, as xaddCommand: a repeat replies the first
// add's ID and adds nothing (no trim either); IDMPAUTO's ID is the
// field/value pairs in any order; producers are apart.
func TestXAddIdmp(t *testing.T) {
	for _, proto := range []int{2, 3} {
		c, _ := newerClient(t, proto)
		null := "$-1|"
		if proto == 3 {
			null = "_|"
		}
		expectRaw(t, c, null, "XADD", "s", "NOMKSTREAM", "IDMP", "p1", "a", "*", "f", "v")
		expectRaw(t, c, ":0|", "EXISTS", "s")
		expectRaw(t, c, bulkRaw(id0), "XADD", "s", "IDMP", "p1", "a", "*", "f", "v")
		expectRaw(t, c, bulkRaw(id0), "XADD", "s", "idmp", "p1", "a", "MAXLEN", "0", "*", "f", "other")
		expectRaw(t, c, bulkRaw(id0), "XADD", "s", "NOMKSTREAM", "MAXLEN", "=", "0", "IDMP", "p1", "a", "*", "f", "v")
		expectRaw(t, c, ":1|", "XLEN", "s")
		expectRaw(t, c, bulkRaw(id1), "XADD", "s", "IDMP", "p2", "a", "*", "f", "v")
		expectRaw(t, c, bulkRaw(id2), "XADD", "s", "IDMPAUTO", "p1", "*", "x", "1", "y", "2")
		expectRaw(t, c, bulkRaw(id2), "XADD", "s", "KEEPREF", "IDMPAUTO", "p1", "*", "y", "2", "x", "1")
		expectRaw(t, c, "*1|*2|"+bulkRaw(id0)+"*2|$1|f|$1|v|", "XRANGE", "s", "-", id0)
		expectRaw(t, c, ":3|", "XLEN", "s")
		// XCFGSET with a new value forgets the IDs.
		expectRaw(t, c, "+OK|", "XCFGSET", "s", "IDMP-DURATION", "100")
		expectRaw(t, c, bulkRaw(id0), "XADD", "s", "IDMP", "p1", "a", "*", "f", "v")
		expectRaw(t, c, "+OK|", "XCFGSET", "s", "IDMP-DURATION", "50")
		expectRaw(t, c, bulkRaw("1700000000000-3"), "XADD", "s", "IDMP", "p1", "a", "*", "f", "v")
	}
}

// The errors of IDMP and IDMPAUTO, as streamParseAddOrTrimArgsOrReply
// writes them, in its order: each option as it is read, the ID, then the
// auto-ID rule; IDMP takes the two arguments after it, IDMPAUTO one.
func TestXAddIdmpErrors(t *testing.T) {
	c, _ := newerClient(t, 2)
	for _, tc := range []struct {
		want string
		args []string
	}{
		{errInvalidRaw, []string{"IDMP", "p1", "*", "f", "v"}},
		{"-ERR syntax error, IDMP/IDMPAUTO can be used only with auto-generated IDs|", []string{"IDMP", "p1", "i", "1-1", "f", "v"}},
		{"-ERR syntax error, IDMP/IDMPAUTO can be used only with auto-generated IDs|", []string{"IDMPAUTO", "p1", "5-*", "f", "v"}},
		{"-ERR syntax error, IDMP/IDMPAUTO can be used only with auto-generated IDs|", []string{"IDMPAUTO", "p1", "0-0", "f", "v"}},
		{"-ERR syntax error, IDMP/IDMPAUTO specified multiple times|", []string{"IDMP", "p1", "i", "IDMP", "p2", "j", "*", "f", "v"}},
		{"-ERR syntax error, IDMP/IDMPAUTO specified multiple times|", []string{"IDMPAUTO", "p1", "IDMP", "p2", "j", "*", "f", "v"}},
		{"-ERR syntax error, IDMP/IDMPAUTO specified multiple times|", []string{"IDMP", "p1", "i", "IDMPAUTO", "p2", "*", "f", "v"}},
		{"-ERR syntax error, IDMP requires a non-empty producer ID|", []string{"IDMP", "", "i", "*", "f", "v"}},
		{"-ERR syntax error, IDMP requires a non-empty idempotent ID|", []string{"IDMP", "p1", "", "*", "f", "v"}},
		{"-ERR syntax error, IDMPAUTO requires a non-empty producer ID|", []string{"IDMPAUTO", "", "*", "f", "v"}},
		{"-ERR wrong number of arguments for 'xadd' command|", []string{"IDMP", "p1", "f"}}, // no ID after it
		{"-ERR wrong number of arguments for 'xadd' command|", []string{"IDMP", "p1", "i", "*", "f"}},
		{"-ERR syntax error, LIMIT cannot be used without the special ~ option|", []string{"IDMP", "p1", "i", "MAXLEN", "1", "LIMIT", "5", "*", "f", "v"}},
	} {
		expectRaw(t, c, tc.want, append([]string{"XADD", "s"}, tc.args...)...)
	}
	expectRaw(t, c, ":0|", "EXISTS", "s")
}

// An IDMP add on a stream whose window passed adds again (the core's
// tests cover the rules of the window).
func TestXAddIdmpWindow(t *testing.T) {
	now := time.UnixMilli(1_700_000_000_000)
	var mu sync.Mutex
	srv := RunTWith(t, Options{Clock: func() time.Time { mu.Lock(); defer mu.Unlock(); return now }})
	c := newClientProto(t, srv.Addr(), 2)
	expectRaw(t, c, bulkRaw(id0), "XADD", "s", "IDMP", "p", "i", "*", "f", "v")
	expectRaw(t, c, "+OK|", "XCFGSET", "s", "IDMP-DURATION", "1")
	expectRaw(t, c, bulkRaw(id1), "XADD", "s", "IDMP", "p", "i", "*", "f", "v")
	mu.Lock()
	now = now.Add(999 * time.Millisecond)
	mu.Unlock()
	expectRaw(t, c, bulkRaw(id1), "XADD", "s", "IDMP", "p", "i", "*", "f", "v")
	mu.Lock()
	now = now.Add(time.Millisecond)
	mu.Unlock()
	expectRaw(t, c, bulkRaw("1700000001000-0"), "XADD", "s", "IDMP", "p", "i", "*", "f", "v")
}

// XINFO STREAM and FULL with the IDMP fields of Redis 8.6 after
// recorded-first-entry-id, and FULL's groups with Redis 8.8's
// nacked-count after pel-count; an entry given back by XNACK is pending
// to "" at time 0, as xinfoReplyWithStreamInfo writes them.
func TestXInfoStreamIdmpAndNacked(t *testing.T) {
	entry := func(id string) string { return "*2|" + bulkRaw(id) + "*2|$1|f|$1|v|" }
	for _, proto := range []int{2, 3} {
		c, _ := newerClient(t, proto)
		m := func(pairs int) string {
			if proto == 3 {
				return "%" + itoa(pairs) + "|"
			}
			return "*" + itoa(2*pairs) + "|"
		}
		// A stream that never used idempotence keeps Redis 7.0's reply,
		// which older clients parse.
		fields(t, c, "plain", "1-1")
		expectRaw(t, c, m(10)+bulkRaw("length")+intRaw(1)+bulkRaw("radix-tree-keys")+intRaw(1)+bulkRaw("radix-tree-nodes")+intRaw(2)+
			bulkRaw("last-generated-id")+bulkRaw("1-1")+bulkRaw("max-deleted-entry-id")+bulkRaw("0-0")+bulkRaw("entries-added")+intRaw(1)+
			bulkRaw("recorded-first-entry-id")+bulkRaw("1-1")+bulkRaw("groups")+intRaw(0)+
			bulkRaw("first-entry")+"*2|$3|1-1|*2|$1|f|$1|1|"+bulkRaw("last-entry")+"*2|$3|1-1|*2|$1|f|$1|1|",
			"XINFO", "STREAM", "plain")

		raw(t, c, "XADD", "s", "IDMP", "p1", "a", "*", "f", "v")
		raw(t, c, "XADD", "s", "IDMP", "p1", "a", "*", "f", "v")
		raw(t, c, "XADD", "s", "IDMPAUTO", "p2", "*", "f", "v")
		expectRaw(t, c, "+OK|", "XCFGSET", "s", "IDMP-MAXSIZE", "100", "IDMP-DURATION", "100")
		expectRaw(t, c, "+OK|", "XGROUP", "CREATE", "s", "g", "0")
		raw(t, c, "XREADGROUP", "GROUP", "g", "c", "STREAMS", "s", ">")
		expectRaw(t, c, ":1|", "XNACK", "s", "g", "FAIL", "IDS", "1", id0)
		head := bulkRaw("length") + intRaw(2) + bulkRaw("radix-tree-keys") + intRaw(1) + bulkRaw("radix-tree-nodes") + intRaw(2) +
			bulkRaw("last-generated-id") + bulkRaw(id1) + bulkRaw("max-deleted-entry-id") + bulkRaw("0-0") + bulkRaw("entries-added") + intRaw(2) +
			bulkRaw("recorded-first-entry-id") + bulkRaw(id0) +
			bulkRaw("idmp-duration") + intRaw(100) + bulkRaw("idmp-maxsize") + intRaw(100) +
			bulkRaw("pids-tracked") + intRaw(2) + bulkRaw("iids-tracked") + intRaw(2) +
			bulkRaw("iids-added") + intRaw(2) + bulkRaw("iids-duplicates") + intRaw(1)
		expectRaw(t, c, m(16)+head+bulkRaw("groups")+intRaw(1)+bulkRaw("first-entry")+entry(id0)+bulkRaw("last-entry")+entry(id1),
			"XINFO", "STREAM", "s")
		expectRaw(t, c, m(15)+head+bulkRaw("entries")+"*2|"+entry(id0)+entry(id1)+
			bulkRaw("groups")+"*1|"+m(8)+bulkRaw("name")+bulkRaw("g")+bulkRaw("last-delivered-id")+bulkRaw(id1)+
			bulkRaw("entries-read")+intRaw(2)+bulkRaw("lag")+intRaw(0)+bulkRaw("pel-count")+intRaw(2)+bulkRaw("nacked-count")+intRaw(1)+
			bulkRaw("pending")+"*2|*4|"+bulkRaw(id0)+"$0||:0|:1|*4|"+bulkRaw(id1)+bulkRaw("c")+":1700000000000|:1|"+
			bulkRaw("consumers")+"*1|"+m(5)+bulkRaw("name")+bulkRaw("c")+bulkRaw("seen-time")+":1700000000000|"+
			bulkRaw("active-time")+":1700000000000|"+bulkRaw("pel-count")+intRaw(1)+bulkRaw("pending")+"*1|*3|"+bulkRaw(id1)+":1700000000000|:1|",
			"XINFO", "STREAM", "s", "FULL")
	}
}

// idmpRawFields matches the six IDMP fields of an XINFO STREAM reply.
var idmpRawFields = regexp.MustCompile(`\$13\r\nidmp-duration\r\n:\d+\r\n\$12\r\nidmp-maxsize\r\n:\d+\r\n\$12\r\npids-tracked\r\n:\d+\r\n\$12\r\niids-tracked\r\n:\d+\r\n\$10\r\niids-added\r\n:\d+\r\n\$15\r\niids-duplicates\r\n:\d+\r\n`)

// withoutIdmpRaw returns the bytes of a reply with the IDMP fields of an
// XINFO STREAM reply in it taken out, and its map's length made Redis
// 7.0's, for tests that compare raw bytes with Redis 7.0.
func withoutIdmpRaw(b string) string {
	for _, h := range [][2]string{{"%16\r\n$6\r\nlength", "%10\r\n$6\r\nlength"}, {"%15\r\n$6\r\nlength", "%9\r\n$6\r\nlength"},
		{"*32\r\n$6\r\nlength", "*20\r\n$6\r\nlength"}, {"*30\r\n$6\r\nlength", "*18\r\n$6\r\nlength"}} {
		if strings.Contains(b, h[0]) && idmpRawFields.MatchString(b) {
			b = strings.Replace(b, h[0], h[1], 1)
		}
	}
	return idmpRawFields.ReplaceAllString(b, "")
}
