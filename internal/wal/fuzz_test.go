package wal

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// FuzzDecodeFrames scans arbitrary bytes as the body of a log segment: it
// must not panic, every payload must re-encode to the very bytes it came
// from, and the result must agree with itself.
//
// Inputs are kept small, the seeds and, by ignoring longer ones, what the
// fuzzer makes of them: its minimization of a new input costs the square
// of its size, and the slow search the check uses too.
func FuzzDecodeFrames(f *testing.F) {
	seg, offs := segmentBytes(1, sizedRecords(5, 20, 24))
	body := seg[HeaderSize:]
	f.Add(body)
	f.Add(body[:len(body)-3])
	f.Add(append(bytes.Clone(body), make([]byte, 32)...))
	damaged := bytes.Clone(body)
	damaged[offs[2]-HeaderSize+9] ^= 4
	f.Add(damaged)
	f.Add(AppendFrame(nil, nil))
	f.Add([]byte{})
	f.Add(appendMark(bytes.Clone(body), int64(len(seg)), 1))
	f.Add(appendMark(bytes.Clone(damaged), int64(len(seg)), 1))
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > 512 {
			return // the slow search below costs the square of the size
		}
		data := append(AppendHeader(nil, KindLog, 1), body...)
		next := HeaderSize
		s := scanFrames(data, HeaderSize, func(off int, payload []byte) bool {
			if off != next {
				t.Fatalf("frame at %d, the previous one ended at %d", off, next)
			}
			frame := data[off : off+FrameHeaderSize+len(payload)]
			if !bytes.Equal(AppendFrame(nil, payload), frame) {
				t.Fatalf("payload at %d does not re-encode to its frame", off)
			}
			next = off + len(frame)
			return true
		})
		if s.end != next {
			t.Fatalf("end %d, the last frame ended at %d", s.end, next)
		}
		switch s.tail {
		case TailClean:
			if s.end != len(data) {
				t.Fatalf("clean tail ending at %d of %d", s.end, len(data))
			}
		case TailTorn, TailCorrupt:
			if s.end >= len(data) || s.reason == 0 {
				t.Fatalf("%s tail at %d of %d, reason %d", s.tail, s.end, len(data), s.reason)
			}
			if (s.tail == TailCorrupt) != validFrameAfterSlow(data, s.end) {
				t.Fatalf("%s tail, but the slow search disagrees", s.tail)
			}
			// Through prefix registers only, and through direct
			// checksums only, the search agrees.
			if validFrameAfter(data, s.end, 0) != (s.tail == TailCorrupt) || validFrameAfter(data, s.end, MaxPayload) != (s.tail == TailCorrupt) {
				t.Fatalf("%s tail, but the search with other thresholds disagrees", s.tail)
			}
		default:
			t.Fatalf("tail %d", s.tail)
		}
		// Sync marks turn a torn tail into a corrupt or a clean one.
		want := s.tail
		if want == TailTorn {
			switch {
			case markAfter(data, s.end, 1) >= 0:
				want = TailCorrupt
			case IsMark(data[s.end:], int64(s.end), 1) && len(bytes.Trim(data[s.end+MarkSize:], "\x00")) == 0:
				want = TailClean
			}
		}
		res, err := scanSegmentData(data, "f", func([]byte) error { return nil })
		if (err != nil) != (want == TailCorrupt) || res.End != int64(s.end) || res.Tail != want {
			t.Fatalf("scanSegmentData: %+v, %v", res, err)
		}
		from := s.end
		if res.Marked {
			from += MarkSize
		}
		if res.Tail == TailTorn && res.Cut != int64(len(bytes.TrimRight(data[from:], "\x00"))) {
			t.Fatalf("scanSegmentData: cut %d of a tail of %d bytes", res.Cut, len(data)-s.end)
		}
	})
}

// validFrameAfterSlow is validFrameAfter without its shortcuts.
func validFrameAfterSlow(data []byte, bad int) bool {
	for p := bad + 1; p < len(data); p++ {
		if _, _, err := DecodeFrame(data[p:]); err == nil {
			return true
		}
	}
	return false
}

// FuzzReader reads arbitrary bytes as a snapshot: it must not panic, and
// every payload it returns must come from a frame with a right checksum,
// in order, ending where the next begins.
func FuzzReader(f *testing.F) {
	f.Add(snapshotBytes(f, 1, sizedRecords(5, 21, 24)))
	f.Add(snapshotBytes(f, 1, nil))
	f.Add(snapshotBytes(f, 1, [][]byte{trailerPayload(0), trailerPayload(1)}))
	cut := snapshotBytes(f, 1, sizedRecords(3, 22, 24))
	f.Add(cut[:len(cut)-5])
	f.Add(AppendHeader(nil, KindSnapshot, 1))
	f.Add([]byte("XSTREAM\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := NewReader(bytes.NewReader(data), KindSnapshot)
		if err != nil {
			if !errors.Is(err, ErrNotOurs) && !errors.Is(err, ErrVersion) {
				t.Fatalf("NewReader: %v", err)
			}
			return
		}
		next := int64(HeaderSize)
		for {
			p, err := r.Next()
			if err == io.EOF {
				if end := next + FrameHeaderSize + int64(trailerPayloadSize); end != int64(len(data)) {
					t.Fatalf("EOF after a trailer ending at %d of %d", end, len(data))
				}
				return
			}
			if err != nil {
				var ce *CorruptError
				if !errors.As(err, &ce) || ce.Offset != next {
					t.Fatalf("error %v at %d", err, next)
				}
				if _, err2 := r.Next(); err2 != err {
					t.Fatalf("error not sticky: %v then %v", err, err2)
				}
				return
			}
			if r.last != next {
				t.Fatalf("frame at %d, the previous one ended at %d", r.last, next)
			}
			frame := data[next : next+FrameHeaderSize+int64(len(p))]
			if !bytes.Equal(AppendFrame(nil, p), frame) {
				t.Fatalf("payload at %d does not re-encode to its frame", next)
			}
			next += int64(len(frame))
		}
	})
}
