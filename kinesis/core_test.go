package kinesis_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/xstreamgo/xstream"
	"github.com/xstreamgo/xstream/kinesis"
	"github.com/xstreamgo/xstream/kinesis/kinesistest"
)

// The behaviour tests on the in-process DB. (Module kinesis/kredis runs
// them on Redis and a Redis Cluster.)
func TestLocalBackend(t *testing.T) {
	kinesistest.RunBackend(t, func(t *testing.T, opts ...kinesis.Option) *kinesistest.Endpoint {
		return kinesistest.Start(t, opts...)
	})
}

// GetRecords at an iterator whose records retention dropped meanwhile
// (a DecreaseStreamRetentionPeriod drops them at once) reads from the
// oldest record kept, as Kinesis does.
func TestGetRecordsPastRetention(t *testing.T) {
	clk := kinesistest.NewClock()
	db := xstream.NewDB(xstream.WithClock(clk.Now))
	srv := httptest.NewServer(kinesis.New(kinesis.LocalBackend(db), kinesis.WithClock(clk.Now)))
	defer srv.Close()
	ok := func(action string, v any) []byte {
		t.Helper()
		r := rawJSON(t, srv.URL, action, v)
		require.Equal(t, http.StatusOK, r.Status, "%s: %s", action, r.Body)
		return r.Body
	}
	put := func(data string) {
		ok("PutRecord", map[string]any{"StreamName": "r", "PartitionKey": "k", "Data": []byte(data)})
	}
	ok("CreateStream", map[string]any{"StreamName": "r", "ShardCount": 1})
	ok("IncreaseStreamRetentionPeriod", map[string]any{"StreamName": "r", "RetentionPeriodHours": 48})
	put("old")
	clk.Add(30 * time.Hour)
	var it struct{ ShardIterator string }
	require.NoError(t, json.Unmarshal(ok("GetShardIterator", map[string]any{"StreamName": "r", "ShardId": "shardId-000000000000", "ShardIteratorType": "TRIM_HORIZON"}), &it))
	put("new")
	ok("DecreaseStreamRetentionPeriod", map[string]any{"StreamName": "r", "RetentionPeriodHours": 24})
	var got struct{ Records []struct{ Data []byte } }
	require.NoError(t, json.Unmarshal(ok("GetRecords", map[string]any{"ShardIterator": it.ShardIterator}), &got))
	require.Len(t, got.Records, 1, "the record past retention is gone")
	require.Equal(t, "new", string(got.Records[0].Data))
}
