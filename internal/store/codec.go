package store

import (
	"encoding/binary"
	"slices"
	"unsafe"
)

// Strings of entries.
//
// Each name and value of an entry (but for the master names of a block's
// header) is stored in one of three forms, told apart by its first byte h:
//
//	h < 0x40            raw: h bytes follow
//	0x40 <= h < 0x80    raw, 64 bytes or more: the length is h&0x3f plus
//	                    uvarint u << 6 (u >= 1), u follows, then the bytes
//	0x80 | n, 2<=n<=63  packed: n characters of packAlphabet, two to a
//	                    byte, the first in the low nibble; the last high
//	                    nibble of an odd n is 0
//
// A string of 2 to 63 characters all in packAlphabet (decimal numbers,
// with leading zeros or not, signs, decimal points, times such as
// "12:30:05", dates such as "2026-12-01" or "12/01/2026", lists such as
// "1,2,3") is packed: "0042" and "23.7" take 3 bytes instead of 5. Unlike
// Redis's listpack integers, packing keeps every such string byte for
// byte ("007", "-0", "+1" as well as "7"), so no string needs a canonical
// form to be packed. The alphabet is the 16 bytes from '+' (0x2b) to ':'
// (0x3a), and a character's nibble is its low four bits, so that packing
// takes no table and checks four characters at a time. Packed strings
// stop at 63 characters so that no string's listpack element takes more
// than twice the string's bytes here.
const packAlphabet = "0123456789:+,-./" // by nibble

const (
	strLong   = 0x40 // first byte of a raw string of 64 bytes or more
	strPacked = 0x80 // first byte of a packed string, | its length
	packMax   = 63   // the longest packed string
	packFirst = '+'  // the alphabet's first byte: it is packFirst..packFirst+15
)

// packable reports whether s is stored packed.
func packable(s string) bool {
	if len(s) < 2 || len(s) > packMax {
		return false
	}
	var or byte // a byte out of the alphabet sets the high bits
	for i := 0; i < len(s); i++ {
		or |= s[i] - packFirst
	}
	return or < 16
}

// strSize returns the size of s as stored.
func strSize(s string) int {
	if packable(s) {
		return 1 + (len(s)+1)/2
	}
	return rawSize(len(s))
}

// rawSize returns the size of a string of n bytes stored raw, which is
// never less than its size as stored: a bound that costs no look at the
// string's bytes.
func rawSize(n int) int {
	if n < strLong {
		return 1 + n
	}
	return 1 + uvarintLen(uint64(n>>6)) + n
}

// putStr writes s in its stored form at the start of dst, which has room
// for it (strSize; rawSize(len(s)) is always enough), and returns the size
// written. It packs s on the way, four characters at a time, and writes it
// raw instead when a byte is not in the alphabet.
func putStr(dst []byte, s string) int {
	n := len(s)
	if uint(n-2) <= packMax-2 && len(dst) > (n+1)/2 {
		// The loads and stores go through pointers, which spares the
		// bounds checks of every character (a third of the cost): the
		// loop conditions keep them inside s and dst[1:1+(n+1)/2].
		m := (n + 1) / 2
		sp, op := unsafe.Pointer(unsafe.StringData(s)), unsafe.Pointer(&dst[1])
		var bad uint32 // a byte out of the alphabet sets a bit of 0x80808080
		i := 0
		for ; i+4 <= n; i += 4 {
			x := binary.LittleEndian.Uint32(unsafe.Slice((*byte)(unsafe.Add(sp, i)), 4))
			// A byte c is in the alphabet when c < 0x80, c + 0x55 >= 0x80
			// (c >= '+') and c + 0x45 < 0x80 (c <= ':'); the sums of bytes
			// below 0x80 do not carry into the next byte.
			bad |= x | ^(x + 0x55555555) | (x + 0x45454545)
			y := x & 0x0f0f0f0f
			y |= y >> 4
			binary.LittleEndian.PutUint16(unsafe.Slice((*byte)(unsafe.Add(op, i/2)), 2), uint16(y&0xff|y>>8&0xff00))
		}
		var or byte // a byte out of the alphabet sets a bit of 0xf0
		for ; i < n; i++ {
			c := *(*byte)(unsafe.Add(sp, i))
			or |= c - packFirst
			o := (*byte)(unsafe.Add(op, i/2))
			if i&1 == 0 {
				*o = c & 15
			} else {
				*o |= c << 4
			}
		}
		if bad&0x80808080 == 0 && or < 16 {
			dst[0] = strPacked | byte(n)
			return 1 + m
		}
	}
	if n < strLong {
		dst[0] = byte(n)
		return 1 + copy(dst[1:1+n], s)
	}
	dst[0] = strLong | byte(n&0x3f)
	k := 1 + binary.PutUvarint(dst[1:], uint64(n>>6))
	return k + copy(dst[k:k+n], s)
}

