//lint:file-ignore ST1005 the frame reader's errors are Redis's protocol error replies, which clients read as they are, capital included

package server

import (
	"bufio"
	"bytes"
	"errors"
	"io"
)

// Errors of frameReader, with Redis's text.
var (
	errRequestTooLarge = errors.New("request too large")
	errBulkLength      = errors.New("Protocol error: invalid bulk length")
	errMultibulkLength = errors.New("Protocol error: invalid multibulk length")
	errInlineTooBig    = errors.New("Protocol error: too big inline request")
	errUnauthMultibulk = errors.New("Protocol error: unauthenticated multibulk length")
	errUnauthBulk      = errors.New("Protocol error: unauthenticated bulk length")
)

const (
	maxBulkLen      = 512 << 20 // Redis's proto-max-bulk-len
	maxMultibulkLen = 1<<31 - 1
	maxHeaderLine   = 32
	// maxInline is Redis's PROTO_INLINE_MAX_SIZE: an inline request
	// whose line (without its CR LF) is longer is refused.
	maxInline = 64 << 10
	// Redis's limits on the requests of a client that has not
	// authenticated (networking.c).
	maxUnauthArgs = 10
	maxUnauthBulk = 16 << 10
)

// Scanner states.
const (
	stStart  = iota // at the start of a request
	stArray         // in the *count line
	stBulk          // in a $size line
	stBody          // in a bulk payload and its CRLF
	stInline        // in an inline request
	stOpaque        // after something the parser will refuse: no more framing
)

// frameReader reads a client's input for redcon's parser. It follows the
// framing of the requests (headers and bulk lengths, not their contents)
// so that it can refuse, before buffering them, a length Redis refuses, an
// inline request over Redis's 64 KiB or a request over max bytes; it drops
// the empty requests Redis ignores (*0, *-1 and empty lines), which the
// parser would refuse; and it hands over whole requests whenever it can
// (at most readChunk bytes at a time), so that the parser does not keep
// bytes already parsed and its buffer stays about the size of one
// request.
//
// An inline request is handed over alone, in reads of its own: the parser
// drops the requests it parsed in the same pass as one it refuses (for
// unbalanced quotes), and Redis answers them.
type frameReader struct {
	br   *bufio.Reader
	lim  frameLimits
	err  error // returned once the requests before it are handed over
	scan frameScan
}

// frameLimits are what a frameReader refuses.
type frameLimits struct {
	max     int // bytes of a request
	maxArgs int // arguments of a request (*N)
	// unauth is true while the client has not authenticated to a server
	// that wants a password: as Redis, a request may then have at most
	// maxUnauthArgs arguments of at most maxUnauthBulk bytes, and the
	// reader hands over one request at a time, so that each is framed
	// with the limits in force once the requests before it have run
	// (an AUTH among them lifts them for the next).
	unauth bool
	// steps turns wholeArray off: every request is scanned one header
	// or payload at a time (for tests to compare the two).
	steps bool
}

// frameScan is where the scan of the input stands. It is a value: a copy
// scans on without changing the original.
type frameScan struct {
	state int
	line  [maxHeaderLine]byte // the start of a header line cut by a read
	nline int                 // bytes in line
	left  int                 // arguments left in the request (stBulk, stBody)
	skip  int                 // payload bytes left (stBody)
	size  int                 // bytes of the current request
	first byte                // the request's first byte
	cr    bool                // the inline request's last byte so far is a CR
	empty bool                // the request that just ended is empty (stStart)
}

func newFrameReader(r io.Reader, lim frameLimits) *frameReader {
	return &frameReader{br: bufio.NewReaderSize(r, readChunk), lim: lim}
}

// Read hands over the whole requests buffered, without the empty ones, or
// if there are none, the part of one that is buffered. O(bytes); it blocks
// reading the socket only when there is nothing to hand over.
func (f *frameReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	need := 1
	for {
		if f.err != nil {
			return 0, f.err
		}
		if f.br.Buffered() < need {
			if _, err := f.br.Peek(need); err != nil {
				return 0, err
			}
		}
		n, held, err := f.fill(p)
		if n > 0 || err != nil {
			return n, err
		}
		need = 1
		if held {
			// The start of a request whose header is not complete:
			// it may still be an empty request.
			need = f.br.Buffered() + 1
		}
	}
}

// midRequest reports whether what Read has handed over ends inside a RESP
// request, so that the last request handed over is not whole. Read hands
// over the start of a request only when it holds no whole one, so the
// bytes handed over since the last whole request are that start alone:
// parsing them can wait for the next Read, which keeps the cost of a
// request read in many pieces linear in its size.
func (f *frameReader) midRequest() bool {
	switch f.scan.state {
	case stArray, stBulk, stBody:
		return true
	}
	return false
}

