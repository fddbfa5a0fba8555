package server

import "testing"

// Hand-written differential scenarios: every command, option and error the
// server serves, compared reply by reply with a real Redis.

func TestDiffNoRedisCommandDiffers(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		want := p.real.do(t, "XREAD", "STREAMS", "s", "+")
		got := p.xs.do(t, "XREAD", "STREAMS", "s", "+")
		// Redis 7.0 has no XREAD "+" (7.4 added it): the harness must see the
		// difference, or it compares nothing.
		if equalReplies(want, got) {
			t.Fatalf("replies %v and %v should differ", want, got)
		}
	})
}

func TestDiffXAdd(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		p.script(`
XADD s 1-1 a 1
XADD s 1-1 a 1
XADD s 1-0 a 1
XADD s 1 a 1
XADD s 2 a 1 b 2
XADD s 2-* a 1
XADD s 1-* a 1
XADD s 3-5 a
XADD s 3-5 a 1 b
XADD s
XADD s 3-5
XADD s 0-0 a 1
XADD t 0-* a 1
XADD t 0-* a 1
XADD u 0 a 1
XADD s - a 1
XADD s + a 1
XADD s abc a 1
XADD s 1-x a 1
XADD s 18446744073709551616 a 1
XADD s -1 a 1
XADD s 1--1 a 1
XADD nomk NOMKSTREAM 1-1 a 1
EXISTS nomk
XADD s NOMKSTREAM 5-1 a 1
XADD s MAXLEN 2 6-1 a 1
XLEN s
XADD s MAXLEN = 1 7-1 a 1
XRANGE s - +
XADD s MAXLEN -1 8-1 a 1
XADD s MAXLEN x 8-1 a 1
XADD s MAXLEN 1 MINID 0 8-1 a 1
XADD s MINID 7-1 8-1 a 1
XADD s MINID bad 9-1 a 1
XADD s LIMIT 10 9-1 a 1
XADD s MAXLEN 1 LIMIT 10 9-1 a 1
XADD s MAXLEN ~ 1 LIMIT -1 9-1 a 1
XADD s MAXLEN ~ 1 LIMIT x 9-1 a 1
XADD s MAXLEN 1 LIMIT 0 9-1 a 1
XADD s MAXLEN ~ 1 LIMIT 0 9-1 a 1
XADD s MAXLEN ~ 0 10-1 a 1
XLEN s
XADD s MAXLEN
XADD s MAXLEN 5
XADD s FOO 11-1 a 1
XADD s 18446744073709551615-18446744073709551615 a 1
XADD s 11-1 a 1
XADD s * a 1
XADD s 18446744073709551615-* a 1
XINFO STREAM s
`)
	})
}

func TestDiffXAddApproxTrim(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		for i := 1; i <= 350; i++ {
			p.do("XADD", "s", itoa(i)+"-1", "f", "v")
		}
		p.script(`
XADD s MAXLEN ~ 200 351-1 f v
XLEN s
XADD s MAXLEN ~ 10 LIMIT 100 352-1 f v
XLEN s
XTRIM s MAXLEN ~ 10 LIMIT 99
XLEN s
XTRIM s MINID ~ 300
XLEN s
XTRIM s MAXLEN ~ 0
XLEN s
XTRIM s MAXLEN 0
XLEN s
XINFO STREAM s
`)
	})
}

func TestDiffXRange(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		p.script(`
XRANGE missing - +
XREVRANGE missing + -
XADD s 1-1 a 1
XADD s 1-2 b 2
XADD s 2-0 c 3 d 4
XADD s 3-5 e 5
XADD s 18446744073709551615-18446744073709551614 z 0
XRANGE s - +
XREVRANGE s + -
XRANGE s 1 1
XRANGE s 1 2
XRANGE s (1-1 +
XRANGE s - (2-0
XRANGE s (1 +
XRANGE s (- +
XRANGE s - (+
XRANGE s (18446744073709551615-18446744073709551615 +
XRANGE s - (0-0
XREVRANGE s (3-5 -
XREVRANGE s + (1-1
XRANGE s - + COUNT 2
XRANGE s - + COUNT 0
XRANGE s - + COUNT -3
XRANGE s - + COUNT x
XRANGE s - + COUNT
XRANGE s - + LIMIT 1
XRANGE s - + COUNT 1 COUNT 2
XREVRANGE s + - COUNT 2
XREVRANGE s + - COUNT 0
XRANGE s 3 1
XRANGE s x +
XRANGE s - x
XRANGE s ( +
XRANGE s 1-x +
XRANGE s
XRANGE s -
XRANGE s 2-* +
`)
	})
}

