package kinesis

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fxamacker/cbor/v2"
)

// The two encodings of request and response bodies. The AWS SDK for Go,
// the AWS CLI and most SDKs send JSON 1.1, with Data in base64; the Java
// SDK sends CBOR by default, with Data as a byte string and timestamps as
// tagged epoch milliseconds.
const (
	contentJSON = "application/x-amz-json-1.1"
	contentCBOR = "application/x-amz-cbor-1.1"
)

// blob is a Data field: base64 in JSON, a byte string in CBOR.
type blob []byte

// UnmarshalJSON decodes base64 as Kinesis does, refusing what it refuses
// with its words.
func (b *blob) UnmarshalJSON(data []byte) error {
	if len(data) == 0 || data[0] != '"' {
		return typeMismatch(data, "a Blob", "to a Blob")
	}
	raw := data[1 : len(data)-1]
	var s string
	if bytes.IndexByte(raw, '\\') >= 0 {
		// Escapes: unquote them first (never in base64 written by an SDK).
		if err := json.Unmarshal(data, &s); err != nil {
			return serialErr("%s", err.Error())
		}
		raw = []byte(s)
	}
	if len(raw)%4 != 0 {
		return serialErr("'%s' can not be converted to a Blob: Base64 encoded length is expected a multiple of 4 bytes but found: %d", raw, len(raw))
	}
	out := make([]byte, base64.StdEncoding.DecodedLen(len(raw)))
	n, err := base64.StdEncoding.Strict().Decode(out, raw)
	if err != nil {
		var ce base64.CorruptInputError
		if errors.As(err, &ce) && int(ce) < len(raw) && !isBase64Char(raw[ce]) {
			return serialErr("'%s' can not be converted to a Blob: Invalid Base64 character: '%c'", raw, raw[ce])
		}
		return serialErr("'%s' can not be converted to a Blob: Invalid last non-pad Base64 character dectected", raw)
	}
	*b = out[:n]
	return nil
}

func isBase64Char(c byte) bool {
	return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '='
}

// UnmarshalCBOR takes a byte string, or a text string in base64.
func (b *blob) UnmarshalCBOR(data []byte) error {
	var v any
	if err := cbor.Unmarshal(data, &v); err != nil {
		return serialErr("%s", err.Error())
	}
	switch v := v.(type) {
	case []byte:
		*b = v
		return nil
	case string:
		q, _ := json.Marshal(v)
		return b.UnmarshalJSON(q)
	}
	return cborMismatch(v, "a Blob", "to a Blob")
}

// num is an integer field; Kinesis reads a fraction by dropping it.
type num int64

func (n *num) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && (data[0] == '-' || data[0] >= '0' && data[0] <= '9') {
		f, err := strconv.ParseFloat(string(data), 64)
		if err != nil {
			return serialErr("%s", err.Error())
		}
		*n = num(clampInt(f))
		return nil
	}
	return typeMismatch(data, "an Integer", "to an Integer")
}

func (n *num) UnmarshalCBOR(data []byte) error {
	var v any
	if err := cbor.Unmarshal(data, &v); err != nil {
		return serialErr("%s", err.Error())
	}
	switch v := v.(type) {
	case uint64:
		*n = num(min(v, math.MaxInt32))
		return nil
	case int64:
		*n = num(max(v, math.MinInt32))
		return nil
	case float64:
		*n = num(clampInt(v))
		return nil
	}
	return cborMismatch(v, "an Integer", "to an Integer")
}

// clampInt floors f into Kinesis's Integer range.
func clampInt(f float64) int64 {
	f = math.Floor(f)
	if f > math.MaxInt32 {
		return math.MaxInt32
	}
	if f < math.MinInt32 {
		return math.MinInt32
	}
	return int64(f)
}

// stamp is a timestamp: epoch seconds (a number, fractions allowed) in
// JSON; in CBOR, epoch milliseconds as the Java SDK writes them (tag 1 and
// an integer), or seconds as a float.
type stamp struct{ time.Time }

func (t *stamp) UnmarshalJSON(data []byte) error {
	if len(data) > 0 && (data[0] == '-' || data[0] >= '0' && data[0] <= '9') {
		f, err := strconv.ParseFloat(string(data), 64)
		if err != nil {
			return serialErr("%s", err.Error())
		}
		t.Time = time.UnixMilli(int64(math.Round(f * 1000)))
		return nil
	}
	if len(data) > 0 && data[0] == '"' {
		return serialErr("class java.lang.String can not be converted to milliseconds since epoch")
	}
	return typeMismatch(data, "milliseconds since epoch", "to milliseconds since epoch")
}

