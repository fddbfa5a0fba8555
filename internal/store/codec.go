package store

import "encoding/binary"

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
// "12:30:05", dates, exponents) is packed: "0042" and "23.7" take 3 bytes
// instead of 5. Unlike Redis's listpack integers, packing keeps every
// such string byte for byte ("007", "-0", "+1" as well as "7"), so no
// string needs a canonical form to be packed. Packed strings stop at 63
// characters so that a string never takes more than half its listpack
// size here (see lpEntryBound).
const packAlphabet = "0123456789.-:+eT"

const (
	strLong   = 0x40 // first byte of a raw string of 64 bytes or more
	strPacked = 0x80 // first byte of a packed string, | its length
	packMax   = 63   // the longest packed string
)

// nibble maps a byte to its index in packAlphabet, 0xff if not in it.
var nibble = func() (t [256]byte) {
	for i := range t {
		t[i] = 0xff
	}
	for i := range len(packAlphabet) {
		t[packAlphabet[i]] = byte(i)
	}
	return t
}()

// unpacked maps a packed byte to its two characters, the first in the
// low byte.
var unpacked = func() (t [256]uint16) {
	for i := range t {
		t[i] = uint16(packAlphabet[i&15]) | uint16(packAlphabet[i>>4])<<8
	}
	return t
}()

// packable reports whether s is stored packed.
func packable(s string) bool {
	if len(s) < 2 || len(s) > packMax {
		return false
	}
	var or byte // a byte out of the alphabet sets the high bits
	for i := 0; i < len(s); i++ {
		or |= nibble[s[i]]
	}
	return or < 16
}

// strSize returns the size of s as stored.
func strSize(s string) int {
	switch n := len(s); {
	case packable(s):
		return 1 + (n+1)/2
	case n < strLong:
		return 1 + n
	default:
		return 1 + uvarintLen(uint64(n>>6)) + n
	}
}

// appendStr appends s in its stored form.
func appendStr(d []byte, s string) []byte {
	n := len(s)
	if packable(s) {
		d = append(d, strPacked|byte(n))
		for i := 0; i+1 < n; i += 2 {
			d = append(d, nibble[s[i]]|nibble[s[i+1]]<<4)
		}
		if n%2 == 1 {
			d = append(d, nibble[s[n-1]])
		}
		return d
	}
	if n < strLong {
		d = append(d, byte(n))
	} else {
		d = append(d, strLong|byte(n&0x3f))
		d = binary.AppendUvarint(d, uint64(n>>6))
	}
	return append(d, s...)
}

// AppendStr decodes the string stored at d[p] (written by this package),
// appends it to dst and returns dst and the position after the string.
func AppendStr(dst, d []byte, p int) ([]byte, int) {
	if h := d[p]; h < strLong {
		q := p + 1 + int(h)
		return append(dst, d[p+1:q]...), q
	}
	return appendStrSlow(dst, d, p)
}

func appendStrSlow(dst, d []byte, p int) ([]byte, int) {
	h := d[p]
	if h < strPacked {
		u, q := Uvarint(d, p+1)
		n := int(h&0x3f) | int(u)<<6
		return append(dst, d[q:q+n]...), q + n
	}
	n := int(h &^ strPacked)
	src := d[p+1 : p+1+(n+1)/2]
	l := len(dst)
	dst = append(dst, make([]byte, 2*len(src))...)
	out := dst[l:]
	for i, c := range src {
		binary.LittleEndian.PutUint16(out[2*i:], unpacked[c])
	}
	return dst[:l+n], p + 1 + len(src)
}

// SkipStr returns the position after the string stored at d[p].
func SkipStr(d []byte, p int) int {
	switch h := d[p]; {
	case h < strLong:
		return p + 1 + int(h)
	case h < strPacked:
		u, q := Uvarint(d, p+1)
		return q + (int(h&0x3f) | int(u)<<6)
	default:
		return p + 1 + (int(h&^strPacked)+1)/2
	}
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