func TestDiffXLenXDel(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		p.script(`
XLEN missing
XDEL missing 1-1
XDEL missing bad
XADD s 1-1 a 1
XADD s 2-1 a 1
XADD s 3-1 a 1
XDEL s 2-1 2-1 9-9
XDEL s 2-1
XDEL s bad
XDEL s 1-1 bad
XLEN s
XDEL s
XINFO STREAM s
XDEL s 3-1
XDEL s 1
XLEN s
XINFO STREAM s
XRANGE s - +
EXISTS s
XLEN s a
`)
	})
}

func TestDiffXTrim(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		p.script(`
XTRIM missing MAXLEN 1
XTRIM missing FOO
XTRIM missing FOO 1
XTRIM missing MINID bad
XTRIM missing MAXLEN 1 LIMIT 5
XTRIM missing
`)
		for i := 1; i <= 10; i++ {
			p.do("XADD", "s", itoa(i)+"-0", "f", "v")
		}
		p.script(`
XTRIM s
XTRIM s MAXLEN
XTRIM s FOO 1
XTRIM s MAXLEN 8
XTRIM s MAXLEN = 7
XTRIM s MINID 4
XTRIM s MINID = (5
XTRIM s MINID 5-1
XTRIM s MAXLEN -1
XTRIM s MAXLEN 1 MINID 1
XTRIM s MAXLEN 1 LIMIT 1
XTRIM s MAXLEN ~ 1 LIMIT 1
XTRIM s MAXLEN 1 FOO
XTRIM s MAXLEN 100
XLEN s
XTRIM s MINID 0
XTRIM s MAXLEN 0
XLEN s
XINFO STREAM s
`)
	})
}

func TestDiffXSetID(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		p.script(`
XSETID missing 1-1
XSETID missing bad
XADD s 5-1 a 1
XADD s 6-1 a 1
XSETID s 5-1
XSETID s 6-0
XSETID s 6-1
XSETID s 10
XINFO STREAM s
XSETID s 20-0 ENTRIESADDED 1
XSETID s 20-0 ENTRIESADDED -1
XSETID s 20-0 ENTRIESADDED x
XSETID s 20-0 ENTRIESADDED 50 MAXDELETEDID 10-0
XINFO STREAM s
XSETID s 20-0 MAXDELETEDID 30-0
XSETID s 15-0
XSETID s 20-0 MAXDELETEDID bad
XSETID s 20-0 FOO 1
XSETID s 20-0 ENTRIESADDED
XADD s 20-0 a 1
XADD s 20-* a 1
XDEL s 5-1
XSETID s -
XSETID s +
XINFO STREAM s
`)
	})
}

func TestDiffXRead(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		p.script(`
XREAD STREAMS missing 0
XREAD STREAMS missing $
XADD s 1-1 a 1
XADD s 2-1 b 2
XADD t 1-1 c 3
XREAD STREAMS s 0
XREAD STREAMS s t 0 0
XREAD STREAMS s t 1-1 0
XREAD STREAMS s t 2-1 1-1
XREAD COUNT 1 STREAMS s t 0 0
XREAD COUNT 0 STREAMS s 0
XREAD COUNT -1 STREAMS s 0
XREAD COUNT x STREAMS s 0
XREAD STREAMS s $
XREAD STREAMS s
XREAD STREAMS s t 0
XREAD s 0
XREAD COUNT 1 s 0
XREAD STREAMS s bad
XREAD STREAMS s >
XREAD STREAMS s -
XREAD STREAMS s (1
XREAD BLOCK -1 STREAMS s 0
XREAD BLOCK x STREAMS s 0
XREAD BLOCK 10 STREAMS s 0
XREAD BLOCK 1 STREAMS s 2-1
XREAD GROUP g c STREAMS s 0
XREAD NOACK STREAMS s 0
XREAD FOO STREAMS s 0
XREAD COUNT 1
XREAD STREAMS s 18446744073709551615-18446744073709551615
`)
	})
}

