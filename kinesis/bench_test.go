package kinesis_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/kinesis"
)

// benchHandler returns a handler over an in-memory DB with the stream
// "bench" of 4 shards, and a function serving one request to it.
func benchHandler(b *testing.B) func(action string, body []byte) *httptest.ResponseRecorder {
	h := kinesis.New(kinesis.LocalBackend(xstream.NewDB()))
	do := func(action string, body []byte) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(body))
		req.Header.Set("X-Amz-Target", "Kinesis_20131202."+action)
		req.Header.Set("Content-Type", "application/x-amz-json-1.1")
		req.Header.Set("Authorization", testAuth)
		req.Header.Set("X-Amz-Date", "20260101T000000Z")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != 200 {
			b.Fatalf("%s: %d %s", action, w.Code, w.Body)
		}
		return w
	}
	do("CreateStream", []byte(`{"StreamName":"bench","ShardCount":4}`))
	return do
}

func batchBody(n int) []byte {
	recs := make([]map[string]any, n)
	for i := range recs {
		recs[i] = map[string]any{"PartitionKey": "key-" + strconv.Itoa(i), "Data": bytes.Repeat([]byte("x"), 100)}
	}
	body, _ := json.Marshal(map[string]any{"StreamName": "bench", "Records": recs})
	return body
}

// BenchmarkPutRecord: one PutRecord of 100 bytes through the handler,
// without the network.
func BenchmarkPutRecord(b *testing.B) {
	do := benchHandler(b)
	body, _ := json.Marshal(map[string]any{"StreamName": "bench", "PartitionKey": "k", "Data": bytes.Repeat([]byte("x"), 100)})
	b.ReportAllocs()
	for b.Loop() {
		do("PutRecord", body)
	}
}

// BenchmarkPutRecords: PutRecords of 100 records of 100 bytes.
func BenchmarkPutRecords(b *testing.B) {
	do := benchHandler(b)
	body := batchBody(100)
	b.ReportAllocs()
	for b.Loop() {
		do("PutRecords", body)
	}
}

// BenchmarkGetRecords: GetRecords of 100 records of 100 bytes.
func BenchmarkGetRecords(b *testing.B) {
	do := benchHandler(b)
	do("CreateStream", []byte(`{"StreamName":"reads","ShardCount":1}`))
	body := bytes.Replace(batchBody(100), []byte(`"bench"`), []byte(`"reads"`), 1)
	for range 100 {
		do("PutRecords", body)
	}
	var it struct{ ShardIterator string }
	json.Unmarshal(do("GetShardIterator", []byte(`{"StreamName":"reads","ShardId":"shardId-000000000000","ShardIteratorType":"TRIM_HORIZON"}`)).Body.Bytes(), &it)
	req, _ := json.Marshal(map[string]any{"ShardIterator": it.ShardIterator, "Limit": 100})
	b.ReportAllocs()
	for b.Loop() {
		do("GetRecords", req)
	}
}
