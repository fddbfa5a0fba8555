package server

import (
	"io"
	"math/rand/v2"
	"strings"
	"testing"
)

// chunkConn is a memConn whose reads return at most the next chunk size,
// so that requests arrive cut at chosen places.
type chunkConn struct {
	memConn
	chunks []int
}

func (c *chunkConn) Read(p []byte) (int, error) {
	if len(c.chunks) > 0 && c.chunks[0] < len(p) {
		p = p[:max(c.chunks[0], 1)]
		c.chunks = c.chunks[1:]
	}
	return c.memConn.Read(p)
}

// serveInput runs a connection of a new server on input cut into reads of
// the given sizes and returns what it wrote.
func serveInput(input string, chunks []int) string {
	f := &chunkConn{memConn: memConn{rep: []byte(input), left: len(input), keep: true}, chunks: chunks}
	srv := New(Options{MaxRequestBytes: 1 << 20})
	defer srv.cancel()
	c := newConn(srv, f)
	c.serve()
	return f.out.String()
}

// Any input, cut anywhere: the connection never panics, and it ends when
// the input does.
func FuzzConnInput(f *testing.F) {
	for _, seed := range []string{
		resp("PING"), "PING\r\n", "*0\r\n*-1\r\n\r\n", "*1\r\n$-2\r\n", "$3 abc\r\n",
		"ECHO \"a b\" 'c'\r\n", "*2\r\n$4\r\nECHO\r\n$3\r\nabc", "*1\r\n$x\r\n",
		resp("XADD", "s", "*", "f", "v") + resp("XRANGE", "s", "-", "+") + "  \r\n\n",
		"*3\r\n$4\r\nECHO\r\n", "*1\r\n*1\r\n", "ECHO \"unbalanced\r\nPING\r\n",
	} {
		f.Add(seed, uint64(1))
	}
	f.Fuzz(func(t *testing.T, input string, seed uint64) {
		r := rand.New(rand.NewPCG(seed, seed))
		var chunks []int
		for n := 0; n < len(input); {
			k := 1 + r.IntN(len(input)-n)
			chunks = append(chunks, k)
			n += k
		}
		serveInput(input, chunks)
	})
}

// Well-formed requests with any bytes in their arguments, mixed with
// inline ones and cut at random places, get the replies they get in one
// piece.
func TestConnInputCutAnywhere(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 300; round++ {
		var in, want strings.Builder
		for i := r.IntN(20); i >= 0; i-- {
			switch r.IntN(3) {
			case 0:
				arg := make([]byte, r.IntN(40))
				for j := range arg {
					arg[j] = byte(r.IntN(256))
				}
				in.WriteString(resp("ECHO", string(arg)))
				want.WriteString("$" + itoa(len(arg)) + "\r\n" + string(arg) + "\r\n")
			case 1:
				in.WriteString("PING\r\n")
				want.WriteString("+PONG\r\n")
			default:
				in.WriteString(resp("PING", "x"))
				want.WriteString("$1\r\nx\r\n")
			}
		}
		var chunks []int
		for n := 0; n < in.Len(); {
			k := 1 + r.IntN(in.Len()-n)
			chunks = append(chunks, k)
			n += k
		}
		if got := serveInput(in.String(), chunks); got != want.String() {
			t.Fatalf("round %d, cut %v:\n got  %q\n want %q", round, chunks, got, want.String())
		}
	}
}

var _ io.Reader = (*chunkConn)(nil)

// A request larger than the input buffer grows it; the buffer is dropped
// once the big request has run, and the requests after it are served.
func TestConnBigRequest(t *testing.T) {
	big := strings.Repeat("b", 300<<10)
	in := resp("ECHO", big) + resp("PING") + resp("ECHO", big) + "PING\r\n"
	want := "$" + itoa(len(big)) + "\r\n" + big + "\r\n+PONG\r\n" + "$" + itoa(len(big)) + "\r\n" + big + "\r\n+PONG\r\n"
	for _, chunks := range [][]int{nil, {1000, 70000, 5, 300000}} {
		if got := serveInput(in, chunks); got != want {
			t.Fatalf("cut %v: got %d bytes, want %d", chunks, len(got), len(want))
		}
	}
}