func TestDiffXGroup(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		p.script(`
XGROUP
XGROUP FOO
XGROUP HELP
XGROUP HELP x
XGROUP CREATE s g
XGROUP CREATE s g $
XGROUP CREATE s g $ MKSTREAM
XGROUP CREATE s g $ MKSTREAM
XGROUP CREATE s g2 0
XGROUP CREATE s g3 bad
XGROUP CREATE s g3 -
XGROUP CREATE s g3 +
XGROUP CREATE s g3 5 ENTRIESREAD 2
XGROUP CREATE s g4 5 ENTRIESREAD -2
XGROUP CREATE s g4 5 ENTRIESREAD -1
XGROUP CREATE s g5 5 ENTRIESREAD x
XGROUP CREATE s g5 5 FOO
XGROUP CREATE s g5 5 MKSTREAM ENTRIESREAD 1 MKSTREAM
XGROUP CREATE s g6 5 MKSTREAM ENTRIESREAD 1 MKSTREAM x
XGROUP CREATE new g bad MKSTREAM
EXISTS new
XINFO GROUPS s
XGROUP SETID s g 0
XGROUP SETID s nog 0
XGROUP SETID missing g 0
XGROUP SETID s g bad
XGROUP SETID s g -
XGROUP SETID s g +
XGROUP SETID s g $ ENTRIESREAD 3
XGROUP SETID s g 7 ENTRIESREAD
XGROUP SETID s g 7 ENTRIESREAD 1 x
XGROUP SETID s g 7 MKSTREAM
XINFO GROUPS s
XGROUP CREATECONSUMER s g alice
XGROUP CREATECONSUMER s g alice
XGROUP CREATECONSUMER s nog alice
XGROUP CREATECONSUMER missing g alice
XGROUP CREATECONSUMER s g
XGROUP DELCONSUMER s g alice
XGROUP DELCONSUMER s g alice
XGROUP DELCONSUMER s nog alice
XGROUP DESTROY s g
XGROUP DESTROY s g
XGROUP DESTROY missing g
XGROUP DESTROY s
XINFO GROUPS s
`)
	})
}

