package server

import (
	"math/bits"
	"strconv"

	"github.com/xstreamgo/xstream"
)

// Writing RESP into a reply buffer: small headers in place, an entry of a
// stream in one function, its ID without an intermediate text. The output
// is byte for byte what redcon's Append functions write.

// pow10 holds 10^i for i from 0 to 19.
var pow10 = [20]uint64{
	1, 10, 100, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9,
	1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19,
}

// decimalLen returns the number of decimal digits of v: 1 to 20. O(1).
func decimalLen(v uint64) int {
	if v < 10 {
		return 1
	}
	t := bits.Len64(v) * 1233 >> 12 // about log10(v), or one less
	if v < pow10[t] {
		return t
	}
	return t + 1
}

// appendHeader appends a RESP header of kind (*, $, :, ...) with n, as
// redcon's AppendArray, AppendInt and the bulk prefixes do: numbers under
// 100 in place, others by strconv.
func appendHeader(b []byte, kind byte, n int64) []byte {
	switch {
	case uint64(n) < 10:
		return append(b, kind, byte('0'+n), '\r', '\n')
	case uint64(n) < 100:
		return append(b, kind, byte('0'+n/10), byte('0'+n%10), '\r', '\n')
	}
	b = strconv.AppendInt(append(b, kind), n, 10)
	return append(b, '\r', '\n')
}

// appendBulk appends s as a RESP bulk string.
func appendBulk[T string | []byte](b []byte, s T) []byte {
	b = appendHeader(b, '$', int64(len(s)))
	b = append(b, s...)
	return append(b, '\r', '\n')
}

// appendEntry appends an entry with fields (not nil) as an array of n
// elements (2 or 4), [id, [field, value, ...], ...], the n-2 last left to
// the caller. The same in RESP2 and RESP3.
func appendEntry(b []byte, id xstream.ID, fields []xstream.Field, n int) []byte {
	b = append(b, '*', byte('0'+n), '\r', '\n')
	b = appendID(b, id)
	b = appendHeader(b, '*', int64(2*len(fields)))
	for _, f := range fields {
		b = appendBulk(b, f.Name)
		b = appendBulk(b, f.Value)
	}
	return b
}

// appendID appends id's text as a RESP bulk string, without a copy of
// the text.
func appendID(b []byte, id xstream.ID) []byte {
	b = appendHeader(b, '$', int64(decimalLen(id.Ms)+1+decimalLen(id.Seq)))
	b = strconv.AppendUint(b, id.Ms, 10)
	b = append(b, '-')
	b = strconv.AppendUint(b, id.Seq, 10)
	return append(b, '\r', '\n')
}
