package wal

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSegmentWriteScan(t *testing.T) {
	dir := t.TempDir()
	s, err := CreateSegment(dir, 42)
	require.NoError(t, err)
	require.Equal(t, filepath.Join(dir, "00000000000000000042.log"), s.Path())
	require.Equal(t, uint64(42), s.Base())
	require.Equal(t, int64(HeaderSize), s.Size())

	recs := testRecords(50, 1)
	var batch []byte
	for i, r := range recs {
		batch = AppendFrame(batch, r)
		if i%7 == 6 || i == len(recs)-1 {
			n, err := s.Write(batch)
			require.NoError(t, err)
			require.Equal(t, len(batch), n)
			batch = batch[:0]
			require.NoError(t, s.Sync())
		}
	}
	size := s.Size()
	require.NoError(t, s.Close())

	var got [][]byte
	res, err := ScanSegment(s.Path(), func(p []byte) error {
		got = append(got, bytes.Clone(p))
		return nil
	})
	require.NoError(t, err)
	requirePrefix(t, recs, got, len(recs))
	// Close left the sync mark after the last record.
	require.Equal(t, ScanResult{Header: Header{KindLog, Version, 42}, Records: len(recs), End: size, Size: size + MarkSize, Tail: TailClean, Marked: true}, res)

	_, err = CreateSegment(dir, 42)
	require.ErrorIs(t, err, fs.ErrExist)
}

func TestScanEmptySegment(t *testing.T) {
	dir := t.TempDir()
	s, err := CreateSegment(dir, 1)
	require.NoError(t, err)
	require.NoError(t, s.Close())
	res, err := ScanSegment(s.Path(), func([]byte) error { panic("no records") })
	require.NoError(t, err)
	require.Equal(t, TailClean, res.Tail)
	require.Equal(t, int64(HeaderSize), res.End)
}

func TestScanMissing(t *testing.T) {
	_, err := ScanSegment(filepath.Join(t.TempDir(), SegmentName(1)), nil)
	require.ErrorIs(t, err, fs.ErrNotExist)
}

// A segment cut anywhere after its header yields a prefix of its records
// and a torn tail, or a clean one at a record boundary; never an error.
func TestScanCutEveryOffset(t *testing.T) {
	recs := testRecords(20, 2)
	data, offs := segmentBytes(1, recs)
	dir := t.TempDir()
	path := filepath.Join(dir, SegmentName(1))
	k := 0 // records wholly before the cut
	for cut := 0; cut <= len(data); cut++ {
		for k < len(recs) && offs[k+1] <= cut {
			k++
		}
		var got [][]byte
		var res ScanResult
		var err error
		if cut%50 == 0 || cut == len(data) {
			// Through the file now and then; in memory otherwise.
			writeFile(t, dir, SegmentName(1), data[:cut])
			res, err = ScanSegment(path, func(p []byte) error {
				got = append(got, bytes.Clone(p))
				return nil
			})
		} else {
			got, res, err = collect(data[:cut], path)
		}
		if cut < HeaderSize {
			require.ErrorIs(t, err, ErrNotOurs, "cut %d", cut)
			continue
		}
		require.NoError(t, err, "cut %d", cut)
		requirePrefix(t, recs, got, k)
		require.Equal(t, int64(offs[k]), res.End, "cut %d", cut)
		require.Equal(t, int64(cut), res.Size)
		if cut == offs[k] {
			require.Equal(t, TailClean, res.Tail, "cut %d", cut)
		} else {
			require.Equal(t, TailTorn, res.Tail, "cut %d", cut)
		}
	}
}

// A flipped bit never yields a wrong record: the scan gives the records
// before it, then a torn tail in the last record or ErrCorrupt at the
// damaged one.
func TestScanBitFlips(t *testing.T) {
	recs := testRecords(20, 3)
	data, offs := segmentBytes(1, recs)
	path := "/d/" + SegmentName(1)
	k := 0
	for bit := range len(data) * 8 {
		i := bit / 8
		for k < len(recs) && offs[k+1] <= i {
			k++
		}
		b := bytes.Clone(data)
		b[i] ^= 1 << (bit % 8)
		got, res, err := collect(b, path)
		if i < HeaderSize {
			require.ErrorIs(t, err, ErrNotOurs, "bit %d", bit)
			continue
		}
		requirePrefix(t, recs, got, k)
		require.Equal(t, int64(offs[k]), res.End, "bit %d", bit)
		if k == len(recs)-1 {
			require.NoError(t, err, "bit %d", bit)
			require.Equal(t, TailTorn, res.Tail)
			continue
		}
		require.ErrorIs(t, err, ErrCorrupt, "bit %d", bit)
		require.Equal(t, TailCorrupt, res.Tail)
		var ce *CorruptError
		require.True(t, errors.As(err, &ce))
		require.Equal(t, &CorruptError{Kind: KindLog, Path: path, Offset: int64(offs[k]), Reason: ce.Reason}, ce)
		require.Contains(t, err.Error(), fmt.Sprintf("xstream: corrupt log: %s at offset %d: ", path, offs[k]))
		require.Contains(t, err.Error(), "(valid records follow)")
	}
}