func TestDiffReadGroupAckPending(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		p.script(`
XREADGROUP GROUP g c STREAMS s >
XADD s 1-1 a 1
XADD s 2-1 b 2
XADD s 3-1 c 3
XADD t 1-1 d 4
XGROUP CREATE s g 0
XGROUP CREATE t g 0
XREADGROUP GROUP g c STREAMS s 0
XREADGROUP GROUP g c COUNT 1 STREAMS s >
XREADGROUP GROUP g c COUNT 1 STREAMS s t > >
XREADGROUP GROUP g c2 STREAMS s t > >
XREADGROUP GROUP g c2 STREAMS s t > >
XREADGROUP GROUP g c2 STREAMS s t 0 >
XREADGROUP GROUP g c STREAMS s 0
XREADGROUP GROUP g c STREAMS s 1-1
XREADGROUP GROUP g c COUNT 1 STREAMS s 0
XREADGROUP GROUP g c STREAMS s $
XREADGROUP GROUP g c STREAMS s +
XREADGROUP GROUP g c STREAMS s bad
XREADGROUP GROUP g c STREAMS s nog >
XREADGROUP GROUP nog c STREAMS s >
XREADGROUP GROUP g c STREAMS s
XREADGROUP STREAMS s >
XREADGROUP GROUP g c COUNT 1 STREAMS s t >
XREADGROUP GROUP g c NOACK STREAMS s >
XREADGROUP GROUP g c BLOCK 1 STREAMS s 0
XREADGROUP GROUP g c FOO STREAMS s >
XPENDING s g
XPENDING s g - + 10
XPENDING s g - + 10 c
XPENDING s g - + 10 nobody
XPENDING s g - + 1
XPENDING s g - + 0
XPENDING s g - + -1
XPENDING s g (1-1 + 10
XPENDING s g - (3-1 10
XPENDING s g IDLE 0 - + 10
XPENDING s g IDLE 100000000 - + 10
XPENDING s g IDLE - + 10
XPENDING s g IDLE x - + 10
XPENDING s g - + x
XPENDING s g bad + 10
XPENDING s g - +
XPENDING s g - + 10 c extra
XPENDING s nog
XPENDING missing g
XPENDING s nog - + 10
XACK s g 1-1
XACK s g 1-1 2-1 9-9
XACK s g bad
XACK s nog bad
XACK missing g bad
XACK s g 1
XPENDING s g
XPENDING t g
XINFO GROUPS s
XINFO CONSUMERS s g
XINFO CONSUMERS s nog
XINFO CONSUMERS missing g
XGROUP DELCONSUMER s g c
XPENDING s g
XINFO STREAM s FULL
`)
	})
}

func TestDiffReadGroupDeleted(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		p.script(`
XADD s 1-1 a 1
XADD s 2-1 b 2
XADD s 3-1 c 3
XGROUP CREATE s g 0
XREADGROUP GROUP g c STREAMS s >
XDEL s 2-1
XREADGROUP GROUP g c STREAMS s 0
XPENDING s g - + 10
XTRIM s MAXLEN 0
XREADGROUP GROUP g c STREAMS s 0
XINFO GROUPS s
XGROUP SETID s g 0
XADD s 4-1 d 4
XREADGROUP GROUP g c2 STREAMS s >
XPENDING s g
XINFO GROUPS s
`)
	})
}

func TestDiffClaim(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		p.script(`
XCLAIM missing g c 0 1-1
XADD s 1-1 a 1
XADD s 2-1 b 2
XADD s 3-1 c 3
XADD s 4-1 d 4
XGROUP CREATE s g 0
XCLAIM s nog c 0 1-1
XREADGROUP GROUP g alice STREAMS s >
XCLAIM s g bob 0 1-1
XCLAIM s g bob 100000000 2-1
XINFO CONSUMERS s g
XCLAIM s g bob x 2-1
XCLAIM s g bob -5 2-1 JUSTID
XCLAIM s g bob 0 2-1 bad
XCLAIM s g bob 0 2-1 FOO
XCLAIM s g bob 0 2-1 IDLE x
XCLAIM s g bob 0 2-1 TIME x
XCLAIM s g bob 0 2-1 RETRYCOUNT x
XCLAIM s g bob 0 2-1 LASTID bad
XCLAIM s g bob 0 2-1 IDLE 500000
XPENDING s g - + 10
XCLAIM s g carol 400000 2-1 JUSTID
XPENDING s g - + 10
XCLAIM s g bob 0 3-1 RETRYCOUNT 7
XCLAIM s g bob 0 3-1 RETRYCOUNT -1
XPENDING s g - + 10
XCLAIM s g bob 0 3-1 TIME 0
XPENDING s g - + 10
XCLAIM s g bob 0 3-1 TIME -1 IDLE 1000000
XPENDING s g - + 10
XCLAIM s g bob 0 3-1 IDLE 1000000 TIME 99999999999999
XPENDING s g - + 10
XCLAIM s g dave 0 9-9 FORCE
XINFO CONSUMERS s g
XACK s g 4-1
XCLAIM s g dave 0 4-1
XCLAIM s g dave 0 4-1 FORCE JUSTID
XPENDING s g - + 10
XCLAIM s g erin 0 FORCE
XCLAIM s g erin 0 1-1 LASTID 10-0
XINFO GROUPS s
XDEL s 1-1
XCLAIM s g bob 0 1-1
XPENDING s g - + 10
XCLAIM s g bob 0 1 2 3
XINFO CONSUMERS s g
XINFO STREAM s FULL
`)
	})
}

