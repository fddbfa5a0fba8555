package server

import (
	"bytes"
	"fmt"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The tracking tests run a script of commands, each on one of several
// connections, on a redis-server of their own and on an xstream server,
// and compare the bytes each connection receives for each command: its
// reply and the pushes before it (those after it come with the next
// command of the connection, or the PING each connection sends at the
// end), so the order of pushes and replies is compared too.

// wireConn is a connection whose bytes a test reads as they come.
type wireConn struct {
	nc  net.Conn
	buf []byte
}

func dialWire(t *testing.T, addr string) *wireConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return &wireConn{nc: nc}
}

// do sends args and returns what came up to and with the first frame that
// is not a push (a RESP3 push, or a RESP2 Pub/Sub message).
func (r *wireConn) do(t *testing.T, args ...string) []byte {
	t.Helper()
	r.send(t, args...)
	return r.reply(t)
}

func (r *wireConn) send(t *testing.T, args ...string) {
	t.Helper()
	if _, err := r.nc.Write([]byte(resp(args...))); err != nil {
		t.Fatal(err)
	}
}

func (r *wireConn) reply(t *testing.T) []byte { return r.frames(t, false) }

// push waits for one push frame, sending nothing.
func (r *wireConn) push(t *testing.T) []byte { return r.frames(t, true) }

// frames reads up to and with the first frame that is not a push, or the
// first push when one is true.
func (r *wireConn) frames(t *testing.T, one bool) []byte {
	t.Helper()
	r.nc.SetReadDeadline(time.Now().Add(10 * time.Second)) // a failure bound, not a wait
	pos := 0
	chunk := make([]byte, 4096)
	for {
		for {
			n := frameLen(r.buf[pos:])
			if n == 0 {
				break
			}
			push := isPushFrame(r.buf[pos : pos+n])
			pos += n
			if !push || one {
				out := append([]byte(nil), r.buf[:pos]...)
				r.buf = append(r.buf[:0], r.buf[pos:]...)
				return out
			}
		}
		n, err := r.nc.Read(chunk)
		r.buf = append(r.buf, chunk[:n]...)
		if err != nil {
			t.Fatalf("reading a reply: %v (so far %q)", err, r.buf)
		}
	}
}

// frameLen returns the length of the RESP frame b starts with, 0 when b
// holds no whole frame.
func frameLen(b []byte) int {
	end := bytes.Index(b, []byte("\r\n"))
	if end < 0 {
		return 0
	}
	line, n := b[1:end], end+2
	switch b[0] {
	case '$', '=', '!':
		l, _ := strconv.Atoi(string(line))
		if l < 0 {
			return n
		}
		if len(b) < n+l+2 {
			return 0
		}
		return n + l + 2
	case '*', '>', '~', '%', '|':
		l, _ := strconv.Atoi(string(line))
		if b[0] == '%' || b[0] == '|' {
			l *= 2
		}
		for range max(l, 0) {
			k := frameLen(b[n:])
			if k == 0 {
				return 0
			}
			n += k
		}
		return n
	}
	return n
}

// isPushFrame reports whether f comes unasked: a RESP3 push, a RESP2
// Pub/Sub message or a MONITOR line.
func isPushFrame(f []byte) bool {
	return f[0] == '>' || bytes.HasPrefix(f, []byte("*3\r\n$7\r\nmessage\r\n")) || monitorLine.Match(f)
}

// monitorLine matches a MONITOR line: its time and address differ
// between the servers.
var monitorLines = regexp.MustCompile(`(?m)^\+[0-9]+\.[0-9]{6} \[([0-9]+) 127\.0\.0\.1:[0-9]+\] `)

// slowTimes and addrBulks match the times of a SLOWLOG entry and a
// client address.
var (
	slowTimes = regexp.MustCompile(`\*6\r\n:([0-9]+)\r\n:[0-9]+\r\n:[0-9]+\r\n`)
	addrBulks = regexp.MustCompile(`\$[0-9]+\r\n127\.0\.0\.1:[0-9]+\r\n`)
)

