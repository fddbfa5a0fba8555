package kinesis_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/require"
	"github.com/xstreamgo/xstream/kinesis/kinesistest"
)

// The CBOR encoding, as the Java SDK sends it: Data as a byte string,
// timestamps as tag 1 and epoch milliseconds.
func TestCBOR(t *testing.T) {
	ep := kinesistest.Start(t)
	send := func(action string, v any) (rawReply, map[string]any) {
		b, err := cbor.Marshal(v)
		require.NoError(t, err)
		r := raw(t, ep.URL, action, "application/x-amz-cbor-1.1", b, "")
		require.Equal(t, "application/x-amz-cbor-1.1", r.Header.Get("Content-Type"))
		var m map[string]any
		require.NoError(t, cborStrMaps.Unmarshal(r.Body, &m))
		return r, m
	}
	r, _ := send("CreateStream", map[string]any{"StreamName": "s", "ShardCount": 1})
	require.Equal(t, 200, r.Status)
	payload := []byte{0, 1, 2, 0xff, 'x'}
	r, put := send("PutRecord", map[string]any{"StreamName": "s", "PartitionKey": "k", "Data": payload})
	require.Equal(t, 200, r.Status, "%v", put)
	require.Equal(t, "shardId-000000000000", put["ShardId"])
	_, it := send("GetShardIterator", map[string]any{"StreamName": "s", "ShardId": "shardId-000000000000", "ShardIteratorType": "TRIM_HORIZON"})
	r, got := send("GetRecords", map[string]any{"ShardIterator": it["ShardIterator"]})
	require.Equal(t, 200, r.Status, "%v", got)
	recs := got["Records"].([]any)
	require.Len(t, recs, 1)
	rec := recs[0].(map[string]any)
	require.Equal(t, payload, rec["Data"])
	require.Equal(t, put["SequenceNumber"], rec["SequenceNumber"])
	// Tag 1 (0xc1) and a 64-bit integer (0x1b) of milliseconds, which the
	// decoder reads as a time.
	require.Contains(t, string(r.Body), "\xc1\x1b")
	ts, ok := rec["ApproximateArrivalTimestamp"].(time.Time)
	require.True(t, ok, "a tagged timestamp: %T", rec["ApproximateArrivalTimestamp"])
	// The decoder reads the tag's number as seconds (RFC 8949); it is
	// milliseconds, as the Java SDK reads it.
	require.WithinDuration(t, time.Now(), time.UnixMilli(ts.Unix()), time.Minute)

	// AT_TIMESTAMP with a Java-style timestamp.
	_, it = send("GetShardIterator", map[string]any{"StreamName": "s", "ShardId": "shardId-000000000000", "ShardIteratorType": "AT_TIMESTAMP",
		"Timestamp": cbor.Tag{Number: 1, Content: time.Now().Add(-time.Minute).UnixMilli()}})
	_, got = send("GetRecords", map[string]any{"ShardIterator": it["ShardIterator"]})
	require.Len(t, got["Records"].([]any), 1)

	// Errors in CBOR.
	r, _ = send("DescribeStream", map[string]any{"StreamName": "nope"})
	typ, msg := r.errType(t)
	require.Equal(t, 400, r.Status)
	require.Equal(t, "ResourceNotFoundException", typ)
	require.Equal(t, "Stream nope under account 000000000000 not found.", msg)
	r, _ = send("CreateStream", map[string]any{"StreamName": "t", "ShardCount": "x"})
	typ, _ = r.errType(t)
	require.Equal(t, "SerializationException", typ)
}

var cborStrMaps, _ = cbor.DecOptions{DefaultMapType: reflect.TypeOf(map[string]any(nil))}.DecMode()