func TestDiffAutoClaim(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		for i := 1; i <= 30; i++ {
			p.do("XADD", "s", itoa(i)+"-1", "f", "v")
		}
		p.script(`
XAUTOCLAIM missing g c 0 0
XGROUP CREATE s g 0
XAUTOCLAIM s nog c 0 0
XAUTOCLAIM s g c x 0
XAUTOCLAIM s g c 0 bad
XAUTOCLAIM s g c 0 0 COUNT 0
XAUTOCLAIM s g c 0 0 COUNT -1
XAUTOCLAIM s g c 0 0 COUNT x
XAUTOCLAIM s g c 0 0 COUNT 4611686018427387904
XAUTOCLAIM s g c 0 0 FOO
XAUTOCLAIM s g c 0 0 COUNT
XAUTOCLAIM s g c 0 (18446744073709551615-18446744073709551615
XAUTOCLAIM s g c 0 0
XINFO CONSUMERS s g
XREADGROUP GROUP g alice STREAMS s >
XAUTOCLAIM s g bob 0 0 COUNT 5
XAUTOCLAIM s g bob 0 5-1 COUNT 5 JUSTID
XAUTOCLAIM s g bob 0 (10-1 COUNT 5
XAUTOCLAIM s g bob 100000000 0 COUNT 5
XDEL s 2-1 3-1 4-1 20-1
XAUTOCLAIM s g carol 0 0 COUNT 3
XAUTOCLAIM s g carol 0 - COUNT 3
XAUTOCLAIM s g carol 0 0 COUNT 100
XAUTOCLAIM s g carol 0 0
XPENDING s g
XPENDING s g - + 100 carol
XINFO CONSUMERS s g
`)
	})
}

func TestDiffXInfo(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		p.script(`
XINFO
XINFO HELP
XINFO FOO
XINFO STREAM missing
XINFO GROUPS missing
XADD s 1-1 a 1
XINFO STREAM s
XINFO STREAM s FULL
XINFO STREAM s FOO
XINFO STREAM s FULL COUNT
XINFO STREAM s FULL COUNT x
XINFO STREAM s FULL LIMIT 1
XINFO STREAM s FULL COUNT 1 x
XINFO GROUPS s
XINFO GROUPS s x
XINFO CONSUMERS s
XGROUP CREATE e g $ MKSTREAM
XINFO STREAM e
XINFO STREAM e FULL
XINFO GROUPS e
`)
		for i := 2; i <= 30; i++ {
			p.do("XADD", "s", itoa(i)+"-1", "f", "v")
		}
		p.script(`
XGROUP CREATE s g 0
XGROUP CREATE s g2 5
XGROUP CREATE s g3 $ ENTRIESREAD 30
XREADGROUP GROUP g c COUNT 12 STREAMS s >
XREADGROUP GROUP g d COUNT 3 STREAMS s >
XINFO STREAM s
XINFO STREAM s FULL
XINFO STREAM s FULL COUNT 2
XINFO STREAM s FULL COUNT 0
XINFO STREAM s FULL COUNT -1
XINFO GROUPS s
XDEL s 20-1
XINFO GROUPS s
XDEL s 1-1
XINFO GROUPS s
XINFO STREAM s
XTRIM s MAXLEN 0
XINFO GROUPS s
XINFO STREAM s
`)
	})
}