var monitorLine = regexp.MustCompile(`^\+[0-9]+\.[0-9]{6} \[([0-9]+) 127\.0\.0\.1:[0-9]+\] `)

// trackScript runs script (lines "NAME command args...", {NAME} standing
// for NAME's client ID, an argument in double quotes unquoted as in Go) on both servers, with the connections named in
// conns (a "3" after a name: it says HELLO 3 first), and compares each
// command's bytes ("NAME!": a command with no reply, whose bytes come
// with the next). A command is taken to have one reply: SUBSCRIBE and
// UNSUBSCRIBE name one channel at a time.
func trackScript(t *testing.T, conns, script string) {
	t.Helper()
	realSrv := redisWithT(t)
	xs := RunT(t)
	type side struct {
		conns map[string]*wireConn
		ids   map[string]string
	}
	open := func(addr string) side {
		s := side{conns: map[string]*wireConn{}, ids: map[string]string{}}
		for _, spec := range strings.Fields(conns) {
			name, proto3 := strings.CutSuffix(spec, "3")
			rc := dialWire(t, addr)
			if proto3 {
				rc.do(t, "HELLO", "3")
			}
			id := rc.do(t, "CLIENT", "ID")
			s.conns[name] = rc
			s.ids[name] = strings.TrimSuffix(strings.TrimPrefix(string(id), ":"), "\r\n")
		}
		return s
	}
	// Client IDs past 100 on both, not to be taken for the small
	// integers of the replies.
	for range 100 {
		nc, err := net.Dial("tcp", realSrv)
		if err != nil {
			t.Fatal(err)
		}
		nc.Close()
	}
	xs.nextID.Add(100)
	sides := [2]side{open(realSrv), open(xs.Addr())}
	norm := func(s side, b []byte) string {
		out := monitorLines.ReplaceAllString(withoutIdmpRaw(string(b)), "+TIME [$1 ADDR] ")
		out = slowTimes.ReplaceAllString(out, "*6\r\n:$1\r\n:TIME\r\n:USEC\r\n")
		out = addrBulks.ReplaceAllString(out, "$$ADDR\r\n")
		for name, id := range s.ids {
			out = strings.ReplaceAll(out, ":"+id+"\r\n", ":{"+name+"}\r\n")
		}
		return out
	}
	var log []string
	step := func(name string, args []string) {
		var got [2]string
		for i, s := range sides {
			a := make([]string, len(args))
			for j, arg := range args {
				if strings.HasPrefix(arg, `"`) {
					u, err := strconv.Unquote(arg)
					if err != nil {
						t.Fatalf("%s: %v", arg, err)
					}
					arg = u
				}
				for n, id := range s.ids {
					arg = strings.ReplaceAll(arg, "{"+n+"}", id)
				}
				a[j] = arg
			}
			rc := s.conns[strings.TrimSuffix(name, "!")]
			if rc == nil {
				t.Fatalf("no connection %s", name)
			}
			if strings.HasSuffix(name, "!") {
				rc.send(t, a...) // no reply expected
				continue
			}
			got[i] = norm(s, rc.do(t, a...))
		}
		log = append(log, fmt.Sprintf("%s %s -> %q", name, strings.Join(args, " "), got[0]))
		if got[0] != got[1] {
			t.Fatalf("%s %q:\nredis:   %q\nxstream: %q\nafter:\n%s", name, args, got[0], got[1], strings.Join(log, "\n"))
		}
	}
	for _, line := range strings.Split(script, "\n") {
		if f := strings.Fields(line); len(f) > 1 {
			step(f[0], f[1:])
		}
	}
	for _, spec := range strings.Fields(conns) {
		name, _ := strings.CutSuffix(spec, "3")
		if sides[0].conns[name] != nil && !strings.Contains(script, name+" QUIT") {
			step(name, []string{"PING"})
		}
	}
}