func TestCorruptErrorMessage(t *testing.T) {
	recs := testRecords(3, 4)
	data, offs := segmentBytes(1, recs)
	data[offs[1]+5] ^= 0x10 // the second record's checksum
	path := writeFile(t, t.TempDir(), SegmentName(1), data)
	res, err := ScanSegment(path, func([]byte) error { return nil })
	require.EqualError(t, err, fmt.Sprintf("xstream: corrupt log: %s at offset %d: bad checksum (valid records follow)", path, offs[1]))
	require.Equal(t, 1, res.Records)
	require.Equal(t, int64(offs[1]), res.End)
}

func TestScanZeroTail(t *testing.T) {
	recs := testRecords(20, 5)
	data, offs := segmentBytes(1, recs)
	end := len(data)
	data = append(data, make([]byte, 1<<20)...)
	got, res, err := collect(data, "")
	require.NoError(t, err)
	requirePrefix(t, recs, got, len(recs))
	require.Equal(t, TailTorn, res.Tail)
	require.Equal(t, int64(end), res.End)

	// A cut record followed by zeros, as a crash on a preallocated or
	// extended file leaves it.
	data2 := append(bytes.Clone(data[:offs[19]+10]), make([]byte, 1<<20)...)
	got, res, err = collect(data2, "")
	require.NoError(t, err)
	requirePrefix(t, recs, got, 19)
	require.Equal(t, TailTorn, res.Tail)
	require.Equal(t, int64(offs[19]), res.End)

	// Zeros with a valid record after them are corruption.
	data3 := AppendFrame(bytes.Clone(data), []byte("late"))
	_, res, err = collect(data3, "")
	require.ErrorIs(t, err, ErrCorrupt)
	require.Equal(t, int64(end), res.End)
}

func TestScanGarbageTail(t *testing.T) {
	recs := testRecords(20, 6)
	data, offs := segmentBytes(1, recs)
	rng := rand.New(rand.NewPCG(6, 6))
	for i := 0; i < 64<<10; i++ {
		data = append(data, byte(rng.Uint32()))
	}
	got, res, err := collect(data, "")
	require.NoError(t, err)
	requirePrefix(t, recs, got, len(recs))
	require.Equal(t, TailTorn, res.Tail)
	require.Equal(t, int64(offs[len(recs)]), res.End)
}

func TestScanCallbackError(t *testing.T) {
	recs := testRecords(5, 7)
	data, offs := segmentBytes(1, recs)
	stop := errors.New("stop")
	n := 0
	res, err := scanSegmentData(data, "", func([]byte) error {
		if n++; n == 3 {
			return stop
		}
		return nil
	})
	require.Same(t, stop, err)
	require.Equal(t, 2, res.Records)
	require.Equal(t, int64(offs[2]), res.End)
	require.Equal(t, TailUnknown, res.Tail)
}

func TestScanBadHeaderNamesFile(t *testing.T) {
	dir := t.TempDir()
	newer := writeFile(t, dir, SegmentName(1), versioned(Version+1, 'L', 0))
	_, err := ScanSegment(newer, nil)
	require.ErrorIs(t, err, ErrVersion)
	require.Contains(t, err.Error(), newer)

	magic := writeFile(t, dir, SegmentName(2), []byte("not a segment at all, no"))
	_, err = ScanSegment(magic, nil)
	require.ErrorIs(t, err, ErrNotOurs)
	require.Contains(t, err.Error(), magic)

	snap := writeFile(t, dir, SegmentName(3), AppendHeader(nil, KindSnapshot, 3))
	_, err = ScanSegment(snap, nil)
	require.ErrorIs(t, err, ErrNotOurs)
	require.Contains(t, err.Error(), snap)
}