func TestDiffKeysAndConnection(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		p.script(`
PING
PING hello
PING a b
ECHO hi
ECHO
FOO
FOO a b
DBSIZE
XADD a 1-1 f v
XADD b 1-1 f v
XADD ab 1-1 f v
DBSIZE
EXISTS a b missing a
TYPE a
TYPE missing
KEYS *
KEYS a*
KEYS ?b
KEYS [ab]
KEYS [^a]*
KEYS
DEL a missing
DEL
EXISTS a
SCAN 0 MATCH a* COUNT 100
SCAN 0 TYPE stream
SCAN 0 TYPE string
SCAN x
SELECT 1
DBSIZE
XADD a 1-1 f v
KEYS *
SELECT 0
KEYS *
SELECT 16
SELECT -1
SELECT x
FLUSHDB
DBSIZE
SELECT 1
DBSIZE
FLUSHALL
DBSIZE
FLUSHDB FOO
AUTH pw
AUTH default pw
AUTH user pw
AUTH a b c
HELLO 4
HELLO x
HELLO 2 FOO
CLIENT SETNAME my-name
CLIENT GETNAME
CLIENT SETNAME bad name
CLIENT FOO
`)
	})
}

func TestDiffMulti(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		p.script(`
EXEC
DISCARD
MULTI
MULTI
XADD s 1-1 a 1
XADD s 1-1 a 1
XLEN s
XREAD BLOCK 0 STREAMS s 1-1
EXEC
XLEN s
MULTI
XADD s 2-1 a 1
DISCARD
XLEN s
MULTI
XADD s 3-1 a 1
FOO
EXEC
XLEN s
MULTI
XADD s
EXEC
MULTI
XGROUP CREATE s g 0
XREADGROUP GROUP g c BLOCK 0 STREAMS s >
XREADGROUP GROUP g c BLOCK 0 STREAMS s >
EXEC
`)
	})
}

func TestDiffDeleteRefs(t *testing.T) {
	eachProtocol(t, func(t *testing.T, p *pair) {
		// XDELEX, XACKDEL and the trimming policies are Redis 8.2 commands
		// that Redis 7.0 answers with "unknown command" or a syntax error; the
		// xstream server's answers are tested in policy_test.go. Here the
		// unknown-command replies of their misspellings still match.
		p.script(`
XDELEXX s IDS 1 1-1
`)
	})
}

// TestDiffHello switches protocols on one connection: each HELLO's reply
// and the replies after it are in the protocol it asked for.
func TestDiffHello(t *testing.T) {
	newPair(t).script(`
		CLIENT GETNAME
		XADD missing NOMKSTREAM * f v
		HELLO 3
		CLIENT GETNAME
		XADD missing NOMKSTREAM * f v
		XADD s 1-1 f v
		XREAD STREAMS s missing 0 0
		XREAD STREAMS missing 0
		XPENDING s g
		XINFO STREAM s
		INFO keyspace
		COMMAND DOCS nosuch
		HELLO
		HELLO 3 SETNAME me
		CLIENT GETNAME
		HELLO 3 AUTH default anything
		HELLO 3 AUTH nobody anything
		HELLO 4
		HELLO 1
		HELLO x
		HELLO 3 FOO
		MULTI
		XADD missing NOMKSTREAM * f v
		XRANGE s - +
		EXEC
		HELLO 2
		CLIENT GETNAME
		XADD missing NOMKSTREAM * f v
		XREAD STREAMS s 0
		HELLO
	`)
}

// A consumer may be called "": XPENDING with consumer "" lists only its
// entries.
func TestDiffPendingEmptyConsumerName(t *testing.T) {
	p := newPair(t)
	p.script(`
XADD s 1-1 a 1
XADD s 2-1 b 2
XADD s 3-1 c 3
XGROUP CREATE s g 0
XREADGROUP GROUP g c COUNT 1 STREAMS s >
`)
	p.do("XPENDING", "s", "g", "-", "+", "10", "")
	p.do("XREADGROUP", "GROUP", "g", "", "COUNT", "1", "STREAMS", "s", ">")
	p.do("XREADGROUP", "GROUP", "g", "c", "COUNT", "1", "STREAMS", "s", ">")
	p.do("XPENDING", "s", "g", "-", "+", "10", "")
	p.do("XPENDING", "s", "g", "-", "+", "10", "c")
	p.do("XPENDING", "s", "g", "-", "+", "10")
}
