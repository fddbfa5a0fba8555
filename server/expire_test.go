package server

import (
	"regexp"
	"testing"
)

// Key expiry. The differential tests use times far from now (or in the
// past), so that both servers agree whatever the test's speed; the
// tests of what happens as time passes move the xstream server's clock.

var avgTTL = regexp.MustCompile(`avg_ttl=\d+`)

// keyspace returns INFO keyspace of both servers, with avg_ttl (an
// estimate Redis makes from the samples of its active cycle) hidden, and
// fails the test unless they are the same.
func (p *pair) keyspace() {
	p.t.Helper()
	want := avgTTL.ReplaceAllString(p.real.do(p.t, "INFO", "keyspace").s, "")
	got := avgTTL.ReplaceAllString(p.xs.do(p.t, "INFO", "keyspace").s, "")
	if want != got {
		p.t.Fatalf("INFO keyspace:\n  redis:   %q\n  xstream: %q", want, got)
	}
}

func TestDiffExpire(t *testing.T) {
	p := newPair(t)
	p.do("XADD", "k", "1-1", "f", "v")
	p.do("TTL", "k")
	p.do("PTTL", "k")
	p.do("EXPIRETIME", "k")
	p.do("PEXPIRETIME", "k")
	p.do("EXPIRE", "k", "1000")
	p.do("TTL", "k")
	p.keyspace()
	p.do("PEXPIREAT", "k", "1900000000600")
	p.do("EXPIRETIME", "k")
	p.do("PEXPIRETIME", "k")
	p.do("EXPIREAT", "k", "1900000001")
	p.do("PEXPIRETIME", "k")
	p.do("PEXPIRE", "k", "5000000")
	p.do("TTL", "k")

	// NX, XX, GT, LT.
	p.do("EXPIREAT", "k", "2000000000", "NX")
	p.do("EXPIREAT", "k", "2000000000", "XX")
	p.do("EXPIRETIME", "k")
	p.do("EXPIREAT", "k", "1999999999", "GT")
	p.do("EXPIREAT", "k", "2000000000", "GT")
	p.do("EXPIREAT", "k", "2000000001", "GT")
	p.do("EXPIREAT", "k", "2000000001", "LT")
	p.do("EXPIREAT", "k", "2000000000", "lt")
	p.do("EXPIRETIME", "k")
	p.do("PERSIST", "k")
	p.do("PERSIST", "k")
	p.do("TTL", "k")
	p.do("EXPIREAT", "k", "2000000000", "XX")
	p.do("EXPIREAT", "k", "2000000000", "GT") // no expiry is infinite
	p.do("EXPIREAT", "k", "2000000000", "LT")
	p.do("EXPIREAT", "k", "2000000000", "NX")
	p.do("EXPIREAT", "k", "2100000000", "XX", "GT")
	p.do("EXPIRETIME", "k")
	p.keyspace()

	// Missing keys.
	for _, cmd := range []string{"EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"} {
		p.do(cmd, "nosuch", "100")
	}
	for _, cmd := range []string{"TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME", "PERSIST"} {
		p.do(cmd, "nosuch")
	}

	// A time already past removes the key.
	p.do("XADD", "gone", "1-1", "f", "v")
	p.do("EXPIREAT", "gone", "1")
	p.do("EXISTS", "gone")
	p.do("XADD", "gone", "1-1", "f", "v")
	p.do("PEXPIRE", "gone", "-1")
	p.do("EXISTS", "gone")
	p.do("XADD", "gone", "1-1", "f", "v")
	p.do("EXPIRE", "gone", "0", "NX")
	p.do("KEYS", "*")
	p.keyspace()

	// RENAME keeps the source's expiry and drops the destination's.
	p.do("XADD", "src", "1-1", "f", "v")
	p.do("EXPIREAT", "src", "2200000000")
	p.do("RENAME", "src", "dst")
	p.do("EXPIRETIME", "dst")
	p.do("XADD", "src", "1-1", "f", "v")
	p.do("RENAME", "src", "dst")
	p.do("TTL", "dst")
	p.keyspace()
}

// TestDiffExpireBadInput: each bad input gets Redis's error, and the key
// and its expiry stay as they were.
func TestDiffExpireBadInput(t *testing.T) {
	p := newPair(t)
	p.do("XADD", "k", "1-1", "f", "v")
	p.do("EXPIREAT", "k", "2000000000")
	for _, cmd := range []string{"EXPIRE", "PEXPIRE", "EXPIREAT", "PEXPIREAT"} {
		p.do(cmd, "k", "10", "NX", "XX")
		p.do(cmd, "k", "10", "nx", "gt")
		p.do(cmd, "k", "10", "NX", "LT")
		p.do(cmd, "k", "10", "GT", "LT")
		p.do(cmd, "k", "10", "foo")
		p.do(cmd, "k", "abc", "foo") // the options are checked first
		p.do(cmd, "k", "abc")
		p.do(cmd, "k", "1.5")
		p.do(cmd, "k", "9223372036854775807")
		p.do(cmd, "k", "-9223372036854775808")
		p.do(cmd, "nosuch", "9223372036854775807")
		p.do(cmd, "k")
		p.do("EXPIRETIME", "k")
	}
	for _, cmd := range []string{"TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME", "PERSIST"} {
		p.do(cmd)
		p.do(cmd, "k", "extra")
	}
	p.do("EXPIRETIME", "k")
	p.keyspace()
}

// TestDiffExpireBlocked: a blocked XREADGROUP on a key that expires
// ends with Redis's UNBLOCKED error; a blocked XREAD goes on waiting for a
// new stream of that name.
func TestDiffExpireBlocked(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		p.do("XGROUP", "CREATE", "s", "g", "$", "MKSTREAM")
		b := p.block("XREADGROUP", "GROUP", "g", "alice", "BLOCK", "0", "STREAMS", "s", ">")
		p.waitBlocked("s", 1)
		p.do("EXPIREAT", "s", "1")
		p.wait(b)

		p.do("XADD", "s", "5", "f", "v")
		b = p.block("XREAD", "BLOCK", "0", "STREAMS", "s", "$")
		p.waitBlocked("s", 1)
		p.do("PEXPIRE", "s", "0")
		p.do("XADD", "s", "3", "f", "v") // before $: not served
		p.do("XADD", "s", "7", "f", "v")
		p.wait(b)
	})
}
