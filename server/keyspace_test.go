package server

import "testing"

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
