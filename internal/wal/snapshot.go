package wal

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"
	"slices"
)

// trailerMagic starts the payload of the trailer frame that ends a
// snapshot; a u64 LE count of the frames before it follows.
const trailerMagic = "XSTREND\x00"

// trailerPayloadSize is the size of the trailer frame's payload.
const trailerPayloadSize = len(trailerMagic) + 8

// writerBufSize is the buffer of a Writer: large, as snapshots are
// written in one go.
const writerBufSize = 256 << 10

// readerChunk is the most a Reader allocates for a payload before the
// source has delivered any of it; past that it grows with what arrives.
const readerChunk = 64 << 10

// errClosed is returned by a Writer used after Close.
var errClosed = fmt.Errorf("xstream: snapshot writer: %w", os.ErrClosed)

// Writer writes a framed file that is written whole, such as a snapshot
// or a backup: the header, one frame per Append, and at Close a trailer
// frame whose payload is "XSTREND\x00" and the u64 LE count of frames
// before it. Writes are buffered; errors of the underlying writer surface
// from a later Append or from Close. A Writer is not safe for concurrent
// use.
//
// To write a snapshot file, make the Writer inside WriteFileAtomic's
// write function and return its Close error, so the file is complete and
// synced before it replaces the old one.
type Writer struct {
	bw          *bufio.Writer
	count       uint64
	closed      bool
	closeErr    error
	frameHeader [FrameHeaderSize]byte // Append's scratch, here so it is not allocated each time
}

// NewWriter returns a Writer writing a file of the given kind and base to
// w, and writes the header. kind must be KindSnapshot (a log segment is
// written with a Segment, without a trailer); any other is an error
// wrapping os.ErrInvalid.
func NewWriter(w io.Writer, kind Kind, base uint64) (*Writer, error) {
	if kind != KindSnapshot {
		return nil, fmt.Errorf("xstream: a Writer writes snapshots, not a %s: %w", kind, os.ErrInvalid)
	}
	sw := &Writer{bw: bufio.NewWriterSize(w, writerBufSize)}
	if _, err := sw.bw.Write(AppendHeader(nil, kind, base)); err != nil {
		return nil, err
	}
	return sw, nil
}

// Append writes one frame carrying payload. A payload larger than
// MaxPayload is an error wrapping os.ErrInvalid.
func (w *Writer) Append(payload []byte) error {
	if w.closed {
		return errClosed
	}
	if len(payload) > MaxPayload {
		return tooLarge(len(payload))
	}
	h := w.frameHeader[:]
	binary.LittleEndian.PutUint32(h[0:4], uint32(len(payload)))
	binary.LittleEndian.PutUint32(h[4:8], frameCRC(h[0:4], payload))
	if _, err := w.bw.Write(h); err != nil {
		return err
	}
	if _, err := w.bw.Write(payload); err != nil {
		return err
	}
	w.count++
	return nil
}

// AppendFunc writes one frame whose payload fn appends to dst, building
// it in place in the Writer's buffer when it fits there. fn must only
// append to dst and must not keep it. A payload larger than MaxPayload is
// an error wrapping os.ErrInvalid.
func (w *Writer) AppendFunc(fn func(dst []byte) []byte) error {
	if w.closed {
		return errClosed
	}
	b, start := BeginFrame(w.bw.AvailableBuffer())
	b = fn(b)
	if n := len(b) - start - FrameHeaderSize; n > MaxPayload {
		return tooLarge(n)
	}
	if _, err := w.bw.Write(EndFrame(b, start)); err != nil {
		return err
	}
	w.count++
	return nil
}

// Close writes the trailer and flushes the buffer. It does not close the
// underlying writer. Calling Close again returns the first call's result.
func (w *Writer) Close() error {
	if w.closed {
		return w.closeErr
	}
	w.closed = true
	var t [trailerPayloadSize]byte
	copy(t[:], trailerMagic)
	binary.LittleEndian.PutUint64(t[len(trailerMagic):], w.count)
	var f [FrameHeaderSize + trailerPayloadSize]byte
	// A failed write is sticky in the buffer: Flush reports it.
	w.bw.Write(AppendFrame(f[:0], t[:]))
	w.closeErr = w.bw.Flush()
	return w.closeErr
}

func tooLarge(n int) error {
	return fmt.Errorf("xstream: a payload of %d bytes is larger than MaxPayload: %w", n, os.ErrInvalid)
}

