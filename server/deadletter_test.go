package server

import (
	"strings"
	"testing"
	"time"

	"github.com/xstreamgo/xstream"
)

// XGROUPCFG, xstream's own command for a group's dead-letter policy, and
// the fields XINFO GROUPS adds for a group that has one. A group without
// a policy keeps Redis's reply byte for byte.

const plainGroupsRaw = "*1|*12|$4|name|$3|grp|$9|consumers|:0|$7|pending|:0|$17|last-delivered-id|$3|0-0|$12|entries-read|$-1|$3|lag|:2|"

// dlGroups is the XINFO GROUPS reply (RESP2) of group grp of a two-entry
// stream with the dead-letter fields, the start given.
func dlGroups(start, max, stream, moved string) string {
	return "*1|*18|$4|name|$3|grp|" + start +
		"$14|max-deliveries|:" + max + "|$18|dead-letter-stream|$" + itoa(len(stream)) + "|" + stream + "|$13|dead-lettered|:" + moved + "|"
}

func TestXGroupCfg(t *testing.T) {
	c, _ := newerClient(t, 2)
	fields(t, c, "s", "1-0", "2-0")
	expectRaw(t, c, "+OK|", "XGROUP", "CREATE", "s", "grp", "0")
	expectRaw(t, c, plainGroupsRaw, "XINFO", "GROUPS", "s")
	expectRaw(t, c, "+OK|", "XGROUPCFG", "s", "grp", "MAXDELIVER", "0")
	expectRaw(t, c, plainGroupsRaw, "XINFO", "GROUPS", "s") // no policy, no dead letters: Redis's reply

	expectRaw(t, c, "+OK|", "XGROUPCFG", "s", "grp", "deadletter", "dead", "maxdeliver", "2")
	expectRaw(t, c, dlGroups("$9|consumers|:0|$7|pending|:0|$17|last-delivered-id|$3|0-0|$12|entries-read|$-1|$3|lag|:2|", "2", "dead", "0"),
		"XINFO", "GROUPS", "s")

	raw(t, c, "XREADGROUP", "GROUP", "grp", "c1", "STREAMS", "s", ">")
	expectRaw(t, c, "*1|*2|$3|1-0|*2|$1|f|$1|1|", "XCLAIM", "s", "grp", "c2", "0", "1-0")
	// A third delivery of 1-0: moved to "dead" instead, and acknowledged.
	expectRaw(t, c, "*0|", "XCLAIM", "s", "grp", "c3", "0", "1-0")
	expectRaw(t, c, "*1|*2|$15|1700000000000-0|*12|$18|dead-letter-stream|$1|s|$17|dead-letter-group|$3|grp|$14|dead-letter-id|$3|1-0|"+
		"$20|dead-letter-consumer|$2|c2|$22|dead-letter-deliveries|$1|2|$1|f|$1|1|", "XRANGE", "dead", "-", "+")
	expectRaw(t, c, "*1|*4|$3|2-0|$2|c1|:0|:1|", "XPENDING", "s", "grp", "-", "+", "10")

	// XAUTOCLAIM takes 2-0 a second time; a history read would deliver
	// it a third: moved. The replies keep Redis's shape.
	expectRaw(t, c, "*3|$3|0-0|*1|*2|$3|2-0|*2|$1|f|$1|2|*0|", "XAUTOCLAIM", "s", "grp", "c3", "0", "0")
	expectRaw(t, c, "*1|*2|$1|s|*0|", "XREADGROUP", "GROUP", "grp", "c3", "STREAMS", "s", "0")
	expectRaw(t, c, ":2|", "XLEN", "dead")
	moved := "$9|consumers|:3|$7|pending|:0|$17|last-delivered-id|$3|2-0|$12|entries-read|:2|$3|lag|:0|"
	expectRaw(t, c, dlGroups(moved, "2", "dead", "2"), "XINFO", "GROUPS", "s")

	// Removed: the count stays, so the fields do.
	expectRaw(t, c, "+OK|", "XGROUPCFG", "s", "grp", "MAXDELIVER", "0")
	expectRaw(t, c, dlGroups(moved, "0", "", "2"), "XINFO", "GROUPS", "s")

	c3, _ := newerClient(t, 3)
	fields(t, c3, "s", "1-0", "2-0")
	expectRaw(t, c3, "+OK|", "XGROUP", "CREATE", "s", "grp", "0")
	expectRaw(t, c3, "+OK|", "XGROUPCFG", "s", "grp", "MAXDELIVER", "5", "DEADLETTER", "d")
	expectRaw(t, c3, "*1|%9|$4|name|$3|grp|$9|consumers|:0|$7|pending|:0|$17|last-delivered-id|$3|0-0|$12|entries-read|_|$3|lag|:2|"+
		"$14|max-deliveries|:5|$18|dead-letter-stream|$1|d|$13|dead-lettered|:0|", "XINFO", "GROUPS", "s")
}

