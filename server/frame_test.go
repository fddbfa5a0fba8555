package server

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/tidwall/redcon"
)

// chunkReader gives its data in reads of the sizes in chunks, cycled (all
// that is left when chunks is empty), then io.EOF.
type chunkReader struct {
	data   []byte
	chunks []int
	next   int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	n := len(c.data)
	if len(c.chunks) > 0 {
		n = c.chunks[c.next%len(c.chunks)]
		c.next++
	}
	n = copy(p[:min(len(p), n)], c.data)
	c.data = c.data[n:]
	return n, nil
}

// parseAll runs redcon's parser on a frameReader over r and returns the
// commands, one string each with its arguments joined by '|', and the
// error that ended the input (nil for io.EOF).
func parseAll(r io.Reader, max int) ([]string, error) {
	rd := redcon.NewReader(newFrameReader(r, frameLimits{max: max, maxArgs: 1 << 20}))
	var out []string
	for {
		cmds, err := rd.ReadCommands()
		for _, c := range cmds {
			out = append(out, string(bytes.Join(c.Args, []byte("|"))))
		}
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// splits are the ways of cutting input into reads that the tests try:
// whole, one byte at a time, and in two at every place.
func splits(input string, fn func(chunks []int)) {
	fn(nil)
	fn([]int{1})
	for i := 1; i < len(input); i++ {
		fn([]int{i, len(input)})
	}
}

// Empty requests (*0, *-1, empty lines) are dropped as Redis ignores
// them, wherever the reads cut the input; the others reach the parser.
func TestFrameDropsEmptyRequests(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"*0\r\n*-1\r\nPING\r\n", []string{"PING"}},
		{"*0\r\n" + resp("PING"), []string{"PING"}},
		{"*-5\r\n*-1\r\n*0\r\n", nil},
		{"\r\n\n\r\nPING\r\n   \r\nECHO a\n", []string{"PING", "ECHO|a"}},
		{resp("ECHO", "") + "*0\r\n" + resp("ECHO", "\r\n*0\r\n") + "\r\n", []string{"ECHO|", "ECHO|\r\n*0\r\n"}},
		{"\r", nil},
		{"*0\r", nil},
	} {
		splits(tc.in, func(chunks []int) {
			got, err := parseAll(&chunkReader{data: []byte(tc.in), chunks: chunks}, 1<<20)
			if err != nil || strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("%q in reads of %v: got %q, %v; want %q", tc.in, chunks, got, err, tc.want)
			}
		})
	}
}

// Bad headers and inline requests are refused with Redis's error after
// the requests before them, wherever the reads cut the input.
func TestFrameRefuses(t *testing.T) {
	long := "ECHO " + strings.Repeat("a", maxInline-5)
	for _, tc := range []struct {
		in   string
		want []string
		err  string
	}{
		{"PING\r\n*0\n", []string{"PING"}, "Protocol error: invalid multibulk length"},
		{"*-0\r\n", nil, "Protocol error: invalid multibulk length"},
		{"*+1\r\n$4\r\nPING\r\n", nil, "Protocol error: invalid multibulk length"},
		{"*01\r\n$4\r\nPING\r\n", nil, "Protocol error: invalid multibulk length"},
		{"*1\r\n$04\r\nPING\r\n", nil, "Protocol error: invalid bulk length"},
		{"*1\r\n$4\nPING\r\n", nil, "Protocol error: invalid bulk length"},
		{"*1\r\nPING\r\n", nil, "Protocol error: expected '$', got 'P'"},
		{"PING\r\nECHO \"a\r\nPING\r\n", []string{"PING"}, "Protocol error: unbalanced quotes in request"},
		{"PING\r\n" + resp("PING") + "ECHO 'a'b\r\n", []string{"PING", "PING"}, "Protocol error: unbalanced quotes in request"},
		{"PING\r\n" + long + "a", []string{"PING"}, errInlineTooBig.Error()},
		{"PING\r\n" + long + "a\r\n", []string{"PING"}, errInlineTooBig.Error()},
		{"PING\r\n" + long + "\r", []string{"PING"}, ""}, // the line may still end here
		{long + "\r\n" + long + "\n", []string{long[:4] + "|" + long[5:], long[:4] + "|" + long[5:]}, ""},
	} {
		cases := splits
		if len(tc.in) > 1000 {
			cases = func(input string, fn func(chunks []int)) { // fewer cuts
				fn(nil)
				fn([]int{1000})
				fn([]int{len(input) - 3, 1, 1, 1})
			}
		}
		cases(tc.in, func(chunks []int) {
			got, err := parseAll(&chunkReader{data: []byte(tc.in), chunks: chunks}, 1<<20)
			msg := ""
			if err != nil {
				msg = err.Error()
			}
			if msg != tc.err || strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Fatalf("%.40q in reads of %v: got %.80q, %v; want %.80q, %s", tc.in, chunks, got, err, tc.want, tc.err)
			}
		})
	}
}

