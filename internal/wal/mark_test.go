package wal

import (
	"bytes"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// syncedSegment writes recs to a new segment of dir in batches of three
// records, each batch synced (so followed by a sync mark), and returns
// the segment, still open, and the offset of each record followed by the
// end of the last.
func syncedSegment(t *testing.T, dir string, base uint64, recs [][]byte) (*Segment, []int) {
	t.Helper()
	s, err := CreateSegment(dir, base)
	require.NoError(t, err)
	offs := []int{HeaderSize}
	var batch []byte
	for i, r := range recs {
		batch = AppendFrame(batch, r)
		offs = append(offs, offs[len(offs)-1]+FrameHeaderSize+len(r))
		if i%3 == 2 || i == len(recs)-1 {
			_, err := s.Write(batch)
			require.NoError(t, err)
			require.NoError(t, s.Sync())
			batch = batch[:0]
		}
	}
	return s, offs
}

// scanFile scans the segment at path, counting its records.
func scanFile(t *testing.T, path string) (ScanResult, error) {
	t.Helper()
	return ScanSegment(path, func([]byte) error { return nil })
}

// damaged returns data with the byte at off flipped.
func damaged(data []byte, off int) []byte {
	d := bytes.Clone(data)
	d[off] ^= 0x20
	return d
}

// A synced record damaged at the end of the log, with its sync mark after
// it, is corruption, wherever the damage (length, checksum, payload); the
// same damage to a record written after the last Sync is a torn tail,
// whose Cut counts its bytes. Damage to the mark alone is a torn tail of
// the mark's bytes.
func TestSyncMarkTellsSyncedFromTorn(t *testing.T) {
	dir := t.TempDir()
	recs := sizedRecords(10, 3, 60)
	recs[9] = []byte("the last record, which was synced")
	s, offs := syncedSegment(t, dir, 3, recs)
	last, end := offs[9], offs[10]
	data, err := os.ReadFile(s.Path())
	require.NoError(t, err)
	require.True(t, IsMark(data[end:], int64(end), 3), "no sync mark after the last record")
	require.NoError(t, s.Close())

	for _, off := range []int{last, last + 3, last + 5, last + FrameHeaderSize + 4, end - 1} {
		path := writeFile(t, dir, "d.log", damaged(data, off))
		res, err := scanFile(t, path)
		var ce *CorruptError
		require.ErrorAs(t, err, &ce, "byte %d of the last record", off)
		require.ErrorIs(t, err, ErrCorrupt)
		require.Equal(t, int64(last), ce.Offset)
		require.Contains(t, err.Error(), "the sync mark at offset "+strconv.Itoa(end)+" shows it was on disk")
		require.Equal(t, TailCorrupt, res.Tail)
		require.Equal(t, 9, res.Records)
		require.Equal(t, int64(end+MarkSize-last), res.Cut)
	}

	// Damage to the mark: nothing but the mark is cut.
	for off := end; off < end+MarkSize; off += 5 {
		path := writeFile(t, dir, "d.log", damaged(data, off))
		res, err := scanFile(t, path)
		require.NoError(t, err, "byte %d of the mark", off-end)
		require.Equal(t, TailTorn, res.Tail)
		require.Equal(t, 10, res.Records)
		require.Equal(t, int64(MarkSize), res.Cut)
	}

	// A batch written after the last Sync: it overwrites the mark, and
	// damage to it is a torn tail.
	s, err = OpenSegmentForAppend(s.Path(), int64(end))
	require.NoError(t, err)
	more := AppendFrame(AppendFrame(nil, []byte("written")), []byte("not synced yet"))
	_, err = s.Write(more)
	require.NoError(t, err)
	data, err = os.ReadFile(s.Path())
	require.NoError(t, err)
	require.Len(t, data, end+len(more))
	res, err := scanFile(t, s.Path())
	require.NoError(t, err)
	require.Equal(t, TailClean, res.Tail)
	require.Equal(t, 12, res.Records)
	lastNew := end + FrameHeaderSize + len("written")
	for _, off := range []int{lastNew, lastNew + 9, len(data) - 1} {
		path := writeFile(t, dir, "d.log", damaged(data, off))
		res, err := scanFile(t, path)
		require.NoError(t, err, "byte %d of the unsynced record", off)
		require.Equal(t, TailTorn, res.Tail)
		require.Equal(t, 11, res.Records)
		require.Equal(t, int64(lastNew), res.End)
		require.Equal(t, int64(len(data)-lastNew), res.Cut)
	}
	require.NoError(t, s.Close())
}

// A sync mark followed by zeros is a clean end; followed by other bytes
// that hold no frame (a torn write whose first bytes did not reach the
// disk), a torn tail whose Cut and Reason are those of the bytes after
// the mark. A mark is valid
// only at its own offset of a segment of its own base.
func TestSyncMarkTail(t *testing.T) {
	dir := t.TempDir()
	data, offs := segmentBytes(9, sizedRecords(4, 5, 40))
	end := offs[4]
	data = appendMark(data, int64(end), 9)

	res, err := scanSegmentData(append(bytes.Clone(data), make([]byte, 4096)...), "f", func([]byte) error { return nil })
	require.NoError(t, err)
	require.Equal(t, ScanResult{Header: Header{KindLog, Version, 9}, Records: 4, End: int64(end), Size: int64(len(data) + 4096), Tail: TailClean, Marked: true}, res)

	junk := append(bytes.Clone(data), 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7, 7, 7)
	junk = append(junk, make([]byte, 100)...)
	res, err = scanSegmentData(junk, "f", func([]byte) error { return nil })
	require.NoError(t, err)
	require.Equal(t, TailTorn, res.Tail)
	require.Equal(t, int64(end), res.End)
	require.True(t, res.Marked)
	require.Equal(t, int64(13), res.Cut, "the bytes after the mark")
	require.Equal(t, ReasonBadChecksum, res.Reason)

	// The same mark one byte further on, or for another base, is not a
	// mark but a torn tail; and damage before it is not refused.
	for _, bad := range [][]byte{
		append(append(bytes.Clone(data[:end]), 1), appendMark(nil, int64(end), 9)...),
		appendMark(bytes.Clone(data[:end]), int64(end), 10),
		appendMark(damaged(data[:end], end-2), int64(end+1), 9),
	} {
		res, err = scanSegmentData(bad, "f", func([]byte) error { return nil })
		require.NoError(t, err)
		require.Equal(t, TailTorn, res.Tail)
		require.Equal(t, int64(len(bad)), res.End+res.Cut)
	}

	// OpenSegmentForAppend keeps a mark at the cut and drops what follows.
	path := writeFile(t, dir, SegmentName(9), junk)
	s, err := OpenSegmentForAppend(path, int64(end))
	require.NoError(t, err)
	require.Equal(t, int64(end), s.Size())
	require.Equal(t, int64(MarkSize), s.Room())
	require.NoError(t, s.f.Close())
	kept, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, data, kept)
}

