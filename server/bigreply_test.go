package server

import (
	"bufio"
	"bytes"
	"net"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/xstreamgo/xstream"
)

// allocated returns the bytes allocated while fn ran.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// An ECHO of 16 MB is read into a buffer of its size and answered from
// it, without a copy into the reply buffer: the server allocates about the
// request once, where doubling buffers for the request and the reply
// allocated about four times it.
func TestBigEchoAllocatesItsSizeOnce(t *testing.T) {
	const size = 16 << 20
	req := []byte(resp("ECHO", strings.Repeat("x", size)))
	srv := New(Options{})
	defer srv.cancel()
	f := &memConn{rep: req, left: len(req)}
	got := allocated(func() { newConn(srv, f).serve() })
	if want := len("$16777216\r\n") + size + 2; f.written != want {
		t.Fatalf("reply of %d bytes, want %d", f.written, want)
	}
	if got > size*5/4 {
		t.Fatalf("an ECHO of %d bytes allocated %d bytes (%.2fx)", size, got, float64(got)/size)
	}
	if n := srv.clientMem.Load(); n != 0 {
		t.Fatalf("the closed client still counts %d bytes of buffers", n)
	}
}

// bigStream fills stream s of srv's DB 0 with n entries of one field of
// valueLen bytes, and returns the RESP encoding of the whole of it, as
// XRANGE s - + answers.
func bigStream(t testing.TB, srv *Server, n, valueLen int) []byte {
	s := srv.DB(0).Stream("s")
	v := strings.Repeat("v", valueLen)
	var want bytes.Buffer
	want.WriteString("*" + strconv.Itoa(n) + "\r\n")
	for i := 1; i <= n; i++ {
		id := strconv.Itoa(i) + "-1"
		if _, err := s.Add(xstream.AddArgs{ID: id}, xstream.Fields("f", v)...); err != nil {
			t.Fatal(err)
		}
		want.WriteString("*2\r\n" + resp(id)[4:] + "*2\r\n" + resp("f", v)[4:])
	}
	return want.Bytes()
}

// An XRANGE reply of 20 MB is the same bytes as one built whole, but it
// is kept in pieces of about 1 MiB until its length is known and written
// with them, and an XREAD of it is written out as it is produced: beyond
// what reading the entries from the stream allocates (nothing for XRANGE,
// which reads them with ScanNoCopy; the whole range at once for XREAD,
// measured in the same test), the server allocates about the reply once.
// Building it whole in a growing buffer allocated about five times it.
func TestBigRangeReplyInPieces(t *testing.T) {
	srv := New(Options{})
	defer srv.cancel()
	want := bigStream(t, srv, 20_000, 1000)
	s, _ := srv.DB(0).Lookup("s")
	pages := func() {} // ScanNoCopy allocates nothing per page
	whole := func() { s.Range("-", "+", 0) }
	for _, tc := range []struct {
		name string
		req  string
		want []byte
		read func()
	}{
		{"XRANGE", resp("XRANGE", "s", "-", "+"), want, pages},
		{"XREAD", resp("XREAD", "STREAMS", "s", "0"), append([]byte("*1\r\n*2\r\n$1\r\ns\r\n"), want...), whole},
		{"XRANGE after a PING, in MULTI", resp("PING") + resp("MULTI") + resp("XRANGE", "s", "-", "+") + resp("EXEC"),
			append([]byte("+PONG\r\n+OK\r\n+QUEUED\r\n*1\r\n"), want...), pages},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &memConn{rep: []byte(tc.req), left: len(tc.req), keep: true}
			newConn(srv, f).serve()
			if !bytes.Equal(f.out.Bytes(), tc.want) {
				t.Fatalf("reply of %d bytes differs from the %d expected (%.60q)", f.out.Len(), len(tc.want), f.out.String())
			}
			reading := allocated(tc.read)
			f = &memConn{rep: []byte(tc.req), left: len(tc.req)}
			got := allocated(func() { newConn(srv, f).serve() })
			server := float64(got) - float64(reading)
			t.Logf("a reply of %d bytes: %d bytes allocated, %d of them reading the entries", f.written, got, reading)
			// The pieces are allocated with an eighth of room; the first
			// buffers (the reply's first MiB in c.out, the pooled decode
			// buffer) grow by doubling once: a few MiB whatever the size.
			if server > 1.25*float64(len(tc.want))+8<<20 {
				t.Fatalf("a reply of %d bytes allocated %.0f bytes beyond reading the entries (%.2fx)", len(tc.want), server, server/float64(len(tc.want)))
			}
		})
	}
	f := &memConn{rep: []byte(resp("XREVRANGE", "s", "+", "-", "COUNT", "1")), left: 64, keep: true}
	f.left = len(f.rep)
	newConn(srv, f).serve()
	if !strings.HasPrefix(f.out.String(), "*1\r\n*2\r\n$7\r\n20000-1\r\n") {
		t.Fatalf("XREVRANGE COUNT 1: %.60q", f.out.String())
	}
	if n := srv.clientMem.Load(); n != 0 {
		t.Fatalf("the closed clients still count %d bytes of buffers", n)
	}
}

