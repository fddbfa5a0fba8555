package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"
)

// snapshotBytes returns a snapshot of recs, written alternately with
// Append and AppendFunc.
func snapshotBytes(t testing.TB, base uint64, recs [][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, KindSnapshot, base)
	require.NoError(t, err)
	for i, r := range recs {
		if i%2 == 0 {
			require.NoError(t, w.Append(r))
		} else {
			require.NoError(t, w.AppendFunc(func(dst []byte) []byte { return append(dst, r...) }))
		}
	}
	require.NoError(t, w.Close())
	require.NoError(t, w.Close())
	require.ErrorIs(t, w.Append(nil), os.ErrClosed)
	return buf.Bytes()
}

// readAll reads a snapshot from r until an error, copying the payloads.
func readAll(r io.Reader) ([][]byte, *Reader, error) {
	sr, err := NewReader(r, KindSnapshot)
	if err != nil {
		return nil, nil, err
	}
	var got [][]byte
	for {
		p, err := sr.Next()
		if err != nil {
			return got, sr, err
		}
		got = append(got, bytes.Clone(p))
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 30} {
		recs := testRecords(n, 10)
		data := snapshotBytes(t, 99, recs)
		got, sr, err := readAll(bytes.NewReader(data))
		require.ErrorIs(t, err, io.EOF)
		requirePrefix(t, recs, got, n)
		require.Equal(t, Header{KindSnapshot, Version, 99}, sr.Header())
		_, err = sr.Next()
		require.Equal(t, io.EOF, err)
	}
}

func TestSnapshotLargePayloads(t *testing.T) {
	// Larger than both the Writer's and the Reader's buffers.
	recs := [][]byte{bytes.Repeat([]byte("a"), 1<<20+3), []byte("b"), bytes.Repeat([]byte("c"), 300<<10)}
	got, _, err := readAll(bytes.NewReader(snapshotBytes(t, 1, recs)))
	require.ErrorIs(t, err, io.EOF)
	requirePrefix(t, recs, got, len(recs))
}

// trailerPayload returns the payload of a trailer counting n frames.
func trailerPayload(n uint64) []byte {
	return binary.LittleEndian.AppendUint64([]byte(trailerMagic), n)
}

// Payloads that look like the trailer are read as payloads.
func TestSnapshotTrailerLookalike(t *testing.T) {
	recs := [][]byte{trailerPayload(0), []byte("x"), trailerPayload(2), trailerPayload(3)}
	got, _, err := readAll(bytes.NewReader(snapshotBytes(t, 1, recs)))
	require.ErrorIs(t, err, io.EOF)
	requirePrefix(t, recs, got, len(recs))
}

func TestSnapshotCutEveryOffset(t *testing.T) {
	recs := testRecords(20, 11)
	data := snapshotBytes(t, 1, recs)
	for cut := range len(data) {
		got, _, err := readAll(bytes.NewReader(data[:cut]))
		if cut < HeaderSize {
			require.ErrorIs(t, err, ErrNotOurs, "cut %d", cut)
			continue
		}
		require.ErrorIs(t, err, ErrCorrupt, "cut %d", cut)
		require.LessOrEqual(t, len(got), len(recs))
		requirePrefix(t, recs, got, len(got))
	}
}

func TestSnapshotBitFlips(t *testing.T) {
	recs := testRecords(20, 12)
	data := snapshotBytes(t, 1, recs)
	for bit := range len(data) * 8 {
		b := bytes.Clone(data)
		b[bit/8] ^= 1 << (bit % 8)
		got, _, err := readAll(bytes.NewReader(b))
		if bit/8 < HeaderSize {
			require.ErrorIs(t, err, ErrNotOurs, "bit %d", bit)
			continue
		}
		require.ErrorIs(t, err, ErrCorrupt, "bit %d", bit)
		require.LessOrEqual(t, len(got), len(recs))
		requirePrefix(t, recs, got, len(got))
	}
}

func TestSnapshotDefects(t *testing.T) {
	recs := testRecords(3, 13)
	data := snapshotBytes(t, 1, recs)
	noTrailer := data[:len(data)-FrameHeaderSize-trailerPayloadSize]
	wrongCount := AppendFrame(bytes.Clone(noTrailer), trailerPayload(4))
	for _, c := range []struct {
		name   string
		data   []byte
		reason string
		off    int
		n      int // payloads read before the error
	}{
		{"missing trailer", noTrailer, "missing trailer", len(noTrailer), 3},
		{"wrong count", wrongCount, "trailer counts 4 frames, 3 were read", len(noTrailer), 3},
		{"data after trailer", append(bytes.Clone(data), 0), "incomplete frame header", len(data), 4},
		{"bad length", binary.LittleEndian.AppendUint64(bytes.Clone(noTrailer), MaxPayload+1), "bad length", len(noTrailer), 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, _, err := readAll(bytes.NewReader(c.data))
			require.Len(t, got, c.n)
			var ce *CorruptError
			require.True(t, errors.As(err, &ce), "%v", err)
			require.Equal(t, &CorruptError{Kind: KindSnapshot, Offset: int64(c.off), Reason: c.reason}, ce)
		})
	}
}

