package server

import (
	"encoding/binary"
	"errors"
	"hash/crc64"
	"strconv"
	"time"

	"github.com/xstreamgo/xstream"
)

// Decoding Redis's DUMP payloads of streams, for RESTORE.
//
// A payload is an RDB object (its type byte and value) followed by the
// RDB version (2 bytes, little endian) and a CRC-64 (Jones polynomial, 8
// bytes, little endian) of everything before it. Redis 7.0 writes
// streams as type 19 (RDB_TYPE_STREAM_LISTPACKS_2) and reads type 15 from
// Redis 5 to 6.2 too: a stream is its nodes (a 16-byte master ID and a
// listpack each), its length and last ID (type 19: first ID, max deleted
// ID and entries added as well), then its groups, each with its PEL and
// its consumers.

// dumpRDBVersion is Redis 7.0's RDB version: a payload of a later one is
// refused, as Redis 7.0 refuses it.
const dumpRDBVersion = 10

// The RDB types of streams that Redis 7.0 reads.
const (
	rdbTypeStreamListpacks  = 15
	rdbTypeStreamListpacks2 = 19
)

// errBadPayload is any payload that does not decode.
var errBadPayload = errors.New("bad data format")

// jonesTable is Redis's CRC-64: the Jones polynomial, reflected.
var jonesTable = crc64.MakeTable(0x95ac9329ac4bc9b5)

// crc64Jones is Redis's crc64(0, p): no initial or final inversion.
func crc64Jones(p []byte) uint64 { return ^crc64.Update(^uint64(0), jonesTable, p) }

// verifyDump checks a payload's version and checksum, as Redis's
// verifyDumpPayload, and returns the object part.
func verifyDump(p []byte) ([]byte, bool) {
	if len(p) < 10 {
		return nil, false
	}
	footer := p[len(p)-10:]
	if binary.LittleEndian.Uint16(footer) > dumpRDBVersion {
		return nil, false
	}
	if crc64Jones(p[:len(p)-8]) != binary.LittleEndian.Uint64(footer[2:]) {
		return nil, false
	}
	return p[:len(p)-10], true
}

// rdbReader reads the values of an RDB object; a read past the end or a
// bad encoding sets err, after which every read returns zero values.
type rdbReader struct {
	b   []byte
	err error
}

func (r *rdbReader) fail() { r.err, r.b = errBadPayload, nil }

func (r *rdbReader) bytes(n uint64) []byte {
	if r.err != nil || n > uint64(len(r.b)) {
		r.fail()
		return nil
	}
	out := r.b[:n]
	r.b = r.b[n:]
	return out
}

// length reads an RDB length; encoded tells that it is a special string
// encoding (its kind in n) instead.
func (r *rdbReader) length() (n uint64, encoded bool) {
	b := r.bytes(1)
	if b == nil {
		return 0, false
	}
	switch b[0] >> 6 {
	case 0:
		return uint64(b[0] & 0x3f), false
	case 1:
		c := r.bytes(1)
		if c == nil {
			return 0, false
		}
		return uint64(b[0]&0x3f)<<8 | uint64(c[0]), false
	case 2:
		switch b[0] {
		case 0x80:
			if v := r.bytes(4); v != nil {
				return uint64(binary.BigEndian.Uint32(v)), false
			}
		case 0x81:
			if v := r.bytes(8); v != nil {
				return binary.BigEndian.Uint64(v), false
			}
		default:
			r.fail()
		}
		return 0, false
	}
	return uint64(b[0] & 0x3f), true
}

// len reads a length that may not be a string encoding.
func (r *rdbReader) len() uint64 {
	n, enc := r.length()
	if enc {
		r.fail()
	}
	return n
}

// str reads an RDB string: plain, an integer or LZF compressed.
func (r *rdbReader) str() []byte {
	n, enc := r.length()
	if !enc {
		return r.bytes(n)
	}
	switch n {
	case 0, 1, 2:
		v := r.bytes(1 << n)
		if v == nil {
			return nil
		}
		var x int64
		switch n {
		case 0:
			x = int64(int8(v[0]))
		case 1:
			x = int64(int16(binary.LittleEndian.Uint16(v)))
		case 2:
			x = int64(int32(binary.LittleEndian.Uint32(v)))
		}
		return strconv.AppendInt(nil, x, 10)
	case 3:
		clen, ulen := r.len(), r.len()
		in := r.bytes(clen)
		if r.err != nil {
			return nil
		}
		out, ok := lzfDecompress(in, ulen)
		if !ok {
			r.fail()
		}
		return out
	}
	r.fail()
	return nil
}

// ms reads an RDB millisecond time (8 bytes, little endian).
func (r *rdbReader) ms() int64 {
	if v := r.bytes(8); v != nil {
		return int64(binary.LittleEndian.Uint64(v))
	}
	return 0
}

// id reads a stream ID as two lengths.
func (r *rdbReader) id() xstream.ID { return xstream.ID{Ms: r.len(), Seq: r.len()} }