func TestXGroupCfgErrors(t *testing.T) {
	c, _ := newerClient(t, 2)
	fields(t, c, "s", "1-0", "2-0")
	expectRaw(t, c, "+OK|", "XGROUP", "CREATE", "s", "grp", "0")
	for _, bad := range []struct {
		want string
		args []string
	}{
		{"-ERR wrong number of arguments for 'xgroupcfg' command|", []string{"s", "grp"}},
		{"-ERR no such key|", []string{"nokey", "grp", "MAXDELIVER", "1", "DEADLETTER", "d"}},
		{"-NOGROUP No such consumer group 'nogrp' for key name 's'|", []string{"s", "nogrp", "MAXDELIVER", "1", "DEADLETTER", "d"}},
		{"-ERR value is not an integer or out of range|", []string{"s", "grp", "MAXDELIVER", "x", "DEADLETTER", "d"}},
		{"-ERR MAXDELIVER must be >= 0 (0 removes the dead-letter policy)|", []string{"s", "grp", "MAXDELIVER", "-1", "DEADLETTER", "d"}},
		{"-ERR MAXDELIVER needs DEADLETTER, the name of the dead-letter stream|", []string{"s", "grp", "MAXDELIVER", "1"}},
		{"-ERR MAXDELIVER 0 removes the dead-letter policy: DEADLETTER goes with a MAXDELIVER of 1 or more|", []string{"s", "grp", "MAXDELIVER", "0", "DEADLETTER", "d"}},
		{"-ERR XGROUPCFG needs MAXDELIVER|", []string{"s", "grp", "DEADLETTER", "d"}},
		{"-ERR xstream: invalid argument: dead-letter policy: the dead-letter stream \"s\" is the group's own stream|", []string{"s", "grp", "MAXDELIVER", "1", "DEADLETTER", "s"}},
		{errSyntaxRaw, []string{"s", "grp", "FOO", "1"}},
		{errSyntaxRaw, []string{"s", "grp", "MAXDELIVER", "1", "MAXDELIVER", "2"}},
		{errSyntaxRaw, []string{"s", "grp", "MAXDELIVER", "1", "DEADLETTER"}},
	} {
		expectRaw(t, c, bad.want, append([]string{"XGROUPCFG"}, bad.args...)...)
	}
	expectRaw(t, c, plainGroupsRaw, "XINFO", "GROUPS", "s") // nothing changed
	expectRaw(t, c, ":0|", "EXISTS", "d", "nokey")
}

// The policy, the moves and the count survive a restart of a server with
// a directory.
func TestXGroupCfgDurable(t *testing.T) {
	dir := t.TempDir()
	now := time.UnixMilli(1_700_000_000_000)
	opts := Options{Dir: dir, AppendFsync: xstream.SyncAlways, Clock: func() time.Time { return now }}
	srv := New(opts)
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	c := newClientProto(t, srv.Addr(), 2)
	fields(t, c, "s", "1-0", "2-0")
	expectRaw(t, c, "+OK|", "XGROUP", "CREATE", "s", "grp", "0")
	expectRaw(t, c, "+OK|", "XGROUPCFG", "s", "grp", "MAXDELIVER", "1", "DEADLETTER", "dead")
	raw(t, c, "XREADGROUP", "GROUP", "grp", "c1", "STREAMS", "s", ">")
	expectRaw(t, c, "*0|", "XCLAIM", "s", "grp", "c2", "0", "1-0")
	groups, dead := raw(t, c, "XINFO", "GROUPS", "s"), raw(t, c, "XRANGE", "dead", "-", "+")
	if !strings.Contains(groups, "dead-lettered\r\n:1") {
		t.Fatalf("XINFO GROUPS: %q", groups)
	}
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}

	srv = RunTWith(t, opts)
	c = newClientProto(t, srv.Addr(), 2)
	if got := raw(t, c, "XINFO", "GROUPS", "s"); got != groups {
		t.Fatalf("XINFO GROUPS after a restart:\n  got  %q\n  want %q", got, groups)
	}
	if got := raw(t, c, "XRANGE", "dead", "-", "+"); got != dead {
		t.Fatalf("XRANGE dead after a restart:\n  got  %q\n  want %q", got, dead)
	}
	expectRaw(t, c, "*0|", "XCLAIM", "s", "grp", "c2", "0", "2-0") // the policy still acts
	expectRaw(t, c, ":2|", "XLEN", "dead")
}
