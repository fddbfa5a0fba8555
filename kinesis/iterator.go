package kinesis

import (
	"encoding/base64"
	"encoding/binary"
	"hash/crc32"
	"time"
)

// Shard iterators.
//
// The engine's iterator is a position in a shard (see
// xstream.ShardedEngine.GetShardIterator). A Kinesis iterator wraps it
// with what Kinesis checks: the stream's name and creation time (an
// iterator of a deleted stream, or of an older stream of the same name,
// names no shard), the shard, and the time it was issued, after which it
// lives IteratorTTL (five minutes) and then fails with
// ExpiredIteratorException. The bytes are
//
//	version (1) | issued ms (8) | created ms (8) | len(name) (1) | name |
//	shard number (4) | engine iterator | CRC-32C of all before (4)
//
// in standard base64, as Kinesis's are: opaque to clients, and any
// change to one makes it "Invalid ShardIterator.".
type shardIter struct {
	issued  int64
	created int64
	stream  string
	shard   int
	engine  string
}

const iterVersion = 1

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (it shardIter) String() string {
	b := make([]byte, 0, 26+len(it.stream)+len(it.engine))
	b = append(b, iterVersion)
	b = binary.BigEndian.AppendUint64(b, uint64(it.issued))
	b = binary.BigEndian.AppendUint64(b, uint64(it.created))
	b = append(b, byte(len(it.stream)))
	b = append(b, it.stream...)
	b = binary.BigEndian.AppendUint32(b, uint32(it.shard))
	b = append(b, it.engine...)
	b = binary.BigEndian.AppendUint32(b, crc32.Checksum(b, castagnoli))
	return base64.StdEncoding.EncodeToString(b)
}

// parseIter reads an iterator; ok is false for anything not made by
// String.
func parseIter(s string) (it shardIter, ok bool) {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil || len(b) < 26 || b[0] != iterVersion {
		return it, false
	}
	body, sum := b[:len(b)-4], binary.BigEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != sum {
		return it, false
	}
	it.issued = int64(binary.BigEndian.Uint64(body[1:]))
	it.created = int64(binary.BigEndian.Uint64(body[9:]))
	n := int(body[17])
	if len(body) < 18+n+4 {
		return it, false
	}
	it.stream = string(body[18 : 18+n])
	it.shard = int(binary.BigEndian.Uint32(body[18+n:]))
	it.engine = string(body[22+n:])
	return it, true
}

// amzTime writes t as Kinesis's messages do: "Thu Jan 22 01:22:02 UTC 2015".
func amzTime(ms int64) string {
	return time.UnixMilli(ms).UTC().Format("Mon Jan 02 15:04:05 UTC 2006")
}