// rawID reads a stream ID as 16 bytes, big endian.
func (r *rdbReader) rawID() xstream.ID {
	if v := r.bytes(16); v != nil {
		return xstream.ID{Ms: binary.BigEndian.Uint64(v), Seq: binary.BigEndian.Uint64(v[8:])}
	}
	return xstream.ID{}
}

// lzfDecompress decodes LZF data that decodes to n bytes.
func lzfDecompress(in []byte, n uint64) ([]byte, bool) {
	// An input byte makes at most 264/3 output bytes (a 3-byte back
	// reference of 264): a larger n is a lie, not to be allocated.
	if n > 88*uint64(len(in)) {
		return nil, false
	}
	out := make([]byte, 0, n)
	for i := 0; i < len(in); {
		ctrl := int(in[i])
		i++
		if ctrl < 32 { // a literal run of ctrl+1 bytes
			l := ctrl + 1
			if i+l > len(in) || uint64(len(out)+l) > n {
				return nil, false
			}
			out = append(out, in[i:i+l]...)
			i += l
			continue
		}
		l := ctrl >> 5 // a back reference
		if l == 7 {
			if i >= len(in) {
				return nil, false
			}
			l += int(in[i])
			i++
		}
		if i >= len(in) {
			return nil, false
		}
		ref := len(out) - ((ctrl&0x1f)<<8 | int(in[i])) - 1
		i++
		l += 2
		if ref < 0 || uint64(len(out)+l) > n {
			return nil, false
		}
		for k := range l {
			out = append(out, out[ref+k])
		}
	}
	return out, uint64(len(out)) == n
}

// listpack returns the elements of a listpack, integers as decimal
// strings.
func listpack(lp []byte) ([][]byte, bool) {
	if len(lp) < 7 || int(binary.LittleEndian.Uint32(lp)) != len(lp) || lp[len(lp)-1] != 0xff {
		return nil, false
	}
	var out [][]byte
	p := lp[6 : len(lp)-1]
	for len(p) > 0 {
		b := p[0]
		var elem []byte
		var size int // encoding and data
		switch {
		case b&0x80 == 0:
			elem, size = strconv.AppendInt(nil, int64(b&0x7f), 10), 1
		case b&0xc0 == 0x80:
			l := int(b & 0x3f)
			size = 1 + l
			if size > len(p) {
				return nil, false
			}
			elem = p[1:size]
		case b&0xe0 == 0xc0:
			if len(p) < 2 {
				return nil, false
			}
			v := int64(b&0x1f)<<8 | int64(p[1])
			if v >= 1<<12 {
				v -= 1 << 13
			}
			elem, size = strconv.AppendInt(nil, v, 10), 2
		case b&0xf0 == 0xe0:
			if len(p) < 2 {
				return nil, false
			}
			l := int(b&0x0f)<<8 | int(p[1])
			size = 2 + l
			if size > len(p) {
				return nil, false
			}
			elem = p[2:size]
		case b == 0xf0:
			if len(p) < 5 {
				return nil, false
			}
			l := int(binary.LittleEndian.Uint32(p[1:]))
			size = 5 + l
			if l < 0 || size > len(p) {
				return nil, false
			}
			elem = p[5:size]
		case b >= 0xf1 && b <= 0xf4:
			w := map[byte]int{0xf1: 2, 0xf2: 3, 0xf3: 4, 0xf4: 8}[b]
			if len(p) < 1+w {
				return nil, false
			}
			var u uint64
			for k := w - 1; k >= 0; k-- {
				u = u<<8 | uint64(p[1+k])
			}
			v := int64(u<<(64-8*w)) >> (64 - 8*w) // sign-extended
			elem, size = strconv.AppendInt(nil, v, 10), 1+w
		default:
			return nil, false
		}
		size += backlenSize(size)
		if size > len(p) {
			return nil, false
		}
		out = append(out, elem)
		p = p[size:]
	}
	return out, uint16(len(out)) == binary.LittleEndian.Uint16(lp[4:]) || binary.LittleEndian.Uint16(lp[4:]) == 65535
}

