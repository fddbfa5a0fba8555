package server

import (
	"net"
	"strconv"
	"unsafe"
)

// Large replies are not built whole in c.out, which would hold them once
// more for every doubling of the buffer: a bulk string of bigReply bytes
// or more is written to the client from where it is (the request's input
// for ECHO, the stream for a field value), and a reply of many entries is
// written out each time the buffer passes bigReply (c.entries), or, when
// its length is known only at its end (rangeReply), kept in pieces of
// about bigReply bytes that go out with their header. Its peak memory is
// then about the size of the reply, not four or five times it. Except on
// a durable server for a call that may change a DB (XREADGROUP, XCLAIM,
// XAUTOCLAIM): its reply is held whole in c.out until the log barrier, so
// that it can still become MISCONF (holdReply).
//
// MaxReplyBytes still holds: a reply found too large before any of it was
// sent is replaced by an error, as before; one found too large after part
// of it was sent cannot be taken back, and the connection is closed, as
// Redis closes a client past its client-output-buffer-limit.

// bigReply is the size from which a bulk string or the gathered part of
// a reply is written out while the command runs.
const bigReply = 1 << 20

var crlf = []byte("\r\n")

// replySize is the size of the running command's reply so far: what was
// sent, what is held in pieces, and what is in c.out.
func (c *conn) replySize() int { return c.streamed + c.held + len(c.out) - c.replyStart }

// writeOut writes c.out[:n] and then bufs to the client after the log
// barrier, as flush does, and returns where c.out[:n] ends once the
// barrier replaced replies by MISCONF errors (logBarrier); after an error
// it writes nothing. The running call is one that only reads (see
// holdReply), so its part goes out whatever the barrier found: under
// always the core fails a read rather than let it return a change not on
// disk; under everysec and no a read may show changes the barrier has
// not written yet, as Redis's do.
func (c *conn) writeOut(n int, bufs ...[]byte) int {
	if c.writeErr != nil {
		return n
	}
	n = c.logBarrier(nil, n)
	nb := net.Buffers(append([][]byte{c.out[:n]}, bufs...))
	_, c.writeErr = nb.WriteTo(c.nc)
	return n
}

// holdReply reports whether the reply of the running call stays whole in
// c.out rather than going out in pieces: that of a call that may have
// changed a durable DB, whose log the next log barrier writes (under
// always, syncs), so that it can still become MISCONF if that fails.
func (c *conn) holdReply() bool { return c.callWrote != 0 && c.srv.durable }

// sendNow writes c.out and then bufs to the client, in the middle of a
// command's reply, and counts what of the reply went out.
func (c *conn) sendNow(bufs ...[]byte) {
	n := 0
	for _, b := range bufs {
		n += len(b)
	}
	end := c.writeOut(len(c.out), bufs...)
	c.streamed += n + end - c.replyStart
	c.out, c.replyStart = c.out[:0], 0
}

// bigBulk writes b, of bigReply bytes or more, as a bulk string without
// copying it, unless the reply would pass MaxReplyBytes.
func (c *conn) bigBulk(b []byte) {
	hdr := strconv.AppendInt(append(c.scratch[:0], '$'), int64(len(b)), 10)
	hdr = append(hdr, '\r', '\n')
	c.scratch = hdr
	if c.replySize()+len(hdr)+len(b)+2 > c.srv.opts.MaxReplyBytes {
		c.replyOver = true
		return
	}
	if c.holdReply() {
		c.out = append(append(append(c.out, hdr...), b...), crlf...)
		return
	}
	c.sendNow(hdr, b, crlf)
}

// bigBulkString is bigBulk for a string: the write only reads it.
func (c *conn) bigBulkString(s string) {
	c.bigBulk(unsafe.Slice(unsafe.StringData(s), len(s)))
}

// streamIfBig writes out what the reply gathered once it passes bigReply.
// Only for replies whose parts before it are final (their lengths
// written).
func (c *conn) streamIfBig() {
	if len(c.out) > bigReply && !c.holdReply() {
		c.sendNow()
	}
}

// pieces holds a reply whose header is known only at its end, in pieces
// of about bigReply bytes (see rangeReply).
type pieces struct {
	parts [][]byte
}

// cut moves the reply gathered in c.out from start on into the pieces once
// it passes bigReply, first writing out what c.out holds before start
// (earlier replies, or the start of the running one). It returns the new
// start of the reply in c.out.
func (p *pieces) cut(c *conn, start int) int {
	if len(c.out)-start <= bigReply {
		return start
	}
	if start > 0 {
		start = c.writeOut(start)
		c.streamed += start - c.replyStart
		c.replyStart = 0
	}
	part := c.out[start:]
	if !c.srv.reserveClientMem(cap(part)) {
		c.memOver, c.replyOver = true, true
		return start
	}
	p.parts = append(p.parts, part)
	c.held += len(part)
	c.out = make([]byte, 0, bigReply+bigReply/8)
	return 0
}

// send writes the header, the pieces and the rest of the reply in c.out.
func (p *pieces) send(c *conn, header []byte) {
	bufs := append(append([][]byte{header}, p.parts...), c.out)
	c.writeOut(0, bufs...)
	c.streamed += len(header) + c.held + len(c.out)
	c.out = c.out[:0]
	c.written()
	p.release(c)
}

// release forgets the pieces, sent or not (a reply replaced by an error).
func (p *pieces) release(c *conn) {
	freed := 0
	for _, part := range p.parts {
		freed += cap(part)
	}
	c.srv.clientMem.Add(-int64(freed))
	c.srv.noteFreed(freed)
	p.parts, c.held = nil, 0
}
