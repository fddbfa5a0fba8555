package kinesis_test

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"hash/crc32"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/xstreamgo/xstream/kinesis/kinesistest"
)

// eventMsg is one decoded event-stream message.
type eventMsg struct {
	headers map[string]string
	payload []byte
}

// readEvent decodes one message of the AWS event-stream encoding,
// checking both CRCs.
func readEvent(t *testing.T, r *bufio.Reader) (eventMsg, error) {
	var prelude [12]byte
	if _, err := io.ReadFull(r, prelude[:]); err != nil {
		return eventMsg{}, err
	}
	total, hlen := binary.BigEndian.Uint32(prelude[0:]), binary.BigEndian.Uint32(prelude[4:])
	require.Equal(t, crc32.ChecksumIEEE(prelude[:8]), binary.BigEndian.Uint32(prelude[8:]), "prelude CRC")
	rest := make([]byte, total-12)
	_, err := io.ReadFull(r, rest)
	require.NoError(t, err)
	all := append(prelude[:], rest[:len(rest)-4]...)
	require.Equal(t, crc32.ChecksumIEEE(all), binary.BigEndian.Uint32(rest[len(rest)-4:]), "message CRC")
	m := eventMsg{headers: map[string]string{}, payload: rest[hlen : len(rest)-4]}
	for h := rest[:hlen]; len(h) > 0; {
		n := int(h[0])
		name := string(h[1 : 1+n])
		require.Equal(t, byte(7), h[1+n], "a string header")
		vl := int(binary.BigEndian.Uint16(h[2+n:]))
		m.headers[name] = string(h[4+n : 4+n+vl])
		h = h[4+n+vl:]
	}
	return m, nil
}

// SubscribeToShard over HTTP/1.1 (chunked), read without the SDK: the
// messages are well formed, the initial response comes first, and the
// records follow; a second subscription of the consumer to the shard is
// refused while the first lasts.
func TestSubscribeToShardHTTP1(t *testing.T) {
	ep := kinesistest.Start(t)
	r := rawJSON(t, ep.URL, "CreateStream", map[string]any{"StreamName": "e", "ShardCount": 1})
	require.Equal(t, 200, r.Status)
	r = rawJSON(t, ep.URL, "RegisterStreamConsumer", map[string]any{"StreamARN": "arn:aws:kinesis:us-east-1:000000000000:stream/e", "ConsumerName": "c"})
	var reg struct{ Consumer struct{ ConsumerARN string } }
	require.NoError(t, json.Unmarshal(r.Body, &reg))
	require.Equal(t, 200, rawJSON(t, ep.URL, "PutRecord", map[string]any{"StreamName": "e", "PartitionKey": "k", "Data": []byte("hello")}).Status)

	body, _ := json.Marshal(map[string]any{"ConsumerARN": reg.Consumer.ConsumerARN, "ShardId": "shardId-000000000000",
		"StartingPosition": map[string]any{"Type": "TRIM_HORIZON"}})
	req, _ := http.NewRequest(http.MethodPost, ep.URL, bytes.NewReader(body))
	req.Header.Set("X-Amz-Target", "Kinesis_20131202.SubscribeToShard")
	req.Header.Set("Content-Type", "application/x-amz-json-1.1")
	req.Header.Set("Authorization", testAuth)
	req.Header.Set("X-Amz-Date", "20260101T000000Z")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, 200, resp.StatusCode)
	require.Equal(t, "HTTP/1.1", resp.Proto)
	require.Equal(t, "application/vnd.amazon.eventstream", resp.Header.Get("Content-Type"))
	br := bufio.NewReader(resp.Body)
	m, err := readEvent(t, br)
	require.NoError(t, err)
	require.Equal(t, map[string]string{":message-type": "event", ":event-type": "initial-response", ":content-type": "application/x-amz-json-1.1"}, m.headers)

	second := raw(t, ep.URL, "SubscribeToShard", "application/x-amz-json-1.1", body, "")
	typ, _ := second.errType(t)
	require.Equal(t, "ResourceInUseException", typ)

	m, err = readEvent(t, br)
	require.NoError(t, err)
	require.Equal(t, "SubscribeToShardEvent", m.headers[":event-type"])
	var ev struct {
		Records []struct {
			Data           []byte
			PartitionKey   string
			SequenceNumber string
		}
		ContinuationSequenceNumber string
		MillisBehindLatest         int64
	}
	require.NoError(t, json.Unmarshal(m.payload, &ev))
	require.Len(t, ev.Records, 1)
	require.Equal(t, "hello", string(ev.Records[0].Data))
	require.Equal(t, ev.Records[0].SequenceNumber, ev.ContinuationSequenceNumber)
}
