package server

import (
	"runtime"
	"strings"
	"testing"
	"time"
)

// Keyspace commands on stream keys, compared with a real Redis.

func TestDiffRename(t *testing.T) {
	p := newPair(t)
	p.do("XADD", "a", "1-1", "f", "1")
	p.do("XADD", "a", "2-1", "f", "2")
	p.do("XGROUP", "CREATE", "a", "g", "0")
	p.do("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "a", ">")
	p.do("XADD", "b", "5-1", "f", "b")

	p.do("RENAME", "a", "z")
	p.do("EXISTS", "a", "z")
	p.do("XRANGE", "z", "-", "+")
	p.do("XPENDING", "z", "g", "-", "+", "10")
	p.do("XINFO", "STREAM", "z")
	p.do("XREADGROUP", "GROUP", "g", "c", "STREAMS", "z", ">")

	p.do("RENAMENX", "z", "b") // b exists: 0, nothing changes
	p.do("XRANGE", "b", "-", "+")
	p.do("RENAMENX", "z", "y")
	p.do("RENAMENX", "y", "y")
	p.do("RENAME", "y", "y")
	p.do("RENAME", "y", "b") // replaces b
	p.do("XRANGE", "b", "-", "+")
	p.do("KEYS", "*")

	// Bad input: a missing key or wrong arity, and nothing changes.
	p.do("RENAME", "nosuch", "b")
	p.do("RENAMENX", "nosuch", "b")
	p.do("RENAME", "nosuch", "nosuch")
	p.do("RENAME", "b")
	p.do("RENAMENX", "b", "c", "d")
	p.do("KEYS", "*")
	p.do("XRANGE", "b", "-", "+")
}

// TestDiffRenameBlocked: readers blocked on the source or the
// destination of a RENAME end as in Redis 7.0 (Redis's stream-cgroups.tcl
// "RENAME can unblock XREADGROUP with data" and "... with -NOGROUP").
func TestDiffRenameBlocked(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		// XREADGROUP on the destination, which the renamed stream's
		// group serves.
		p.do("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
		b := p.block("XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">")
		p.waitBlocked("s", 1)
		p.do("XGROUP", "CREATE", "s2", "g", "$", "MKSTREAM")
		p.do("XADD", "s2", "100", "f1", "v1")
		p.do("RENAME", "s2", "s")
		p.wait(b)

		// ... where the renamed stream has no such group: NOGROUP.
		p.do("DEL", "s")
		p.do("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
		b = p.block("XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">")
		p.waitBlocked("s", 1)
		p.do("XADD", "s2", "100", "f1", "v1")
		p.do("RENAME", "s2", "s")
		p.wait(b)

		// XREADGROUP on the source: the key no longer exists.
		p.do("DEL", "s", "s2")
		p.do("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
		b = p.block("XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">")
		p.waitBlocked("s", 1)
		p.do("RENAME", "s", "s2")
		p.wait(b)

		// XREAD on the destination reads the renamed stream's entries
		// after its ID ...
		p.do("DEL", "s", "s2")
		p.do("XADD", "s", "5", "f", "v")
		p.do("XADD", "s2", "100", "f", "v")
		b = p.block("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
		p.waitBlocked("s", 1)
		p.do("RENAME", "s2", "s")
		p.wait(b)

		// ... and XREAD on the source waits for a new stream of that
		// name, not for the renamed one.
		p.do("DEL", "s", "s2")
		p.do("XADD", "s", "5", "f", "v")
		b = p.block("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
		p.waitBlocked("s", 1)
		p.do("RENAME", "s", "s2")
		p.do("XADD", "s2", "6", "f", "v")
		p.do("XADD", "s", "7", "f", "v")
		p.wait(b)
	})
}

func TestDiffCopy(t *testing.T) {
	p := newPair(t)
	p.do("XADD", "a", "1-1", "f", "1")
	p.do("XADD", "a", "2-1", "f", "2")
	p.do("XADD", "a", "3-1", "f", "3")
	p.do("XDEL", "a", "3-1")
	p.do("XGROUP", "CREATE", "a", "g", "0")
	p.do("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "a", ">")
	p.do("XGROUP", "CREATECONSUMER", "a", "g", "idle")
	p.do("EXPIREAT", "a", "2100000000")

	p.do("COPY", "a", "b")
	p.do("XINFO", "STREAM", "b", "FULL")
	p.do("XPENDING", "b", "g", "-", "+", "10")
	p.do("EXPIRETIME", "b")
	// The copy is a stream of its own.
	p.do("XADD", "b", "4-1", "f", "4")
	p.do("XACK", "b", "g", "1-1")
	p.do("XLEN", "a")
	p.do("XPENDING", "a", "g")

	p.do("XADD", "c", "9-1", "f", "c")
	p.do("COPY", "a", "c") // c exists: 0
	p.do("XRANGE", "c", "-", "+")
	p.do("COPY", "a", "c", "REPLACE")
	p.do("XRANGE", "c", "-", "+")
	p.do("COPY", "a", "a", "DB", "3") // another DB: the same name is fine
	p.do("COPY", "a", "x", "db", "3", "replace")
	p.do("SELECT", "3")
	p.do("KEYS", "*")
	p.do("XINFO", "STREAM", "a", "FULL")
	p.do("EXPIRETIME", "x")
	p.do("SELECT", "0")
	p.keyspace()

	// Bad input: Redis's errors, and nothing changes.
	p.do("COPY", "nosuch", "z")
	p.do("COPY", "a", "a")
	p.do("COPY", "a", "a", "DB", "0")
	p.do("COPY", "a", "z", "DB", "16")
	p.do("COPY", "a", "z", "DB", "-1")
	p.do("COPY", "a", "z", "DB", "x")
	p.do("COPY", "a", "z", "DB", "99", "FOO")         // the DB is checked as it is read
	p.do("COPY", "a", "z", "DB", "4294967296", "FOO") // past an int
	p.do("COPY", "a", "z", "DB")
	p.do("COPY", "a", "z", "FOO")
	p.do("COPY", "a")
	p.do("KEYS", "*")
	p.keyspace()
}

// TestDiffCopyBlocked: a blocked reader of the destination is served by
// the copy, as in Redis 7.0.
func TestDiffCopyBlocked(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		p.do("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
		b := p.block("XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">")
		p.waitBlocked("s", 1)
		p.do("XGROUP", "CREATE", "s2", "g", "$", "MKSTREAM")
		p.do("XADD", "s2", "100", "f1", "v1")
		p.do("COPY", "s2", "s", "REPLACE")
		p.wait(b)

		p.do("DEL", "s", "s2")
		p.do("XADD", "s2", "100", "f1", "v1")
		b = p.block("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
		p.waitBlockedClients(1) // on a key that does not exist yet
		p.do("COPY", "s2", "s")
		p.wait(b)
	})
}

// waitBlockedClients returns once both servers report n blocked clients
// in INFO (for a read blocked on a key that does not exist, which no
// stream's Blocked counts).
func (p *pair) waitBlockedClients(n int) {
	p.t.Helper()
	deadline := time.Now().Add(time.Minute)
	want := "blocked_clients:" + itoa(n) + "\r"
	for _, c := range []*client{p.real, p.xs} {
		for !strings.Contains(c.do(p.t, "INFO", "clients").s, want) {
			if time.Now().After(deadline) {
				p.t.Fatalf("%d clients never blocked", n)
			}
			runtime.Gosched()
		}
	}
}
