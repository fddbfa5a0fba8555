package wal

import "encoding/binary"

// Frames whose checksum is computed later.
//
// A log appends records under a lock that every writer of the DB takes;
// computing a record's checksum there would make each of them wait for
// it. EndFrameLen ends a frame with its length only, and the one writer
// that takes the buffer to the file seals all its frames at once with
// SealFrames, outside any lock the producers need.

// EndFrameLen is EndFrame without the checksum: it fills in the length of
// the frame BeginFrame started at start and leaves the checksum to
// SealFrames. It panics as EndFrame does.
func EndFrameLen(dst []byte, start int) []byte {
	n := len(dst) - start - FrameHeaderSize
	if start < 0 || n < 0 {
		panic("wal: EndFrameLen without a matching BeginFrame")
	}
	if n > MaxPayload {
		panic("wal: frame payload larger than MaxPayload")
	}
	binary.LittleEndian.PutUint32(dst[start:start+4], uint32(n))
	return dst
}

// SealFrames fills in the checksum of every frame of buf, a sequence of
// whole frames ended by EndFrameLen (or EndFrame: sealing twice gives the
// same bytes). It panics if buf does not end at a frame boundary. O(len(buf)).
func SealFrames(buf []byte) {
	for p := 0; p < len(buf); {
		if len(buf)-p < FrameHeaderSize {
			panic("wal: SealFrames: a cut frame header")
		}
		n := int(binary.LittleEndian.Uint32(buf[p : p+4]))
		end := p + FrameHeaderSize + n
		if n > MaxPayload || end > len(buf) {
			panic("wal: SealFrames: a cut frame")
		}
		binary.LittleEndian.PutUint32(buf[p+4:p+8], frameCRC(buf[p:p+4], buf[p+FrameHeaderSize:end]))
		p = end
	}
}
