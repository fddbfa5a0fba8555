package wal

import (
	"hash/crc32"
	"sync"
)

// This file checks a frame's checksum in time independent of its length,
// for the torn-tail search of ScanSegment: there every offset of the tail
// may be a candidate frame, and checksumming each candidate's whole
// claimed payload would cost the square of the tail's size.
//
// CRC-32C is linear over GF(2). With the register update r' = U(r, b)
// (the CRC without the inversions before and after),
// U(r, X||Y) = S(U(r, X), |Y|) ^ U(0, Y), where S(r, n) = U(r, n zero
// bytes) multiplies r by x^(8n) modulo the polynomial. So from the prefix registers P(i) = U(0, d[o:i])
// of the data, kept every markStride bytes, the checksum of a frame at p
// with length l is
//
//	^( S(U(^0, d[p:p+4]) ^ P(p+8), l) ^ P(p+8+l) )

// directCRCMax is the longest payload a candidate frame has its checksum
// computed directly; longer ones use the prefix registers.
const directCRCMax = 4096

// markStride is the distance between kept prefix registers.
const markStride = 64

// castagnoliReflected is the CRC-32C polynomial in the bit order
// hash/crc32 uses, where bit 31 is the coefficient of x^0.
const castagnoliReflected = 0x82f63b78

// update is the register update U: the CRC of b continuing from register
// r, without the inversions hash/crc32 applies before and after.
func update(r uint32, b []byte) uint32 {
	return ^crc32.Update(^r, castagnoli, b)
}

// mulmod returns a*b modulo the polynomial, both in reflected order.
func mulmod(a, b uint32) uint32 {
	var p uint32
	for range 32 {
		p ^= b & uint32(int32(a)>>31) // if a's top coefficient is 1
		a <<= 1
		b = b>>1 ^ castagnoliReflected&-(b&1) // b *= x
	}
	return p
}

// powTables[k][d] is x^(8*d*256^k) modulo the polynomial.
var powTables = sync.OnceValue(func() *[4][256]uint32 {
	var t [4][256]uint32
	x8 := uint32(1) << (31 - 8) // x^8
	for k := range t {
		t[k][0] = 1 << 31 // x^0
		t[k][1] = x8
		for d := 2; d < 256; d++ {
			t[k][d] = mulmod(t[k][d-1], x8)
		}
		x8 = mulmod(t[k][255], x8) // x^(8*256^(k+1))
	}
	return &t
})

// shift returns S(r, n): r advanced over n zero bytes.
func shift(r uint32, n uint32) uint32 {
	t := powTables()
	for k := 0; n != 0; k, n = k+1, n>>8 {
		if d := n & 255; d != 0 {
			r = mulmod(t[k][d], r)
		}
	}
	return r
}

// prefixCRC holds the prefix registers of data[origin:], one every
// markStride bytes: G/16 bytes of memory for G bytes of data.
type prefixCRC struct {
	data   []byte
	origin int
	marks  []uint32 // marks[k] = U(0, data[origin : origin+k*markStride])
}

func newPrefixCRC(data []byte, origin int) *prefixCRC {
	c := &prefixCRC{data: data, origin: origin, marks: make([]uint32, (len(data)-origin)/markStride+1)}
	var r uint32
	for k := 1; k < len(c.marks); k++ {
		at := origin + (k-1)*markStride
		r = update(r, data[at:at+markStride])
		c.marks[k] = r
	}
	return c
}

// at returns U(0, data[origin:i]), for origin <= i <= len(data).
func (c *prefixCRC) at(i int) uint32 {
	k := (i - c.origin) / markStride
	return update(c.marks[k], c.data[c.origin+k*markStride:i])
}

// frameCRC returns the checksum a frame at p with payload length l must
// carry, p+8+l <= len(data) and p+8 >= origin.
func (c *prefixCRC) frameCRC(p int, l uint32) uint32 {
	h := update(^uint32(0), c.data[p:p+4]) ^ c.at(p+FrameHeaderSize)
	return ^(shift(h, l) ^ c.at(p+FrameHeaderSize+int(l)))
}