// A Write shorter than a sync mark covers all of it, so that no part of
// the mark is left after the records to read as a torn one.
func TestShortWriteOverMark(t *testing.T) {
	s, offs := syncedSegment(t, t.TempDir(), 1, sizedRecords(3, 7, 30))
	short := AppendFrame(nil, []byte{1, 2})
	require.Less(t, len(short), MarkSize)
	_, err := s.Write(short)
	require.NoError(t, err)
	require.Equal(t, int64(offs[3]+len(short)), s.Size())
	res, err := scanFile(t, s.Path())
	require.NoError(t, err)
	require.Equal(t, 4, res.Records)
	require.Zero(t, res.Cut, "a part of the mark is left: %+v", res)
	require.NoError(t, s.Close())
}

// Close keeps a sync mark only in the newest segment of the directory,
// syncing records written since the last Sync to write it; an older
// segment ends at its last record.
func TestCloseMark(t *testing.T) {
	dir := t.TempDir()
	old, offs := syncedSegment(t, dir, 1, sizedRecords(3, 8, 30))
	newer, newOffs := syncedSegment(t, dir, 4, sizedRecords(2, 9, 30))
	_, err := newer.Write(AppendFrame(nil, []byte("after the last Sync")))
	require.NoError(t, err)
	require.NoError(t, old.Close())
	require.NoError(t, newer.Close())

	b, err := os.ReadFile(old.Path())
	require.NoError(t, err)
	require.Len(t, b, offs[3], "the older segment ends with a mark")
	b, err = os.ReadFile(newer.Path())
	require.NoError(t, err)
	end := newOffs[2] + FrameHeaderSize + len("after the last Sync")
	require.Len(t, b, end+MarkSize)
	require.True(t, IsMark(b[end:], int64(end), 4))
}