// Word operations on strings, for appendRun, which packs the values of
// up to shortMax bytes that most entries have with no loop over their
// bytes: it loads each as two words that overlap unless its length is a
// power of two (its first and last 2, 4 or 8 bytes, so that no byte
// outside the string is read), checks and packs them with notAlpha and
// pack8, and stores the packed word, or the two words for the raw form.

// shortMax is the longest value appendRun takes.
const shortMax = 16

// notAlpha returns 0 when every byte of x is in the alphabet, else a
// word with a bit of 0xf0f0f0f0f0f0f0f0 set. It subtracts packFirst from
// every byte at once: when no byte is below packFirst no byte borrows,
// and a byte c is in the alphabet when c - packFirst has no high nibble;
// the lowest byte below packFirst takes no borrow and has a high nibble
// (c - packFirst + 256 is 0xd5 or more), whatever the bytes above it.
func notAlpha(x uint64) uint64 {
	return (x - 0x2b2b2b2b2b2b2b2b) & 0xf0f0f0f0f0f0f0f0
}

// notAlpha32 is notAlpha for the four bytes of x: its constants fit an
// instruction's immediate operand.
func notAlpha32(x uint32) uint32 {
	return (x - 0x2b2b2b2b) & 0xf0f0f0f0
}

// pack8 returns the low nibbles of the eight bytes of x, two to a byte,
// the first byte's in the lowest nibble.
func pack8(x uint64) uint32 {
	y := x & 0x0f0f0f0f0f0f0f0f
	y = (y | y>>4) & 0x00ff00ff00ff00ff
	y = (y | y>>8) & 0x0000ffff0000ffff
	return uint32(y | y>>16)
}

// load64, load32 and load16 read the little-endian word at p+i, and
// store64, store32 and store16 write one; the caller keeps them inside
// the string or slice p points into.
// (Through array pointers: unsafe.Slice would check the pointer.)
func load64(p unsafe.Pointer, i int) uint64 {
	return binary.LittleEndian.Uint64((*[8]byte)(unsafe.Add(p, i))[:])
}

func load32(p unsafe.Pointer, i int) uint32 {
	return binary.LittleEndian.Uint32((*[4]byte)(unsafe.Add(p, i))[:])
}

func load16(p unsafe.Pointer, i int) uint16 {
	return binary.LittleEndian.Uint16((*[2]byte)(unsafe.Add(p, i))[:])
}

func store64(p unsafe.Pointer, i int, x uint64) {
	binary.LittleEndian.PutUint64((*[8]byte)(unsafe.Add(p, i))[:], x)
}

func store32(p unsafe.Pointer, i int, x uint32) {
	binary.LittleEndian.PutUint32((*[4]byte)(unsafe.Add(p, i))[:], x)
}

func store16(p unsafe.Pointer, i int, x uint16) {
	binary.LittleEndian.PutUint16((*[2]byte)(unsafe.Add(p, i))[:], x)
}

// AppendStr decodes the string stored at d[p] (written by this package),
// appends it to dst and returns dst and the position after the string.
func AppendStr(dst, d []byte, p int) ([]byte, int) {
	var ends [1]int32
	return AppendStrs(dst, ends[:], d, p)
}

