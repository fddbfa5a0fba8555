package kinesis

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"time"
	"unsafe"

	"github.com/fxamacker/cbor/v2"
	"github.com/xstreamgo/xstream"
)

// maxGetBytes is the most Data one GetRecords returns, as in Kinesis.
const maxGetBytes = 10 << 20

var iteratorTypes = []string{"AFTER_SEQUENCE_NUMBER", "LATEST", "AT_TIMESTAMP", "AT_SEQUENCE_NUMBER", "TRIM_HORIZON"}

type getShardIteratorIn struct {
	ShardId                *string `json:"ShardId"`
	ShardIteratorType      *string `json:"ShardIteratorType"`
	StartingSequenceNumber *string `json:"StartingSequenceNumber"`
	streamRef
	Timestamp *stamp `json:"Timestamp"`
}

// resolveShard reads a shard ID as Kinesis does: "shardId-" and a number
// (of any width), or a bare number.
func resolveShard(id string) (int, bool) {
	s := id
	if _, rest, ok := strings.Cut(id, "-"); ok {
		s = rest
	}
	if s == "" || strings.ContainsAny(s, "+-") {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n > 2147483647 {
		return 0, false
	}
	return int(n), true
}

// getShardIterator: GetShardIterator.
func (h *Handler) getShardIterator(ctx context.Context, in *getShardIteratorIn) (any, *apiError) {
	var c checker
	c.str("shardId", in.ShardId, nameRule)
	c.enum("shardIteratorType", in.ShardIteratorType, true, iteratorTypes...)
	c.str("startingSequenceNumber", in.StartingSequenceNumber, seqRule)
	name, e := h.named(&c, &in.streamRef)
	if e != nil {
		return nil, e
	}
	p, e := h.position(ctx, name, *in.ShardId, *in.ShardIteratorType, in.StartingSequenceNumber, in.Timestamp, "GetShardIterator")
	if e != nil {
		return nil, e
	}
	return struct {
		ShardIterator string `json:"ShardIterator"`
	}{shardIter{issued: h.nowMs(), created: p.meta.Created, stream: name, shard: p.shard, engine: p.it}.String()}, nil
}

// shardPosition is a position in a shard of a readable stream.
type shardPosition struct {
	name  string // the stream's
	eng   xstream.ShardedEngine
	meta  *streamMeta
	shard int
	it    string // the engine's iterator
}

// position checks a starting position in a shard (GetShardIterator's,
// or SubscribeToShard's: op names the action in messages) and returns
// the engine's iterator there.
func (h *Handler) position(ctx context.Context, name, shardArg, typ string, startSeq *string, ts *stamp, op string) (*shardPosition, *apiError) {
	n, ok := resolveShard(shardArg)
	if !ok {
		return nil, h.shardNotFound(name, shardArg)
	}
	shardID := shardName(n)
	eng, m, e := h.readable(ctx, name)
	if e != nil {
		if e.Type == typeResourceNotFound {
			return nil, h.shardMissing(name, shardID)
		}
		return nil, e
	}
	args := xstream.IteratorArgs{}
	switch typ {
	case "TRIM_HORIZON", "LATEST":
		if startSeq != nil {
			return nil, clientErr(typeInvalidArgument, "Must either specify (1) AT_SEQUENCE_NUMBER or AFTER_SEQUENCE_NUMBER and StartingSequenceNumber or "+
				"(2) TRIM_HORIZON or LATEST and no StartingSequenceNumber. Request specified %s and also a StartingSequenceNumber.", typ)
		}
		args.Type = xstream.TrimHorizon
		if typ == "LATEST" {
			args.Type = xstream.Latest
		}
	case "AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER":
		if startSeq == nil {
			return nil, clientErr(typeInvalidArgument, "Must either specify (1) AT_SEQUENCE_NUMBER or AFTER_SEQUENCE_NUMBER and StartingSequenceNumber or "+
				"(2) TRIM_HORIZON or LATEST and no StartingSequenceNumber. Request specified %s and no StartingSequenceNumber.", typ)
		}
		seq := *startSeq
		sn, id, ok := parseSeq(seq)
		if !ok {
			return nil, clientErr(typeInvalidArgument, "StartingSequenceNumber %s used in %s on shard %s in stream %s under account %s is invalid.",
				seq, op, shardID, name, h.cfg.account)
		}
		if sn != n {
			return nil, clientErr(typeInvalidArgument, "Invalid StartingSequenceNumber. It encodes %s, while it was used in a call to a shard with %s", shardName(sn), shardID)
		}
		args = xstream.IteratorArgs{Type: xstream.AtSequenceNumber, SequenceNumber: id.String()}
		if typ == "AFTER_SEQUENCE_NUMBER" {
			args.Type = xstream.AfterSequenceNumber
		}
	case "AT_TIMESTAMP":
		if ts == nil {
			return nil, clientErr(typeInvalidArgument, "Must specify timestampInMillis parameter for iterator of type AT_TIMESTAMP. Current request has no timestamp parameter.")
		}
		tms, now := ts.UnixMilli(), h.nowMs()
		if tms > now {
			return nil, clientErr(typeInvalidArgument, "The timestampInMillis parameter cannot be greater than the currentTimestampInMillis. timestampInMillis: %d, currentTimestampInMillis: %d", tms, now)
		}
		args = xstream.IteratorArgs{Type: xstream.AtTimestamp, Timestamp: ts.Time}
	}
	it, err := eng.GetShardIterator(ctx, shardID, args)
	if errors.Is(err, xstream.ErrPastTrimHorizon) {
		// The records there were dropped by retention: read from the
		// oldest one kept, as Kinesis does.
		it, err = eng.GetShardIterator(ctx, shardID, xstream.IteratorArgs{Type: xstream.TrimHorizon})
	}
	switch {
	case errors.Is(err, xstream.ErrShardNotFound), errors.Is(err, xstream.ErrShardExpired):
		return nil, h.shardMissing(name, shardID)
	case startSeq != nil && (errors.Is(err, xstream.ErrInvalidArgument) || errors.Is(err, xstream.ErrInvalidID)):
		return nil, clientErr(typeInvalidArgument, "StartingSequenceNumber %s used in %s on shard %s in stream %s under account %s is invalid because it did not come from this stream.",
			*startSeq, op, shardID, name, h.cfg.account)
	case err != nil:
		return nil, h.engineErr(name, err)
	}
	return &shardPosition{name: name, eng: eng, meta: m, shard: n, it: it}, nil
}

type getRecordsIn struct {
	Limit         *num    `json:"Limit"`
	ShardIterator *string `json:"ShardIterator"`
	StreamARN     *string `json:"StreamARN"`
}

type recordOut struct {
	SequenceNumber              seqText  `json:"SequenceNumber"`
	ApproximateArrivalTimestamp stamp    `json:"ApproximateArrivalTimestamp"`
	Data                        dataText `json:"Data"`
	PartitionKey                string   `json:"PartitionKey"`
}

type childShardOut struct {
	ShardId      string       `json:"ShardId"`
	ParentShards []string     `json:"ParentShards"`
	HashKeyRange hashKeyRange `json:"HashKeyRange"`
}

type getRecordsOut struct {
	Records            []recordOut     `json:"Records"`
	NextShardIterator  string          `json:"NextShardIterator,omitempty"`
	MillisBehindLatest int64           `json:"MillisBehindLatest"`
	ChildShards        []childShardOut `json:"ChildShards,omitempty"`
}

// getRecords: GetRecords, up to Limit records (10,000 by default) and 10
// MiB of Data.
func (h *Handler) getRecords(ctx context.Context, in *getRecordsIn) (any, *apiError) {
	var c checker
	c.intRange("limit", in.Limit, false, 1, 10000)
	c.str("shardIterator", in.ShardIterator, strRule{required: true, min: 1, max: 512})
	c.str("streamARN", in.StreamARN, arnRule)
	if e := c.err(); e != nil {
		return nil, e
	}
	limit := 10000
	if in.Limit != nil {
		limit = int(*in.Limit)
	}
	it, ok := parseIter(*in.ShardIterator)
	if !ok {
		return nil, errInvalidIterator
	}
	now := h.nowMs()
	if now-it.issued > IteratorTTL.Milliseconds() {
		return nil, clientErr(typeExpiredIterator, "Iterator expired. The iterator was created at time %s while right now it is %s which is further in the future than the tolerated delay of %d milliseconds.",
			amzTime(it.issued), amzTime(now), IteratorTTL.Milliseconds())
	}
	shardID := shardName(it.shard)
	eng, m, e := h.readable(ctx, it.stream)
	if e != nil || m.Created != it.created {
		if e == nil || e.Type == typeResourceNotFound {
			return nil, h.shardMissing(it.stream, shardID)
		}
		return nil, e
	}
	read, e := h.readShard(ctx, eng, it.stream, it.shard, it.engine, limit)
	if e != nil {
		return nil, e
	}
	out := getRecordsOut{Records: read.records, MillisBehindLatest: read.millisBehind, ChildShards: read.children}
	if read.next != "" {
		out.NextShardIterator = shardIter{issued: now, created: it.created, stream: it.stream, shard: it.shard, engine: read.next}.String()
	}
	return out, nil
}

// shardRead is what readShard read.
type shardRead struct {
	records      []recordOut
	next         string // the engine's iterator after records; "" at a CLOSED shard's end
	millisBehind int64
	children     []childShardOut // at a CLOSED shard's end
}

// readShard reads up to limit records of the shard numbered shard of the
// stream name at the engine's iterator engIt, for GetRecords and
// SubscribeToShard: from the oldest record kept when retention dropped
// those at engIt, as Kinesis does, and no more than maxGetBytes of Data
// (with one record at least).
func (h *Handler) readShard(ctx context.Context, eng xstream.ShardedEngine, name string, shard int, engIt string, limit int) (shardRead, *apiError) {
	shardID := shardName(shard)
	res, err := eng.GetRecords(ctx, engIt, limit)
	if errors.Is(err, xstream.ErrPastTrimHorizon) {
		var hz string
		if hz, err = eng.GetShardIterator(ctx, shardID, xstream.IteratorArgs{Type: xstream.TrimHorizon}); err == nil {
			res, err = eng.GetRecords(ctx, hz, limit)
		}
	}
	switch {
	case errors.Is(err, xstream.ErrShardNotFound), errors.Is(err, xstream.ErrShardExpired):
		return shardRead{}, h.shardMissing(name, shardID)
	case err != nil:
		return shardRead{}, h.engineErr(name, err)
	}
	records := make([]recordOut, 0, len(res.Records))
	size := 0
	for i, r := range res.Records {
		data := recordData(r.Fields)
		if size += len(data); size > maxGetBytes && i > 0 {
			// Too much for one response: continue after the last one kept.
			last := res.Records[i-1].SequenceNumber
			next, err := eng.GetShardIterator(ctx, shardID, xstream.IteratorArgs{Type: xstream.AfterSequenceNumber, SequenceNumber: last.String()})
			if err != nil {
				return shardRead{}, h.engineErr(name, err)
			}
			res.NextShardIterator, res.ChildShards = next, nil
			res.MillisBehindLatest = max(h.nowMs()-int64(r.SequenceNumber.Ms), 0)
			break
		}
		seq, ok := encodeSeq(shard, r.SequenceNumber)
		if !ok {
			_, err := seqString(r.ShardID, r.SequenceNumber)
			return shardRead{}, internal(err)
		}
		records = append(records, recordOut{SequenceNumber: seqText{seq}, ApproximateArrivalTimestamp: stamp{time.UnixMilli(int64(r.SequenceNumber.Ms))},
			Data: data, PartitionKey: r.PartitionKey})
	}
	return shardRead{records: records, next: res.NextShardIterator, millisBehind: res.MillisBehindLatest, children: childShardsOf(res.ChildShards)}, nil
}

func childShardsOf(cs []xstream.ChildShard) []childShardOut {
	if len(cs) == 0 {
		return nil
	}
	out := make([]childShardOut, len(cs))
	for i, c := range cs {
		out[i] = childShardOut{ShardId: c.ShardID, ParentShards: c.ParentShards, HashKeyRange: rangeOf(c.HashKeyRange)}
	}
	return out
}

// recordData is a record's Data: its field "data", as PutRecord stores
// it; a record put by Go code with other fields reads as the JSON object
// of its fields.
func recordData(fs []xstream.Field) dataText {
	if len(fs) == 1 && fs[0].Name == dataField {
		return dataText(fs[0].Value)
	}
	obj := make(map[string]string, len(fs))
	for _, f := range fs {
		obj[f.Name] = f.Value
	}
	b, _ := json.Marshal(obj)
	return dataText(b)
}

// seqText is a sequence number written as its decimal string.
type seqText struct{ n seqNum }

func (s seqText) String() string { return string(appendDecimal(nil, s.n)) }

func (s seqText) MarshalJSON() ([]byte, error) {
	return append(appendDecimal([]byte{'"'}, s.n), '"'), nil
}

func (s seqText) MarshalCBOR() ([]byte, error) { return cbor.Marshal(s.String()) }

// dataText is a record's Data as the engine stores it, a string: base64
// in JSON, a byte string in CBOR.
type dataText string

func (d dataText) MarshalJSON() ([]byte, error) {
	return append(appendBase64(append(make([]byte, 0, len(d)*4/3+4), '"'), string(d)), '"'), nil
}

func (d dataText) MarshalCBOR() ([]byte, error) { return cbor.Marshal([]byte(d)) }

// appendBase64 appends s in standard base64, reading the string's bytes
// in place.
func appendBase64(b []byte, s string) []byte {
	return base64.StdEncoding.AppendEncode(b, unsafe.Slice(unsafe.StringData(s), len(s)))
}
