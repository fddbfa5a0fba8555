package kinesis_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/fxamacker/cbor/v2"
	"github.com/stretchr/testify/require"
)

// rawReply is the answer to a request sent without the SDK.
type rawReply struct {
	Status int
	Header http.Header
	Body   []byte
}

// errType returns the __type and message of an error reply in JSON or
// CBOR.
func (r rawReply) errType(t *testing.T) (string, string) {
	t.Helper()
	var m map[string]any
	if r.Header.Get("Content-Type") == "application/x-amz-cbor-1.1" {
		require.NoError(t, cbor.Unmarshal(r.Body, &m))
	} else {
		require.NoError(t, json.Unmarshal(r.Body, &m), "body %q", r.Body)
	}
	typ, _ := m["__type"].(string)
	msg, _ := m["message"].(string)
	if msg == "" {
		msg, _ = m["Message"].(string)
	}
	return typ, msg
}

const testAuth = "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/kinesis/aws4_request, SignedHeaders=host;x-amz-date, Signature=abc"

// raw sends action with body and content type ct, signed unless auth is
// "-" (or with the given Authorization header).
func raw(t *testing.T, url, action, ct string, body []byte, auth string) rawReply {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	require.NoError(t, err)
	if action != "" {
		req.Header.Set("X-Amz-Target", "Kinesis_20131202."+action)
	}
	req.Header.Set("Content-Type", ct)
	switch auth {
	case "-":
	case "":
		req.Header.Set("Authorization", testAuth)
		req.Header.Set("X-Amz-Date", "20260101T000000Z")
	default:
		req.Header.Set("Authorization", auth)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return rawReply{resp.StatusCode, resp.Header, b}
}

// rawJSON sends a JSON request of v.
func rawJSON(t *testing.T, url, action string, v any) rawReply {
	t.Helper()
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return raw(t, url, action, "application/x-amz-json-1.1", b, "")
}