func (t *stamp) UnmarshalCBOR(data []byte) error {
	if len(data) > 0 && data[0] == 0xc1 { // tag 1: read its number as the Java SDK writes it
		data = data[1:]
	}
	var v any
	if err := cbor.Unmarshal(data, &v); err != nil {
		return serialErr("%s", err.Error())
	}
	switch v := v.(type) {
	case time.Time:
		t.Time = v
		return nil
	case uint64:
		t.Time = time.UnixMilli(int64(min(v, math.MaxInt64)))
		return nil
	case int64:
		t.Time = time.UnixMilli(v)
		return nil
	case float64:
		t.Time = time.UnixMilli(int64(math.Round(v * 1000)))
		return nil
	}
	return cborMismatch(v, "milliseconds since epoch", "to milliseconds since epoch")
}

// MarshalJSON writes epoch seconds with milliseconds, as Kinesis does.
func (t stamp) MarshalJSON() ([]byte, error) { return appendSeconds(nil, t.UnixMilli()), nil }

// MarshalCBOR writes tag 1 and epoch milliseconds, as the Java SDK reads
// them.
func (t stamp) MarshalCBOR() ([]byte, error) {
	return cbor.Marshal(cbor.Tag{Number: 1, Content: t.UnixMilli()})
}

func stampOf(ms int64) *stamp { return &stamp{time.UnixMilli(ms)} }

func serialErr(format string, args ...any) *apiError {
	return clientErr(typeSerialization, format, args...)
}

// typeMismatch is Kinesis's SerializationException for a JSON value of
// the wrong type, given the start of the value.
func typeMismatch(data []byte, an, to string) *apiError {
	if len(data) == 0 {
		return serialErr("Unexpected end of input")
	}
	switch {
	case an == "a List" && data[0] != '[':
		return serialErr("Expected list or null")
	case an == "a Map" && data[0] != '{':
		return serialErr("Expected map or null")
	case an == "a Structure" && data[0] != '{':
		return serialErr("Expected null")
	}
	switch data[0] {
	case '[':
		return serialErr("Start of list found where not expected")
	case '{':
		return serialErr("Start of structure or map found where not expected.")
	case 't', 'f':
		if to == "to a Blob" {
			return serialErr("class java.lang.Boolean can not be converted %s", to)
		}
		return serialErr("class java.lang.Boolean can not be converted to %s", an)
	case '"':
		return serialErr("class java.lang.String can not be converted to %s", an)
	}
	if to == "to a Blob" {
		return serialErr("class com.amazon.coral.value.json.numbers.TruncatingBigNumber can not be converted %s", to)
	}
	return serialErr("class com.amazon.coral.value.json.numbers.TruncatingBigNumber can not be converted to %s", an)
}

// cborMismatch is typeMismatch for a decoded CBOR value.
func cborMismatch(v any, an, to string) *apiError {
	var start []byte
	switch v.(type) {
	case []any:
		start = []byte("[")
	case map[any]any, map[string]any:
		start = []byte("{")
	case bool:
		start = []byte("t")
	case string:
		start = []byte(`"`)
	default:
		start = []byte("0")
	}
	return typeMismatch(start, an, to)
}

// decodeErr turns an error of encoding/json or of the CBOR decoder into
// Kinesis's SerializationException.
func decodeErr(err error) *apiError {
	var e *apiError
	if errors.As(err, &e) {
		return e
	}
	var jt *json.UnmarshalTypeError
	if errors.As(err, &jt) {
		return typeMismatch([]byte(jsonStart(jt.Value)), javaName(jt.Type), "")
	}
	var ct *cbor.UnmarshalTypeError
	if errors.As(err, &ct) {
		return typeMismatch([]byte(cborStart(ct.CBORType)), javaName(nil), "")
	}
	return serialErr("%s", err.Error())
}

func jsonStart(value string) string {
	switch {
	case value == "array":
		return "["
	case value == "object":
		return "{"
	case value == "bool":
		return "t"
	case value == "string":
		return `"`
	}
	return "0"
}

func cborStart(t string) string {
	switch {
	case strings.Contains(t, "array"):
		return "["
	case strings.Contains(t, "map"):
		return "{"
	case strings.Contains(t, "text"):
		return `"`
	case strings.Contains(t, "primitive"):
		return "t"
	}
	return "0"
}

