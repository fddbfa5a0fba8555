package server

import (
	"strconv"
	"testing"
)

// Differential tests for what Redis 7.0's tcl stream suite (stream.tcl,
// stream-cgroups.tcl) found the server doing differently from Redis, so
// that a run of go test checks it without the suite.

// TestDiffApproxTrimDefaultLimit: a "~" trim without LIMIT removes at most
// 100 nodes of stream-node-max-entries, as CONFIG SET left it.
func TestDiffApproxTrimDefaultLimit(t *testing.T) {
	p := newPair(t)
	t.Cleanup(func() { p.real.do(t, "CONFIG", "SET", "stream-node-max-entries", "100") })
	for _, nodeEntries := range []string{"1", "3"} {
		p.do("CONFIG", "SET", "stream-node-max-entries", nodeEntries)
		p.do("DEL", "s")
		for i := range 400 {
			p.do("XADD", "s", strconv.Itoa(i+1)+"-0", "f", "v")
		}
		p.do("XTRIM", "s", "MAXLEN", "~", "1")
		p.do("XLEN", "s")
		p.do("XADD", "s", "MAXLEN", "~", "0", "1000-0", "f", "v")
		p.do("XLEN", "s")
	}
}
