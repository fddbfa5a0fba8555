package xstream

import (
	"crypto/md5"
	"encoding/binary"
	"math/bits"
	"strconv"
	"unicode/utf8"
	"unsafe"
)

// HashKey is a 128-bit unsigned hash key, 0 to 2^128-1, as a sharded
// stream routes records by: Hi holds the upper 64 bits, Lo the lower.
type HashKey struct {
	Hi, Lo uint64
}

// MaxHashKey returns the largest hash key, 2^128-1, where the last shard's
// range ends. It is a function so that no caller can change it.
func MaxHashKey() HashKey { return HashKey{^uint64(0), ^uint64(0)} }

// maxPartitionKeyChars is the longest partition key, in Unicode characters.
const maxPartitionKeyChars = 256

// PartitionHashKey returns the hash key of a partition key: its MD5 digest
// read as a big-endian unsigned integer, as Kinesis computes it. O(len).
func PartitionHashKey(partitionKey string) HashKey {
	// md5.Sum only reads its argument: it takes the key's own bytes.
	sum := md5.Sum(unsafe.Slice(unsafe.StringData(partitionKey), len(partitionKey)))
	return HashKey{binary.BigEndian.Uint64(sum[:8]), binary.BigEndian.Uint64(sum[8:])}
}

// checkPartitionKey validates a partition key: 1 to 256 characters. A
// key of 1 to 256 bytes passes at once (inlined in Put); longer ones are
// counted in characters.
func checkPartitionKey(pk string) error {
	if uint(len(pk)-1) < maxPartitionKeyChars {
		return nil
	}
	return checkLongPartitionKey(pk)
}

// checkLongPartitionKey is checkPartitionKey for a key that is empty or
// longer than 256 bytes.
func checkLongPartitionKey(pk string) error {
	if len(pk) == 0 {
		return errorf(ErrInvalidPartitionKey, "partition key is empty")
	}
	if n := utf8.RuneCountInString(pk); n > maxPartitionKeyChars {
		return errorf(ErrInvalidPartitionKey, "partition key has %d characters, at most %d allowed: %.32q...", n, maxPartitionKeyChars, pk)
	}
	return nil
}

// ParseHashKey parses a hash key written in decimal, 0 to 2^128-1: digits
// only, without leading zeros (Kinesis's pattern 0|([1-9]\d{0,38})). The
// error wraps ErrInvalidHashKey. O(len(s)).
func ParseHashKey(s string) (HashKey, error) {
	if len(s) == 0 || len(s) > 39 || (len(s) > 1 && s[0] == '0') {
		return HashKey{}, errorf(ErrInvalidHashKey, "%q is not a decimal number from 0 to 2^128-1", s)
	}
	var h HashKey
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return HashKey{}, errorf(ErrInvalidHashKey, "%q is not a decimal number from 0 to 2^128-1", s)
		}
		hi1, lo1 := bits.Mul64(h.Lo, 10)
		hi2, hi := bits.Mul64(h.Hi, 10)
		hi, carry := bits.Add64(hi, hi1, 0)
		lo, carry2 := bits.Add64(lo1, uint64(c-'0'), 0)
		hi, carry3 := bits.Add64(hi, 0, carry2)
		if hi2 != 0 || carry != 0 || carry3 != 0 {
			return HashKey{}, errorf(ErrInvalidHashKey, "%q is out of range (at most 2^128-1)", s)
		}
		h = HashKey{hi, lo}
	}
	return h, nil
}

// String returns the hash key in decimal.
func (h HashKey) String() string {
	if h.Hi == 0 {
		return strconv.FormatUint(h.Lo, 10)
	}
	// Split into base-10^19 digits: h = top*10^19 + low.
	const e19 = 10_000_000_000_000_000_000
	top, low := h.divmod(e19)
	out := top.String()
	s := strconv.FormatUint(low, 10)
	for len(s) < 19 {
		s = "0" + s
	}
	return out + s
}

// MarshalText implements encoding.TextMarshaler with the decimal form.
func (h HashKey) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler; it accepts what
// ParseHashKey accepts.
func (h *HashKey) UnmarshalText(b []byte) error {
	v, err := ParseHashKey(string(b))
	if err != nil {
		return err
	}
	*h = v
	return nil
}

// Compare returns -1, 0 or +1 as h is smaller than, equal to or greater
// than o.
func (h HashKey) Compare(o HashKey) int {
	switch {
	case h.Hi < o.Hi || (h.Hi == o.Hi && h.Lo < o.Lo):
		return -1
	case h == o:
		return 0
	}
	return 1
}

// Less reports whether h is smaller than o.
func (h HashKey) Less(o HashKey) bool {
	return h.Hi < o.Hi || (h.Hi == o.Hi && h.Lo < o.Lo)
}

// add returns h+o, wrapping around at 2^128.
func (h HashKey) add(o HashKey) HashKey {
	lo, c := bits.Add64(h.Lo, o.Lo, 0)
	hi, _ := bits.Add64(h.Hi, o.Hi, c)
	return HashKey{hi, lo}
}

// sub returns h-o, wrapping around at 0.
func (h HashKey) sub(o HashKey) HashKey {
	lo, b := bits.Sub64(h.Lo, o.Lo, 0)
	hi, _ := bits.Sub64(h.Hi, o.Hi, b)
	return HashKey{hi, lo}
}

// mul returns h*m, wrapping around at 2^128.
func (h HashKey) mul(m uint64) HashKey {
	hi, lo := bits.Mul64(h.Lo, m)
	return HashKey{hi + h.Hi*m, lo}
}

// divmod returns h/d and h%d; d > 0.
func (h HashKey) divmod(d uint64) (HashKey, uint64) {
	qhi, r := h.Hi/d, h.Hi%d
	qlo, r := bits.Div64(r, h.Lo, d)
	return HashKey{qhi, qlo}, r
}

// uniformWidth returns floor(2^128 / n) for n >= 1, saturated to
// MaxHashKey for n == 1.
func uniformWidth(n uint64) HashKey {
	if n == 1 {
		return MaxHashKey()
	}
	q, r := MaxHashKey().divmod(n)
	if r == n-1 { // 2^128 = (2^128-1) + 1 divides one more time
		q = q.add(HashKey{0, 1})
	}
	return q
}

// HashKeyRange is the inclusive range of hash keys a shard owns.
type HashKeyRange struct {
	StartingHashKey HashKey
	EndingHashKey   HashKey
}

// Contains reports whether h lies in the range.
func (r HashKeyRange) Contains(h HashKey) bool {
	return !h.Less(r.StartingHashKey) && !r.EndingHashKey.Less(h)
}

// String returns the range as "start-end" in decimal.
func (r HashKeyRange) String() string {
	return r.StartingHashKey.String() + "-" + r.EndingHashKey.String()
}
