package wal

import (
	"encoding/binary"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestHeaderRoundTrip(t *testing.T) {
	for _, k := range []Kind{KindLog, KindSnapshot} {
		b := AppendHeader([]byte("x"), k, 1<<40+3)[1:]
		require.Len(t, b, HeaderSize)
		require.Equal(t, "XSTREAM\x00", string(b[:8]))
		h, err := ParseHeader(b, k)
		require.NoError(t, err)
		require.Equal(t, Header{Kind: k, Version: Version, Base: 1<<40 + 3}, h)
	}
}

// versioned returns a header with the given version, kind byte and
// reserved byte, with a valid checksum.
func versioned(version uint16, kind, reserved byte) []byte {
	b := AppendHeader(nil, Kind(kind), 7)
	b[9] = reserved
	binary.LittleEndian.PutUint16(b[10:], version)
	binary.LittleEndian.PutUint32(b[20:], crc32c(b[:20]))
	return b
}

func TestParseHeaderErrors(t *testing.T) {
	good := AppendHeader(nil, KindLog, 7)
	for _, c := range []struct {
		name string
		b    []byte
		want error
	}{
		{"short", good[:HeaderSize-1], ErrNotOurs},
		{"empty", nil, ErrNotOurs},
		{"magic", append([]byte("XSTREAN\x00"), good[8:]...), ErrNotOurs},
		{"newer", versioned(Version+1, 'L', 0), ErrVersion},
		{"much newer", versioned(math.MaxUint16, 'L', 0), ErrVersion},
		{"version 0", versioned(0, 'L', 0), ErrNotOurs},
		{"reserved", versioned(Version, 'L', 1), ErrNotOurs},
		{"kind", AppendHeader(nil, KindSnapshot, 7), ErrNotOurs},
		{"unknown kind", versioned(Version, 'Q', 0), ErrNotOurs},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseHeader(c.b, KindLog)
			require.ErrorIs(t, err, c.want)
			_, err = parseHeader(c.b, KindLog, "/some/file.log")
			require.ErrorIs(t, err, c.want)
			require.Contains(t, err.Error(), "/some/file.log")
		})
	}
	// Every flipped bit is caught, the version's included.
	for bit := range HeaderSize * 8 {
		b := AppendHeader(nil, KindLog, 7)
		b[bit/8] ^= 1 << (bit % 8)
		_, err := ParseHeader(b, KindLog)
		require.ErrorIs(t, err, ErrNotOurs, "bit %d", bit)
	}
}

func TestFileNames(t *testing.T) {
	require.Equal(t, "00000000000000000042.log", SegmentName(42))
	require.Equal(t, "00000000000000000042.snap", SnapshotName(42))
	for _, n := range []uint64{0, 1, 42, math.MaxUint64} {
		b, ok := ParseSegmentName(SegmentName(n))
		require.True(t, ok)
		require.Equal(t, n, b)
		b, ok = ParseSnapshotName(SnapshotName(n))
		require.True(t, ok)
		require.Equal(t, n, b)
	}
	require.Less(t, SegmentName(9), SegmentName(10))
	for _, bad := range []string{
		"", "42.log", "00000000000000000042.snap", "0000000000000000004a.log",
		"99999999999999999999.log", "+0000000000000000042.log", "00000000000000000042.log.tmp",
	} {
		_, ok := ParseSegmentName(bad)
		require.False(t, ok, bad)
	}
	_, ok := ParseSnapshotName("00000000000000000042.log")
	require.False(t, ok)
}