func TestDiffTrackingDefault(t *testing.T) {
	trackScript(t, "T3 W", `
T CLIENT TRACKING ON
W XADD s 1-1 a 1
T XLEN s
W XADD s 2-1 a 1
T XLEN s
W XDEL s 9-9
T XLEN s
W XDEL s 2-1
T XRANGE s - +
W XTRIM s MAXLEN 5
W XTRIM s MAXLEN 0
T XREVRANGE s + -
W XADD s 3-1 a 1
W XGROUP CREATE s g 0
W XGROUP CREATECONSUMER s g c
W XREADGROUP GROUP g c STREAMS s >
W XACK s g 3-1
W XCLAIM s g c2 0 3-1
W XAUTOCLAIM s g c3 0 0
W XGROUP SETID s g 0
W XGROUP DELCONSUMER s g c
W XGROUP DESTROY s g
W XSETID s 5-5
T XINFO STREAM s
W XADD s 6-1 a 1
T XLEN s2
W XGROUP CREATE s2 g $ MKSTREAM
T XLEN s2
W XGROUP CREATE s2 g2 $ MKSTREAM
W XADD s3 NOMKSTREAM * a 1
W XADD s3 * a
T XREAD STREAMS s s2 s3 0 0 0
W XADD s3 MAXLEN 1 1-1 a 1
W DEL s3 s2 nokey s2
T EXISTS s q
T XINFO GROUPS s
T XPENDING s g
T TYPE q
T PTTL s
W XADD q 1-1 a 1
T XADD s 9-9 a 1
T XLEN s
T SELECT 1
T XLEN m
T SELECT 0
W SELECT 1
W XADD m 1-1 a 1
T XLEN s
W FLUSHDB
T XLEN s
W FLUSHALL
T FLUSHALL
T FLUSHDB x
T CLIENT TRACKINGINFO
T CLIENT GETREDIR
`)
}

func TestDiffTrackingModes(t *testing.T) {
	trackScript(t, "T3 W", `
T CLIENT GETREDIR
T CLIENT TRACKINGINFO
T CLIENT TRACKING ON NOLOOP
T CLIENT TRACKINGINFO
T XLEN n
T XADD n 1-1 a 1
T XLEN n
W XADD n 2-1 a 1
T CLIENT TRACKING OFF
T CLIENT TRACKINGINFO
T CLIENT TRACKING ON BCAST PREFIX a PREFIX b
T CLIENT TRACKINGINFO
W XADD abc 1-1 a 1
W XADD bcd 1-1 a 1
W XADD cde 1-1 a 1
W MULTI
W XADD b2 1-1 a 1
W XADD a2 1-1 a 1
W XADD a2 2-1 a 1
W EXEC
T PING
T XADD ax 1-1 a 1
T CLIENT TRACKING ON BCAST PREFIX ab
T CLIENT TRACKING ON BCAST PREFIX c PREFIX cd
T CLIENT TRACKING ON BCAST PREFIX c NOLOOP
T XADD c1 1-1 a 1
W XADD c2 1-1 a 1
T CLIENT TRACKINGINFO
T CLIENT TRACKING OFF
T CLIENT TRACKING ON BCAST
W XADD zz 1-1 a 1
T CLIENT TRACKINGINFO
T CLIENT TRACKING OFF
T CLIENT TRACKING ON OPTIN
T XLEN o
W XADD o 1-1 a 1
T CLIENT CACHING YES
T XLEN o
W XADD o 2-1 a 1
T CLIENT CACHING YES
T CLIENT ID
T XLEN o
W XADD o 3-1 a 1
T CLIENT CACHING YES
T MULTI
T PTTL o
T XLEN o
T EXEC
W XADD o 4-1 a 1
T CLIENT CACHING YES
T PING
T XLEN o
W XADD o 5-1 a 1
T CLIENT CACHING NO
T CLIENT TRACKINGINFO
T CLIENT TRACKING OFF
T CLIENT TRACKING ON OPTOUT
T CLIENT CACHING NO
T CLIENT TRACKINGINFO
T XLEN o
W XADD o 6-1 a 1
T XLEN o
W XADD o 7-1 a 1
T CLIENT CACHING YES
T CLIENT TRACKING ON OPTIN
T CLIENT TRACKING ON OPTIN OPTOUT
T CLIENT TRACKING ON BCAST OPTIN
T CLIENT TRACKING OFF
T CLIENT TRACKING ON BCAST OPTIN
T CLIENT TRACKING ON PREFIX x
T CLIENT TRACKING ON REDIRECT 99999
T CLIENT TRACKING ON REDIRECT x
T CLIENT TRACKING ON REDIRECT {W} REDIRECT {W}
T CLIENT TRACKING ON FOO
T CLIENT TRACKING MAYBE
T CLIENT TRACKING OFF FOO
T CLIENT TRACKING ON PREFIX
T CLIENT CACHING maybe
T CLIENT TRACKING
T CLIENT CACHING
T CLIENT CACHING YES
T CLIENT TRACKINGINFO
`)
}

