package kinesis_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/xstreamgo/xstream/kinesis/kinesistest"
)

// Validation errors name the field, the constraint and the value, as
// Kinesis writes them.
func TestValidationWording(t *testing.T) {
	ep := kinesistest.Start(t)
	r := rawJSON(t, ep.URL, "CreateStream", map[string]any{"StreamName": "a b", "ShardCount": 0})
	require.Equal(t, 400, r.Status)
	typ, msg := r.errType(t)
	require.Equal(t, "ValidationException", typ)
	require.Equal(t, "2 validation errors detected: Value '0' at 'shardCount' failed to satisfy constraint: Member must have value greater than or equal to 1; "+
		"Value 'a b' at 'streamName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+", msg)

	r = rawJSON(t, ep.URL, "CreateStream", map[string]any{"ShardCount": 1})
	typ, msg = r.errType(t)
	require.Equal(t, "ValidationException", typ)
	require.Equal(t, "1 validation error detected: Value null at 'streamName' failed to satisfy constraint: Member must not be null", msg)

	r = rawJSON(t, ep.URL, "CreateStream", map[string]any{"StreamName": "s", "ShardCount": "two"})
	typ, msg = r.errType(t)
	require.Equal(t, "SerializationException", typ)
	require.Equal(t, "class java.lang.String can not be converted to an Integer", msg)

	r = rawJSON(t, ep.URL, "PutRecord", map[string]any{"StreamName": "s", "PartitionKey": "", "Data": "abc"})
	typ, msg = r.errType(t)
	require.Equal(t, "SerializationException", typ)
	require.Equal(t, "'abc' can not be converted to a Blob: Base64 encoded length is expected a multiple of 4 bytes but found: 3", msg)

	r = rawJSON(t, ep.URL, "PutRecord", map[string]any{"StreamName": "s", "PartitionKey": "", "Data": "", "ExplicitHashKey": "01"})
	typ, msg = r.errType(t)
	require.Equal(t, "ValidationException", typ)
	require.Equal(t, "2 validation errors detected: Value '' at 'partitionKey' failed to satisfy constraint: Member must have length greater than or equal to 1; "+
		"Value '01' at 'explicitHashKey' failed to satisfy constraint: Member must satisfy regular expression pattern: 0|([1-9]\\d{0,38})", msg)

	r = rawJSON(t, ep.URL, "GetRecords", map[string]any{"ShardIterator": "x", "Limit": 10001})
	typ, msg = r.errType(t)
	require.Equal(t, "ValidationException", typ)
	require.Equal(t, "1 validation error detected: Value '10001' at 'limit' failed to satisfy constraint: Member must have value less than or equal to 10000", msg)
}

// Requests must be signed, with a known target and a known content type.
func TestRequestChecks(t *testing.T) {
	ep := kinesistest.Start(t)
	body := []byte(`{"StreamName":"s"}`)
	r := raw(t, ep.URL, "DescribeStream", "application/x-amz-json-1.1", body, "-")
	require.Equal(t, 400, r.Status)
	typ, msg := r.errType(t)
	require.Equal(t, "MissingAuthenticationTokenException", typ)
	require.Equal(t, "Missing Authentication Token", msg)

	r = raw(t, ep.URL, "DescribeStream", "application/x-amz-json-1.1", body, "AWS4-HMAC-SHA256 Credential=abc")
	typ, msg = r.errType(t)
	require.Equal(t, "IncompleteSignatureException", typ)
	require.Equal(t, "Authorization header requires 'Signature' parameter. Authorization header requires 'SignedHeaders' parameter. "+
		"Authorization header requires existence of either a 'X-Amz-Date' or a 'Date' header. Authorization=AWS4-HMAC-SHA256 Credential=abc", msg)

	r = raw(t, ep.URL, "Frobnicate", "application/x-amz-json-1.1", body, "")
	typ, _ = r.errType(t)
	require.Equal(t, "UnknownOperationException", typ)

	r = raw(t, ep.URL, "DescribeStream", "application/x-amz-json-1.1", []byte("{"), "")
	typ, _ = r.errType(t)
	require.Equal(t, "SerializationException", typ)

	r = raw(t, ep.URL, "DescribeStream", "text/plain", body, "")
	require.Equal(t, 404, r.Status)
	require.Equal(t, "<UnknownOperationException/>\n", string(r.Body))
	require.NotEmpty(t, r.Header.Get("x-amzn-RequestId"))
}

// An ON_DEMAND stream may leave ShardCount out and starts with 4 shards;
// a PROVISIONED one may not.
func TestOnDemandStream(t *testing.T) {
	ep := kinesistest.Start(t)
	r := rawJSON(t, ep.URL, "CreateStream", map[string]any{"StreamName": "od", "StreamModeDetails": map[string]any{"StreamMode": "ON_DEMAND"}})
	require.Equal(t, 200, r.Status, "%s", r.Body)
	r = rawJSON(t, ep.URL, "DescribeStreamSummary", map[string]any{"StreamName": "od"})
	var d struct {
		StreamDescriptionSummary struct {
			OpenShardCount    int
			StreamModeDetails struct{ StreamMode string }
		}
	}
	require.NoError(t, json.Unmarshal(r.Body, &d))
	require.Equal(t, 4, d.StreamDescriptionSummary.OpenShardCount)
	require.Equal(t, "ON_DEMAND", d.StreamDescriptionSummary.StreamModeDetails.StreamMode)
	r = rawJSON(t, ep.URL, "DescribeLimits", map[string]any{})
	require.Contains(t, string(r.Body), `"OnDemandStreamCount":1`)
	r = rawJSON(t, ep.URL, "CreateStream", map[string]any{"StreamName": "p"})
	typ, msg := r.errType(t)
	require.Equal(t, "ValidationException", typ)
	require.Equal(t, "1 validation error detected: Value null at 'shardCount' failed to satisfy constraint: Member must not be null", msg)
}