// A length word claiming far more than the source holds does not make the
// Reader allocate it.
func TestSnapshotLyingLength(t *testing.T) {
	data := AppendHeader(nil, KindSnapshot, 1)
	data = binary.LittleEndian.AppendUint32(data, MaxPayload)
	data = append(data, make([]byte, 4+1000)...)
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, _, err := readAll(bytes.NewReader(data))
	runtime.ReadMemStats(&after)
	require.Empty(t, got)
	var ce *CorruptError
	require.True(t, errors.As(err, &ce))
	require.Equal(t, "incomplete payload", ce.Reason)
	require.Equal(t, int64(HeaderSize), ce.Offset)
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4<<20))
}

func TestSnapshotFileErrorsNameFile(t *testing.T) {
	dir := t.TempDir()
	recs := testRecords(5, 14)
	err := WriteFileAtomic(dir, SnapshotName(7), func(w io.Writer) error {
		sw, err := NewWriter(w, KindSnapshot, 7)
		if err != nil {
			return err
		}
		for _, r := range recs {
			if err := sw.Append(r); err != nil {
				return err
			}
		}
		return sw.Close()
	})
	require.NoError(t, err)
	path := filepath.Join(dir, SnapshotName(7))

	f, err := os.Open(path)
	require.NoError(t, err)
	got, sr, err := readAll(f)
	f.Close()
	require.ErrorIs(t, err, io.EOF)
	requirePrefix(t, recs, got, len(recs))
	require.Equal(t, uint64(7), sr.Header().Base)

	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[len(data)-1] ^= 1
	require.NoError(t, os.WriteFile(path, data, 0o600))
	f, err = os.Open(path)
	require.NoError(t, err)
	_, _, err = readAll(f)
	f.Close()
	require.ErrorIs(t, err, ErrCorrupt)
	require.Contains(t, err.Error(), "xstream: corrupt snapshot: "+path+" at offset ")

	for name, b := range map[string][]byte{
		"newer": versioned(Version+1, 'S', 0),
		"magic": []byte("GIF89a and then some more bytes"),
		"kind":  AppendHeader(nil, KindLog, 1),
	} {
		p := writeFile(t, dir, name, b)
		f, err := os.Open(p)
		require.NoError(t, err)
		_, err = NewReader(f, KindSnapshot)
		f.Close()
		if name == "newer" {
			require.ErrorIs(t, err, ErrVersion)
		} else {
			require.ErrorIs(t, err, ErrNotOurs)
		}
		require.Contains(t, err.Error(), p)
	}
}

type failWriter struct{ n int }

func (w *failWriter) Write(p []byte) (int, error) {
	if w.n += len(p); w.n > 100 {
		return 0, os.ErrDeadlineExceeded
	}
	return len(p), nil
}

type failReader struct{ r io.Reader }

func (r failReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p[:min(len(p), 30)])
	if err == io.EOF {
		err = os.ErrPermission
	}
	return n, err
}

func TestSnapshotIOErrors(t *testing.T) {
	w, err := NewWriter(&failWriter{}, KindSnapshot, 1)
	require.NoError(t, err)
	require.NoError(t, w.Append(make([]byte, 1000)))
	require.ErrorIs(t, w.Close(), os.ErrDeadlineExceeded)
	require.ErrorIs(t, w.Close(), os.ErrDeadlineExceeded)

	w, err = NewWriter(&failWriter{}, KindSnapshot, 1)
	require.NoError(t, err)
	require.ErrorIs(t, w.Append(make([]byte, writerBufSize+1)), os.ErrDeadlineExceeded)

	_, err = NewWriter(io.Discard, KindLog, 1)
	require.ErrorIs(t, err, os.ErrInvalid)

	// A read error is returned as it is, not as corruption.
	data := snapshotBytes(t, 1, testRecords(3, 15))
	_, _, err = readAll(failReader{bytes.NewReader(data[:len(data)-1])})
	require.ErrorIs(t, err, os.ErrPermission)
	require.NotErrorIs(t, err, ErrCorrupt)
	_, err = NewReader(failReader{bytes.NewReader(nil)}, KindSnapshot)
	require.ErrorIs(t, err, os.ErrPermission)
}

func BenchmarkSnapshotWrite(b *testing.B) {
	payload := make([]byte, 64)
	w, _ := NewWriter(io.Discard, KindSnapshot, 1)
	b.ReportAllocs()
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		w.Append(payload)
	}
}

func BenchmarkSnapshotRead(b *testing.B) {
	recs := make([][]byte, 10000)
	for i := range recs {
		recs[i] = make([]byte, 64)
	}
	data := snapshotBytes(b, 1, recs)
	rd := bytes.NewReader(data)
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		rd.Reset(data)
		sr, _ := NewReader(rd, KindSnapshot)
		for {
			if _, err := sr.Next(); err != nil {
				break
			}
		}
	}
}