func TestOpenSegmentForAppend(t *testing.T) {
	dir := t.TempDir()
	recs := testRecords(10, 8)
	data, offs := segmentBytes(5, recs[:6])
	data = append(data, data[offs[2]:offs[3]-3]...) // a torn copy of a record
	path := writeFile(t, dir, SegmentName(5), data)

	res, err := ScanSegment(path, func([]byte) error { return nil })
	require.NoError(t, err)
	require.Equal(t, TailTorn, res.Tail)
	require.Equal(t, int64(offs[6]), res.End)

	for _, size := range []int64{HeaderSize - 1, int64(len(data)) + 1} {
		_, err = OpenSegmentForAppend(path, size)
		require.ErrorIs(t, err, os.ErrInvalid)
	}
	s, err := OpenSegmentForAppend(path, res.End)
	require.NoError(t, err)
	require.Equal(t, uint64(5), s.Base())
	require.Equal(t, res.End, s.Size())
	var batch []byte
	for _, r := range recs[6:] {
		batch = AppendFrame(batch, r)
	}
	_, err = s.Write(batch)
	require.NoError(t, err)
	require.NoError(t, s.Sync())
	require.NoError(t, s.Close())

	var got [][]byte
	res, err = ScanSegment(path, func(p []byte) error {
		got = append(got, bytes.Clone(p))
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, TailClean, res.Tail)
	requirePrefix(t, recs, got, len(recs))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, fi.Size(), res.End+MarkSize, "the file ends with a sync mark")

	_, err = s.Write(batch)
	require.ErrorIs(t, err, os.ErrClosed)

	notOurs := writeFile(t, dir, "x.log", make([]byte, 100))
	_, err = OpenSegmentForAppend(notOurs, HeaderSize)
	require.ErrorIs(t, err, ErrNotOurs)
	_, err = OpenSegmentForAppend(filepath.Join(dir, "missing.log"), HeaderSize)
	require.ErrorIs(t, err, fs.ErrNotExist)
}

func BenchmarkScanZeroTail(b *testing.B) {
	data, _ := segmentBytes(1, testRecords(20, 9))
	data = append(data, make([]byte, 16<<20)...)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		scanSegmentData(data, "", func([]byte) error { return nil })
	}
}

func BenchmarkScanRecords(b *testing.B) {
	recs := make([][]byte, 100000)
	for i := range recs {
		recs[i] = make([]byte, 64)
	}
	data, _ := segmentBytes(1, recs)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		scanSegmentData(data, "", func([]byte) error { return nil })
	}
}

// TestSegmentPreallocate checks that a preallocated segment scans as its
// records followed by a torn (zero) tail, or after a Sync by a sync mark
// and zeros, a clean one; that Close cuts the zeros off, keeping the mark;
// and that Room counts down as records are written.
func TestSegmentPreallocate(t *testing.T) {
	dir := t.TempDir()
	seg, err := CreateSegment(dir, 7)
	if err != nil {
		t.Fatal(err)
	}
	if err := seg.Preallocate(1 << 16); err != nil {
		t.Fatal(err)
	}
	if seg.Room() != 1<<16 {
		t.Fatalf("room %d", seg.Room())
	}
	var frames []byte
	for i := range 10 {
		frames = AppendFrame(frames, []byte{byte(i), 1, 2, 3})
	}
	if _, err := seg.Write(frames); err != nil {
		t.Fatal(err)
	}
	if seg.Room() != 1<<16-int64(len(frames)) {
		t.Fatalf("room %d after %d bytes", seg.Room(), len(frames))
	}
	res, err := ScanSegment(seg.Path(), func([]byte) error { return nil })
	if err != nil || res.Records != 10 || res.Tail != TailTorn || res.Cut != 0 || res.End != int64(HeaderSize+len(frames)) {
		t.Fatalf("scan of a preallocated segment: %+v, %v", res, err)
	}
	if err := seg.Sync(); err != nil {
		t.Fatal(err)
	}
	res, err = ScanSegment(seg.Path(), func([]byte) error { return nil })
	if err != nil || res.Records != 10 || res.Tail != TailClean || res.End != int64(HeaderSize+len(frames)) {
		t.Fatalf("scan of a preallocated segment after a Sync: %+v, %v", res, err)
	}
	if err := seg.Close(); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(seg.Path())
	if err != nil || fi.Size() != int64(HeaderSize+len(frames)+MarkSize) {
		t.Fatalf("after Close the file has %d bytes, want %d", fi.Size(), HeaderSize+len(frames)+MarkSize)
	}
	res, err = ScanSegment(seg.Path(), func([]byte) error { return nil })
	if err != nil || res.Tail != TailClean {
		t.Fatalf("scan after Close: %+v, %v", res, err)
	}
}
