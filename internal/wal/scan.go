package wal

import (
	"encoding/binary"
	"os"
	"strconv"
)

// Tail classifies what follows the last valid record of a log segment.
type Tail uint8

// The tails ScanSegment reports.
const (
	// TailUnknown: the scan stopped early, on an I/O error or an error
	// of the callback, before it reached the end.
	TailUnknown Tail = iota
	// TailClean: every byte after the header is part of a whole, valid
	// frame, or, after the last one, of a valid sync mark (mark.go)
	// followed by nothing but zeros.
	TailClean
	// TailTorn: the bytes from ScanResult.End to the end of the file are
	// not a valid frame and hold none, nor a sync mark after End; this is
	// what a crash in the middle of a write leaves, and the caller cuts
	// the file at End.
	TailTorn
	// TailCorrupt: a frame at End is bad and a valid frame, or a valid
	// sync mark, follows it somewhere; ScanSegment returns a
	// *CorruptError.
	TailCorrupt
)

// String returns "unknown", "clean", "torn" or "corrupt".
func (t Tail) String() string {
	switch t {
	case TailClean:
		return "clean"
	case TailTorn:
		return "torn"
	case TailCorrupt:
		return "corrupt"
	}
	return "unknown"
}

// ScanResult is what ScanSegment found.
type ScanResult struct {
	Header  Header
	Records int   // the records handed to fn that it accepted
	End     int64 // the offset just past the last of them: where valid data ends
	Size    int64 // the size of the file
	Tail    Tail
	// Marked says that a valid sync mark (mark.go) starts at End, which
	// OpenSegmentForAppend keeps.
	Marked bool
	// Reason says why the bytes at End, or after the sync mark there,
	// are not a record, when Tail is TailTorn or TailCorrupt.
	Reason FrameReason
	// Cut is, when Tail is TailTorn or TailCorrupt, the bytes after End
	// (after the sync mark there, if Marked) up to the last non-zero byte
	// of the file: what cutting the file at End drops, without the zeros
	// after it (space written ahead of the records, see
	// Segment.Preallocate). 0 for a torn tail of nothing but zeros:
	// nothing that could have been a record.
	Cut int64
}

// ScanSegment reads the log segment at path and calls fn with the payload
// of each valid record, in order. The payload aliases an internal buffer:
// fn must not modify it or keep it after returning. The whole file is read
// into memory at once, so segments should be kept to tens of MiB.
//
// Errors: an error of package os reading the file; ErrNotOurs or
// ErrVersion for a bad header (a file shorter than HeaderSize is
// ErrNotOurs too, though a crash while CreateSegment ran can leave one);
// fn's error unchanged, the scan stopping there; or a *CorruptError as
// below. Whatever the error after the header, the ScanResult counts the
// records fn accepted and End is just past them.
//
// How a bad frame is judged. Scanning stops at the first bytes, at offset
// O, that are not a whole valid frame: too few bytes for a header, a
// length over MaxPayload or past the end of the file, or a wrong
// checksum. Then every later offset, O+1 to the end, is tried as the start
// of a frame. If no whole valid frame starts anywhere after O, the tail is
// torn: the last write was cut by a crash, and ScanSegment returns nil
// with Tail TailTorn and End O; records at O and after never reached the
// disk whole, and the caller cuts the file there (OpenSegmentForAppend).
// If a valid frame does start after O, bytes were damaged in the middle of
// the log: ScanSegment returns a *CorruptError wrapping ErrCorrupt that
// names the file and O, with Tail TailCorrupt; fn has already seen the
// records before O, and a caller may choose to keep that prefix and drop
// the rest.
//
// Sync marks (mark.go) refine the rule. A valid mark anywhere after O
// shows that the bytes at O had been synced when it was written: a crash
// cannot have damaged them, so that too is a *CorruptError, whatever
// follows. A valid mark at O itself followed by nothing but zeros is the
// clean end of a segment that was synced (Tail TailClean, End O); one
// followed by other bytes, a torn write after a sync. Where no mark
// follows O, O may be a torn write or damage to records that were synced
// before a crash of the machine lost their mark: the format cannot tell,
// and it is judged a torn tail. ScanResult.Cut then says how many bytes,
// zeros at the end aside, the cut drops.
//
// The rule assumes that what a crash leaves after the last whole record
// holds no well-formed frame: zeros, a cut record, bytes never written.
// It judges a torn tail as corruption in two cases: when a record's
// payload itself contains a whole frame of this format (a payload
// carrying a copy of a log segment, say) and the cut falls after it; and
// when the file system, after a crash, kept a later part of an unsynced
// write but not an earlier one. Both are reported with the prefix
// available as above, and so would be a torn record whose payload holds a
// sync mark valid for the very segment and offset where it landed. For the same reason a segment file must never be
// recycled, or preallocated with anything but zeros: its old frames would
// read as valid records after the end.
//
// Cost: one pass over the records, checksumming each (over 1 GB/s). The
// search after a bad frame is linear in the bytes after it. It skips runs
// of zero bytes word by word (no zero-filled frame header is valid: the
// checksum of a zero length is not zero), so a zero-filled tail costs
// little more than reading it. Elsewhere an offset whose length word runs
// past the end of the file is rejected at once, which in random bytes is
// nearly every offset (a few ns a byte); one that fits costs a checksum of
// at most 4 KiB or, for a longer claimed payload, a few multiplications
// over precomputed checksums of the tail (one more pass over it, and a
// sixteenth of its size in memory). A tail crafted so that every offset
// claims a payload that fits costs up to about 200 ns a byte: seconds for
// tens of MiB, never the square of the size. The search for a sync mark
// is one more pass over the tail, which finds the mark's first bytes with
// bytes.Index.
func ScanSegment(path string, fn func(payload []byte) error) (ScanResult, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return ScanResult{}, err
	}
	return scanSegmentData(data, path, fn)
}

