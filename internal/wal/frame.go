package wal

import (
	"encoding/binary"
	"hash/crc32"
)

// FrameHeaderSize is the size of a frame's header: the payload length and
// the checksum, 4 bytes each.
const FrameHeaderSize = 8

// MaxPayload is the largest payload a frame may carry. A frame whose length
// word is bigger is never valid, whatever its checksum.
const MaxPayload = 1 << 30

// castagnoli is the CRC-32C table; hash/crc32 uses the CPU's CRC
// instruction for it where there is one.
var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// frameCRC returns the checksum of a frame: CRC-32C over the 4 length bytes
// followed by the payload.
func frameCRC(lenBytes, payload []byte) uint32 {
	return crc32.Update(crc32.Update(0, castagnoli, lenBytes), castagnoli, payload)
}

// BeginFrame appends FrameHeaderSize placeholder bytes to dst and returns
// dst and the offset where the frame starts. Append the payload to the
// returned slice, then call EndFrame with that offset. Together they build
// a frame in place, with no copy of the payload and no allocation when dst
// has room.
func BeginFrame(dst []byte) ([]byte, int) {
	start := len(dst)
	return append(dst, 0, 0, 0, 0, 0, 0, 0, 0), start
}

// EndFrame fills in the header of the frame BeginFrame started at start:
// the payload is everything appended to dst after the header. It panics if
// the payload is larger than MaxPayload or start is not a frame BeginFrame
// returned for dst, as both are mistakes of the caller.
func EndFrame(dst []byte, start int) []byte {
	n := len(dst) - start - FrameHeaderSize
	if start < 0 || n < 0 {
		panic("wal: EndFrame without a matching BeginFrame")
	}
	if n > MaxPayload {
		panic("wal: frame payload larger than MaxPayload")
	}
	h := dst[start : start+FrameHeaderSize]
	binary.LittleEndian.PutUint32(h[0:4], uint32(n))
	binary.LittleEndian.PutUint32(h[4:8], frameCRC(h[0:4], dst[start+FrameHeaderSize:]))
	return dst
}

// AppendFrame appends one frame carrying payload to dst and returns the
// extended slice. It panics if payload is larger than MaxPayload.
func AppendFrame(dst, payload []byte) []byte {
	dst, start := BeginFrame(dst)
	dst = append(dst, payload...)
	return EndFrame(dst, start)
}

// FrameReason says why bytes do not decode as a frame.
type FrameReason uint8

// The reasons a frame does not decode, in the order they are checked.
const (
	// ReasonShortHeader: fewer than FrameHeaderSize bytes are left.
	ReasonShortHeader FrameReason = iota + 1
	// ReasonBadLength: the length word is larger than MaxPayload.
	ReasonBadLength
	// ReasonShortPayload: the length word runs past the end of the data.
	ReasonShortPayload
	// ReasonBadChecksum: the checksum does not match the length and
	// payload.
	ReasonBadChecksum
)

// String describes the reason in a few words.
func (r FrameReason) String() string {
	switch r {
	case ReasonShortHeader:
		return "incomplete frame header"
	case ReasonBadLength:
		return "bad length"
	case ReasonShortPayload:
		return "incomplete payload"
	case ReasonBadChecksum:
		return "bad checksum"
	}
	return "bad frame"
}

// FrameError is the error DecodeFrame returns. It wraps ErrCorrupt, but on
// its own a short frame at the end of the data may just be incomplete:
// ScanSegment is what tells a torn tail from corruption.
type FrameError struct {
	Reason FrameReason
}

// Error returns "xstream: bad frame: " and the reason.
func (e FrameError) Error() string { return "xstream: bad frame: " + e.Reason.String() }

// Unwrap returns ErrCorrupt.
func (e FrameError) Unwrap() error { return ErrCorrupt }

// DecodeFrame decodes the frame at the start of data. It returns the
// payload, which aliases data, and n, the frame's whole size in bytes; the
// next frame starts at data[n:]. If the bytes are not a whole valid frame
// the error is a FrameError saying why, and n is 0. It does not allocate.
func DecodeFrame(data []byte) (payload []byte, n int, err error) {
	payload, n, r := decodeFrame(data)
	if r != 0 {
		return nil, 0, FrameError{Reason: r}
	}
	return payload, n, nil
}

// decodeFrame is DecodeFrame with the reason as a plain value.
func decodeFrame(data []byte) (payload []byte, n int, r FrameReason) {
	if len(data) < FrameHeaderSize {
		return nil, 0, ReasonShortHeader
	}
	l := binary.LittleEndian.Uint32(data[0:4])
	if l > MaxPayload {
		return nil, 0, ReasonBadLength
	}
	end := FrameHeaderSize + int(l)
	if end > len(data) {
		return nil, 0, ReasonShortPayload
	}
	payload = data[FrameHeaderSize:end]
	if frameCRC(data[0:4], payload) != binary.LittleEndian.Uint32(data[4:8]) {
		return nil, 0, ReasonBadChecksum
	}
	return payload, end, 0
}

// crc32c returns the CRC-32C of b.
func crc32c(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }
