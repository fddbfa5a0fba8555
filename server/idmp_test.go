package server

import (
	"strings"
	"testing"
)

// Idempotent production (Redis 8.6), which the Redis 7.0 of the
// differential tests lacks: the exact bytes of XCFGSET's replies, as the
// tests of Redis's tests/unit/type/stream.tcl (the version with IDMP) and
// its src/commands/xcfgset.json give them (see the report of the branch
// for what could not be read from t_stream.c itself).

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
		// The limits, and a repeated option: the last counts.
		expectRaw(t, c, "+OK|", "XCFGSET", "s", "IDMP-DURATION", "86400", "IDMP-MAXSIZE", "1")
		expectRaw(t, c, "+OK|", "XCFGSET", "s", "IDMP-DURATION", "1", "IDMP-MAXSIZE", "10000", "IDMP-DURATION", "7")
		if info = st.IdempotenceInfo(); info.Duration.Seconds() != 7 || info.MaxSize != 10000 {
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
		noParam  = "-ERR At least one parameter (IDMP-DURATION or IDMP-MAXSIZE) is required|"
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
	} {
		expectRaw(t, c, tc.want, append([]string{"XCFGSET", "s"}, tc.args...)...)
	}
	st, _ := srv.DB(0).Lookup("s")
	if info := st.IdempotenceInfo(); info.Duration.Seconds() != 60 || info.MaxSize != 50 {
		t.Fatalf("a refused XCFGSET changed the setting: %+v", info.IdempotenceConfig)
	}
	// The arguments are checked before the key is looked up.
	expectRaw(t, c, duration, "XCFGSET", "missing", "IDMP-DURATION", "0")
	expectRaw(t, c, noParam, "XCFGSET", "missing")
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
