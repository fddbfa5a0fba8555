package kinesis

import (
	"net/http"
	"sync"
)

// subscriptions are the running SubscribeToShard responses, so that
// deleting a stream or deregistering a consumer ends them.
type subscriptions struct {
	mu sync.Mutex
}

func (s *subscriptions) closeStream(name string, created int64) {}

func (s *subscriptions) closeConsumer(stream, consumer string) {}

func (h *Handler) subscribeToShard(w http.ResponseWriter, r *http.Request, enc string, body []byte) {
	writeErr(w, enc, &Error{Status: 400, Type: typeUnknownOperation})
}

func (s *subscriptions) closeAll() {}