// A random mix of requests read in random cuts into random buffers
// comes out as the same bytes without the empty requests, each inline
// request in reads of its own.
func TestFrameRandomCuts(t *testing.T) {
	seed := rand.Uint64()
	r := rand.New(rand.NewPCG(seed, 1))
	for round := 0; round < 200; round++ {
		var in, want bytes.Buffer
		var inline [][2]int // where the inline requests are in want
		for range r.IntN(30) {
			var req string
			keep, isInline := true, false
			switch r.IntN(6) {
			case 0:
				req, keep = []string{"*0\r\n", "*-1\r\n", "\r\n", "\n"}[r.IntN(4)], false
			case 1:
				req, isInline = []string{"PING\r\n", "ECHO a b\n", "  \r\n", "X\r\n"}[r.IntN(4)], true
			default:
				args := make([]string, 1+r.IntN(4))
				for i := range args {
					args[i] = strings.Repeat("*\r\n$", r.IntN(40))
				}
				req = resp(args...)
			}
			in.WriteString(req)
			if keep {
				if isInline {
					inline = append(inline, [2]int{want.Len(), want.Len() + len(req)})
				}
				want.WriteString(req)
			}
		}
		chunks := make([]int, 1+r.IntN(4))
		for i := range chunks {
			chunks[i] = 1 + r.IntN(300)
		}
		f := newFrameReader(&chunkReader{data: in.Bytes(), chunks: chunks}, frameLimits{max: 1 << 20, maxArgs: 1 << 20})
		var got []byte
		for {
			p := make([]byte, 1+r.IntN(200))
			n, err := f.Read(p)
			a, b := len(got), len(got)+n
			got = append(got, p[:n]...)
			for _, s := range inline {
				if a < s[1] && s[0] < b && (a < s[0] || b > s[1]) {
					t.Fatalf("seed %d: a read of [%d,%d) holds more than the inline request at [%d,%d)", seed, a, b, s[0], s[1])
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatalf("seed %d: %v", seed, err)
			}
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("seed %d: input %q in reads of %v\ngot  %q\nwant %q", seed, in.Bytes(), chunks, got, want.Bytes())
		}
	}
}

// Following the requests costs no allocation, also when a header is cut
// between reads.
func TestFrameReadAllocs(t *testing.T) {
	req := []byte(resp("XADD", "s", "*", "f", "v"))
	data := bytes.Repeat(req, 100)
	src := bytes.NewReader(nil)
	cut, chunks := &chunkReader{}, []int{len(req) + 7}
	p := make([]byte, 4096)
	for _, tc := range []struct {
		name string
		r    io.Reader
		set  func()
	}{
		{"whole", src, func() { src.Reset(data) }},
		{"cut", cut, func() { cut.data, cut.chunks, cut.next = data, chunks, 0 }},
	} {
		f := newFrameReader(tc.r, frameLimits{max: 1 << 20, maxArgs: 1 << 20})
		allocs := testing.AllocsPerRun(100, func() {
			tc.set()
			for {
				if _, err := f.Read(p); err != nil {
					if !errors.Is(err, io.EOF) {
						t.Fatal(err)
					}
					f.err = nil
					return
				}
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per run of 100 requests", tc.name, allocs)
		}
	}
}

// BenchmarkFrameRead follows a pipeline of small requests, as redcon's
// reader takes them.
//
//	go test -run '^$' -bench FrameRead
func BenchmarkFrameRead(b *testing.B) {
	data := bytes.Repeat([]byte(resp("XADD", "s", "*", "f", "v")), 1000)
	src := bytes.NewReader(data)
	f := newFrameReader(src, frameLimits{max: 1 << 20, maxArgs: 1 << 20})
	p := make([]byte, 4096)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		src.Reset(data)
		for {
			if _, err := f.Read(p); err != nil {
				break
			}
		}
	}
}

// frameEnds scans in from the start with frameScan's steps and returns,
// for each request that ends, where it ends and the scan there, then where
// the scan stopped, with its error.
func frameEnds(in []byte, lim frameLimits) []string {
	var out []string
	var s frameScan
	for i := 0; i < len(in); {
		var err error
		if i, err = s.step(in, i, &lim); err != nil {
			return append(out, fmt.Sprintf("error at %d: %v", i, err))
		}
		if s.state == stStart {
			s.line = [maxHeaderLine]byte{} // bytes of a cut line, past nline
			out = append(out, fmt.Sprintf("end %d: %+v", i, s))
		}
	}
	s.line = [maxHeaderLine]byte{}
	return append(out, fmt.Sprintf("stop: %+v", s))
}

// The scan of a whole request in one pass (wholeArray) ends requests where
// the steps one header or payload at a time end them, with the same
// errors, under every limit.
func FuzzFrameWholeArray(f *testing.F) {
	for _, seed := range []string{
		"*3\r\n$4\r\nXADD\r\n$1\r\nk\r\n$1\r\n*\r\n",
		"*1\r\n$4\r\nPING\r\n*1\r\n$4\r\nPI",
		"*0\r\n*-1\r\n*2\r\n$3\r\nGET\r\n$0\r\n\r\n",
		"*2\r\n$-1\r\n$1\r\nx\r\n", "*2\r\n$01\r\nx\r\n", "*1\r\n$1x\r\nx\r\n",
		"*1\r\n$3\nabc\r\n", "*1\n$3\r\nabc\r\n", "*11\r\n", "*1\r\n$17000\r\n",
		"*1\r\n$00000000000000000000000000000003\r\nabc\r\n",
		"*1\r\n$0000000000000000000000000000003\r\nabc\r\n",
		"PING\r\n*1\r\n$4\r\nPING\r\n", "*1\r\n+4\r\nPING\r\n", "*2147483648\r\n",
	} {
		f.Add([]byte(seed), uint16(1<<10), uint8(20), false)
		f.Add([]byte(seed), uint16(12), uint8(2), true)
	}
	for _, n := range []int{maxUnauthBulk, maxUnauthBulk + 1} { // the bulk limit before AUTH
		big := fmt.Sprintf("*1\r\n$%d\r\n%s\r\n", n, strings.Repeat("x", n))
		f.Add([]byte(big), uint16(1<<15), uint8(1), true)
		f.Add([]byte(big), uint16(n+8), uint8(1), false) // the request limit
	}
	f.Fuzz(func(t *testing.T, in []byte, max uint16, args uint8, unauth bool) {
		lim := frameLimits{max: int(max), maxArgs: int(args), unauth: unauth}
		fast := frameEnds(in, lim)
		lim.steps = true
		if slow := frameEnds(in, lim); !slices.Equal(fast, slow) {
			t.Fatalf("%q with %+v:\n whole: %q\n steps: %q", in, lim, fast, slow)
		}
	})
}

// A request that came in one read is scanned in one step.
func TestFrameWholeArrayOneStep(t *testing.T) {
	in := []byte("*3\r\n$4\r\nXADD\r\n$1\r\nk\r\n$2\r\n**\r\n")
	lim := frameLimits{max: 1 << 20, maxArgs: 1 << 20}
	var s frameScan
	if i, err := s.step(in, 0, &lim); i != len(in) || err != nil || s.state != stStart || s.size != len(in) {
		t.Fatalf("one step: %d %v %+v", i, err, s)
	}
	if n := wholeArray(in[:len(in)-1], &lim); n != 0 {
		t.Fatalf("a cut request: %d", n)
	}
}
