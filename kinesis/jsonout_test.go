package kinesis

import (
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The hand-written JSON of the hot responses is what encoding/json
// writes for the same values.
func TestJSONAppendersMatchEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"a", "é", "\"", "\\", "\n", "\t", "\x01", "\x7f", "\xff", "\u2028", "\u2029", "<&>", "日本", "\r", " "}
	str := func() string {
		var b strings.Builder
		for range r.IntN(8) {
			b.WriteString(pieces[r.IntN(len(pieces))])
		}
		return b.String()
	}
	marshal := func(v any) string {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		require.NoError(t, enc.Encode(v))
		return strings.TrimSuffix(b.String(), "\n")
	}
	for range 10000 {
		ms := r.Int64N(1e13)
		require.Equal(t, strconv.FormatFloat(float64(ms)/1000, 'f', -1, 64), string(appendSeconds(nil, ms)))
	}
	for range 300 {
		po := putRecordOut{ShardId: str(), SequenceNumber: str()}
		require.Equal(t, marshal(po), string(po.appendJSON(nil)))
		var pr putRecordsOut
		for range r.IntN(4) {
			if r.IntN(2) == 0 {
				pr.Records = append(pr.Records, putRecordsResult{SequenceNumber: str(), ShardId: str()})
			} else {
				pr.Records = append(pr.Records, putRecordsResult{ErrorCode: str(), ErrorMessage: str()})
			}
		}
		pr.FailedRecordCount = r.IntN(3)
		if pr.Records == nil {
			pr.Records = []putRecordsResult{}
		}
		require.Equal(t, marshal(pr), string(pr.appendJSON(nil)))
		gr := getRecordsOut{Records: []recordOut{}, NextShardIterator: str(), MillisBehindLatest: r.Int64N(1e6)}
		for range r.IntN(4) {
			gr.Records = append(gr.Records, recordOut{SequenceNumber: seqText{seqNum{Hi: r.Uint64(), Lo: r.Uint64()}}, ApproximateArrivalTimestamp: *stampOf(r.Int64N(2e12)),
				Data: dataText(str()), PartitionKey: str()})
		}
		for range r.IntN(3) {
			gr.ChildShards = append(gr.ChildShards, childShardOut{ShardId: str(), ParentShards: []string{str(), str()},
				HashKeyRange: hashKeyRange{str(), str()}})
		}
		require.Equal(t, marshal(gr), string(gr.appendJSON(nil)))
	}
}

// fastPutRecords decodes what encoding/json decodes, or declines.
func TestFastPutRecords(t *testing.T) {
	bodies := []string{
		`{"Records":[{"Data":"eHl6","PartitionKey":"k"},{"PartitionKey":"é","Data":"","ExplicitHashKey":"12"}],"StreamName":"s"}`,
		` { "StreamARN" : "arn:aws:kinesis:us-east-1:000000000000:stream/s" , "Records" : [ ] } `,
		`{"Records":[{"Data":"eHl6","PartitionKey":"k\\n"}],"StreamName":"s"}`,
		`{"Records":[{"Data":"eHl","PartitionKey":"k"}],"StreamName":"s"}`,
		`{"Records":[{"Data":null,"PartitionKey":"k"}],"StreamName":"s"}`,
		`{"Records":[{"Data":"eHl6","PartitionKey":"\xff"}],"StreamName":"s"}`,
		`{"Records":[{"Data":"eHl6","PartitionKey":"k"}],"StreamName":"s"} x`,
		`{"Records":[{"Data":"eHl6","PartitionKey":"k"}],"StreamName":"s","Other":1}`,
		`{"Records":[{"Data":"eHl6","PartitionKey":"k"},],"StreamName":"s"}`,
		`{}`, `[]`, ``, `{"Records":[{}]}`,
	}
	for _, b := range bodies {
		var fast, slow putRecordsIn
		if !fastPutRecords([]byte(b), &fast) {
			continue
		}
		require.NoError(t, json.Unmarshal([]byte(b), &slow), b)
		require.Equal(t, slow, fast, b)
	}
	var in putRecordsIn
	require.True(t, fastPutRecords([]byte(bodies[0]), &in))
	require.Len(t, in.Records, 2)
	require.False(t, fastPutRecords([]byte(bodies[2]), &in), "an escape")
}

func TestFastPutRecord(t *testing.T) {
	bodies := []string{
		`{"StreamName":"s","PartitionKey":"k","Data":"eHl6","ExplicitHashKey":"5","SequenceNumberForOrdering":"7"}`,
		`{"StreamARN":"a","PartitionKey":"k","Data":""}`,
		`{"StreamName":"s","PartitionKey":"k","Data":"eHl6","Extra":"x"}`,
		`{"StreamName":"s","PartitionKey":1,"Data":"eHl6"}`,
		`{"StreamName":"s","PartitionKey":"k","Data":"eHl6"}}`,
	}
	for i, b := range bodies {
		var fast, slow putRecordIn
		ok := fastPutRecord([]byte(b), &fast)
		require.Equal(t, i < 2, ok, b)
		if ok {
			require.NoError(t, json.Unmarshal([]byte(b), &slow), b)
			require.Equal(t, slow, fast, b)
		}
	}
}