// scanSegmentData is ScanSegment on the file's content.
func scanSegmentData(data []byte, path string, fn func(payload []byte) error) (ScanResult, error) {
	res := ScanResult{Size: int64(len(data))}
	var err error
	res.Header, err = parseHeader(data, KindLog, path)
	if err != nil {
		return res, err
	}
	var fnErr error
	r := scanFrames(data, HeaderSize, func(_ int, payload []byte) bool {
		fnErr = fn(payload)
		return fnErr == nil
	})
	res.Records, res.End, res.Tail, res.Reason = r.records, int64(r.end), r.tail, r.reason
	if fnErr != nil || r.tail == TailClean {
		return res, fnErr
	}
	base := res.Header.Base
	from := r.end // where the bytes to cut start
	if IsMark(data[from:], int64(from), base) {
		res.Marked = true
		from += MarkSize
		_, _, res.Reason = decodeFrame(data[from:])
	}
	why := "valid records follow"
	if r.tail == TailTorn {
		if p := markAfter(data, r.end, base); p >= 0 {
			res.Tail = TailCorrupt
			why = "the sync mark at offset " + strconv.Itoa(p) + " shows it was on disk"
		} else if res.Marked && dataEnd(data, from) == from {
			res.Tail, res.Reason = TailClean, 0
			return res, nil
		}
	}
	res.Cut = int64(dataEnd(data, from) - from)
	if res.Tail == TailCorrupt {
		return res, &CorruptError{Kind: KindLog, Path: path, Offset: res.End, Reason: r.reason.String() + " (" + why + ")"}
	}
	return res, nil
}

// scanned is the result of scanFrames.
type scanned struct {
	records int
	end     int         // the offset just past the last accepted frame
	tail    Tail        // TailUnknown if fn stopped the scan
	reason  FrameReason // why the frame at end is bad, if tail is TailTorn or TailCorrupt
}

// scanFrames decodes the frames of data from offset off on, calling fn
// with each frame's offset and payload until fn returns false, and judges
// the tail as ScanSegment documents.
func scanFrames(data []byte, off int, fn func(off int, payload []byte) bool) scanned {
	s := scanned{end: off}
	for s.end < len(data) {
		payload, n, r := decodeFrame(data[s.end:])
		if r != 0 {
			s.reason = r
			s.tail = TailTorn
			if validFrameAfter(data, s.end, directCRCMax) {
				s.tail = TailCorrupt
			}
			return s
		}
		if !fn(s.end, payload) {
			return s
		}
		s.records++
		s.end += n
	}
	s.tail = TailClean
	return s
}

// validFrameAfter reports whether a whole valid frame starts in data at
// any offset after bad. Candidates with a payload of up to direct bytes
// have it checksummed; longer ones are checked with prefix registers
// (prefixCRC), so no offset costs more than a few hundred nanoseconds.
func validFrameAfter(data []byte, bad, direct int) bool {
	var pc *prefixCRC // made at the first long candidate
	for p := bad + 1; p+FrameHeaderSize <= len(data); p++ {
		if binary.LittleEndian.Uint64(data[p:]) == 0 {
			// A frame header of 8 zero bytes is never valid: skip to
			// the first 8 bytes holding the next non-zero byte.
			nz := nextNonZero(data, p+FrameHeaderSize)
			if nz < 0 {
				return false
			}
			p = nz - FrameHeaderSize // the loop adds 1
			continue
		}
		l := binary.LittleEndian.Uint32(data[p:])
		if l > MaxPayload || int(l) > len(data)-p-FrameHeaderSize {
			continue
		}
		want := binary.LittleEndian.Uint32(data[p+4:])
		if int(l) <= direct {
			if frameCRC(data[p:p+4], data[p+FrameHeaderSize:p+FrameHeaderSize+int(l)]) == want {
				return true
			}
			continue
		}
		if pc == nil {
			pc = newPrefixCRC(data, bad)
		}
		if pc.frameCRC(p, l) == want {
			return true
		}
	}
	return false
}

// nextNonZero returns the offset of the first non-zero byte of data at or
// after from, or -1 if there is none. It tests 8 bytes at a time.
func nextNonZero(data []byte, from int) int {
	i := from
	for ; i+8 <= len(data); i += 8 {
		if binary.LittleEndian.Uint64(data[i:]) != 0 {
			break
		}
	}
	for ; i < len(data); i++ {
		if data[i] != 0 {
			return i
		}
	}
	return -1
}
