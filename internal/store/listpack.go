package store

import (
	"strconv"
	"unsafe"
)

// Redis's node boundaries. A Redis stream node is a listpack; Redis
// starts a new node when the last one's listpack bytes plus the new
// entry's field and value lengths reach stream-node-max-bytes, or when it
// holds stream-node-max-entries entries (deleted ones included). A block
// follows the same rule, with the listpack's size computed as Redis's
// encoding would make it, so that blocks end where Redis's nodes end and
// approximate trims remove what Redis's remove. The block's own format is
// smaller; only the boundary is Redis's.

// lpEmpty is the size of an empty listpack: its 6-byte header and its
// end byte.
const lpEmpty = 7

// lpMaxSize is Redis's STREAM_LISTPACK_MAX_SIZE, the node size when
// stream-node-max-bytes is 0.
const lpMaxSize = 1 << 30

// lpBacklen is the size of the back-length of an element of l bytes.
func lpBacklen(l int) int {
	switch {
	case l <= 127:
		return 1
	case l < 16383:
		return 2
	case l < 2097151:
		return 3
	case l < 268435455:
		return 4
	}
	return 5
}

// lpIntSize is the size of an integer element of value v.
func lpIntSize(v int64) int {
	if n := lpIntSizeNear(v); n != 0 {
		return n
	}
	return lpIntSizeWide(v)
}

// lpIntSizeNear is lpIntSize for v from -32768 to 32767, and 0 for the
// others. It is inlined and calls nothing.
func lpIntSizeNear(v int64) int {
	switch {
	case uint64(v) <= 127:
		return 2
	case uint64(v+4096) <= 8191:
		return 3
	case uint64(v+32768) <= 65535:
		return 4
	}
	return 0
}

// lpIntSizeFar is lpIntSize for v outside -32768 to 32767, inlined:
// the 24-bit, 32-bit and 64-bit integer encodings and their back-length.
func lpIntSizeFar(v int64) int {
	switch {
	case uint64(v+1<<23) < 1<<24:
		return 5
	case uint64(v+1<<31) < 1<<32:
		return 6
	}
	return 10
}

// lpIntSizeWide is lpIntSize for any value.
func lpIntSizeWide(v int64) int {
	var l int
	switch {
	case v >= 0 && v <= 127:
		l = 1
	case v >= -4096 && v <= 4095:
		l = 2
	case v >= -32768 && v <= 32767:
		l = 3
	case v >= -8388608 && v <= 8388607:
		l = 4
	case v >= -2147483648 && v <= 2147483647:
		l = 5
	default:
		l = 9
	}
	return l + lpBacklen(l)
}

// lpStrSize is the size of the element Redis makes of s: an integer when
// s is one's canonical form (as lpStringToInt64 reads it), else a string.
func lpStrSize(s string) int {
	if v, ok := lpInt(s); ok {
		return lpIntSize(v)
	}
	return lpStrMax(s)
}

// lpStrMax is the size of s encoded as a string, which is never less than
// its size as an integer.
func lpStrMax(s string) int {
	var l int
	switch n := len(s); {
	case n < 64:
		l = 1 + n
	case n < 4096:
		l = 2 + n
	default:
		l = 5 + n
	}
	return l + lpBacklen(l)
}

