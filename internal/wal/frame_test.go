package wal

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestFrameRoundTrip(t *testing.T) {
	for _, n := range []int{0, 1, 7, 8, 64, 1000, 70000} {
		payload := bytes.Repeat([]byte{byte(n), 0xa5}, n)[:n]
		f := AppendFrame([]byte("prefix"), payload)
		f = f[len("prefix"):]
		require.Len(t, f, FrameHeaderSize+n)
		require.Equal(t, uint32(n), binary.LittleEndian.Uint32(f[0:4]))
		want := crc32.Checksum(append(append([]byte{}, f[0:4]...), payload...), crc32.MakeTable(crc32.Castagnoli))
		require.Equal(t, want, binary.LittleEndian.Uint32(f[4:8]))

		got, m, err := DecodeFrame(append(f, 1, 2, 3))
		require.NoError(t, err)
		require.Equal(t, FrameHeaderSize+n, m)
		require.Equal(t, payload, got)

		// Built in place, the frame is the same.
		b, start := BeginFrame([]byte("xy"))
		require.Equal(t, 2, start)
		b = append(b, payload...)
		require.Equal(t, f, EndFrame(b, start)[2:])
	}
}

func TestDecodeFrameErrors(t *testing.T) {
	good := AppendFrame(nil, []byte("hello"))
	huge := bytes.Clone(good)
	binary.LittleEndian.PutUint32(huge, MaxPayload+1)
	flipped := bytes.Clone(good)
	flipped[FrameHeaderSize] ^= 1
	for _, c := range []struct {
		name string
		data []byte
		want FrameReason
	}{
		{"empty", nil, ReasonShortHeader},
		{"short header", good[:7], ReasonShortHeader},
		{"bad length", huge, ReasonBadLength},
		{"short payload", good[:len(good)-1], ReasonShortPayload},
		{"bad checksum", flipped, ReasonBadChecksum},
		{"zero header", make([]byte, 8), ReasonBadChecksum},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, n, err := DecodeFrame(c.data)
			require.Nil(t, p)
			require.Zero(t, n)
			var fe FrameError
			require.True(t, errors.As(err, &fe))
			require.Equal(t, c.want, fe.Reason)
			require.ErrorIs(t, err, ErrCorrupt)
			require.Contains(t, err.Error(), c.want.String())
		})
	}
}

// The torn-tail search relies on this: zero bytes never make a valid frame.
func TestZeroFrameHeaderNeverValid(t *testing.T) {
	require.NotZero(t, crc32c(make([]byte, 4)))
	_, _, err := DecodeFrame(make([]byte, 64))
	require.Error(t, err)
	require.False(t, validFrameAfter(make([]byte, 1<<16), 0, directCRCMax))
}

func TestFrameAllocs(t *testing.T) {
	payload := make([]byte, 64)
	buf := make([]byte, 0, 256)
	var err error
	allocs := testing.AllocsPerRun(100, func() {
		buf = AppendFrame(buf[:0], payload)
		_, _, err = DecodeFrame(buf)
		_, _, err = DecodeFrame(buf[:5])
	})
	require.Error(t, err)
	require.Zero(t, allocs)
}

func BenchmarkFrame(b *testing.B) {
	payload := make([]byte, 64)
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	b.SetBytes(int64(len(payload)))
	for b.Loop() {
		buf = AppendFrame(buf[:0], payload)
	}
}

func BenchmarkFrameInPlace(b *testing.B) {
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		var start int
		buf, start = BeginFrame(buf[:0])
		for i := range 8 {
			buf = binary.LittleEndian.AppendUint64(buf, uint64(i))
		}
		buf = EndFrame(buf, start)
	}
}
