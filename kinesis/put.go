package kinesis

import (
	"context"
	"strconv"
	"strings"
	"unsafe"

	"github.com/xstreamgo/xstream"
)

// Record limits, as in Kinesis.
const (
	maxDataBytes     = 1 << 20 // one record's Data
	maxBatchRecords  = 500     // one PutRecords
	maxBatchBytes    = 5 << 20 // one PutRecords: Data and partition keys
	maxPartitionKey  = 256
	dataField        = "data" // the field of a record holding its Data
	putRecordsMember = "com.amazonaws.kinesis.v20131202.PutRecordsRequestEntry@c965e310"
)

type putRecordIn struct {
	SequenceNumberForOrdering *string `json:"SequenceNumberForOrdering"`
	PartitionKey              *string `json:"PartitionKey"`
	ExplicitHashKey           *string `json:"ExplicitHashKey"`
	Data                      *blob   `json:"Data"`
	streamRef
}

var partitionKeyRule = strRule{required: true, min: 1, max: maxPartitionKey}

type putRecordOut struct {
	ShardId        string `json:"ShardId"`
	SequenceNumber string `json:"SequenceNumber"`
}

// putRecord: PutRecord.
func (h *Handler) putRecord(ctx context.Context, in *putRecordIn) (any, *apiError) {
	var c checker
	c.str("sequenceNumberForOrdering", in.SequenceNumberForOrdering, seqRule)
	c.str("partitionKey", in.PartitionKey, partitionKeyRule)
	c.str("explicitHashKey", in.ExplicitHashKey, hashKeyRule)
	c.data("data", in.Data, maxDataBytes)
	name, e := h.named(&c, &in.streamRef)
	if e != nil {
		return nil, e
	}
	if e := checkHashKey(in.ExplicitHashKey); e != nil {
		return nil, e
	}
	if s := in.SequenceNumberForOrdering; s != nil {
		if _, id, ok := parseSeq(*s); !ok || int64(id.Ms) > h.nowMs() {
			return nil, clientErr(typeInvalidArgument, "ExclusiveMinimumSequenceNumber %s used in PutRecord on stream %s under account %s is invalid.", *s, name, h.cfg.account)
		}
	}
	eng, _, e := h.readable(ctx, name)
	if e != nil {
		return nil, e
	}
	var args xstream.PutArgs
	if in.ExplicitHashKey != nil {
		args.ExplicitHashKey = *in.ExplicitHashKey
	}
	res, err := eng.Put(ctx, *in.PartitionKey, args, xstream.Field{Name: dataField, Value: bytesString(*in.Data)})
	if err != nil {
		return nil, h.engineErr(name, err)
	}
	seq, err := seqString(res.ShardID, res.SequenceNumber)
	if err != nil {
		return nil, internal(err)
	}
	return putRecordOut{ShardId: res.ShardID, SequenceNumber: seq}, nil
}

// checkHashKey refuses an ExplicitHashKey above 2^128-1.
func checkHashKey(k *string) *apiError {
	if k == nil {
		return nil
	}
	if _, err := xstream.ParseHashKey(*k); err != nil {
		return clientErr(typeInvalidArgument, "Invalid ExplicitHashKey. ExplicitHashKey must be in the range: [0, 2^128-1]. Specified value was %s", *k)
	}
	return nil
}

type putRecordsEntry struct {
	PartitionKey    *string `json:"PartitionKey"`
	ExplicitHashKey *string `json:"ExplicitHashKey"`
	Data            *blob   `json:"Data"`
}

type putRecordsIn struct {
	Records []putRecordsEntry `json:"Records"`
	streamRef
}

type putRecordsResult struct {
	SequenceNumber string `json:"SequenceNumber,omitempty"`
	ShardId        string `json:"ShardId,omitempty"`
	ErrorCode      string `json:"ErrorCode,omitempty"`
	ErrorMessage   string `json:"ErrorMessage,omitempty"`
}

type putRecordsOut struct {
	FailedRecordCount int                `json:"FailedRecordCount"`
	Records           []putRecordsResult `json:"Records"`
}

// putRecords: PutRecords, 1 to 500 records of at most 5 MiB in all. A
// record the engine fails to store is reported in its place, as Kinesis
// does, with the others stored.
func (h *Handler) putRecords(ctx context.Context, in *putRecordsIn) (any, *apiError) {
	var c checker
	if in.Records == nil {
		c.fail("null", "records", "Member must not be null")
	} else if n := len(in.Records); n < 1 || n > maxBatchRecords {
		v := quoted("[" + strings.TrimSuffix(strings.Repeat(putRecordsMember+", ", n), ", ") + "]")
		if n < 1 {
			c.fail(v, "records", "Member must have length greater than or equal to 1")
		} else {
			c.fail(v, "records", "Member must have length less than or equal to "+strconv.Itoa(maxBatchRecords))
		}
	}
	for i := range in.Records {
		r := &in.Records[i]
		if r.PartitionKey != nil && uint(len(*r.PartitionKey)-1) < maxPartitionKey && r.ExplicitHashKey == nil &&
			r.Data != nil && len(*r.Data) <= maxDataBytes {
			continue // valid: the common case, checked without building the field's path
		}
		at := "records." + strconv.Itoa(i+1) + ".member."
		c.str(at+"partitionKey", r.PartitionKey, partitionKeyRule)
		c.str(at+"explicitHashKey", r.ExplicitHashKey, hashKeyRule)
		c.data(at+"data", r.Data, maxDataBytes)
	}
	name, e := h.named(&c, &in.streamRef)
	if e != nil {
		return nil, e
	}
	size := 0
	entries := make([]xstream.PutRecordsEntry, len(in.Records))
	fields := make([]xstream.Field, len(in.Records))
	for i := range in.Records {
		r := &in.Records[i]
		if e := checkHashKey(r.ExplicitHashKey); e != nil {
			return nil, e
		}
		size += len(*r.Data) + len(*r.PartitionKey)
		fields[i] = xstream.Field{Name: dataField, Value: bytesString(*r.Data)}
		entries[i] = xstream.PutRecordsEntry{PartitionKey: *r.PartitionKey, Fields: fields[i : i+1 : i+1]}
		if r.ExplicitHashKey != nil {
			entries[i].ExplicitHashKey = *r.ExplicitHashKey
		}
	}
	if size > maxBatchBytes {
		return nil, clientErr(typeInvalidArgument, "Records size exceeds 5 MB limit")
	}
	eng, _, e := h.readable(ctx, name)
	if e != nil {
		return nil, e
	}
	res, _, err := eng.PutRecords(ctx, entries)
	if err != nil {
		return nil, h.engineErr(name, err)
	}
	out := putRecordsOut{Records: make([]putRecordsResult, len(res))}
	for i, r := range res {
		var e *apiError
		if r.Err != nil {
			e = h.engineErr(name, r.Err)
		} else if seq, err := seqString(r.ShardID, r.SequenceNumber); err != nil {
			// The record is kept, but its ID has no sequence number:
			// reported failed, as Kinesis may report a record it kept
			// (a retry then puts it twice).
			e = internal(err)
		} else {
			out.Records[i] = putRecordsResult{SequenceNumber: seq, ShardId: r.ShardID}
			continue
		}
		out.FailedRecordCount++
		out.Records[i] = putRecordsResult{ErrorCode: e.Type, ErrorMessage: e.Message}
	}
	return out, nil
}

// bytesString returns b as a string without copying: b is never changed
// afterwards, so the string stays what it is even if kept.
func bytesString(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(&b[0], len(b))
}