// bodyLeft returns the bytes of the bulk being read that Read has not
// handed over yet, with its CR LF; 0 between bulks.
func (f *frameReader) bodyLeft() int {
	if f.scan.state != stBody {
		return 0
	}
	return f.scan.skip
}

// fill does Read's work on what is buffered. It returns 0 when it only
// dropped empty requests, or when held, when what is buffered is the
// start of a request that may yet be empty.
func (f *frameReader) fill(p []byte) (n int, held bool, err error) {
	buf, _ := f.br.Peek(f.br.Buffered())
	s := f.scan
	w, seg := 0, 0  // bytes put in p; start of the bytes not yet put in p nor dropped
	end, at := 0, s // end of the last request taken or dropped, and the scan there
	req, full := 0, false
	i := 0
	for i < len(buf) {
		if s.state == stStart {
			req = i
		}
		if i, err = s.step(buf, i, &f.lim); err != nil {
			break
		}
		if s.state != stStart {
			continue
		}
		if s.empty {
			w += copy(p[w:], buf[seg:req])
			seg, end, n, at = i, i, w, s
			continue
		}
		if w+i-seg > len(p) {
			full = true
			break
		}
		if s.first != '*' { // inline: alone in its read
			if n == 0 {
				end, n, at = i, w+i-seg, s
			}
			break
		}
		end, n, at = i, w+i-seg, s
		if f.lim.unauth {
			break // one at a time: see frameLimits
		}
	}
	if err != nil {
		f.err = err
	} else if end == 0 {
		// No whole request: hand over the start of the one under way,
		// unless it may be empty (a request that started in this buffer
		// with its header not complete).
		if !full && f.scan.state == stStart && (s.state == stArray || s.state == stInline && s.size == 1 && s.cr) {
			return 0, true, nil
		}
		end = min(len(buf), len(p))
		at = f.scan
		for j := 0; j < end; {
			j, _ = at.step(buf[:end], j, &f.lim)
		}
		n = end
	}
	copy(p[w:], buf[seg:end])
	f.br.Discard(end)
	f.scan = at
	if n == 0 && err != nil {
		return 0, false, err
	}
	return n, false, nil
}

// step scans buf from i, stopping at the end of a header line, payload or
// request, and returns where it stopped.
func (f *frameScan) step(buf []byte, i int, lim *frameLimits) (int, error) {
	max := lim.max
	start := i
	switch f.state {
	case stStart:
		f.size, f.empty, f.first, f.nline, f.cr = 0, false, buf[i], 0, false
		if buf[i] == '*' {
			if n := wholeArray(buf[i:], lim); n > 0 {
				f.size = n
				return i + n, nil // the request's steps in one
			}
			f.state = stArray
			i++
		} else {
			f.state = stInline
		}
	case stArray, stBulk:
		if f.state == stBulk && f.nline == 0 && buf[i] != '$' {
			f.state = stOpaque // the parser says what it expected
			i = len(buf)
			break
		}
		j := bytes.IndexByte(buf[i:], '\n')
		end := len(buf)
		if j >= 0 {
			end = i + j
		}
		if f.nline+end-i > maxHeaderLine {
			return end, f.headerError()
		}
		var line []byte
		if j >= 0 && f.nline == 0 {
			line = buf[i:end] // the whole line is here: no copy
		} else {
			f.nline += copy(f.line[f.nline:], buf[i:end])
			line = f.line[:f.nline]
		}
		if j < 0 {
			i = end
			break
		}
		i = end + 1
		f.nline = 0
		if len(line) == 0 || line[len(line)-1] != '\r' {
			return i, f.headerError()
		}
		line = line[:len(line)-1]
		if f.state == stArray {
			v, ok := parseLL(line)
			switch {
			case !ok || v > maxMultibulkLen:
				return i, errMultibulkLength
			case lim.unauth && v > maxUnauthArgs:
				return i, errUnauthMultibulk
			case v > int64(lim.maxArgs):
				return i, errMultibulkLength
			case v <= 0:
				f.state, f.empty = stStart, true // Redis ignores it
			default:
				f.left, f.state = int(v), stBulk
			}
			break
		}
		v, ok := parseLL(line[1:])
		if !ok || v < 0 || v > int64(maxBulkLen) {
			return i, errBulkLength
		}
		if lim.unauth && v > maxUnauthBulk {
			return i, errUnauthBulk
		}
		if int(v) > max-f.size {
			return i, errRequestTooLarge
		}
		f.skip, f.state = int(v)+2, stBody
	case stBody:
		k := min(f.skip, len(buf)-i)
		i += k
		f.skip -= k
		if f.skip == 0 {
			if f.left--; f.left == 0 {
				f.state = stStart
			} else {
				f.state = stBulk
			}
		}
	case stInline:
		j := bytes.IndexByte(buf[i:], '\n')
		nl := j >= 0
		if !nl {
			j = len(buf) - i
		}
		// The line so far, without a CR that may end it.
		cr := j > 0 && buf[i+j-1] == '\r' || j == 0 && f.cr
		line := f.size + j
		if cr {
			line--
		}
		if line > maxInline {
			return i + j, errInlineTooBig
		}
		i += j
		f.cr = cr
		if nl {
			i++
			f.state = stStart
			f.empty = line == 0
		}
	case stOpaque:
		i = len(buf)
	}
	f.size += i - start
	if f.size > max {
		return i, errRequestTooLarge
	}
	return i, nil
}