// AppendStrs decodes len(ends) strings stored from d[p] on (written by
// this package), appends them to dst, sets ends[i] to the end of string i
// in dst, and returns dst and the position after the strings. One call
// decodes the strings of an entry, which spares a call a string.
func AppendStrs(dst []byte, ends []int32, d []byte, p int) ([]byte, int) {
	for i := range ends {
		h := d[p]
		switch {
		case h < strLong:
			q := p + 1 + int(h)
			dst = append(dst, d[p+1:q]...)
			p = q
		case h < strPacked:
			u, q := Uvarint(d, p+1)
			l := int(h&0x3f) | int(u)<<6
			dst = append(dst, d[q:q+l]...)
			p = q + l
		case int(h&^strPacked) <= 8 && p+5 <= len(d):
			// Up to eight characters from one load of four bytes (those
			// past the string are d's next bytes) and one store of eight
			// (those past the string are cut).
			l := int(h &^ strPacked)
			k := len(dst)
			dst = slices.Grow(dst, 8)
			binary.LittleEndian.PutUint64(dst[k:k+8], unpack8(binary.LittleEndian.Uint32(d[p+1:p+5])))
			dst = dst[:k+l]
			p += 1 + (l+1)/2
		default:
			l := int(h &^ strPacked)
			m := (l + 1) / 2
			src := d[p+1 : p+1+m]
			k := len(dst)
			dst = slices.Grow(dst, 2*m)[:k+2*m]
			// Through pointers, as in putStr: the loop conditions keep the
			// loads inside src and the stores inside dst[k:k+2*m].
			sp, op := unsafe.Pointer(&src[0]), unsafe.Pointer(&dst[k])
			j := 0
			for ; j+2 <= m; j += 2 {
				x := binary.LittleEndian.Uint16(unsafe.Slice((*byte)(unsafe.Add(sp, j)), 2))
				binary.LittleEndian.PutUint32(unsafe.Slice((*byte)(unsafe.Add(op, 2*j)), 4), unpack4(uint32(x)))
			}
			if j < m {
				x := *(*byte)(unsafe.Add(sp, j))
				binary.LittleEndian.PutUint16(unsafe.Slice((*byte)(unsafe.Add(op, 2*j)), 2), uint16(unpack4(uint32(x))))
			}
			dst = dst[:k+l]
			p += 1 + m
		}
		ends[i] = int32(len(dst))
	}
	return dst, p
}

// unpack8 returns the eight characters of the four packed bytes x, the
// first in the low byte.
func unpack8(x uint32) uint64 {
	y := uint64(x)
	y = (y | y<<16) & 0x0000ffff0000ffff
	y = (y | y<<8) & 0x00ff00ff00ff00ff                                       // a byte every other byte
	y = y&0x000f000f000f000f | y&0x00f000f000f000f0<<4                        // a nibble a byte
	return y + 0x3030303030303030 - (y+0x0505050505050505)&0x1010101010101010 // as unpack4
}

// unpack4 returns the four characters of the two packed bytes x, the
// first in the low byte.
func unpack4(x uint32) uint32 {
	x = x&0xff | x&0xff00<<8                          // the bytes to bytes 0 and 2
	x = x&0x000f000f | x&0x00f000f0<<4                // a nibble a byte
	return x + 0x30303030 - (x+0x05050505)&0x10101010 // '0'+v, or '+'-11+v from 11 on
}

// checkStr checks the string stored at d[p] and returns the position
// after it: it must lie inside d and be in the form appendStr writes.
// It never panics, whatever the bytes.
func checkStr(d []byte, p int) (int, bool) {
	if p >= len(d) {
		return 0, false
	}
	switch h := d[p]; {
	case h < strLong:
		n := int(h)
		return p + 1 + n, n <= len(d)-p-1
	case h < strPacked:
		u, q, ok := safeUvarint(d, p+1)
		if !ok || u == 0 || u > uint64(len(d)) {
			return 0, false
		}
		n := int(h&0x3f) | int(u)<<6
		return q + n, n <= len(d)-q
	default:
		n := int(h &^ strPacked)
		m := (n + 1) / 2
		if n < 2 || n > packMax || m > len(d)-p-1 {
			return 0, false
		}
		if n%2 == 1 && d[p+m]>>4 != 0 {
			return 0, false
		}
		return p + 1 + m, true
	}
}