// lpInt reports whether s is an integer in the form Redis encodes as one:
// an optional '-', then digits without a leading zero, in int64's range.
func lpInt(s string) (int64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	d := s
	if d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || (d[0] == '0' && len(s) > 1) {
		return 0, false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// lpMasterSize is the size of a node's master entry but for its two
// counters: the number of fields, the names and the terminating zero.
func lpMasterSize(fields []Field) int {
	n := lpIntSize(int64(len(fields))) + lpIntSize(0)
	for _, f := range fields {
		n += lpStrSize(f.Name)
	}
	return n
}

// lpEntrySize is the size of an entry's elements in a node whose master
// entry has the ID master: flags, ms and seq differences, the number of
// fields unless same, the names unless same, the values, the count of
// elements.
func lpEntrySize(master, id ID, same bool, fields []Field) int {
	n := lpIntSize(FlagSame) + lpIntSize(int64(id.Ms-master.Ms)) + lpIntSize(int64(id.Seq-master.Seq))
	count := int64(len(fields) + 3)
	if !same {
		n += lpIntSize(int64(len(fields)))
		count += int64(len(fields)) + 1
	}
	for _, f := range fields {
		if !same {
			n += lpStrSize(f.Name)
		}
		n += lpStrSize(f.Value)
	}
	return n + lpIntSize(count)
}

// lpShortEntrySize is lpEntrySize(master, id, true, fields) for values
// of at most shortMax bytes (put's entries), whose integers it reads
// without strconv (lpShortSize). O(len(fields)) and the values' digits.
func lpShortEntrySize(master, id ID, fields []Field) int {
	n := lpIntSize(FlagSame) + lpIntSize(int64(id.Ms-master.Ms)) + lpIntSize(int64(id.Seq-master.Seq))
	for i := range fields {
		n += lpShortSize(fields[i].Value)
	}
	return n + lpIntSize(int64(len(fields)+3))
}

// lpShortSize is lpStrSize(v) for v of at most shortMax bytes: an integer
// of so few digits cannot overflow, and is read without strconv.
func lpShortSize(v string) int {
	l := len(v)
	if l == 0 || (v[0] != '-' && uint(v[0]-'0') > 9) {
		return 2 + l // 1 + l and its back-length, below 64 bytes
	}
	d, neg := v, v[0] == '-'
	if neg {
		d = d[1:]
	}
	if len(d) == 0 || (d[0] == '0' && l > 1) {
		return 2 + l
	}
	x := int64(0)
	for i := 0; i < len(d); i++ {
		c := uint(d[i] - '0')
		if c > 9 {
			return 2 + l
		}
		x = x*10 + int64(c)
	}
	if neg {
		x = -x
	}
	return lpIntSize(x)
}

// lpEntryBound bounds lpEntrySize from the lengths of the entry's
// strings: each counted as a string (lpStrMax), which no integer's
// element exceeds, and the rest exactly: flags, the millisecond and
// sequence differences to the master, the number of fields unless same,
// the element count. It is exact for an entry without integers.
// O(len(fields)).
func lpEntryBound(master, id ID, same bool, fields []Field) int {
	n := lpIntSize(FlagSame) + lpIntSize(int64(id.Ms-master.Ms)) + lpIntSize(int64(id.Seq-master.Seq))
	count := int64(len(fields) + 3)
	if !same {
		n += lpIntSize(int64(len(fields)))
		count += int64(len(fields)) + 1
	}
	for i := range fields {
		if !same {
			n += lpStrMax(fields[i].Name)
		}
		n += lpStrMax(fields[i].Value)
	}
	return n + lpIntSize(count)
}

// lpSlack bounds a listpack's header, end and two counters.
const lpSlack = lpEmpty + 2*10

// lpFieldsLen is the sum of the names' and values' lengths: what Redis
// adds to a node's size to decide whether the entry starts a new node.
func lpFieldsLen(fields []Field) int {
	n := 0
	for _, f := range fields {
		n += len(f.Name) + len(f.Value)
	}
	return n
}

// blockLP computes the listpack size of b (as openLP counts it) from its
// entries, for a block restored from a snapshot; names are its master
// field names. Restore has checked the block, so it decodes without
// bounds checks of its own.
func blockLP(b *Block, names []string) int {
	master := make([]Field, len(names))
	for i, n := range names {
		master[i].Name = n
	}
	lp := lpMasterSize(master)
	first := b.FirstID()
	var fields []Field
	var text []byte
	var ends []int // of the entry's strings in text
	str := func(j int) string {
		start := 0
		if j > 0 {
			start = ends[j-1]
		}
		return view(text[start:ends[j]])
	}
	for i := range len(b.offs) {
		id, flags, p := b.At(i)
		same := flags&FlagSame != 0
		k, strs := len(names), len(names)
		if !same {
			n, q := Uvarint(b.data, p)
			k, strs, p = int(n), 2*int(n), q
		}
		text, ends = text[:0], ends[:0]
		for range strs {
			text, p = AppendStr(text, b.data, p)
			ends = append(ends, len(text))
		}
		fields = fields[:0]
		for j := range k {
			if same {
				fields = append(fields, Field{Name: names[j], Value: str(j)})
			} else {
				fields = append(fields, Field{Name: str(2 * j), Value: str(2*j + 1)})
			}
		}
		lp += lpEntrySize(first, id, same, fields)
	}
	return lp
}

// view is b as a string, without a copy, for the sizes blockLP computes:
// the string does not outlive the call.
func view(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