// headerError is the error for a bad header line in state stArray or
// stBulk.
func (f *frameScan) headerError() error {
	if f.state == stArray {
		return errMultibulkLength
	}
	return errBulkLength
}

// wholeArray returns the length of the RESP array request at the start of
// buf when all of it is in buf and the steps of frameScan would take it
// without an error, with at least one argument; otherwise 0, and the
// steps scan it one header or payload at a time. It is those steps in one
// pass, for the common case of a request that came in one read: each of
// its tests is at least as strict as theirs. O(arguments).
func wholeArray(buf []byte, lim *frameLimits) int {
	if lim.steps {
		return 0
	}
	// plainLen takes only plain digits, which the steps take too.
	count, i := plainLen(buf, 1)
	if i == 0 || count < 1 || count > maxMultibulkLen || count > lim.maxArgs || lim.unauth && count > maxUnauthArgs {
		return 0
	}
	for range count {
		if i >= len(buf) || buf[i] != '$' {
			return 0
		}
		var v int
		if v, i = plainLen(buf, i+1); i == 0 || v > maxBulkLen || lim.unauth && v > maxUnauthBulk {
			return 0
		}
		if i += v + 2; i > len(buf) || i > lim.max {
			return 0
		}
	}
	return i
}

// splitWhole splits the RESP array request at the start of buf into its
// arguments, appended to args, and returns them with the request's end,
// when all of it is in buf, with at least one argument, every length
// plain digits (no sign, no leading zero, at most 10) and every payload
// ended by CR LF; otherwise 0, and redcon parses it. Each argument is
// buf[start:end], as redcon slices it. O(arguments).
func splitWhole(buf []byte, args [][]byte) ([][]byte, int) {
	if len(buf) == 0 || buf[0] != '*' {
		return args, 0
	}
	count, i := plainLen(buf, 1)
	// An argument takes 6 bytes at least ("$0\r\n\r\n").
	if i == 0 || count < 1 || count > (len(buf)-i)/6 {
		return args, 0
	}
	if count > cap(args) { // at once rather than by appends, which would copy them over and over
		args = make([][]byte, 0, count)
	}
	for range count {
		if i >= len(buf) || buf[i] != '$' {
			return args, 0
		}
		var n int
		if n, i = plainLen(buf, i+1); i == 0 || len(buf)-i < n+2 || buf[i+n] != '\r' || buf[i+n+1] != '\n' {
			return args, 0
		}
		args = append(args, buf[i:i+n])
		i += n + 2
	}
	return args, i
}

// plainLen parses the plain decimal number at buf[from:] ended by CR LF
// and returns it and where its line ends, past the LF; 0 for the end when
// it is not one.
func plainLen(buf []byte, from int) (int, int) {
	// Most lengths of a request are one digit.
	if from+2 < len(buf) && buf[from+1] == '\r' && buf[from+2] == '\n' {
		if d := buf[from] - '0'; d <= 9 {
			return int(d), from + 3
		}
		return 0, 0
	}
	n := 0
	for i := from; i < len(buf) && i <= from+10; i++ {
		switch ch := buf[i]; {
		case '0' <= ch && ch <= '9':
			if i > from && buf[from] == '0' {
				return 0, 0
			}
			n = n*10 + int(ch-'0')
		case ch == '\r' && i > from && i+1 < len(buf) && buf[i+1] == '\n':
			return n, i + 2
		default:
			return 0, 0
		}
	}
	return 0, 0
}
