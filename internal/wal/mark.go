package wal

import (
	"bytes"
	"encoding/binary"
)

// Sync marks: how a scan tells a record that reached the disk from a
// torn write.
//
// Bytes a crash damaged are always bytes written after the last
// successful fdatasync; bytes damaged before it were damaged by
// something else (the disk, a stray write, a user), and dropping them
// would drop acknowledged records. But a log's frames do not say which of
// them were synced. So after each successful Sync, a Segment writes a
// sync mark just past its last record: MarkSize bytes saying "every byte
// of this segment before this offset was on disk when this mark was
// written". The next batch of records overwrites it, and the Sync after
// that writes the next one further on, so a mark never sits between two
// records of the log: only after the last one.
//
//	offset 0   4 bytes  "SYNC"; as a frame's length word, more than
//	                    MaxPayload, so a mark never reads as a frame
//	offset 4   u64 LE   the mark's own offset in the segment
//	offset 12  u32 LE   CRC-32C of bytes 0..11 followed by the segment's
//	                    base (u64 LE), so that a mark copied to another
//	                    offset or file is not valid there
//
// The mark is written without a sync of its own: a crash of the machine
// may lose it (the records before it stay on disk), a crash of the
// process does not. ScanSegment uses it this way: if the first bad bytes
// of a segment, at offset O, are followed by a valid mark at an offset
// above O, they were synced, and the damage is corruption, not a torn
// write; a valid mark at O itself, followed by nothing but zeros, is the
// clean end of the segment. Where no mark says so (the machine crashed
// before it reached the disk, the damaged records were written after the
// last Sync, or the segment was written before marks existed), the bad
// bytes at the end are judged as before: a torn tail, cut off.
//
// A build without marks reads a mark after the last record as a torn
// tail, and cuts it off, which loses nothing; Segment.Close keeps a mark
// only in the newest segment of its directory (in an older one a build
// without marks would take it for a torn segment followed by a log).

// MarkSize is the size of a sync mark.
const MarkSize = 16

// markMagic starts every sync mark.
const markMagic = "SYNC"

// appendMark appends the sync mark for offset off of a segment whose base
// is base to dst. It uses 4 bytes of dst's capacity past the mark, so
// that a dst with room for 20 bytes does not allocate.
func appendMark(dst []byte, off int64, base uint64) []byte {
	start := len(dst)
	dst = append(dst, markMagic...)
	dst = binary.LittleEndian.AppendUint64(dst, uint64(off))
	dst = binary.LittleEndian.AppendUint64(dst, base) // for the checksum only
	crc := crc32c(dst[start:])
	return binary.LittleEndian.AppendUint32(dst[:start+12], crc)
}

// IsMark reports whether m starts with a valid sync mark for offset off
// of a segment whose base is base. A mark is valid only there: one copied
// to another offset or segment is not.
func IsMark(m []byte, off int64, base uint64) bool {
	var want [MarkSize + 4]byte
	return len(m) >= MarkSize && string(m[:4]) == markMagic && bytes.Equal(m[:MarkSize], appendMark(want[:0], off, base))
}

// markAfter returns the offset of the first valid sync mark that starts
// in data after offset bad, or -1 if there is none. O(len(data)-bad).
func markAfter(data []byte, bad int, base uint64) int {
	for p := bad + 1; p+MarkSize <= len(data); p++ {
		i := bytes.Index(data[p:], []byte(markMagic))
		if i < 0 {
			return -1
		}
		if p += i; IsMark(data[p:], int64(p), base) {
			return p
		}
	}
	return -1
}

// dataEnd returns the offset just past the last non-zero byte of data at
// or after from, or from if there is none.
func dataEnd(data []byte, from int) int {
	end := len(data)
	for end-8 >= from && binary.LittleEndian.Uint64(data[end-8:]) == 0 {
		end -= 8
	}
	for end > from && data[end-1] == 0 {
		end--
	}
	return end
}
