package server

import (
	"errors"
	"math"
	"runtime/debug"
	"testing"
)

// Past MaxMemory, as past Redis's maxmemory under noeviction, the
// commands that add data get Redis's OOM error, any command queued in
// MULTI is refused (and EXEC then aborts), an EXEC of a command that adds
// data aborts, and the others go on. Compared reply by reply with a
// redis-server started with maxmemory 1 byte, which is always past it, as
// is the xstream server with MaxMemory 1.
func TestMaxMemoryLikeRedis(t *testing.T) {
	redisAddr := redisWithT(t, "--maxmemory", "1", "--maxmemory-policy", "noeviction")
	srv := RunTWith(t, Options{MaxMemory: 1})
	real, xs := newClient(t, redisAddr), newClient(t, srv.Addr())
	for _, args := range [][]string{
		{"XADD", "s", "*", "f", "v"},
		{"XGROUP", "CREATE", "s", "g", "$", "MKSTREAM"},
		{"XSETID", "s", "5-5"},
		{"XLEN", "s"},
		{"XRANGE", "s", "-", "+"},
		{"XACK", "s", "g", "1-1"},
		{"XDEL", "s", "1-1"},
		{"XTRIM", "s", "MAXLEN", "0"},
		{"DEL", "s"},
		{"PING"},
		{"MULTI"}, {"XLEN", "s"}, {"EXEC"},
		{"MULTI"}, {"PING"}, {"DISCARD"},
		{"MULTI"}, {"EXEC"},
		{"XREAD", "STREAMS", "s", "0"},
	} {
		want, got := real.do(t, args...), xs.do(t, args...)
		if !equalReplies(want, got) {
			t.Fatalf("%q:\n  redis:   %v\n  xstream: %v", args, want, got)
		}
	}
}

// Under MaxMemory everything goes on; past it the writes that add data
// are refused and EXEC of one aborts, however it was queued before.
// Start sets the runtime's memory limit to MaxMemory and Close puts the
// one before back.
func TestMaxMemoryUnderAndOver(t *testing.T) {
	before := debug.SetMemoryLimit(-1)
	srv := New(Options{MaxMemory: 64 << 20})
	used := uint64(0)
	srv.usedMemory = func() uint64 { return used }
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	if got := debug.SetMemoryLimit(-1); got != 64<<20 {
		t.Errorf("memory limit %d while the server runs, want %d", got, 64<<20)
	}
	c := newClient(t, srv.Addr())
	expect(t, c, `$"1-1"`, "XADD", "s", "1-1", "f", "v")
	expect(t, c, `+"OK"`, "MULTI")
	expect(t, c, `+"QUEUED"`, "XADD", "s", "2-1", "f", "v")
	used = 64<<20 + 1
	expect(t, c, `-"EXECABORT Transaction discarded because of: OOM command not allowed when used memory > 'maxmemory'."`, "EXEC")
	expect(t, c, `-"OOM command not allowed when used memory > 'maxmemory'."`, "XADD", "s", "3-1", "f", "v")
	expect(t, c, `:1`, "XLEN", "s")
	expect(t, c, `:1`, "XDEL", "s", "1-1")
	used = 64 << 20
	expect(t, c, `$"4-1"`, "XADD", "s", "4-1", "f", "v")
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	if got := debug.SetMemoryLimit(-1); got != before {
		t.Errorf("memory limit %d after Close, want %d as before", got, before)
	}
}

// ParseMemory reads sizes as Redis's memtoull: digits and a unit in any
// case; no sign, space, point or other unit; nothing past MaxInt64.
func TestParseMemory(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "1024": 1024, "1k": 1000, "1kb": 1024, "100MB": 100 << 20, "10Mb": 10 << 20, "2m": 2e6,
		"1g": 1e9, "3gb": 3 << 30, "7b": 7, "1B": 1, "0b": 0, "00012k": 12000,
		"9223372036854775807": math.MaxInt64, "8589934591gb": 8589934591 << 30, "9223372036854775k": 9223372036854775000,
	} {
		if got, err := ParseMemory(in); err != nil || got != want {
			t.Errorf("ParseMemory(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "mb", "b", "-1", "+5", " 100", "100 ", "1 kb", "1.5gb", "1e3", "0x10", "1_000", "1tb", "1kbb", "x",
		"9223372036854775808", "8589934592gb", "9223372036854776k", "99999999999gb", "18446744073709551616"} {
		if _, err := ParseMemory(in); !errors.Is(err, ErrBadMemory) {
			t.Errorf("ParseMemory(%q): %v, want ErrBadMemory", in, err)
		}
	}
}
