package wal

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestShift(t *testing.T) {
	rng := rand.New(rand.NewPCG(30, 30))
	zeros := make([]byte, 70000)
	for _, n := range []int{0, 1, 2, 7, 8, 255, 256, 257, 4096, 65535, 65536, 69999} {
		r := rng.Uint32()
		require.Equal(t, update(r, zeros[:n]), shift(r, uint32(n)), "n %d", n)
	}
	// shift composes: S(S(r, a), b) = S(r, a+b), also past 2^24.
	r := rng.Uint32()
	require.Equal(t, shift(shift(r, 1<<24+5), MaxPayload), shift(r, 1<<24+5+MaxPayload))
	require.Equal(t, uint32(0), shift(0, 12345))
}

func TestMulmod(t *testing.T) {
	one := uint32(1) << 31
	rng := rand.New(rand.NewPCG(31, 31))
	for range 100 {
		a, b, c := rng.Uint32(), rng.Uint32(), rng.Uint32()
		require.Equal(t, a, mulmod(one, a))
		require.Equal(t, mulmod(a, b), mulmod(b, a))
		require.Equal(t, mulmod(mulmod(a, b), c), mulmod(a, mulmod(b, c)))
		require.Equal(t, mulmod(a, b^c), mulmod(a, b)^mulmod(a, c))
		require.Zero(t, mulmod(0, a))
	}
}

// The prefix registers give the checksum direct computation gives, for
// every offset and many lengths.
func TestPrefixCRCFrame(t *testing.T) {
	rng := rand.New(rand.NewPCG(32, 32))
	data := make([]byte, 3000)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	for _, origin := range []int{0, 1, 63, 64, 100} {
		pc := newPrefixCRC(data, origin)
		for p := max(origin-FrameHeaderSize, 0); p+FrameHeaderSize <= len(data); p += 1 + rng.IntN(5) {
			if p+FrameHeaderSize < origin {
				continue
			}
			room := len(data) - p - FrameHeaderSize
			for _, l := range []int{0, 1, 63, 64, 65, rng.IntN(room + 1), room} {
				if l > room {
					continue
				}
				want := frameCRC(data[p:p+4], data[p+FrameHeaderSize:p+FrameHeaderSize+l])
				require.Equal(t, want, pc.frameCRC(p, uint32(l)), "origin %d p %d l %d", origin, p, l)
			}
		}
	}
}

// A valid long frame hidden in a tail is found through the prefix
// registers.
func TestValidFrameAfterLong(t *testing.T) {
	rng := rand.New(rand.NewPCG(33, 33))
	junk := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	payload := junk(10000)
	data := append(junk(777), AppendFrame(nil, payload)...)
	data = append(data, junk(300)...)
	for _, direct := range []int{0, directCRCMax, MaxPayload} {
		require.True(t, validFrameAfter(data, 0, direct))
		require.False(t, validFrameAfter(data, 777, direct))
	}
	binary.LittleEndian.PutUint32(data[777+4:], 0) // spoil its checksum
	require.False(t, validFrameAfter(data, 0, 0))
}

// A tail in which every offset claims a payload that fits: the worst
// case of the search, linear in the tail.
func BenchmarkScanWorstTail(b *testing.B) {
	data, _ := segmentBytes(1, testRecords(3, 34))
	tail := make([]byte, 4<<20)
	for i := 0; i+4 <= len(tail); i += 4 {
		binary.LittleEndian.PutUint32(tail[i:], 0x01010101&0x00ffffff|1<<16) // a length of ~65 KiB at every alignment
	}
	data = append(data, tail...)
	b.SetBytes(int64(len(tail)))
	for b.Loop() {
		scanSegmentData(data, "", func([]byte) error { return nil })
	}
}

func BenchmarkScanRandomTail(b *testing.B) {
	data, _ := segmentBytes(1, testRecords(3, 35))
	rng := rand.New(rand.NewPCG(35, 35))
	for range 16 << 20 {
		data = append(data, byte(rng.Uint32()))
	}
	b.SetBytes(16 << 20)
	for b.Loop() {
		scanSegmentData(data, "", func([]byte) error { return nil })
	}
}

func BenchmarkShift(b *testing.B) {
	r := uint32(12345)
	for b.Loop() {
		r = shift(r, 65793)
	}
}