// Reader reads a framed file a Writer wrote. A Reader is not safe for
// concurrent use.
//
// Such a file is written whole and then put in place, so it is never
// legitimately cut short: every defect (a bad frame, a file that ends
// before its trailer, a trailer whose count does not match) is a
// *CorruptError wrapping ErrCorrupt, naming the offset of the frame and,
// when the source has a Name method as *os.File does, the file.
type Reader struct {
	br    *bufio.Reader
	path  string
	hdr   Header
	off   int64 // offset of the next frame
	last  int64 // offset of the frame Next last returned
	count uint64
	buf   []byte
	err   error // sticky: io.EOF after the trailer, or the first error

	frameHeader [FrameHeaderSize]byte // Next's scratch, here so it is not allocated each time
}

// NewReader reads the header of a framed file of the given kind from r.
// Errors wrap ErrNotOurs (r ends before a whole header, or the header is
// not ours or of another kind) or ErrVersion, or are r's own.
func NewReader(r io.Reader, kind Kind) (*Reader, error) {
	sr := &Reader{br: bufio.NewReaderSize(r, readerChunk), off: HeaderSize}
	if n, ok := r.(interface{ Name() string }); ok {
		sr.path = n.Name()
	}
	var b [HeaderSize]byte
	n, err := io.ReadFull(sr.br, b[:])
	if err != nil && err != io.EOF && err != io.ErrUnexpectedEOF {
		return nil, err
	}
	sr.hdr, err = parseHeader(b[:n], kind, sr.path)
	if err != nil {
		return nil, err
	}
	return sr, nil
}

// Header returns the file's header.
func (r *Reader) Header() Header { return r.hdr }

// Next returns the payload of the next frame; it is valid until the next
// call. After the last frame it returns io.EOF, once the trailer has been
// read with the matching count and nothing follows it. Any error is
// returned again by every later call.
//
// A payload is read as it arrives, so a damaged length word claiming up
// to MaxPayload bytes costs memory only in proportion to the bytes the
// source really delivers.
func (r *Reader) Next() ([]byte, error) {
	if r.err != nil {
		return nil, r.err
	}
	start := r.off
	h := r.frameHeader[:]
	if _, err := io.ReadFull(r.br, h); err != nil {
		switch err {
		case io.EOF:
			return nil, r.corrupt(start, "missing trailer")
		case io.ErrUnexpectedEOF:
			return nil, r.corrupt(start, ReasonShortHeader.String())
		}
		return nil, r.fail(err)
	}
	l := binary.LittleEndian.Uint32(h[0:4])
	if l > MaxPayload {
		return nil, r.corrupt(start, ReasonBadLength.String())
	}
	r.buf = r.buf[:0]
	for len(r.buf) < int(l) {
		chunk := min(int(l)-len(r.buf), max(len(r.buf), readerChunk))
		r.buf = slices.Grow(r.buf, chunk)
		m, err := io.ReadFull(r.br, r.buf[len(r.buf):len(r.buf)+chunk])
		r.buf = r.buf[:len(r.buf)+m]
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, r.corrupt(start, ReasonShortPayload.String())
		}
		if err != nil {
			return nil, r.fail(err)
		}
	}
	if frameCRC(h[0:4], r.buf) != binary.LittleEndian.Uint32(h[4:8]) {
		return nil, r.corrupt(start, ReasonBadChecksum.String())
	}
	r.off = start + FrameHeaderSize + int64(l)
	if len(r.buf) == trailerPayloadSize && string(r.buf[:len(trailerMagic)]) == trailerMagic {
		// A frame shaped like the trailer is the trailer only if it
		// ends the file; otherwise it is a payload like any other.
		_, err := r.br.Peek(1)
		if err == io.EOF {
			if n := binary.LittleEndian.Uint64(r.buf[len(trailerMagic):]); n != r.count {
				return nil, r.corrupt(start, fmt.Sprintf("trailer counts %d frames, %d were read", n, r.count))
			}
			r.err = io.EOF
			return nil, io.EOF
		}
		if err != nil {
			return nil, r.fail(err)
		}
	}
	r.count++
	r.last = start
	return r.buf, nil
}

func (r *Reader) corrupt(off int64, reason string) error {
	return r.fail(&CorruptError{Kind: r.hdr.Kind, Path: r.path, Offset: off, Reason: reason})
}

func (r *Reader) fail(err error) error {
	r.err = err
	return err
}
