package kinesis

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"io"
	"net/http"
	"strings"
	"sync"
)

// Handler serves the Kinesis Data Streams API over HTTP: POST requests
// with an X-Amz-Target of Kinesis_20131202.<Action> and a JSON 1.1 or
// CBOR 1.1 body, over the streams of a Backend. It is safe for concurrent
// use; several handlers (in several processes) may share one shared
// backend.
type Handler struct {
	cfg     config
	b       Backend
	cat     *catalogStore
	engines sync.Map // stream name: *engineRef
	subs    subscriptions
}

// New returns a handler serving the streams of b.
func New(b Backend, opts ...Option) *Handler {
	h := &Handler{cfg: newConfig(opts), b: b}
	h.cat = newCatalogStore(b, h.cfg)
	return h
}

func (h *Handler) nowMs() int64 { return h.cfg.clock().UnixMilli() }

const targetPrefix = "Kinesis_20131202."

// ServeHTTP answers one request. Before the action runs it checks, in
// Kinesis's order: the method (POST), the content type, the body, the
// target, and the presence of a signature (an Authorization header of
// AWS Signature Version 4 form, or its query-string form); the
// signature's keys are not checked.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hdr := w.Header()
	hdr["X-Amzn-Requestid"] = []string{requestID()}
	if r.Method != http.MethodPost {
		writeXMLErr(w, http.StatusForbidden, typeAccessDenied, "Unable to determine service/operation name to be authorized")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxRequestBytes))
	if err != nil {
		w.WriteHeader(http.StatusRequestEntityTooLarge)
		return
	}
	ct := r.Header.Get("Content-Type")
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = strings.TrimSpace(ct)
	target := r.Header.Get("X-Amz-Target")
	op, known := "", false
	if strings.HasPrefix(target, targetPrefix) {
		op = target[len(targetPrefix):]
		_, known = actions[op]
		known = known || op == "SubscribeToShard"
	}
	if len(body) == 0 {
		enc := contentCBOR
		if ct == contentJSON {
			enc = contentJSON
		}
		if known {
			writeErr(w, enc, &apiError{Status: 400, Type: typeSerialization})
		} else {
			writeErr(w, enc, &apiError{Status: 400, Type: typeUnknownOperation})
		}
		return
	}
	if ct != contentJSON && ct != contentCBOR {
		if target == "" || !strings.Contains(target, ".") {
			writeXMLErr(w, http.StatusForbidden, typeAccessDenied, "Unable to determine service/operation name to be authorized")
			return
		}
		writeXMLErr(w, http.StatusNotFound, typeUnknownOperation, "")
		return
	}
	if !known {
		writeErr(w, ct, &apiError{Status: 400, Type: typeUnknownOperation})
		return
	}
	if e := checkAuth(r); e != nil {
		writeErr(w, ct, e)
		return
	}
	if op == "SubscribeToShard" {
		h.subscribeToShard(w, r, ct, body)
		return
	}
	out, e := actions[op](h, r.Context(), ct, body)
	if e != nil {
		writeErr(w, ct, e)
		return
	}
	writeBody(w, ct, http.StatusOK, out)
}

// action runs one action on a request body of the given encoding.
type action func(h *Handler, ctx context.Context, enc string, body []byte) (any, *apiError)

// act makes an action of a function of the decoded request.
func act[In any](fn func(h *Handler, ctx context.Context, in *In) (any, *apiError)) action {
	return func(h *Handler, ctx context.Context, enc string, body []byte) (any, *apiError) {
		in := new(In)
		if e := decode(enc, body, in); e != nil {
			return nil, e
		}
		return fn(h, ctx, in)
	}
}

// fastAct is act for a request whose usual JSON shape fast decodes
// without encoding/json (see fastPutRecords); other bodies, and CBOR,
// are decoded as act does.
func fastAct[In any](fast func(body []byte, in *In) bool, fn func(h *Handler, ctx context.Context, in *In) (any, *apiError)) action {
	slow := act(fn)
	return func(h *Handler, ctx context.Context, enc string, body []byte) (any, *apiError) {
		in := new(In)
		if enc == contentJSON && fast(body, in) {
			return fn(h, ctx, in)
		}
		return slow(h, ctx, enc, body)
	}
}

// empty is the body of an action that returns nothing.
type empty struct{}

// actions are the actions served, by name; SubscribeToShard, whose
// response is a stream, is served apart.
var actions map[string]action

func init() {
	actions = map[string]action{
		"CreateStream":                  act((*Handler).createStream),
		"DeleteStream":                  act((*Handler).deleteStream),
		"DescribeStream":                act((*Handler).describeStream),
		"DescribeStreamSummary":         act((*Handler).describeStreamSummary),
		"ListStreams":                   act((*Handler).listStreams),
		"ListShards":                    act((*Handler).listShards),
		"PutRecord":                     fastAct(fastPutRecord, (*Handler).putRecord),
		"PutRecords":                    fastAct(fastPutRecords, (*Handler).putRecords),
		"GetShardIterator":              act((*Handler).getShardIterator),
		"GetRecords":                    act((*Handler).getRecords),
		"SplitShard":                    act((*Handler).splitShard),
		"MergeShards":                   act((*Handler).mergeShards),
		"UpdateShardCount":              act((*Handler).updateShardCount),
		"IncreaseStreamRetentionPeriod": act((*Handler).increaseRetention),
		"DecreaseStreamRetentionPeriod": act((*Handler).decreaseRetention),
		"AddTagsToStream":               act((*Handler).addTags),
		"RemoveTagsFromStream":          act((*Handler).removeTags),
		"ListTagsForStream":             act((*Handler).listTags),
		"DescribeLimits":                act((*Handler).describeLimits),
		"RegisterStreamConsumer":        act((*Handler).registerConsumer),
		"DescribeStreamConsumer":        act((*Handler).describeConsumer),
		"ListStreamConsumers":           act((*Handler).listConsumers),
		"DeregisterStreamConsumer":      act((*Handler).deregisterConsumer),
	}
}

// requestID returns a new x-amzn-RequestId.
func requestID() string {
	var b [16]byte
	rand.Read(b[:])
	var s [36]byte
	hex.Encode(s[:], b[:4])
	s[8] = '-'
	hex.Encode(s[9:], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// writeXMLErr writes the XML error Kinesis answers before it knows the
// request's encoding.
func writeXMLErr(w http.ResponseWriter, status int, typ, msg string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	if msg == "" {
		io.WriteString(w, "<"+typ+"/>\n")
		return
	}
	io.WriteString(w, "<"+typ+">\n  <Message>"+msg+"</Message>\n</"+typ+">\n")
}

// token encodes a paging token: base64 of its text.
func token(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func untoken(s string) (string, bool) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	return string(b), err == nil
}

// Close ends the running SubscribeToShard responses. The handler's
// backend is left open: its owner closes it.
func (h *Handler) Close() error {
	h.subs.closeAll()
	return nil
}