// A reply found over MaxReplyBytes before any of it went out is replaced
// by Redis-style error; one found over it once part of it was written out
// closes the connection, as Redis closes a client past its output buffer
// limit.
func TestBigReplyOverLimit(t *testing.T) {
	srv := RunTWith(t, Options{MaxReplyBytes: 3 << 20})
	bigStream(t, srv, 4000, 1000) // 4 MB
	c := newClient(t, srv.Addr())
	expect(t, c, `-"ERR reply exceeds the output limit of 3145728 bytes"`, "XRANGE", "s", "-", "+")
	expect(t, c, `-"ERR reply exceeds the output limit of 3145728 bytes"`, "ECHO", strings.Repeat("x", 3<<20))
	expect(t, c, `:4000`, "XLEN", "s")
	nc, err := net.Dial("tcp", srv.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	go nc.Write([]byte(resp("XREAD", "STREAMS", "s", "0") + resp("PING")))
	rd := bufio.NewReader(nc)
	n, pong := 0, false
	for {
		line, err := rd.ReadString('\n')
		if err != nil {
			break
		}
		n++
		pong = pong || line == "+PONG\r\n"
	}
	// 8 lines an entry; the PING after it is not answered.
	if n == 0 || n >= 8*4000 || pong {
		t.Fatalf("read %d lines (PONG: %v) before the connection closed", n, pong)
	}
}

// The input buffers of all clients together are bounded by
// MaxClientsMemory: a request that would pass it gets an error and its
// connection closes; the others go on, and what the closed one held is
// no longer counted.
func TestClientsMemoryBound(t *testing.T) {
	srv := RunTWith(t, Options{MaxClientsMemory: 8 << 20})
	c := newClient(t, srv.Addr())
	expect(t, c, `$"`+strings.Repeat("y", 1<<20)+`"`, "ECHO", strings.Repeat("y", 1<<20))
	expectRefused(t, srv.Addr(), resp("ECHO", strings.Repeat("x", 9<<20)),
		`-"ERR the buffers of all clients together would pass the limit of 8388608 bytes (MaxClientsMemory)"`)
	expect(t, c, `+"PONG"`, "PING")
	// A reply kept in pieces counts too.
	bigStream(t, srv, 10_000, 1000)
	expectRefused(t, srv.Addr(), resp("XRANGE", "s", "-", "+"),
		`-"ERR the buffers of all clients together would pass the limit of 8388608 bytes (MaxClientsMemory)"`)
	expect(t, c, `+"PONG"`, "PING")
}

// Dropping a buffer of 32 MiB or more asks the memory goroutine to give
// the memory back to the OS; a smaller one does not.
func TestBigBufferFreedAsksForRelease(t *testing.T) {
	srv := New(Options{})
	defer srv.cancel()
	srv.noteFreed(freeOSBytes - 1)
	if len(srv.freed) != 0 {
		t.Fatal("a buffer under 32 MiB asked for a release")
	}
	srv.noteFreed(freeOSBytes)
	srv.noteFreed(freeOSBytes) // never waits
	if len(srv.freed) != 1 {
		t.Fatal("a buffer of 32 MiB did not ask for a release")
	}
}

// An XRANGE of entries with values of bigReply bytes or more keeps its
// array header first: the big values wait in the reply with the rest
// until the header is known.
func TestBigRangeReplyBigValues(t *testing.T) {
	srv := New(Options{})
	defer srv.cancel()
	want := bigStream(t, srv, 3, 2<<20)
	for _, req := range []string{resp("XRANGE", "s", "-", "+"), resp("XREVRANGE", "s", "+", "-", "COUNT", "1")} {
		f := &memConn{rep: []byte(req), left: len(req), keep: true}
		newConn(srv, f).serve()
		got := f.out.Bytes()
		if strings.HasPrefix(req, "*4") { // XRANGE: the whole stream
			if !bytes.Equal(got, want) {
				t.Fatalf("XRANGE: %d bytes, want %d; starts %.40q", len(got), len(want), got)
			}
			continue
		}
		if !strings.HasPrefix(string(got), "*1\r\n*2\r\n$3\r\n3-1\r\n*2\r\n$1\r\nf\r\n$2097152\r\n") {
			t.Fatalf("XREVRANGE COUNT 1 starts %.60q", got)
		}
	}
}
