package server

import (
	"bytes"
	"context"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/xstreamgo/xstream"
)

// BenchmarkServe measures the server's own cost per command, without a
// network: one connection reads b.N pipelined requests from memory and
// writes its replies to a discarding writer. It is the CPU a command costs
// the server under redis-benchmark -P 32, minus the system calls (but for
// the writes of the log of a durable server, XADD-durable).
//
//	go test -run '^$' -bench BenchmarkServe -benchmem
func BenchmarkServe(b *testing.B) {
	fill := func(srv *Server) {
		s := srv.DB(0).Stream("bench")
		for i := 1; i <= 100_000; i++ {
			s.Add(xstream.AddArgs{ID: strconv.Itoa(i) + "-0"}, xstream.Fields("sensor-id", "1234", "temperature", "19.8")...)
		}
	}
	pendingTen := func(srv *Server) {
		fill(srv)
		s, _ := srv.DB(0).Lookup("bench")
		s.CreateGroup("g", "0", xstream.GroupOptions{})
		s.ReadGroup(context.Background(), "g", "c", ">", xstream.ReadGroupArgs{Count: 10})
	}
	cases := []struct {
		name  string
		req   string
		setup func(srv *Server)
	}{
		{"XADD", resp("XADD", "bench", "*", "sensor-id", "1234", "temperature", "19.8"), nil},
		{"XRANGE-COUNT-10", resp("XRANGE", "bench", "50000", "+", "COUNT", "10"), fill},
		{"XREADGROUP-COUNT-10", resp("XREADGROUP", "GROUP", "g", "c", "COUNT", "10", "STREAMS", "bench", ">"), func(srv *Server) {
			fill(srv)
			s, _ := srv.DB(0).Lookup("bench")
			s.CreateGroup("g", "0", xstream.GroupOptions{})
		}},
		// Ten IDs each: the first XACK finds them pending; later ones
		// parse and look them up the same way and find nothing (reply 0).
		{"XACK-10", resp(append([]string{"XACK", "bench", "g"}, benchIDs(10)...)...), pendingTen},
		// The claim makes the ten pending again for the XACK that follows.
		{"XCLAIM-10+XACK-10", resp(append(append([]string{"XCLAIM", "bench", "g", "c", "0"}, benchIDs(10)...), "FORCE", "JUSTID")...) +
			resp(append([]string{"XACK", "bench", "g"}, benchIDs(10)...)...), pendingTen},
		{"PING", resp("PING"), nil},
		// XRANGE-COUNT-10 with another key expiring in the DB: each
		// command then looks its key up for lazy expiry (expireKeys);
		// against XRANGE-COUNT-10, the cost of that look-up.
		{"XRANGE-COUNT-10-expiring", resp("XRANGE", "bench", "50000", "+", "COUNT", "10"), func(srv *Server) {
			fill(srv)
			db := srv.DB(0)
			db.Add("other", xstream.AddArgs{}, xstream.Fields("f", "v")...)
			db.SetExpiry("other", time.Now().Add(time.Hour))
		}},
		// A durable server (Dir, everysec): the log is written to the OS
		// before each batch's replies, here every 64 KiB of requests.
		{"XADD-durable", resp("XADD", "bench", "*", "sensor-id", "1234", "temperature", "19.8"), nil},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			srv := New(Options{})
			if strings.HasSuffix(tc.name, "-durable") {
				srv = New(Options{Dir: b.TempDir()})
				if err := srv.openDBs(); err != nil {
					b.Fatal(err)
				}
				defer srv.closeDBs()
			}
			if tc.setup != nil {
				tc.setup(srv)
			}
			if tc.name == "XREADGROUP-COUNT-10" && b.N*10 > 100_000 {
				s, _ := srv.DB(0).Lookup("bench")
				for i := 100_001; i <= b.N*10+10; i++ {
					s.Add(xstream.AddArgs{ID: strconv.Itoa(i) + "-0"}, xstream.Fields("sensor-id", "1234", "temperature", "19.8")...)
				}
			}
			f := serveMemory(b, srv, []byte(tc.req), false)
			b.ReportMetric(float64(f.written)/float64(b.N), "reply-B/op")
			srv.cancel()
		})
	}
}

// benchIDs returns the IDs 1-0 … n-0.
func benchIDs(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.Itoa(i+1) + "-0"
	}
	return out
}

// serveMemory serves b.N copies of req, read from memory, on one
// connection of srv, timing only that, and returns the connection, which
// keeps the replies with keep.
func serveMemory(b *testing.B, srv *Server, req []byte, keep bool) *memConn {
	f := &memConn{rep: req, left: b.N * len(req), keep: keep}
	c := newConn(srv, f)
	b.SetBytes(int64(len(req)))
	b.ReportAllocs()
	b.ResetTimer()
	c.serve()
	b.StopTimer()
	return f
}

// memConn is a net.Conn whose input is rep repeated until left bytes,
// then io.EOF; it counts and drops what is written.
type memConn struct {
	rep     []byte
	off     int
	left    int
	written int
	keep    bool         // keep what is written in out
	out     bytes.Buffer // with keep
}

func (m *memConn) Read(p []byte) (int, error) {
	if m.left == 0 {
		return 0, io.EOF
	}
	n := 0
	for n < len(p) && m.left > 0 {
		k := copy(p[n:min(len(p), n+m.left)], m.rep[m.off:])
		n += k
		m.left -= k
		m.off = (m.off + k) % len(m.rep)
	}
	return n, nil
}

func (m *memConn) Write(p []byte) (int, error) {
	m.written += len(p)
	if m.keep {
		m.out.Write(p)
	}
	return len(p), nil
}
func (m *memConn) Close() error                     { return nil }
func (m *memConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (m *memConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (m *memConn) SetDeadline(time.Time) error      { return nil }
func (m *memConn) SetReadDeadline(time.Time) error  { return nil }
func (m *memConn) SetWriteDeadline(time.Time) error { return nil }
