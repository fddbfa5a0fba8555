package kinesis

import (
	"fmt"
	"math/bits"
	"strconv"

	"github.com/xstreamgo/xstream"
)

// Sequence numbers.
//
// A record of a sharded stream is identified by its shard and its ID in
// the shard's stream, (ms, seq): ms the millisecond it was put, seq its
// rank within that millisecond. Kinesis identifies it by a sequence
// number: a decimal string, increasing within a shard and compared as a
// number. The mapping packs the three into one 128-bit integer,
//
//	N = ms·2^80 + seq·2^24 + shard
//
// with ms in the high 48 bits (milliseconds since 1970 fit until the year
// 10889), seq in the next 56 and the shard's number (the n of
// shardId-n) in the low 24, and writes N in decimal (at most 39 digits,
// within Kinesis's pattern 0|([1-9]\d{0,128})). It is
//
//   - injective: the three fields occupy disjoint bits, so two records
//     (of any shards) never share a number, and the number gives back its
//     shard and ID (decodeSeq);
//   - order-preserving within a shard: for one shard, N grows with
//     (ms, seq) in lexicographic order, which is the order of IDs, so
//     comparing two numbers as integers compares the records' positions;
//   - roughly time-ordered across shards: a later millisecond always maps
//     higher, whatever the shards.
//
// IDs outside the domain (seq ≥ 2^56, ms ≥ 2^48, or more than 2^24
// shards ever made in one stream) have no number; the handler reports an
// InternalFailure for them rather than write a number that would collide.
// A shard's StartingSequenceNumber is the number of its starting ID, at
// which no record lies (records come after it), and a CLOSED shard's
// EndingSequenceNumber the number of its last ID.
const (
	seqShardBits = 24
	seqSeqBits   = 56
	seqMsBits    = 48
)

// seqNum is a 128-bit sequence number; HashKey is xstream's unsigned
// 128-bit integer (Hi, Lo), with decimal parsing and formatting.
type seqNum = xstream.HashKey

// encodeSeq returns the sequence number of the record with ID id in the
// shard numbered shard.
func encodeSeq(shard int, id xstream.ID) (seqNum, bool) {
	if id.Ms >= 1<<seqMsBits || id.Seq >= 1<<seqSeqBits || shard < 0 || shard >= 1<<seqShardBits {
		return seqNum{}, false
	}
	// Hi: ms (48 bits), then the top 16 bits of seq; Lo: the low 40 bits
	// of seq, then the shard (24 bits).
	hi := id.Ms<<16 | id.Seq>>40
	lo := id.Seq<<seqShardBits | uint64(shard)
	return seqNum{Hi: hi, Lo: lo}, true
}

// decodeSeq is the inverse of encodeSeq.
func decodeSeq(n seqNum) (shard int, id xstream.ID) {
	shard = int(n.Lo & (1<<seqShardBits - 1))
	id.Seq = n.Hi&(1<<16-1)<<40 | n.Lo>>seqShardBits
	id.Ms = n.Hi >> 16
	return shard, id
}

// seqString writes the sequence number of a record of shard (a shard ID
// "shardId-n").
func seqString(shardID string, id xstream.ID) (string, error) {
	n, ok := shardNumber(shardID)
	if !ok {
		return "", fmt.Errorf("kinesis: shard ID %q is not shardId-<12 digits>", shardID)
	}
	s, ok := encodeSeq(n, id)
	if !ok {
		return "", fmt.Errorf("kinesis: the ID %s of shard %s has no sequence number (ms < 2^48, seq < 2^56 and shard < 2^24 needed)", id, shardID)
	}
	var buf [40]byte
	return string(appendDecimal(buf[:0], s)), nil
}

// appendDecimal appends n in decimal, without allocating: n is split
// into base-10^19 digits, at most three.
func appendDecimal(b []byte, n seqNum) []byte {
	const e19 = 10_000_000_000_000_000_000
	if n.Hi == 0 {
		return strconv.AppendUint(b, n.Lo, 10)
	}
	var parts [3]uint64
	k := 0
	for n.Hi != 0 || n.Lo >= e19 {
		qhi, r := n.Hi/e19, n.Hi%e19
		qlo, r := bits.Div64(r, n.Lo, e19)
		parts[k] = r
		k++
		n = seqNum{Hi: qhi, Lo: qlo}
	}
	b = strconv.AppendUint(b, n.Lo, 10)
	for k--; k >= 0; k-- {
		var d [19]byte
		v := parts[k]
		for i := 18; i >= 0; i-- {
			d[i] = byte('0' + v%10)
			v /= 10
		}
		b = append(b, d[:]...)
	}
	return b
}

// parseSeq reads a sequence number string; ok is false for one that is
// not a number below 2^128.
func parseSeq(s string) (shard int, id xstream.ID, ok bool) {
	n, err := xstream.ParseHashKey(s)
	if err != nil {
		return 0, xstream.ID{}, false
	}
	shard, id = decodeSeq(n)
	return shard, id, true
}

// shardNumber reads the n of "shardId-" + 12 digits.
func shardNumber(id string) (int, bool) {
	const prefix = "shardId-"
	if len(id) != len(prefix)+12 || id[:len(prefix)] != prefix {
		return 0, false
	}
	n := 0
	for i := len(prefix); i < len(id); i++ {
		c := id[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// shardName is the ID of shard n.
func shardName(n int) string { return fmt.Sprintf("shardId-%012d", n) }
