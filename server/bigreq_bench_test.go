package server

import (
	"bufio"
	"bytes"
	"net"
	"strconv"
	"testing"
	"time"
)

// Requests of a million arguments, whose cost must be linear in their
// size (see issue 11). BenchmarkBigRequest sends each to the xstream
// server and to redis-server (realAddr) on loopback in the same run, one
// after the other, and reports both times and their ratio; ns/op is that
// of both. BenchmarkParseBigRequest is the server's own cost of one, in
// process, with its allocations, beside the same arguments in a thousand
// requests.
//
//	go test -run '^$' -bench 'BigRequest' -benchtime 3x -benchmem

// bigArgs is the number of arguments (IDs, keys, field-value pairs) of a
// big request.
const bigArgs = 1_000_000

// appendArrayHeader appends a RESP array header of n elements.
func appendArrayHeader(b []byte, n int) []byte {
	b = append(b, '*')
	b = strconv.AppendInt(b, int64(n), 10)
	return append(b, '\r', '\n')
}

func appendBulkArg(b []byte, s []byte) []byte {
	b = append(b, '$')
	b = strconv.AppendInt(b, int64(len(s)), 10)
	b = append(b, '\r', '\n')
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// bigRequest is a request of head followed by n arguments made by arg.
func bigRequest(head []string, n int, arg func(b []byte, i int) []byte) []byte {
	b := appendArrayHeader(nil, len(head)+n)
	for _, h := range head {
		b = appendBulkArg(b, []byte(h))
	}
	var tmp []byte
	for i := range n {
		tmp = arg(tmp[:0], i)
		b = appendBulkArg(b, tmp)
	}
	return b
}

// idArg makes the ID i+1-1.
func idArg(b []byte, i int) []byte {
	b = strconv.AppendInt(b, int64(i+1), 10)
	return append(b, "-1"...)
}

// rawClient is one RESP connection for the big requests.
type rawClient struct {
	nc net.Conn
	rd *bufio.Reader
}

func dialBig(b *testing.B, addr string) *rawClient {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { nc.Close() })
	return &rawClient{nc: nc, rd: bufio.NewReaderSize(nc, 1<<20)}
}

// exchange writes req (any number of requests) and reads n replies; it
// returns the last and the time from the first byte written to the last
// byte read.
func (c *rawClient) exchange(b *testing.B, req []byte, n int) (*reply, time.Duration) {
	start := time.Now()
	errc := make(chan error, 1)
	go func() {
		_, err := c.nc.Write(req)
		errc <- err
	}()
	var r *reply
	var err error
	for range n {
		if r, err = readReply(c.rd); err != nil {
			b.Fatal(err)
		}
	}
	took := time.Since(start)
	if err := <-errc; err != nil {
		b.Fatal(err)
	}
	return r, took
}

// fillIDs adds the entries 1-1 ... n-1 to key, in pipelined XADDs.
func (c *rawClient) fillIDs(b *testing.B, key string, n int) {
	var req []byte
	var id []byte
	for i := range n {
		id = idArg(id[:0], i)
		req = appendArrayHeader(req, 5)
		for _, a := range [][]byte{[]byte("XADD"), []byte(key), id, []byte("f"), []byte("v")} {
			req = appendBulkArg(req, a)
		}
	}
	c.exchange(b, req, n)
}