// backlenSize is the size of a listpack element's back length, for an
// element of l bytes.
func backlenSize(l int) int {
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

// The flags of a stream listpack entry.
const (
	lpFlagDeleted    = 1
	lpFlagSameFields = 2
)

// decodeStreamDump decodes a payload's object into a stream image, as
// Redis 7.0's rdbLoadObject does for a stream. rdbType is its first byte.
func decodeStreamDump(obj []byte) (xstream.StreamImage, error) {
	var img xstream.StreamImage
	if len(obj) == 0 || obj[0] != rdbTypeStreamListpacks && obj[0] != rdbTypeStreamListpacks2 {
		return img, errBadPayload
	}
	v2 := obj[0] == rdbTypeStreamListpacks2
	r := &rdbReader{b: obj[1:]}
	for nodes := r.len(); nodes > 0 && r.err == nil; nodes-- {
		key := r.str()
		lp := r.str()
		if r.err != nil || len(key) != 16 {
			return img, errBadPayload
		}
		master := xstream.ID{Ms: binary.BigEndian.Uint64(key), Seq: binary.BigEndian.Uint64(key[8:])}
		if err := streamNode(&img, master, lp); err != nil {
			return img, err
		}
	}
	length := r.len()
	img.LastID = r.id()
	var first xstream.ID
	if v2 {
		first = r.id()
		img.MaxDeletedID = r.id()
		img.EntriesAdded = int64(r.len())
	} else {
		img.EntriesAdded = int64(length)
		if len(img.Entries) > 0 {
			first = img.Entries[0].ID
		}
	}
	if r.err != nil || length != uint64(len(img.Entries)) {
		return img, errBadPayload
	}
	for groups := r.len(); groups > 0 && r.err == nil; groups-- {
		g := xstream.GroupImage{Name: string(r.str()), LastID: r.id()}
		if v2 {
			g.EntriesRead = int64(r.len())
		} else {
			g.EntriesRead = estimateEntriesRead(&img, first, g.LastID)
		}
		type nack struct {
			ms, count int64
			owner     string
			owned     bool
		}
		pel := map[xstream.ID]*nack{}
		var order []xstream.ID
		for n := r.len(); n > 0 && r.err == nil; n-- {
			id := r.rawID()
			pel[id] = &nack{ms: r.ms(), count: int64(r.len())}
			order = append(order, id)
		}
		for n := r.len(); n > 0 && r.err == nil; n-- {
			c := xstream.ConsumerImage{Name: string(r.str())}
			c.SeenTime = time.UnixMilli(r.ms())
			g.Consumers = append(g.Consumers, c)
			for k := r.len(); k > 0 && r.err == nil; k-- {
				p := pel[r.rawID()]
				if p == nil || p.owned {
					return img, errBadPayload
				}
				p.owner, p.owned = c.Name, true
			}
		}
		for _, id := range order {
			p := pel[id]
			if !p.owned {
				return img, errBadPayload // a PEL entry without a consumer
			}
			g.Pending = append(g.Pending, xstream.PendingImage{ID: id, Consumer: p.owner, DeliveryTime: time.UnixMilli(p.ms), DeliveryCount: p.count})
		}
		img.Groups = append(img.Groups, g)
	}
	if r.err != nil || len(r.b) != 0 {
		return img, errBadPayload
	}
	return img, nil
}

// streamNode appends the live entries of one stream node (a listpack
// with its master entry) to img.
func streamNode(img *xstream.StreamImage, master xstream.ID, lp []byte) error {
	el, ok := listpack(lp)
	if !ok || len(el) < 4 {
		return errBadPayload
	}
	num := func(b []byte) (int64, bool) {
		v, err := strconv.ParseInt(string(b), 10, 64)
		return v, err == nil
	}
	nMaster, ok := num(el[2])
	if !ok || nMaster < 0 || int64(len(el)) < 4+nMaster {
		return errBadPayload
	}
	masterFields := el[3 : 3+nMaster]
	p := el[4+nMaster:] // after the master's terminating 0
	for len(p) > 0 {
		if len(p) < 3 {
			return errBadPayload
		}
		flags, ok1 := num(p[0])
		msd, ok2 := num(p[1])
		seqd, ok3 := num(p[2])
		if !ok1 || !ok2 || !ok3 {
			return errBadPayload
		}
		p = p[3:]
		id := xstream.ID{Ms: master.Ms + uint64(msd), Seq: master.Seq + uint64(seqd)}
		var fields []xstream.Field
		if flags&lpFlagSameFields != 0 {
			if int64(len(p)) < nMaster+1 {
				return errBadPayload
			}
			for k, f := range masterFields {
				fields = append(fields, xstream.Field{Name: string(f), Value: string(p[k])})
			}
			p = p[nMaster:]
		} else {
			if len(p) < 1 {
				return errBadPayload
			}
			n, ok := num(p[0])
			if !ok || n < 0 || int64(len(p)) < 1+2*n+1 {
				return errBadPayload
			}
			for k := int64(0); k < n; k++ {
				fields = append(fields, xstream.Field{Name: string(p[1+2*k]), Value: string(p[2+2*k])})
			}
			p = p[1+2*n:]
		}
		p = p[1:] // the entry's lp-count
		if flags&lpFlagDeleted == 0 {
			img.Entries = append(img.Entries, xstream.Entry{ID: id, Fields: fields})
		}
	}
	return nil
}

// estimateEntriesRead is Redis's streamEstimateDistanceFromFirstEverEntry
// for a group of a stream that a Redis older than 7.0 dumped (no
// entries-read counter): -1 when it cannot be known.
func estimateEntriesRead(img *xstream.StreamImage, first, id xstream.ID) int64 {
	length := int64(len(img.Entries))
	switch {
	case img.EntriesAdded == 0:
		return 0
	case length == 0 && !img.LastID.Less(id):
		return img.EntriesAdded
	case id == img.LastID:
		return img.EntriesAdded
	case img.LastID.Less(id):
		return -1
	}
	if img.MaxDeletedID.IsZero() || img.MaxDeletedID.Less(first) {
		if id.Less(first) {
			return img.EntriesAdded - length
		}
		if id == first {
			return img.EntriesAdded - length + 1
		}
	}
	return -1
}