func TestDiffTrackingRedirect(t *testing.T) {
	trackScript(t, "T3 W R S", `
T CLIENT TRACKING ON REDIRECT {R}
T XLEN a
T XLEN b
W XADD a 1-1 f v
R HELLO 3
T XLEN a
W XADD a 2-1 f v
R PING
R HELLO 2
R SUBSCRIBE __redis__:invalidate
R SUBSCRIBE other
R XLEN a
R PING
R PING hi
W XADD a 3-1 f v
R PING
T XLEN a
T XLEN b
R DEL a b
R UNSUBSCRIBE other
T XLEN a
W XADD a 4-1 f v
R PING
W FLUSHALL
R PING
R FLUSHALL
R UNSUBSCRIBE
R UNSUBSCRIBE
R SUBSCRIBE a
R UNSUBSCRIBE a
R PING
T XLEN a
W XADD a 5-1 f v
R PING
R SUBSCRIBE x
T HELLO 2
T CLIENT TRACKING ON REDIRECT {R}
W FLUSHDB
R PING
T HELLO 3
R RESET
T CLIENT TRACKING OFF
T CLIENT TRACKING ON REDIRECT {S} BCAST
S HELLO 3
W XADD q 1-1 f v
S PING
S QUIT
T PING
T XADD q 2-1 f v
T CLIENT TRACKINGINFO
T CLIENT GETREDIR
T XADD q 3-1 f v
T CLIENT TRACKING ON
T CLIENT TRACKING OFF
T CLIENT TRACKING ON
T XLEN q
T XADD q 4-1 f v
T RESET
T CLIENT TRACKINGINFO
`)
}

// The keyspace commands invalidate as Redis 7.0's do: RENAME both keys,
// RENAMENX and COPY when they answer 1, the EXPIRE family and PERSIST
// when they answer 1 (an EXPIRE in the past deletes the key); SWAPDB
// sends nothing.
func TestDiffTrackingKeyspace(t *testing.T) {
	trackScript(t, "T3 W", `
T CLIENT TRACKING ON
W XADD a 1-1 f v
W XADD b 1-1 f v
T XLEN a
T XLEN b
W RENAME a c
T XLEN c
T XLEN b
W RENAMENX c b
W RENAMENX c d
T XLEN d
W COPY d b
W COPY d b REPLACE
T XLEN b
W EXPIRE b 100
T XLEN b
W EXPIRE b 50 NX
W PERSIST b
T XLEN b
W PERSIST b
W PEXPIREAT b 1
T XLEN d
W SWAPDB 0 1
T XLEN d
W SWAPDB 0 1
T XLEN d
`)
}