func BenchmarkBigRequest(b *testing.B) {
	if realAddr == "" {
		b.Skip("no Redis to compare with: set XSTREAM_REDIS_ADDR or put redis-server on PATH")
	}
	ids := bigRequest(nil, bigArgs, idArg)[len(appendArrayHeader(nil, bigArgs)):] // the ID arguments alone
	withHead := func(head ...string) []byte {
		b := appendArrayHeader(nil, len(head)+bigArgs)
		for _, h := range head {
			b = appendBulkArg(b, []byte(h))
		}
		return append(b, ids...)
	}
	cases := []struct {
		name  string
		setup func(b *testing.B, c *rawClient, key string)
		req   func(key string) []byte
		want  string
	}{
		{"EXISTS-1M-keys", nil, func(key string) []byte {
			return bigRequest([]string{"EXISTS"}, bigArgs, func(b []byte, i int) []byte { return strconv.AppendInt(append(b, 'k'), int64(i), 10) })
		}, ":0"},
		{"XADD-1M-pairs", nil, func(key string) []byte {
			return bigRequest([]string{"XADD", key, "1-1"}, 2*bigArgs, func(b []byte, i int) []byte {
				if i%2 == 1 {
					return append(b, 'v')
				}
				return strconv.AppendInt(append(b, 'f'), int64(i/2), 10)
			})
		}, `$"1-1"`},
		{"XDEL-1M-IDs", func(b *testing.B, c *rawClient, key string) { c.fillIDs(b, key, bigArgs) },
			func(key string) []byte { return withHead("XDEL", key) }, ":" + strconv.Itoa(bigArgs)},
		{"XACK-1M-IDs", func(b *testing.B, c *rawClient, key string) {
			c.fillIDs(b, key, bigArgs)
			c.exchange(b, []byte(resp("XGROUP", "CREATE", key, "g", "0")+resp("XREADGROUP", "GROUP", "g", "c", "STREAMS", key, ">")), 2)
		}, func(key string) []byte { return withHead("XACK", key, "g") }, ":" + strconv.Itoa(bigArgs)},
	}
	for _, tc := range cases {
		b.Run(tc.name, func(b *testing.B) {
			// XADD of a million pairs has 2,000,003 arguments.
			srv := RunTWith(b, Options{MaxArgs: 4 << 20})
			xs, real := dialBig(b, srv.Addr()), dialBig(b, realAddr)
			var xsTime, realTime time.Duration
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				key := "big-" + strconv.Itoa(i)
				req := tc.req(key)
				for _, c := range []*rawClient{xs, real} {
					if tc.setup != nil {
						tc.setup(b, c, key)
					}
				}
				b.StartTimer()
				for _, side := range []struct {
					c    *rawClient
					took *time.Duration
				}{{xs, &xsTime}, {real, &realTime}} {
					r, took := side.c.exchange(b, req, 1)
					if r.String() != tc.want {
						b.Fatalf("reply %v, want %s", r, tc.want)
					}
					*side.took += took
				}
				b.StopTimer()
				for _, c := range []*rawClient{xs, real} {
					c.exchange(b, []byte(resp("DEL", key)), 1)
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(len(tc.req("big-0"))), "req-B")
			b.ReportMetric(xsTime.Seconds()*1000/float64(b.N), "xstream-ms/op")
			b.ReportMetric(realTime.Seconds()*1000/float64(b.N), "redis-ms/op")
			b.ReportMetric(xsTime.Seconds()/realTime.Seconds(), "xstream/redis")
		})
	}
}

// BenchmarkParseBigRequest is the server's cost, allocations and bytes
// allocated for one request of a million arguments (XDEL of a missing key,
// which looks at no ID: the cost is that of reading and parsing), beside
// the same million IDs in a thousand requests of a thousand ("baseline");
// B/op and allocs/op are per million arguments in both. The request is
// read in 64 KiB pieces, as from a socket.
func BenchmarkParseBigRequest(b *testing.B) {
	one := bigRequest([]string{"XDEL", "missing"}, bigArgs, idArg)
	var thousand []byte
	for k := range 1000 {
		thousand = append(thousand, bigRequest([]string{"XDEL", "missing"}, 1000, func(b []byte, i int) []byte { return idArg(b, k*1000+i) })...)
	}
	for _, tc := range []struct {
		name    string
		req     []byte
		replies int
	}{{"1M-args", one, 1}, {"baseline-1000x1K-args", thousand, 1000}} {
		b.Run(tc.name, func(b *testing.B) {
			srv := New(Options{})
			defer srv.cancel()
			f := serveMemory(b, srv, tc.req, true)
			if got, want := f.out.String(), string(bytes.Repeat([]byte(":0\r\n"), b.N*tc.replies)); got != want {
				b.Fatalf("replies %.40q, want %d of :0", got, b.N*tc.replies)
			}
		})
	}
}