// javaName is the article and name of Kinesis's (Java) type for a Go
// field type, as its messages write them.
func javaName(t reflect.Type) string {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return "an Object"
	}
	switch t.Kind() {
	case reflect.String:
		return "an String"
	case reflect.Bool:
		return "an Boolean"
	case reflect.Int, reflect.Int64, reflect.Int32:
		return "an Integer"
	case reflect.Slice:
		return "a List"
	case reflect.Map:
		return "a Map"
	case reflect.Struct:
		return "a Structure"
	}
	return "an Object"
}

// decode reads a request body of the given encoding into v.
func decode(encoding string, body []byte, v any) *apiError {
	var err error
	if encoding == contentCBOR {
		err = cborDec.Unmarshal(body, v)
	} else {
		err = json.Unmarshal(body, v)
	}
	if err != nil {
		return decodeErr(err)
	}
	return nil
}

var cborDec, _ = cbor.DecOptions{
	DefaultMapType:        reflect.TypeOf(map[string]any(nil)),
	MaxNestedLevels:       32,
	MaxArrayElements:      1 << 20,
	MaxMapPairs:           1 << 20,
	DupMapKey:             cbor.DupMapKeyQuiet,
	IndefLength:           cbor.IndefLengthAllowed,
	TimeTag:               cbor.DecTagOptional,
	DefaultByteStringType: reflect.TypeOf([]byte(nil)),
}.DecMode()

var cborEnc, _ = cbor.EncOptions{Time: cbor.TimeUnixMicro, TimeTag: cbor.EncTagRequired}.EncMode()

var (
	bufPool   = sync.Pool{New: func() any { return new(bytes.Buffer) }}
	bytesPool = sync.Pool{New: func() any { return new([]byte) }}
)

// writeBody writes v as the response of the given encoding with status.
func writeBody(w http.ResponseWriter, encoding string, status int, v any) {
	if a, ok := v.(jsonAppender); ok && encoding != contentCBOR {
		bp := bytesPool.Get().(*[]byte)
		b := a.appendJSON((*bp)[:0])
		hdr := w.Header()
		hdr["Content-Type"] = []string{encoding}
		hdr["Content-Length"] = []string{strconv.Itoa(len(b))}
		w.WriteHeader(status)
		w.Write(b)
		if cap(b) <= 1<<20 {
			*bp = b
			bytesPool.Put(bp)
		}
		return
	}
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	var err error
	if encoding == contentCBOR {
		err = cborEnc.NewEncoder(buf).Encode(v)
	} else {
		enc := json.NewEncoder(buf)
		enc.SetEscapeHTML(false)
		err = enc.Encode(v)
		if err == nil {
			buf.Truncate(buf.Len() - 1) // Encode's newline
		}
	}
	if err != nil {
		status = http.StatusInternalServerError
		buf.Reset()
		fmt.Fprintf(buf, `{"__type":"InternalFailure","message":%q}`, err.Error())
		encoding = contentJSON
	}
	hdr := w.Header()
	hdr["Content-Type"] = []string{encoding}
	hdr["Content-Length"] = []string{strconv.Itoa(buf.Len())}
	w.WriteHeader(status)
	w.Write(buf.Bytes())
	if buf.Cap() <= 1<<20 {
		bufPool.Put(buf)
	}
}

// encodeBody returns v in the given encoding.
func encodeBody(encoding string, v any) ([]byte, error) {
	if a, ok := v.(jsonAppender); ok && encoding != contentCBOR {
		return a.appendJSON(nil), nil
	}
	if encoding == contentCBOR {
		return cborEnc.Marshal(v)
	}
	return json.Marshal(v)
}

// errorBody is the body of an error response.
type errorBody struct {
	Type    string `json:"__type" cbor:"__type"`
	Message string `json:"message,omitempty" cbor:"message,omitempty"`
}

// serialBody is the body of a SerializationException, whose message
// Kinesis writes with a capital M.
type serialBody struct {
	Type    string `json:"__type" cbor:"__type"`
	Message string `json:"Message,omitempty" cbor:"Message,omitempty"`
}

// writeErr writes e in the request's encoding.
func writeErr(w http.ResponseWriter, encoding string, e *apiError) {
	w.Header().Set("x-amzn-ErrorType", e.Type)
	if e.Type == typeSerialization {
		writeBody(w, encoding, e.Status, serialBody{e.Type, e.Message})
		return
	}
	writeBody(w, encoding, e.Status, errorBody{e.Type, e.Message})
}
