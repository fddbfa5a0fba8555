package server

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strconv"
)

// Errors of frameReader, with Redis's text.
var (
	errRequestTooLarge = errors.New("request too large")
	errBulkLength      = errors.New("Protocol error: invalid bulk length")
	errMultibulkLength = errors.New("Protocol error: invalid multibulk length")
)

const (
	maxBulkLen      = 512 << 20 // Redis's proto-max-bulk-len
	maxMultibulkLen = 1<<31 - 1
	maxHeaderLine   = 32
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
// so that it can refuse, before buffering them, a bulk length Redis
// refuses or a request over max bytes; and it hands over whole requests
// whenever it can (at most readChunk bytes at a time), so that the parser
// does not keep bytes already parsed and its buffer stays about the size
// of one request.
type frameReader struct {
	br   *bufio.Reader
	max  int
	err  error // returned once the requests before it are handed over
	scan frameScan
}

// frameScan is where the scan of the input stands.
type frameScan struct {
	state int
	line  []byte // the header line read so far
	left  int    // arguments left in the request (stBulk, stBody)
	skip  int    // payload bytes left (stBody)
	size  int    // bytes of the current request
}

func newFrameReader(r io.Reader, max int) *frameReader {
	return &frameReader{br: bufio.NewReaderSize(r, readChunk), max: max}
}

// Read hands over the whole requests buffered, or if there are none, the
// part of one that is buffered. O(bytes); it blocks reading the socket
// only when nothing is buffered.
func (f *frameReader) Read(p []byte) (int, error) {
	if f.err != nil {
		return 0, f.err
	}
	if f.br.Buffered() == 0 {
		if _, err := f.br.Peek(1); err != nil {
			return 0, err
		}
	}
	buf, _ := f.br.Peek(min(len(p), f.br.Buffered()))
	s := f.scan
	s.line = append([]byte(nil), s.line...)
	n, at := -1, s
	var err error
	for i := 0; i < len(buf) && err == nil; {
		i, err = s.step(buf, i, f.max)
		if err == nil && s.state == stStart {
			n, at = i, s
		}
	}
	if err != nil {
		f.err = err
		if n < 0 {
			return 0, err
		}
	} else if n < 0 {
		n, at = len(buf), s
	}
	copy(p, buf[:n])
	f.br.Discard(n)
	f.scan = at
	return n, nil
}

// step scans buf from i, stopping at the end of a header line, payload or
// request, and returns where it stopped.
func (f *frameScan) step(buf []byte, i, max int) (int, error) {
	start := i
	switch f.state {
	case stStart:
		f.size = 0
		if buf[i] == '*' {
			f.state, f.line = stArray, f.line[:0]
			i++
		} else {
			f.state = stInline
		}
	case stArray, stBulk:
		j := bytes.IndexByte(buf[i:], '\n')
		end := len(buf)
		if j >= 0 {
			end = i + j
		}
		f.line = append(f.line, buf[i:end]...)
		if len(f.line) > maxHeaderLine {
			if f.state == stArray {
				return end, errMultibulkLength
			}
			return end, errBulkLength
		}
		if j < 0 {
			i = end
			break
		}
		i = end + 1
		line := bytes.TrimSuffix(f.line, []byte{'\r'})
		f.line = f.line[:0]
		if f.state == stArray {
			v, err := strconv.ParseInt(string(line), 10, 64)
			switch {
			case err != nil || v > maxMultibulkLen:
				return i, errMultibulkLength
			case v <= 0:
				f.state = stStart // empty request: the parser judges it
			default:
				f.left, f.state = int(v), stBulk
			}
			break
		}
		if len(line) == 0 || line[0] != '$' {
			f.state = stOpaque
			break
		}
		v, err := strconv.ParseInt(string(line[1:]), 10, 64)
		if err != nil || v < 0 || v > int64(maxBulkLen) {
			return i, errBulkLength
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
		if j < 0 {
			i = len(buf)
		} else {
			i += j + 1
			f.state = stStart
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
